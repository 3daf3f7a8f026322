from django.urls import path, register_converter

from dailies import views
from dailies.converters import IsoDateConverter

register_converter(IsoDateConverter, "isodate")

app_name = "dailies"
urlpatterns = [
    path("", views.home, name="home"),
    path("papers/", views.paper_index, name="paper_index"),
    path("papers/<slug:slug>/", views.paper_detail, name="paper"),
    path("topics/", views.topic_index, name="topic_index"),
    path("topics/<slug:slug>/", views.topic_detail, name="topic"),
    path("<slug:track>/", views.track_archive, name="track"),
    path("<slug:track>/<isodate:date>/", views.daily_detail, name="daily"),
]
