from django.urls import path

from search import feeds, views

app_name = "search"
urlpatterns = [
    path("feeds/search.atom", feeds.SearchFeed.as_view(), name="search_feed"),
    path("feeds/topics/<slug:slug>.atom", feeds.TopicFeed.as_view(), name="topic_feed"),
    path("papers/", views.paper_index, name="paper_index"),
    path("topics/", views.topic_index, name="topic_index"),
    path("topics/<slug:slug>/", views.topic_detail, name="topic"),
]
