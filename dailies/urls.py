from django.urls import path, register_converter

from dailies import feeds, views
from dailies.converters import IsoDateConverter, IsoWeekConverter

register_converter(IsoDateConverter, "isodate")
register_converter(IsoWeekConverter, "isoweek")

app_name = "dailies"
urlpatterns = [
    path("", views.home, name="home"),
    path("feeds/<slug:track>.atom", feeds.TrackDailiesFeed.as_view(), name="track_feed"),
    path("feeds/<slug:track>.rss", feeds.TrackDailiesRssFeed.as_view(), name="track_rss"),
    path("feeds/<slug:track>/papers.atom", feeds.TrackPapersFeed.as_view(), name="papers_feed"),
    path("feeds/<slug:track>/weeks.atom", feeds.TrackWeeksFeed.as_view(), name="weeks_feed"),
    path("papers/<slug:slug>/", views.paper_detail, name="paper"),
    path("papers/<slug:slug>/cite.bib", views.paper_bibtex, name="paper_bibtex"),
    path("papers/<slug:slug>/cite.ris", views.paper_ris, name="paper_ris"),
    path("theme/<slug:mode>/", views.theme_set, name="theme"),
    path("<slug:track>/", views.track_archive, name="track"),
    path("<slug:track>/<isodate:date>/", views.daily_detail, name="daily"),
    path("<slug:track>/week/<isoweek:week>/", views.week_detail, name="week"),
]
