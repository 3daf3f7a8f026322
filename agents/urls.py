from django.urls import path

from agents.views import mcp_endpoint

# Included by the site's URLs by name, as every app's (the ground floor imports no app).
urlpatterns = [
    path("mcp/", mcp_endpoint, name="mcp"),
]
