from django.urls import path

from deepdives import views

app_name = "deepdives"
urlpatterns = [
    path("deep-dives/<slug:slug>/", views.deep_dive_detail, name="detail"),
]
