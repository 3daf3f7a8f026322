from django.urls import path

from follow import feeds, views

app_name = "follow"
urlpatterns = [
    path("feeds/follow.atom", feeds.FollowFeed.as_view(), name="feed"),
    path("feeds/labs/<slug:slug>.atom", feeds.LabFeed.as_view(), name="lab_feed"),
    path("feeds/authors/<slug:slug>.atom", feeds.AuthorFeed.as_view(), name="author_feed"),
    path("follow/", views.builder, name="builder"),
    path("labs/<slug:slug>/", views.lab_detail, name="lab"),
    path("authors/<slug:slug>/", views.author_detail, name="author"),
]
