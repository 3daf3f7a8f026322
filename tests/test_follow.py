"""The follow builder: a filter set in the URL (validated, shareable) as one Atom feed and one
mail subscription, daily or weekly, delivering exactly the matching published papers once per
period. Mail goes to a real SMTP server on 127.0.0.1 (tests/smtp_server.py)."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import feedparser
import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from dailies.models import Daily
from follow import limits as follow_limits
from subscriptions import follows, limits
from subscriptions.models import Bounce, Follow, FollowDelivery
from subscriptions.tasks import send_follow_mails
from tests.factories import make_daily, make_paper, make_track
from tests.smtp_server import SMTPServer, free_port

# Pages are read as a browser reads them, whitespace collapsed (the templates' line breaks
# are djhtml's).

LANGS = ["en", "zh"]
CONFIRM = re.compile(r"https?://\S+/subscribe/follow/confirm/(\S+)/")
# Monday 2 November 2026, 10:00 in Shanghai: the week before is 2026-W44 (26 Oct – 1 Nov).
MONDAY = dt.datetime(2026, 11, 2, 2, 0, tzinfo=dt.UTC)


@pytest.fixture
def site(db):
    infra, ml = make_track("infra"), make_track("ml")
    papers = {
        "acme-kv": make_paper("acme-kv", orgs=("Acme",), topics=("kv",), authors=["Ada Byron"]),
        "acme-low": make_paper("acme-low", orgs=("Acme",), topics=("kv",)),
        "acme-ml": make_paper("acme-ml", orgs=("Acme",), topics=("kv",)),
        "beta-kv": make_paper("beta-kv", orgs=("Beta",), topics=("kv",), authors=["Ada Byron"]),
        "acme-draft": make_paper("acme-draft", orgs=("Acme",), topics=("kv",)),
        "acme-old": make_paper("acme-old", orgs=("Acme",), topics=("kv",)),
    }
    make_daily(
        track=infra,
        date=dt.date(2026, 10, 27),
        papers=[papers["acme-kv"], papers["beta-kv"], papers["acme-low"]],
        scores=["4.50", "4.00", "2.50"],
    )
    make_daily(track=ml, date=dt.date(2026, 10, 28), papers=[papers["acme-ml"]], scores=["4.80"])
    make_daily(
        track=infra,
        date=dt.date(2026, 10, 30),
        papers=[papers["acme-draft"]],
        scores=["5.00"],
        status=Daily.Status.DRAFT,
    )
    make_daily(track=infra, date=dt.date(2026, 10, 20), papers=[papers["acme-old"]])
    return papers


FILTERS = "track=infra&lab=acme&topic=kv&min_score=3.00"


def _slugs(parsed) -> set[str]:
    return {e.link.rstrip("/").rsplit("/", 1)[1] for e in parsed.entries}


@pytest.mark.parametrize("lang", LANGS)
def test_it_serves_exactly_the_matching_published_papers_in_the_feed(site, anonymous, lang):
    response = anonymous.get(f"/{lang}/feeds/follow.atom?{FILTERS}")
    assert response.status_code == 200
    parsed = feedparser.parse(response.content)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert _slugs(parsed) == {"acme-kv", "acme-old"}
    by_author = feedparser.parse(
        anonymous.get(f"/{lang}/feeds/follow.atom?author=ada-byron").content
    )
    assert _slugs(by_author) == {"acme-kv", "beta-kv"}
    two_labs = anonymous.get(f"/{lang}/feeds/follow.atom?lab=beta,acme&track=ml")
    assert _slugs(feedparser.parse(two_labs.content)) == {"acme-ml"}


@pytest.mark.parametrize("lang", LANGS)
def test_it_shows_the_builder_with_the_feed_url_and_the_matching_papers(site, anonymous, lang):
    response = anonymous.get(f"/{lang}/follow/?lab=acme&track=infra&min_score=3&topic=kv")
    assert response.status_code == 200
    html = " ".join(response.content.decode().split())
    canonical = "track=infra&amp;topic=kv&amp;lab=acme&amp;min_score=3.00"
    assert f"/{lang}/feeds/follow.atom?{canonical}" in html
    assert 'id="acme-kv"' in html and 'id="acme-old"' in html
    for absent in ("acme-low", "acme-ml", "beta-kv", "acme-draft"):
        assert f'id="{absent}"' not in html
    assert 'name="lab" value="acme" checked' in html
    assert anonymous.get(f"/{lang}/follow/").status_code == 200


@pytest.mark.parametrize(
    "query",
    [
        "lab=nowhere",
        "track=infra&topic=kv&colour=red",
        "min_score=9",
        "min_score=3.33",
        "min_score=abc",
        "lab=secret",  # only in a draft daily
        "author=" + "a" * (follow_limits.MAX_SLUG_LENGTH + 1),
        "&".join(f"lab=l{i}" for i in range(follow_limits.MAX_VALUES_PER_KIND + 1)),
        "lab=" + "x" * follow_limits.MAX_QUERY_LENGTH,
    ],
)
def test_it_refuses_unknown_or_out_of_bounds_filters_with_a_clear_400(site, anonymous, query):
    make_daily(
        track=make_track("infra"),
        date=dt.date(2026, 9, 1),
        papers=[make_paper(orgs=("Secret",))],
        status=Daily.Status.DRAFT,
    )
    feed = anonymous.get(f"/en/feeds/follow.atom?{query}")
    assert feed.status_code == 400
    assert feed["Content-Type"].startswith("text/plain")
    assert b"not valid" in feed.content
    assert anonymous.get(f"/en/follow/?{query}").status_code == 400


def test_it_takes_filters_at_their_bounds(site, anonymous):
    labs = "&".join(["lab=acme"] * follow_limits.MAX_VALUES_PER_KIND)
    assert anonymous.get(f"/en/feeds/follow.atom?{labs}&min_score=5.00").status_code == 200
    assert anonymous.get("/en/feeds/follow.atom?min_score=1.00").status_code == 200
    assert anonymous.get("/en/feeds/follow.atom").status_code == 400  # no filter at all


def _follow(
    client, smtp_server, capture, *, filters=FILTERS, frequency="weekly", email="ada@example.org"
):
    with capture(execute=True):
        response = client.post(
            "/en/subscribe/follow/",
            {"email": email, "filters": filters, "language": "en", "frequency": frequency},
        )
    assert response.status_code == 200, response.content[:400]
    [mail] = smtp_server.to(email)
    token = CONFIRM.search(mail.get_content()).group(1)
    assert client.post(f"/en/subscribe/follow/confirm/{token}/").status_code == 200
    smtp_server.clear()
    return Follow.objects.get(email=email)


def test_it_subscribes_to_a_filter_set_with_a_confirmed_link(
    site, anonymous, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    follow = _follow(anonymous, smtp_server, django_capture_on_commit_callbacks)
    assert follow.status == Follow.Status.CONFIRMED
    assert follow.filters == "track=infra&topic=kv&lab=acme&min_score=3.00"
    refused = anonymous.post(
        "/en/subscribe/follow/",
        {
            "email": "b@example.org",
            "filters": "lab=nowhere",
            "language": "en",
            "frequency": "daily",
        },
    )
    assert refused.status_code == 400 and "nowhere" in " ".join(refused.content.decode().split())
    assert not Follow.objects.filter(email="b@example.org").exists()


def test_it_gives_the_same_answer_to_a_bot_and_stores_nothing(site, anonymous, smtp_server):
    response = anonymous.post(
        "/en/subscribe/follow/",
        {
            "email": "bot@example.org",
            "filters": "lab=acme",
            "language": "en",
            "frequency": "daily",
            "website": "http://spam.example",
        },
    )
    assert response.status_code == 200 and "Check your inbox" in " ".join(
        response.content.decode().split()
    )
    assert not Follow.objects.exists() and smtp_server.messages == []


def test_it_refuses_an_expired_or_tampered_follow_confirmation_link(site, anonymous):
    follow = _confirmed("ada@example.org")
    Follow.objects.filter(pk=follow.pk).update(status=Follow.Status.PENDING)
    token = follows.follow_confirmation_token(follow)
    with time_machine.travel(timezone.now() + limits.CONFIRM_MAX_AGE + dt.timedelta(seconds=5)):
        response = anonymous.post(f"/en/subscribe/follow/confirm/{token}/")
    assert response.status_code == 400 and "has expired" in " ".join(
        response.content.decode().split()
    )
    for bad in (token[:-2] + "xx", follow.token):
        response = anonymous.get(f"/en/subscribe/follow/confirm/{bad}/")
        assert response.status_code == 400 and "no longer valid" in " ".join(
            response.content.decode().split()
        )
    assert Follow.objects.get().status == Follow.Status.PENDING


def test_it_rate_limits_follow_requests_per_address_at_the_limit(site, anonymous):
    for _ in range(limits.SUBSCRIBE_REQUESTS_PER_ADDRESS):
        response = anonymous.post(
            "/en/subscribe/follow/",
            {
                "email": "ada@example.org",
                "filters": "lab=acme",
                "language": "en",
                "frequency": "daily",
            },
        )
        assert response.status_code == 200
    response = anonymous.post(
        "/en/subscribe/follow/",
        {"email": "ada@example.org", "filters": "lab=beta", "language": "en", "frequency": "daily"},
    )
    assert response.status_code == 429


def _text(message) -> str:
    return message.get_body(("plain",)).get_content()


def _sent_slugs(message) -> set[str]:
    """The papers a mail lists, read in both its parts (they must agree)."""
    text = set(re.findall(r"/en/papers/([\w-]+)/", _text(message)))
    html = set(re.findall(r"/en/papers/([\w-]+)/", message.get_body(("html",)).get_content()))
    assert text == html
    return text


@time_machine.travel(MONDAY, tick=False)
def test_it_mails_the_weeks_matching_papers_once_even_when_sent_twice(
    site, anonymous, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    follow = _follow(anonymous, smtp_server, capture)
    other = _follow(
        anonymous, smtp_server, capture, filters="author=ada-byron", email="b@example.org"
    )
    Follow.objects.update(confirmed_at=MONDAY - dt.timedelta(days=10))
    send_follow_mails.delay()
    send_follow_mails.delay()
    [mail] = smtp_server.to("ada@example.org")
    # acme-old is of the week before, acme-draft unpublished, the others do not match.
    assert _sent_slugs(mail) == {"acme-kv"}
    assert mail["Subject"] == "What you follow — Paper Daily, week 2026-W44"
    assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert f"/subscribe/follow/unsubscribe/{follow.token}/" in mail["List-Unsubscribe"]
    assert "/en/infra/week/2026-W44/" in _text(mail)
    [mail_b] = smtp_server.to("b@example.org")
    assert _sent_slugs(mail_b) == {"acme-kv", "beta-kv"}
    assert set(FollowDelivery.objects.values_list("follow", "period", "status", "papers")) == {
        (other.pk, "2026-W44", "sent", 2),
        (follow.pk, "2026-W44", "sent", 1),
    }


@time_machine.travel(dt.datetime(2026, 10, 28, 2, 0, tzinfo=dt.UTC), tick=False)
def test_it_mails_a_daily_follow_the_days_papers_and_nothing_on_an_empty_day(
    site, anonymous, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    follow = _follow(
        anonymous,
        smtp_server,
        django_capture_on_commit_callbacks,
        filters="lab=acme&min_score=3",
        frequency="daily",
    )
    Follow.objects.update(confirmed_at=dt.datetime(2026, 10, 1, tzinfo=dt.UTC))
    send_follow_mails.delay()
    [mail] = smtp_server.to("ada@example.org")
    assert _sent_slugs(mail) == {"acme-kv"}  # 27 October: acme-low is under 3.00
    smtp_server.clear()
    with time_machine.travel(dt.datetime(2026, 10, 31, 2, 0, tzinfo=dt.UTC), tick=False):
        send_follow_mails.delay()  # 30 October has only a draft daily
    assert smtp_server.messages == []
    assert list(FollowDelivery.objects.values_list("follow", "period")) == [
        (follow.pk, "2026-10-27")
    ]


@time_machine.travel(MONDAY, tick=False)
def test_it_unsubscribes_a_follow_by_the_one_click_post_and_mails_it_no_more(
    site, anonymous, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    follow = _follow(anonymous, smtp_server, django_capture_on_commit_callbacks)
    Follow.objects.update(confirmed_at=MONDAY - dt.timedelta(days=10))
    assert anonymous.post(f"/en/subscribe/follow/unsubscribe/{follow.token}/").status_code == 200
    send_follow_mails.delay()
    assert smtp_server.messages == []


def _confirmed(email: str, filters: str = "lab=acme") -> Follow:
    return Follow.objects.create(
        email=email,
        language="en",
        filters=filters,
        filters_digest=follows.filters_digest(filters),
        frequency="weekly",
        status=Follow.Status.CONFIRMED,
        confirmed_at=MONDAY - dt.timedelta(days=10),
    )


def _send_week(*follow_list: Follow):
    return follows.follow_send_batch(
        frequency="weekly", period_key="2026-W44", follow_ids=[f.pk for f in follow_list]
    )


@time_machine.travel(MONDAY, tick=False)
def test_a_hard_bounce_suspends_the_follow_gives_its_mail_up_and_mails_the_others(
    site, smtp_server
):
    smtp_server.refuse["dead@example.org"] = "550 5.1.1 No such user"
    dead, ada = _confirmed("dead@example.org"), _confirmed("ada@example.org")
    outcome = _send_week(dead, ada)
    assert (outcome.failed, outcome.sent, outcome.retry) == ([dead.pk], [ada.pk], [])
    assert len(smtp_server.to("ada@example.org")) == 1
    dead.refresh_from_db()
    assert dead.status == Follow.Status.SUSPENDED and dead.suspended_at is not None
    bounce = Bounce.objects.get()
    assert (bounce.email, bounce.kind, bounce.delivery) == ("dead@example.org", "hard", None)
    delivery = FollowDelivery.objects.get(follow=dead)
    assert (delivery.status, delivery.attempts) == (FollowDelivery.Status.FAILED, 1)
    assert "550" in delivery.last_error
    assert _send_week(dead).skipped == [dead.pk]  # suspended: never tried again


@time_machine.travel(MONDAY, tick=False)
def test_it_retries_a_follow_mail_when_the_server_is_down_without_blaming_the_address(
    site, settings
):
    follow = _confirmed("ada@example.org")
    port = free_port()  # nothing listens here yet
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", port, 2
    outcome = _send_week(follow)
    assert outcome.retry == [follow.pk] and outcome.retry_in == 60
    delivery = FollowDelivery.objects.get()
    assert delivery.status == FollowDelivery.Status.QUEUED and delivery.last_error
    follow.refresh_from_db()
    assert follow.failure_count == 0 and not Bounce.objects.exists()
    assert _send_week(follow).skipped == [follow.pk]  # not before its backoff has passed
    with (
        SMTPServer(port) as server,
        time_machine.travel(MONDAY + limits.retry_delay(1), tick=False),
    ):
        assert _send_week(follow).sent == [follow.pk]
        assert len(server.to("ada@example.org")) == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.papers) == ("sent", 2, 3)


def test_it_keeps_stored_line_breaks_out_of_the_follow_mails_headers(site, settings):
    follow = Follow(
        email="ada@example.org",
        language="en",
        filters="lab=acme",
        frequency="weekly",
        token="tok",
    )
    settings.DIGEST_UNSUBSCRIBE_MAILTO = ""
    period = follows.Period.of("weekly", "2026-W44")
    message = follows.follow_message(
        follow=follow, period=period, entries=[], message_id="<a@b>"
    ).message()
    assert "\n" not in message["Subject"] and "\n" not in message["List-Id"]


def test_it_reads_a_follow_mails_papers_in_a_fixed_number_of_queries(db):
    track = make_track("infra")
    counts = []
    for day, n in ((26, 2), (27, 6)):
        papers = [make_paper(orgs=("Acme",)) for _ in range(n)]
        make_daily(track=track, date=dt.date(2026, 10, day), papers=papers)
        period = follows.Period.of("daily", f"2026-10-{day}")
        filters = follows.FollowFilters(labs=("acme",), min_score=Decimal("1.00"))
        with CaptureQueriesContext(connection) as ctx:
            assert len(follows.follow_entries(filters, period)) == n
        counts.append(len(ctx.captured_queries))
    assert counts == [3, 3]
