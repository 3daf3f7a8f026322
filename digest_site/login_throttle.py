"""Admin login throttling, on top of django-axes (configured in settings: ``AXES_*``).

Failures are counted per username *and* address: an attacker hammering an editor's name from
one address locks out only that address for that name, never the editor elsewhere. One
address is also capped across all usernames (``LOGIN_FAILURES_PER_ADDRESS``), so spraying
names does not get around it. Both locks end after ``AXES_COOLOFF_TIME``.
"""

from __future__ import annotations

import ipaddress
import math

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_cool_off
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string


class LoginThrottleHandler(AxesDatabaseHandler):
    """Axes' database handler with a second, higher limit per address."""

    def get_failures(self, request, credentials: dict | None = None) -> int:
        """Failures of this username from this address; the failure limit itself once the
        address has reached its own cap. Runs two aggregate queries."""
        failures = super().get_failures(request, credentials)
        address = request.axes_ip_address
        if address is None:
            return failures
        from_address = (
            AccessAttempt.objects.filter(
                ip_address=address, attempt_time__gte=get_cool_off_threshold(request)
            ).aggregate(total=Sum("failures_since_start"))["total"]
            or 0
        )
        if from_address >= settings.LOGIN_FAILURES_PER_ADDRESS:
            return max(failures, settings.AXES_FAILURE_LIMIT)
        return failures


def client_ip_address(request: HttpRequest) -> str | None:
    """The client's address: the socket's, or, only when ``CLIENT_IP_HEADER`` is set (behind
    a proxy that writes it), the entry our nearest proxy appended to that header.

    Entries further left are whatever the client sent, so they are never trusted. A missing
    or malformed header falls back to the socket address (the proxy's: stricter, not looser).
    """
    remote = request.META.get("REMOTE_ADDR")
    header = settings.CLIENT_IP_HEADER
    if not header:
        return remote
    raw = request.META.get("HTTP_" + header.upper().replace("-", "_"), "")
    hops = [hop.strip() for hop in raw.split(",") if hop.strip()]
    if len(hops) < settings.CLIENT_IP_PROXY_COUNT:
        return remote
    candidate = hops[-settings.CLIENT_IP_PROXY_COUNT]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote


def lockout_response(request: HttpRequest, original_response=None, credentials=None):
    """A plain 429 page saying how long to wait; no password was checked to produce it."""
    cool_off = get_cool_off(request)
    minutes = math.ceil(cool_off.total_seconds() / 60) if cool_off else None
    body = render_to_string("login_locked.html", {"minutes": minutes}, request=request)
    response = HttpResponse(body, status=429)
    if cool_off:
        response["Retry-After"] = str(int(cool_off.total_seconds()))
    return response
