"""Error pages: JSON under /api/ (clients of the read API parse every answer), HTML elsewhere.

A request that failed because the database did not answer (refused, timed out, dropped) is
a 503 with ``Retry-After``: the outage is the server's and passes, and clients and crawlers
that see it come back later instead of counting a broken page.
"""

from __future__ import annotations

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

API_PREFIX = "/api/"
# What a 503 asks clients to wait, in seconds: about a database restart or failover.
DATABASE_RETRY_AFTER_S = 30
# Plain, with nothing that could read the database again (the site's templates may).
UNAVAILABLE_HTML = (
    "<!doctype html><title>Service unavailable</title>"
    "<h1>Service unavailable</h1><p>Please try again in a minute.</p>"
)


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    # Django calls this while handling the exception, so it is still the current one.
    if isinstance(sys.exc_info()[1], (OperationalError, InterfaceError)):
        return _unavailable(request)
    if _is_api(request):
        return JsonResponse({"detail": "Server error."}, status=500)
    return defaults.server_error(request)


def _unavailable(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        response = JsonResponse({"detail": "Service unavailable."}, status=503)
    else:
        response = HttpResponse(UNAVAILABLE_HTML, status=503)
    response["Retry-After"] = str(DATABASE_RETRY_AFTER_S)
    response["Cache-Control"] = "no-store"
    return response
