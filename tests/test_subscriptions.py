"""Subscribing to the email digest: the form, double opt-in, preferences, unsubscribing.

Mail goes to a real SMTP server on 127.0.0.1 (tests/smtp_server.py)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
import smtplib
from collections.abc import Callable
from functools import partial

import pytest
import time_machine
from django.core import signing
from django.test import Client
from django.utils import timezone

from subscriptions import follows, limits, services
from subscriptions.models import Bounce, Follow, Subscriber
from tests.factories import make_subscriber, make_track

pytestmark = pytest.mark.django_db

LINK = re.compile(r"https?://\S+/subscribe/confirm/(\S+)/")


@pytest.fixture
def track():
    return make_track("infra", name_en="Infra", name_zh="基础设施")


def _subscribe(client, track, email="ada@example.org", language="en", lang="en", **extra):
    return client.post(
        f"/{lang}/subscribe/",
        {"email": email, "track": track.pk, "language": language, "topic": "", **extra},
    )


def _confirm_token(message) -> str:
    return LINK.search(message.get_content()).group(1)


def test_it_shows_the_form_in_the_page_language_with_a_hidden_honeypot(anonymous, track):
    response = anonymous.get("/zh/subscribe/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "邮件订阅" in html
    assert '<option value="zh" selected>' in html  # the page's language by default
    assert re.search(r'<p hidden aria-hidden="true">.*name="website"', html)
    assert "csrfmiddlewaretoken" in html
    assert "style=" not in html and "<script" not in html


def test_it_mails_a_confirmation_link_and_confirms_with_it(
    anonymous, track, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = _subscribe(anonymous, track, language="zh", lang="en")
    assert response.status_code == 200
    assert "Check your inbox" in response.content.decode()
    subscriber = Subscriber.objects.get()
    assert (subscriber.email, subscriber.language, subscriber.status) == (
        "ada@example.org",
        "zh",
        Subscriber.Status.PENDING,
    )
    [mail] = smtp_server.to("ada@example.org")
    assert mail["Subject"] == "确认订阅论文日报"  # in the language of the subscription
    token = _confirm_token(mail)
    assert "确认这个订阅" in anonymous.get(f"/zh/subscribe/confirm/{token}/").content.decode()

    page = anonymous.post(f"/zh/subscribe/confirm/{token}/")
    assert page.status_code == 200
    assert "订阅已确认" in page.content.decode()
    subscriber.refresh_from_db()
    assert subscriber.status == Subscriber.Status.CONFIRMED
    assert subscriber.confirmed_at is not None
    assert anonymous.post(f"/zh/subscribe/confirm/{token}/").status_code == 200  # idempotent


def _pending(kind: str, email: str) -> Callable[[], bool]:
    """A pending subscriber or follow of ``email``, and the service mailing its link."""
    if kind == "follow":
        follow = Follow.objects.create(
            email=email, language="en", filters="lab=acme", frequency="daily"
        )
        return partial(follows.follow_send_confirmation, follow_id=follow.pk)
    subscriber = make_subscriber(email, status="pending")
    return partial(services.subscriber_send_confirmation, subscriber_id=subscriber.pk)


@pytest.mark.parametrize("kind", ["subscriber", "follow"])
def test_a_refused_confirmation_is_a_bounce_given_up_when_hard_retried_when_soft(
    db, smtp_server, kind
):
    smtp_server.refuse["dead@example.org"] = "550 5.1.1 No such user"
    smtp_server.refuse["full@example.org"] = "452 4.2.2 Mailbox full"
    assert _pending(kind, "dead@example.org")() is False
    with pytest.raises(smtplib.SMTPRecipientsRefused):  # the task retries it
        _pending(kind, "full@example.org")()
    assert set(Bounce.objects.values_list("email", "kind")) == {
        ("dead@example.org", "hard"),
        ("full@example.org", "soft"),
    }


def test_it_normalises_the_address(anonymous, track):
    _subscribe(anonymous, track, email="  Ada@Example.ORG ")
    _subscribe(anonymous, track, email="ada@example.org")
    assert list(Subscriber.objects.values_list("email", flat=True)) == ["ada@example.org"]


def test_it_answers_the_same_for_a_new_and_an_existing_address(
    anonymous, track, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    make_subscriber("known@example.org", track=track, status=Subscriber.Status.CONFIRMED)
    make_subscriber("gone@example.org", track=track, status=Subscriber.Status.SUSPENDED)
    pending = make_subscriber("waiting@example.org", track=track, status="pending")
    answers = {}
    for email in ["new@example.org", "known@example.org", "gone@example.org", pending.email]:
        with django_capture_on_commit_callbacks(execute=True):
            response = _subscribe(anonymous, track, email=email)
        answers[email] = (response.status_code, response.content)
    assert len(set(answers.values())) == 1, "the page must not tell the addresses apart"
    # New and pending addresses get a confirmation; confirmed and suspended ones nothing.
    assert len(smtp_server.to("new@example.org")) == 1
    assert len(smtp_server.to("waiting@example.org")) == 1
    assert smtp_server.to("known@example.org") == smtp_server.to("gone@example.org") == []
    assert Subscriber.objects.get(email="known@example.org").status == "confirmed"


def test_it_gives_the_same_answer_to_a_bot_and_stores_nothing(anonymous, track):
    response = _subscribe(anonymous, track, website="http://spam.example")
    assert response.status_code == 200
    assert "Check your inbox" in response.content.decode()
    assert not Subscriber.objects.exists()


def test_it_refuses_a_bad_address_with_the_form_again(anonymous, track):
    response = _subscribe(anonymous, track, email="not-an-address")
    assert response.status_code == 400
    assert "Enter a valid email address." in response.content.decode()
    assert not Subscriber.objects.exists()


def test_it_refuses_the_form_without_a_csrf_token(track):
    client = Client(enforce_csrf_checks=True)
    assert _subscribe(client, track).status_code == 403
    assert not Subscriber.objects.exists()


def test_it_rate_limits_subscribing_per_address_at_the_limit(anonymous, track):
    other = make_track("systems")
    for i in range(limits.SUBSCRIBE_REQUESTS_PER_ADDRESS):
        t = track if i % 2 == 0 else other
        assert _subscribe(anonymous, t, email="Ada@example.org").status_code == 200
    refused = _subscribe(anonymous, track, email="ada@example.org", language="zh")
    assert refused.status_code == 429
    assert "asked to subscribe too often" in refused.content.decode()
    assert refused["Retry-After"] == str(int(limits.SUBSCRIBE_WINDOW.total_seconds()))
    assert not Subscriber.objects.filter(language="zh").exists()
    assert _subscribe(anonymous, track, email="someone@example.org").status_code == 200
    later = timezone.now() + limits.SUBSCRIBE_WINDOW + dt.timedelta(seconds=1)
    with time_machine.travel(later, tick=False):
        assert _subscribe(anonymous, track, email="ada@example.org").status_code == 200


def test_it_refuses_a_confirmation_link_after_it_expires(anonymous, track):
    subscriber = make_subscriber(track=track, status="pending")
    token = services.confirmation_token(subscriber)
    edge = timezone.now() + limits.CONFIRM_MAX_AGE
    with time_machine.travel(edge + dt.timedelta(seconds=5), tick=False):
        for response in [
            anonymous.get(f"/en/subscribe/confirm/{token}/"),
            anonymous.post(f"/en/subscribe/confirm/{token}/"),
        ]:
            assert response.status_code == 400
            assert "has expired" in response.content.decode()
    subscriber.refresh_from_db()
    assert subscriber.status == Subscriber.Status.PENDING

    with time_machine.travel(edge - dt.timedelta(seconds=5), tick=False):
        assert anonymous.post(f"/en/subscribe/confirm/{token}/").status_code == 200
    subscriber.refresh_from_db()
    assert subscriber.status == Subscriber.Status.CONFIRMED


def test_it_refuses_a_tampered_confirmation_link(anonymous, track):
    subscriber = make_subscriber(track=track, status="pending")
    other = make_subscriber(track=track, status="pending")
    token = services.confirmation_token(subscriber)
    value, stamp, signature = token.split(":")
    forged = f"{other.pk}:{stamp}:{signature}"
    for bad in [forged, token[:-2] + "xx", other.token, subscriber.token, "nonsense"]:
        for response in [
            anonymous.get(f"/en/subscribe/confirm/{bad}/"),
            anonymous.post(f"/en/subscribe/confirm/{bad}/"),
        ]:
            assert response.status_code == 400
            assert "no longer valid" in response.content.decode()
    assert set(Subscriber.objects.values_list("status", flat=True)) == {"pending"}


def test_it_does_not_resubscribe_with_an_old_link_after_unsubscribing(anonymous, track):
    subscriber = make_subscriber(track=track, status="pending")
    token = services.confirmation_token(subscriber)
    services.subscriber_unsubscribe(subscriber=subscriber)
    assert anonymous.get(f"/en/subscribe/confirm/{token}/").status_code == 400
    assert anonymous.post(f"/en/subscribe/confirm/{token}/").status_code == 400
    subscriber.refresh_from_db()
    assert subscriber.status == Subscriber.Status.UNSUBSCRIBED


def test_it_signs_confirmation_links_for_that_purpose_only(track):
    subscriber = make_subscriber(track=track, status="pending")
    other_purpose = signing.TimestampSigner(salt="something.else").sign(str(subscriber.pk))
    with pytest.raises(services.ConfirmationInvalid):
        services.subscriber_confirm(token=other_purpose)


def test_it_unsubscribes_by_the_one_click_post_without_csrf_or_session(track):
    subscriber = make_subscriber(track=track)
    client = Client(enforce_csrf_checks=True)  # a mail client: no cookie, no token
    response = client.post(
        f"/en/subscribe/unsubscribe/{subscriber.token}/",
        data="List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 200
    subscriber.refresh_from_db()
    assert subscriber.status == Subscriber.Status.UNSUBSCRIBED
    assert subscriber.unsubscribed_at is not None
    again = client.post(f"/en/subscribe/unsubscribe/{subscriber.token}/")
    assert again.status_code == 200  # idempotent


def test_it_asks_before_unsubscribing_on_a_get(anonymous, track):
    subscriber = make_subscriber(track=track)
    response = anonymous.get(f"/zh/subscribe/unsubscribe/{subscriber.token}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert f'action="/zh/subscribe/unsubscribe/{subscriber.token}/"' in html
    assert "退订" in html
    assert subscriber.email not in html
    subscriber.refresh_from_db()
    assert subscriber.status == Subscriber.Status.CONFIRMED  # a link scanner changes nothing


def test_it_answers_404_for_an_unknown_token(anonymous):
    assert anonymous.get("/en/subscribe/unsubscribe/not-a-token/").status_code == 404
    assert anonymous.post("/en/subscribe/unsubscribe/not-a-token/").status_code == 404
    assert anonymous.get("/en/subscribe/preferences/not-a-token/").status_code == 404


def test_it_changes_preferences_by_token(anonymous, track):
    from papers.models import Topic

    topic = Topic.objects.create(slug="kv-cache", name_en="KV cache", name_zh="KV 缓存")
    other = make_track("systems")
    subscriber = make_subscriber(track=track)
    url = f"/en/subscribe/preferences/{subscriber.token}/"
    page = anonymous.get(url)
    assert page.status_code == 200
    assert subscriber.email not in page.content.decode()
    response = anonymous.post(url, {"track": other.pk, "language": "zh", "topic": topic.pk})
    assert response.status_code == 200
    assert "preferences are saved" in response.content.decode()
    subscriber.refresh_from_db()
    assert (subscriber.track, subscriber.language, subscriber.topic) == (other, "zh", topic)
    assert subscriber.status == Subscriber.Status.CONFIRMED


def test_it_refuses_preferences_that_duplicate_another_subscription(anonymous, track):
    subscriber = make_subscriber("ada@example.org", track=track, language="en")
    make_subscriber("ada@example.org", track=track, language="zh")
    response = anonymous.post(
        f"/en/subscribe/preferences/{subscriber.token}/",
        {"track": track.pk, "language": "zh", "topic": ""},
    )
    assert response.status_code == 400
    assert "already have a subscription" in response.content.decode()
    subscriber.refresh_from_db()
    assert subscriber.language == "en"


def test_it_lets_an_unsubscribed_address_opt_in_again(
    anonymous, track, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    subscriber = make_subscriber("ada@example.org", track=track, status="unsubscribed")
    with django_capture_on_commit_callbacks(execute=True):
        _subscribe(anonymous, track)
    subscriber.refresh_from_db()
    assert subscriber.status == Subscriber.Status.PENDING  # nothing is sent until confirmed
    assert len(smtp_server.to("ada@example.org")) == 1


def test_it_keeps_the_subscribe_address_out_of_the_track_slugs():
    from django.core.exceptions import ValidationError

    from papers.models import Track

    with pytest.raises(ValidationError, match="reserved"):
        Track(slug="subscribe", name_en="Subscribe", name_zh="订阅").full_clean()


def _address(length: int) -> str:
    """A valid address of exactly ``length`` characters (64-character local part, labels of
    at most 63)."""
    local = "a" * 64
    domain_len = length - len(local) - 1 - len(".org")
    labels, left = [], domain_len
    while left > 0:
        size = min(63, left)
        labels.append("b" * size)
        left -= size + 1
    return f"{local}@{'.'.join(labels)}.org"


def test_it_takes_an_address_up_to_the_length_limit(anonymous, track):
    longest = _address(limits.EMAIL_MAX_LENGTH)
    assert len(longest) == limits.EMAIL_MAX_LENGTH
    assert _subscribe(anonymous, track, email=longest).status_code == 200
    assert Subscriber.objects.get().email == longest  # stored whole (PostgreSQL checks length)
    too_long = _address(limits.EMAIL_MAX_LENGTH + 1)
    assert len(too_long) == limits.EMAIL_MAX_LENGTH + 1
    assert _subscribe(anonymous, track, email=too_long).status_code == 400
    assert Subscriber.objects.count() == 1


def test_it_shows_subscribers_deliveries_and_bounces_to_staff_only(
    anonymous, editor_client, admin_client, track
):
    from subscriptions.models import Bounce

    make_subscriber("ada@example.org", track=track)
    Bounce.objects.create(email="dead@example.org", kind=Bounce.Kind.HARD, detail="550")
    pages = [
        "/admin/subscriptions/subscriber/?status__exact=confirmed",
        "/admin/subscriptions/delivery/?status__exact=sent",
        "/admin/subscriptions/bounce/?kind__exact=hard",
    ]
    for url in pages:
        assert anonymous.get(url).status_code == 302  # to the login page
        assert editor_client.get(url).status_code == 403  # staff without the permission
        assert admin_client.get(url).status_code == 200
    assert "ada@example.org" in admin_client.get(pages[0]).content.decode()
    assert "dead@example.org" in admin_client.get(pages[2]).content.decode()


# One mailbox written many ways: case, sub-addresses, and invisible (soft hyphen, zero-width,
# word joiner, byte-order mark) or full-width characters that mail software drops or folds.
MAILBOX_VARIANTS = [
    "ada@example.org",
    "ADA@example.org",
    "Ada@EXAMPLE.ORG",
    "ada+1@example.org",
    "ada+news@example.org",
    "a.da@example.org",
    "ada@exam\u00adple.org",
    "ada@example\u00ad.org",
    "ada@\u00adexample.org",
    "ada@example.org\u00ad",
    "ada@exa\u200bmple.org",
    "ada@example.org\u200b",
    "ada@exam\u200cple.org",
    "ada@exam\u200dple.org",
    "ada@exam\u2060ple.org",
    "ada@exampl\ufeffe.org",
    "ada@\uff45xample.org",
    "ada@example.\uff4f\uff52\uff47",
    "ada@\uff25\uff38\uff21\uff2d\uff30\uff2c\uff25.org",
]
DISGUISED = [email for email in MAILBOX_VARIANTS if not email.isascii()]


def test_it_mails_one_mailbox_no_more_than_the_limit_however_the_address_is_written(
    track, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    answers = []
    for i, email in enumerate(MAILBOX_VARIANTS):
        client = Client(REMOTE_ADDR=f"203.0.113.{i + 1}")  # many clients: the per-client limit
        with django_capture_on_commit_callbacks(execute=True):  # does not hide the per-mailbox
            answers.append(_subscribe(client, track, email=email).status_code)
    assert len(smtp_server.messages) == limits.SUBSCRIBE_REQUESTS_PER_ADDRESS
    assert answers.count(200) == limits.SUBSCRIBE_REQUESTS_PER_ADDRESS
    assert set(answers) == {200, 400, 429}


@pytest.mark.parametrize("email", DISGUISED, ids=ascii)
def test_it_refuses_invisible_and_look_alike_characters_in_an_address(anonymous, track, email):
    response = _subscribe(anonymous, track, email=email)
    assert response.status_code == 400
    assert "invisible or look-alike" in response.content.decode()
    assert not Subscriber.objects.exists()


def test_it_stores_an_international_domain_once_in_its_ascii_form(anonymous, track):
    assert _subscribe(anonymous, track, email="Ada@Bücher.org").status_code == 200
    assert _subscribe(anonymous, track, email="ada@XN--BCHER-KVA.org").status_code == 200
    assert list(Subscriber.objects.values_list("email", flat=True)) == ["ada@xn--bcher-kva.org"]


@pytest.mark.parametrize(
    "email",
    [
        "x@localhost",
        "x@mail.localhost",
        "x@[127.0.0.1]",
        "x@[IPv6:::1]",
        "x@printer.local",
        "x@host.test",
        "x@site.example",
        "x@nowhere.invalid",
        "x@corp.internal",
        "x@1.0.0.127.in-addr.arpa",
        '"x"@example.org',
    ],
)
def test_it_refuses_reserved_and_literal_address_domains(anonymous, track, email):
    response = _subscribe(anonymous, track, email=email)
    assert response.status_code == 400
    assert "Enter an address on a public mail domain." in response.content.decode() or (
        "Enter a valid email address." in response.content.decode()
    )
    assert not Subscriber.objects.exists()


def test_it_rate_limits_subscribing_per_client_at_the_limit(track):
    client = Client(REMOTE_ADDR="203.0.113.7")
    for i in range(limits.SUBSCRIBE_REQUESTS_PER_CLIENT):
        assert _subscribe(client, track, email=f"reader{i}@example.org").status_code == 200
    refused = _subscribe(client, track, email="one-more@example.org")
    assert refused.status_code == 429
    assert "Too many requests" in refused.content.decode()
    assert not Subscriber.objects.filter(email="one-more@example.org").exists()
    other = Client(REMOTE_ADDR="203.0.113.8")
    assert _subscribe(other, track, email="another@example.org").status_code == 200
    later = timezone.now() + limits.SUBSCRIBE_WINDOW + dt.timedelta(seconds=1)
    with time_machine.travel(later, tick=False):
        assert _subscribe(client, track, email="one-more@example.org").status_code == 200


def test_it_subscribes_with_the_cache_down(
    track, unreachable_cache, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = _subscribe(Client(), track)
    assert response.status_code == 200
    assert len(smtp_server.to("ada@example.org")) == 1
    for _ in range(limits.SUBSCRIBE_REQUESTS_PER_ADDRESS - 1):
        assert _subscribe(Client(), track).status_code == 200
    assert _subscribe(Client(), track).status_code == 429  # the limit holds without the cache


def test_it_does_the_same_work_for_a_new_and_an_existing_address(
    track, django_capture_on_commit_callbacks
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    make_subscriber("known@example.org", track=track, status=Subscriber.Status.CONFIRMED)
    make_subscriber("gone@example.org", track=track, status=Subscriber.Status.SUSPENDED)
    make_subscriber("waiting@example.org", track=track, status="pending")
    _subscribe(Client(REMOTE_ADDR="203.0.113.1"), track, email="first@example.org")  # warm
    work = {}
    emails = ["new@example.org", "known@example.org", "gone@example.org", "waiting@example.org"]
    for i, email in enumerate(emails):
        client = Client(REMOTE_ADDR=f"203.0.113.{i + 2}")
        with (
            CaptureQueriesContext(connection) as queries,
            django_capture_on_commit_callbacks() as callbacks,
        ):
            response = _subscribe(client, track, email=email)
        statements = tuple(q["sql"].split()[0] for q in queries.captured_queries)
        work[email] = (response.status_code, response.content, statements, len(callbacks))
    assert len(set(work.values())) == 1, work
    assert work["new@example.org"][3] == 1  # one task queued, whatever the address


def test_it_confirms_by_a_post_from_the_page_the_link_opens_not_by_the_link_itself(
    track, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    client = Client(enforce_csrf_checks=True)
    client.get("/en/subscribe/")
    csrf = client.cookies["csrftoken"].value
    with django_capture_on_commit_callbacks(execute=True):
        _subscribe(client, track, csrfmiddlewaretoken=csrf)
    [mail] = smtp_server.to("ada@example.org")
    url = f"/en/subscribe/confirm/{_confirm_token(mail)}/"

    page = client.get(url)  # what a mail scanner does
    assert page.status_code == 200
    html = page.content.decode()
    assert f'<form method="post" action="{url}">' in html
    assert "Confirm the subscription" in html
    assert Subscriber.objects.get().status == Subscriber.Status.PENDING

    csrf = client.cookies["csrftoken"].value
    confirmed = client.post(url, {"csrfmiddlewaretoken": csrf})
    assert confirmed.status_code == 200
    assert "Subscription confirmed" in confirmed.content.decode()
    assert Subscriber.objects.get().status == Subscriber.Status.CONFIRMED


def test_it_keeps_the_manage_token_out_of_the_confirmation_link(
    anonymous, track, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        _subscribe(anonymous, track)
    [mail] = smtp_server.to("ada@example.org")
    subscriber = Subscriber.objects.get()
    assert subscriber.token not in mail.get_content()
    token = _confirm_token(mail)
    assert anonymous.get(f"/en/subscribe/preferences/{token}/").status_code == 404
    assert anonymous.get(f"/en/subscribe/unsubscribe/{token}/").status_code == 404


def test_it_counts_an_ipv6_client_by_its_network(track):
    network = ipaddress.ip_network(f"2001:db8:1:2::/{limits.SUBSCRIBE_CLIENT_IPV6_PREFIX}")
    for i in range(limits.SUBSCRIBE_REQUESTS_PER_CLIENT):
        client = Client(REMOTE_ADDR=str(network[i * 7919 + 1]))
        assert _subscribe(client, track, email=f"reader{i}@example.org").status_code == 200
    last_inside = Client(REMOTE_ADDR=str(network[-1]))
    assert _subscribe(last_inside, track, email="one-more@example.org").status_code == 429
    first_outside = Client(REMOTE_ADDR=str(network[-1] + 1))
    assert _subscribe(first_outside, track, email="one-more@example.org").status_code == 200


def test_it_counts_the_client_a_trusted_proxy_names(track, settings):
    settings.CLIENT_IP_HEADER = "X-Forwarded-For"
    proxy = "10.0.0.2"
    for i in range(limits.SUBSCRIBE_REQUESTS_PER_CLIENT):
        client = Client(REMOTE_ADDR=proxy, headers={"X-Forwarded-For": f"1.1.1.{i}, 203.0.113.9"})
        assert _subscribe(client, track, email=f"reader{i}@example.org").status_code == 200
    same = Client(REMOTE_ADDR=proxy, headers={"X-Forwarded-For": "203.0.113.9"})
    assert _subscribe(same, track, email="one-more@example.org").status_code == 429
    other = Client(REMOTE_ADDR=proxy, headers={"X-Forwarded-For": "203.0.113.10"})
    assert _subscribe(other, track, email="one-more@example.org").status_code == 200
