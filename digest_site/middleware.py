"""Response headers Django does not set itself."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase


class PermissionsPolicyMiddleware:
    """Adds ``settings.PERMISSIONS_POLICY`` to every response that does not set its own.

    The site needs no camera, microphone, location or ad-topics API: turning them off means
    an injected script or a framed page cannot ask for them either.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if settings.PERMISSIONS_POLICY and "Permissions-Policy" not in response:
            response["Permissions-Policy"] = settings.PERMISSIONS_POLICY
        return response
