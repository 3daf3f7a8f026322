from django.urls import path

from subscriptions import views

app_name = "subscriptions"
urlpatterns = [
    path("subscribe/", views.subscribe, name="subscribe"),
    path("subscribe/confirm/<str:token>/", views.confirm, name="confirm"),
    path("subscribe/preferences/<str:token>/", views.preferences, name="preferences"),
    path("subscribe/unsubscribe/<str:token>/", views.unsubscribe, name="unsubscribe"),
]
