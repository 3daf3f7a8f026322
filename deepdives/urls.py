from django.urls import path

from deepdives import feeds, views

app_name = "deepdives"
urlpatterns = [
    path("deep-dives/", views.deep_dive_index, name="index"),
    path("deep-dives/<slug:slug>/", views.deep_dive_detail, name="detail"),
    path("code/", views.code_index, name="code_index"),
    path("feeds/code.atom", feeds.CodeFeed.as_view(), name="code_feed"),
    path("code/<slug:name>/", views.code_detail, name="code"),
    path("code/<slug:name>/chart.svg", views.code_chart, name="code_chart"),
    path("code/<slug:name>/raw/", views.code_source, name="code_source"),
]
