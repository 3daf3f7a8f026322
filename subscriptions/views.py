"""Subscribe, confirm, preferences and unsubscribe pages. Pages after the form reach a
subscription only through its random token; none of them shows an address."""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import get_language
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from digest_site.login_throttle import client_ip_address
from subscriptions import addresses, follows, limits, services
from subscriptions.forms import FollowSubscribeForm, PreferencesForm, SubscribeForm
from subscriptions.models import Follow, Subscriber


def _subscribe_requested(
    request: HttpRequest, form: SubscribeForm | FollowSubscribeForm, subscribe: Callable
) -> HttpResponse:
    """Ask ``subscribe`` (the digest's or a follow's service) for what a valid form asks,
    and answer with the same page whether the address is new, pending, confirmed or
    suspended; a bot (the honeypot filled) gets it too and nothing happens. Past a limit on
    subscribe requests: 429, and when to try again."""
    if not form.is_bot:
        try:
            subscribe(**form.subscription, client=addresses.client_key(client_ip_address(request)))
        except services.TooManyRequests:
            window = int(limits.SUBSCRIBE_WINDOW.total_seconds())
            response = render(
                request, "subscriptions/too_many.html", {"minutes": window // 60}, status=429
            )
            response["Retry-After"] = str(window)
            return response
    return render(request, "subscriptions/check_inbox.html", {"days": limits.CONFIRM_MAX_AGE.days})


def _link_refused(request: HttpRequest, refused: Exception) -> HttpResponse:
    """A confirmation link that expired, or that was tampered with or names a subscription
    gone or cancelled since."""
    expired = isinstance(refused, services.ConfirmationExpired)
    return render(
        request,
        "subscriptions/link_refused.html",
        {"expired": expired, "days": limits.CONFIRM_MAX_AGE.days},
        status=400,
    )


@require_http_methods(["GET", "POST"])
def subscribe(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = SubscribeForm(request.POST)
        if form.is_valid():
            return _subscribe_requested(request, form, services.subscriber_subscribe)
        status = 400
    else:
        form = SubscribeForm(
            initial={"language": get_language(), "track": request.GET.get("track") or None}
        )
        status = 200
    return render(request, "subscriptions/subscribe.html", {"form": form}, status=status)


# The link only opens a page; its button confirms. Mail scanners open links, and would
# otherwise confirm for whoever's address was given.
@never_cache
@require_http_methods(["GET", "POST"])
def confirm(request: HttpRequest, token: str) -> HttpResponse:
    try:
        if request.method == "POST":
            subscriber = services.subscriber_confirm(token=token)
            return render(request, "subscriptions/confirmed.html", {"subscriber": subscriber})
        subscriber = services.confirmation_subscriber(token=token)
    except (services.ConfirmationExpired, services.ConfirmationInvalid) as refused:
        return _link_refused(request, refused)
    return render(request, "subscriptions/confirm.html", {"subscriber": subscriber})


@never_cache
@require_http_methods(["GET", "POST"])
def preferences(request: HttpRequest, token: str) -> HttpResponse:
    subscriber = get_object_or_404(Subscriber.objects.select_related("track"), token=token)
    saved, status = False, 200
    if request.method == "POST":
        form = PreferencesForm(request.POST)
        if form.is_valid():
            try:
                subscriber = services.subscriber_update(subscriber=subscriber, **form.cleaned_data)
                saved = True
            except ValidationError as exc:
                form.add_error(None, exc)
        if not saved:
            status = 400
    else:
        form = PreferencesForm(
            initial={
                "track": subscriber.track_id,
                "language": subscriber.language,
                "topic": subscriber.topic_id,
            }
        )
    return render(
        request,
        "subscriptions/preferences.html",
        {"form": form, "subscriber": subscriber, "saved": saved},
        status=status,
    )


# One-click unsubscribe (RFC 8058): mail clients POST here with no session and no CSRF token.
# Unsubscribing is all it can do, and only for the holder of the token.
@csrf_exempt
@never_cache
@require_http_methods(["GET", "POST"])
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    subscriber = get_object_or_404(Subscriber.objects.select_related("track"), token=token)
    if request.method == "POST":
        subscriber = services.subscriber_unsubscribe(subscriber=subscriber)
        return render(request, "subscriptions/unsubscribed.html", {"subscriber": subscriber})
    return render(request, "subscriptions/unsubscribe.html", {"subscriber": subscriber})


@require_http_methods(["POST"])
def follow_subscribe(request: HttpRequest) -> HttpResponse:
    """The follow builder's mail form: a confirmation mail for the filter set, answered as
    the subscribe form is (the same page whatever the address's state)."""
    form = FollowSubscribeForm(request.POST)
    if not form.is_valid():
        return render(request, "subscriptions/follow_refused.html", {"form": form}, status=400)
    return _subscribe_requested(request, form, follows.follow_subscribe)


@never_cache
@require_http_methods(["GET", "POST"])
def follow_confirm(request: HttpRequest, token: str) -> HttpResponse:
    """As ``confirm``: the link opens a page, its button confirms."""
    try:
        if request.method == "POST":
            follow = follows.follow_confirm(token=token)
            return render(request, "subscriptions/follow_confirmed.html", {"follow": follow})
        follow = follows.follow_confirmation(token=token)
    except (services.ConfirmationExpired, services.ConfirmationInvalid) as refused:
        return _link_refused(request, refused)
    return render(
        request,
        "subscriptions/follow_confirm.html",
        {"follow": follow, "described": follows.follow_described(follow)},
    )


# One-click unsubscribe (RFC 8058), as ``unsubscribe``.
@csrf_exempt
@never_cache
@require_http_methods(["GET", "POST"])
def follow_unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    follow = get_object_or_404(Follow, token=token)
    if request.method == "POST":
        follow = follows.follow_unsubscribe(follow=follow)
    return render(
        request,
        "subscriptions/follow_unsubscribe.html",
        {"follow": follow, "described": follows.follow_described(follow)},
    )
