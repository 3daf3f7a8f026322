from django.urls import path

from subscriptions import views

app_name = "subscriptions"
urlpatterns = [
    path("subscribe/", views.subscribe, name="subscribe"),
    path("subscribe/confirm/<str:token>/", views.confirm, name="confirm"),
    path("subscribe/preferences/<str:token>/", views.preferences, name="preferences"),
    path("subscribe/unsubscribe/<str:token>/", views.unsubscribe, name="unsubscribe"),
    path("subscribe/follow/", views.follow_subscribe, name="follow_subscribe"),
    path("subscribe/follow/confirm/<str:token>/", views.follow_confirm, name="follow_confirm"),
    path(
        "subscribe/follow/unsubscribe/<str:token>/",
        views.follow_unsubscribe,
        name="follow_unsubscribe",
    ),
]
