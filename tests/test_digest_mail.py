"""Mailing a published daily: each confirmed subscriber gets it exactly once, whatever
redelivers, races or re-publishes; bounces and failures are recorded and suspend addresses.

Mail goes to a real SMTP server on 127.0.0.1 (tests/smtp_server.py)."""

from __future__ import annotations

import datetime as dt
import re
import threading
import time
from io import StringIO

import pytest
import time_machine
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from dailies import services as daily_services
from dailies.models import Daily
from digest_site import env
from papers.models import Paper, Summary, Topic, Venue
from subscriptions import limits, services, tasks
from subscriptions.models import Bounce, Delivery, Subscriber
from tests.factories import make_daily, make_paper, make_subscriber, make_track
from tests.smtp_server import SMTPServer, free_port

pytestmark = pytest.mark.django_db

DATE = dt.date(2026, 10, 28)


@pytest.fixture
def track():
    return make_track("infra", name_en="Infra", name_zh="基础设施")


@pytest.fixture
def draft(track):
    venue = Venue.objects.create(slug="nsdi-2027", short_name="NSDI", year=2027)
    lead = make_paper(
        "hilo",
        short_name="HiLO",
        orgs=("Microsoft",),
        topics=("kv-cache",),
        venue=venue,
        venue_status=Paper.VenueStatus.ACCEPTED,
        abs_url="https://arxiv.org/abs/2610.00001",
    )
    other = make_paper("wakman", orgs=("NVIDIA",))
    return make_daily(
        track=track,
        date=DATE,
        papers=[lead, other],
        scores=["4.35", "3.90"],
        status=Daily.Status.DRAFT,
        intro_en="Two papers on serving today.",
        intro_zh="今天有两篇关于推理服务的论文。",
    )


def _publish(daily, capture):
    with capture(execute=True):
        daily_services.daily_publish(daily=daily)


def _digests(server, address):
    return [
        m for m in server.to(address) if "Paper Daily" in m["Subject"] or "论文日报" in m["Subject"]
    ]


def _parts(message) -> tuple[str, str]:
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    return text, html


def test_it_mails_one_digest_to_each_confirmed_subscriber_after_double_opt_in(
    anonymous, track, draft, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    for email, language in [("ada@example.org", "en"), ("lin@example.org", "zh")]:
        with django_capture_on_commit_callbacks(execute=True):
            anonymous.post(
                "/en/subscribe/", {"email": email, "track": track.pk, "language": language}
            )
        [confirmation] = smtp_server.to(email)
        link = re.search(r"https?://\S+(/\w+/subscribe/confirm/\S+/)", confirmation.get_content())
        assert anonymous.post(link.group(1)).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        anonymous.post(
            "/en/subscribe/", {"email": "later@example.org", "track": track.pk, "language": "en"}
        )  # never confirms
    gone = make_subscriber("gone@example.org", track=track, status="unsubscribed")
    smtp_server.clear()

    _publish(draft, django_capture_on_commit_callbacks)

    [en] = smtp_server.to("ada@example.org")
    [zh] = smtp_server.to("lin@example.org")
    assert smtp_server.to("later@example.org") == smtp_server.to(gone.email) == []
    assert len(smtp_server.messages) == 2
    assert en["Subject"] == "Infra — Paper Daily, 2026-10-28"
    assert zh["Subject"] == "基础设施 — 论文日报，2026-10-28"
    for message, lang in [(en, "en"), (zh, "zh")]:
        assert message.get_content_type() == "multipart/alternative"
        subscriber = Subscriber.objects.get(email=message["To"])
        url = f"http://127.0.0.1:8000/{lang}/subscribe/unsubscribe/{subscriber.token}/"
        # (a long header is folded; unfolding leaves the space, which RFC 2369 ignores)
        assert message["List-Unsubscribe"].strip() == f"<{url}>"
        assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        delivery = Delivery.objects.get(subscriber=subscriber, daily=draft)
        assert delivery.status == Delivery.Status.SENT
        assert delivery.message_id == message["Message-ID"]
    assert "今天有两篇关于推理服务的论文。" in _parts(zh)[0]
    assert "Two papers on serving today." in _parts(en)[0]


def test_it_puts_the_whole_daily_in_the_mail_with_absolute_links(
    track, draft, smtp_server, eager_tasks, django_capture_on_commit_callbacks, settings
):
    settings.DIGEST_UNSUBSCRIBE_MAILTO = "unsubscribe@paperdaily.example"
    subscriber = make_subscriber("ada@example.org", track=track)
    _publish(draft, django_capture_on_commit_callbacks)
    [message] = smtp_server.to("ada@example.org")
    text, html = _parts(message)
    site = "http://127.0.0.1:8000"
    for part in (text, html):
        assert "Two papers on serving today." in part
        assert "4.35" in part and "3.90" in part
        assert "Microsoft" in part and "NVIDIA" in part
        assert "Accepted at NSDI 2027" in part
        assert "HiLO: hilo headline" in part  # entry_heading
        assert f"{site}/en/papers/hilo/" in part
        assert f"{site}/en/papers/wakman/" in part
        assert "https://arxiv.org/abs/2610.00001" in part
        assert f"{site}/en/subscribe/preferences/{subscriber.token}/" in part
        assert f"{site}/en/subscribe/unsubscribe/{subscriber.token}/" in part
    assert f'href="{site}/en/infra/2026-10-28/"' in html
    assert '<strong class="takeaway">Takeaway sentence here.</strong>' in html
    assert "An English summary. Takeaway sentence here. More evidence." in text
    assert message["List-Unsubscribe"].strip() == (
        f"<{site}/en/subscribe/unsubscribe/{subscriber.token}/>, "
        f"<mailto:unsubscribe@paperdaily.example?subject=unsubscribe%20{subscriber.token}>"
    )


def test_it_mails_a_topic_subscriber_only_dailies_with_that_topic(
    track, draft, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    kv = Topic.objects.get(slug="kv-cache")
    other = Topic.objects.create(slug="vector-search", name_en="Vector search", name_zh="向量检索")
    make_subscriber("kv@example.org", track=track, topic=kv)
    make_subscriber("vec@example.org", track=track, topic=other)
    make_subscriber("all@example.org", track=track)
    make_subscriber("elsewhere@example.org", track=make_track("systems"))
    _publish(draft, django_capture_on_commit_callbacks)
    assert len(smtp_server.to("kv@example.org")) == 1
    assert len(smtp_server.to("all@example.org")) == 1
    assert smtp_server.to("vec@example.org") == []
    assert smtp_server.to("elsewhere@example.org") == []


def test_it_keeps_one_delivery_per_subscriber_and_daily_in_the_database(track, draft):
    subscriber = make_subscriber(track=track)
    Delivery.objects.create(subscriber=subscriber, daily=draft)
    with pytest.raises(IntegrityError), transaction.atomic():
        Delivery.objects.create(subscriber=subscriber, daily=draft)


def test_it_sends_once_when_the_send_task_is_redelivered(track, draft, smtp_server, eager_tasks):
    daily_services.daily_publish(daily=draft)
    ids = [make_subscriber(track=track).pk for _ in range(3)]
    first = tasks.send_digest_batch.apply(args=(draft.pk, ids)).get()
    again = tasks.send_digest_batch.apply(args=(draft.pk, ids)).get()
    assert first == {"sent": 3, "skipped": 0, "failed": 0, "retry": 0}
    assert again == {"sent": 0, "skipped": 3, "failed": 0, "retry": 0}
    assert len(smtp_server.messages) == 3
    assert sorted(len(smtp_server.to(s.email)) for s in Subscriber.objects.all()) == [1, 1, 1]


def test_it_sends_a_republished_daily_to_no_one_twice(
    track, draft, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    make_subscriber("ada@example.org", track=track)
    _publish(draft, django_capture_on_commit_callbacks)
    daily_services.daily_unpublish(daily=draft)
    make_subscriber("new@example.org", track=track)
    _publish(Daily.objects.get(pk=draft.pk), django_capture_on_commit_callbacks)
    assert len(smtp_server.to("ada@example.org")) == 1
    assert len(smtp_server.to("new@example.org")) == 1  # joined in between: gets it once


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_sends_once_when_two_workers_race_on_the_same_daily(track, draft, smtp_server):
    if connection.vendor != "postgresql":
        pytest.skip("the race needs PostgreSQL's row locking (SQLite serialises writers)")
    # Published without its on-commit fan-out: the two workers below are the only senders.
    Daily.objects.filter(pk=draft.pk).update(status="published", published_at=timezone.now())
    ids = [make_subscriber(track=track).pk for _ in range(8)]
    smtp_server.handler.data_delay = 0.05  # both workers are mid-batch at the same time
    start = threading.Barrier(2)
    outcomes, errors = [], []

    def worker():
        try:
            start.wait()
            outcomes.append(services.digest_send_batch(daily_id=draft.pk, subscriber_ids=ids))
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert sum(len(o.sent) for o in outcomes) == 8
    assert sorted(len(smtp_server.to(s.email)) for s in Subscriber.objects.all()) == [1] * 8
    assert Delivery.objects.filter(status=Delivery.Status.SENT).count() == 8


def test_it_leaves_a_delivery_another_worker_holds_until_its_lease_runs_out(
    track, draft, smtp_server
):
    daily_services.daily_publish(daily=draft)
    subscriber = make_subscriber("ada@example.org", track=track)
    claimed = timezone.now()
    Delivery.objects.create(subscriber=subscriber, daily=draft, claimed_at=claimed, attempts=1)
    with time_machine.travel(claimed + limits.DELIVERY_LEASE - dt.timedelta(seconds=1)):
        outcome = services.digest_send_batch(daily_id=draft.pk, subscriber_ids=[subscriber.pk])
    assert outcome.skipped == [subscriber.pk]
    assert smtp_server.messages == []
    with time_machine.travel(claimed + limits.DELIVERY_LEASE + dt.timedelta(seconds=1)):
        outcome = services.digest_send_batch(daily_id=draft.pk, subscriber_ids=[subscriber.pk])
        again = services.digest_send_batch(daily_id=draft.pk, subscriber_ids=[subscriber.pk])
    assert outcome.sent == [subscriber.pk] and again.skipped == [subscriber.pk]
    assert len(smtp_server.to("ada@example.org")) == 1
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts) == (Delivery.Status.SENT, 2)


def test_it_suspends_a_hard_bouncing_address_and_mails_the_others(
    track, draft, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    smtp_server.refuse["dead@example.org"] = "550 5.1.1 No such user"
    dead = make_subscriber("dead@example.org", track=track)
    dead_zh = make_subscriber("dead@example.org", track=track, language="zh")
    make_subscriber("a@example.org", track=track)
    make_subscriber("b@example.org", track=track)
    _publish(draft, django_capture_on_commit_callbacks)
    assert len(smtp_server.to("a@example.org")) == len(smtp_server.to("b@example.org")) == 1
    dead.refresh_from_db()
    dead_zh.refresh_from_db()
    assert dead.status == dead_zh.status == Subscriber.Status.SUSPENDED
    assert dead.suspended_at is not None
    bounce = Bounce.objects.get()  # the first refusal suspended both: no second try
    assert (bounce.email, bounce.kind) == ("dead@example.org", Bounce.Kind.HARD)
    assert "550" in bounce.detail and "No such user" in bounce.detail
    delivery = Delivery.objects.get(subscriber__email="dead@example.org")
    assert (delivery.status, delivery.attempts) == (Delivery.Status.FAILED, 1)
    assert "550" in delivery.last_error


def test_it_retries_a_soft_bounce_with_backoff_and_gives_up_after_the_last_attempt(
    track, draft, smtp_server, monkeypatch
):
    daily_services.daily_publish(daily=draft)
    smtp_server.refuse["full@example.org"] = "452 4.2.2 Mailbox full"
    pk = make_subscriber("full@example.org", track=track).pk
    queued = []  # what the task hands back to the broker
    monkeypatch.setattr(
        tasks.send_digest_batch,
        "apply_async",
        lambda args, countdown: queued.append((args, countdown)),
    )
    assert limits.retry_delay(1).total_seconds() == 60
    assert limits.retry_delay(3).total_seconds() == 240
    assert limits.retry_delay(30) == limits.RETRY_BACKOFF_CAP
    with time_machine.travel(timezone.now(), tick=False) as clock:
        assert tasks.send_digest_batch(draft.pk, [pk])["retry"] == 1
        assert queued == [((draft.pk, [pk]), 60.0)]
        delivery = Delivery.objects.get()
        assert (delivery.status, delivery.attempts, delivery.claimed_at) == ("queued", 1, None)
        assert "452" in delivery.last_error
        for attempt in range(2, limits.DELIVERY_MAX_ATTEMPTS + 1):
            # Not before its time: a redelivered task or the sweep leaves it alone.
            clock.shift(limits.retry_delay(attempt - 1) - dt.timedelta(seconds=1))
            assert services.digest_send_batch(daily_id=draft.pk, subscriber_ids=[pk]).skipped
            clock.shift(dt.timedelta(seconds=1))
            outcome = services.digest_send_batch(daily_id=draft.pk, subscriber_ids=[pk])
            assert outcome.retry == [] if attempt == limits.DELIVERY_MAX_ATTEMPTS else [pk]
        delivery.refresh_from_db()
        assert (delivery.status, delivery.attempts, delivery.retry_after) == (
            Delivery.Status.FAILED,
            limits.DELIVERY_MAX_ATTEMPTS,
            None,
        )
        assert outcome.failed == [pk]
        soft = Bounce.objects.filter(kind=Bounce.Kind.SOFT).count()
        assert soft == limits.DELIVERY_MAX_ATTEMPTS
        # Given up: later runs do not try again.
        clock.shift(dt.timedelta(days=1))
        assert services.digest_send_batch(daily_id=draft.pk, subscriber_ids=[pk]).skipped == [pk]
    assert smtp_server.messages == []


def test_it_suspends_an_address_after_repeated_failures_at_the_limit(track, draft, smtp_server):
    daily_services.daily_publish(daily=draft)
    smtp_server.refuse["flaky@example.org"] = "451 4.3.0 Try again later"
    smtp_server.refuse["flakier@example.org"] = "451 4.3.0 Try again later"
    near = make_subscriber("flaky@example.org", track=track)
    at = make_subscriber("flakier@example.org", track=track)
    Subscriber.objects.filter(pk=near.pk).update(failure_count=limits.SUSPEND_AFTER_FAILURES - 2)
    Subscriber.objects.filter(pk=at.pk).update(failure_count=limits.SUSPEND_AFTER_FAILURES - 1)
    services.digest_send_batch(daily_id=draft.pk, subscriber_ids=[near.pk, at.pk])
    near.refresh_from_db()
    at.refresh_from_db()
    assert near.status == Subscriber.Status.CONFIRMED
    assert near.failure_count == limits.SUSPEND_AFTER_FAILURES - 1
    assert at.status == Subscriber.Status.SUSPENDED
    # A success (its retry, when due) resets the count.
    del smtp_server.refuse["flaky@example.org"]
    with time_machine.travel(timezone.now() + limits.retry_delay(1)):
        services.digest_send_batch(daily_id=draft.pk, subscriber_ids=[near.pk])
    near.refresh_from_db()
    assert (near.status, near.failure_count) == (Subscriber.Status.CONFIRMED, 0)


def test_it_retries_when_the_server_is_down_without_blaming_the_address(track, draft, settings):
    daily_services.daily_publish(daily=draft)
    subscriber = make_subscriber("ada@example.org", track=track)
    port = free_port()  # nothing listens here yet
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", port, 2
    outcome = services.digest_send_batch(daily_id=draft.pk, subscriber_ids=[subscriber.pk])
    assert outcome.retry == [subscriber.pk]
    delivery = Delivery.objects.get()
    assert delivery.status == Delivery.Status.QUEUED and delivery.last_error
    subscriber.refresh_from_db()
    assert subscriber.failure_count == 0
    assert not Bounce.objects.exists()

    later = timezone.now() + limits.retry_delay(1)
    with SMTPServer(port) as server, time_machine.travel(later):
        outcome = services.digest_send_batch(daily_id=draft.pk, subscriber_ids=[subscriber.pk])
        assert outcome.sent == [subscriber.pk]
        assert len(server.to("ada@example.org")) == 1


@pytest.mark.parametrize("status", [Daily.Status.DRAFT, Daily.Status.SCHEDULED])
def test_it_mails_a_draft_or_scheduled_daily_to_no_one(track, smtp_server, eager_tasks, status):
    daily = make_daily(track=track, date=DATE, status=status)
    subscriber = make_subscriber(track=track)
    assert services.digest_batches(daily_id=daily.pk) == []
    assert tasks.fan_out_digest.apply(args=(daily.pk,)).get() == 0
    outcome = services.digest_send_batch(daily_id=daily.pk, subscriber_ids=[subscriber.pk])
    assert outcome.skipped == [subscriber.pk]
    assert smtp_server.messages == []
    assert not Delivery.objects.exists()
    with pytest.raises(CommandError, match="not published"):
        call_command("send_digest", "infra", "2026-10-28")


def test_it_mails_no_one_when_the_daily_is_unpublished_after_the_fan_out(track, draft, smtp_server):
    daily_services.daily_publish(daily=draft)
    subscriber = make_subscriber(track=track)
    [batch] = services.digest_batches(daily_id=draft.pk)
    daily_services.daily_unpublish(daily=draft)
    services.digest_send_batch(daily_id=draft.pk, subscriber_ids=batch)
    assert smtp_server.messages == [] and batch == [subscriber.pk]


def test_it_mails_no_one_who_unsubscribed_after_the_fan_out(track, draft, smtp_server):
    daily_services.daily_publish(daily=draft)
    subscriber = make_subscriber(track=track)
    [batch] = services.digest_batches(daily_id=draft.pk)
    services.subscriber_unsubscribe(subscriber=subscriber)
    services.digest_send_batch(daily_id=draft.pk, subscriber_ids=batch)
    assert smtp_server.messages == []


def test_it_mails_a_scheduled_daily_when_the_scheduler_publishes_it(
    track, draft, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    make_subscriber("ada@example.org", track=track)
    now = timezone.now()
    daily_services.daily_schedule(daily=draft, publish_at=now - dt.timedelta(minutes=1))
    assert smtp_server.messages == []
    with django_capture_on_commit_callbacks(execute=True):
        assert daily_services.daily_publish_if_due(daily_id=draft.pk, now=now)
    assert len(smtp_server.to("ada@example.org")) == 1


def test_it_fans_out_in_batches(track, draft, smtp_server, eager_tasks, monkeypatch):
    monkeypatch.setattr(limits, "BATCH_SIZE", 2)
    daily_services.daily_publish(daily=draft)
    for _ in range(5):
        make_subscriber(track=track)
    batches = services.digest_batches(daily_id=draft.pk)
    assert [len(b) for b in batches] == [2, 2, 1]
    assert tasks.fan_out_digest.apply(args=(draft.pk,)).get() == 3
    assert len(smtp_server.messages) == 5


def test_send_digest_is_idempotent_and_says_what_it_did(track, draft, smtp_server):
    daily_services.daily_publish(daily=draft)
    for _ in range(3):
        make_subscriber(track=track)
    make_subscriber(track=track, status="pending")
    out = StringIO()
    call_command("send_digest", "infra", "2026-10-28", stdout=out)
    assert out.getvalue().strip() == (
        "infra 2026-10-28: sent 3, skipped 0, failed 0, to retry 0 (3 subscribers due)"
    )
    out = StringIO()
    call_command("send_digest", "infra", "2026-10-28", stdout=out)
    assert "sent 0" in out.getvalue() and "(0 subscribers due)" in out.getvalue()
    assert len(smtp_server.messages) == 3


def test_send_digest_refuses_an_unknown_daily(track):
    with pytest.raises(CommandError, match="no daily of infra"):
        call_command("send_digest", "infra", "2026-10-29")


# --- configuration --------------------------------------------------------------------


def test_it_prints_mail_to_the_console_when_no_email_url_is_set(monkeypatch):
    monkeypatch.delenv("EMAIL_URL", raising=False)
    config = env.env_email_url("EMAIL_URL")
    assert config["EMAIL_BACKEND"] == "django.core.mail.backends.console.EmailBackend"


def test_it_reads_smtp_settings_from_email_url(monkeypatch):
    monkeypatch.setenv("EMAIL_URL", "smtp://digest%40example.org:p%40ss%3Aw@mail.example:587?tls=1")
    config = env.env_email_url("EMAIL_URL")
    assert config == {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "mail.example",
        "EMAIL_PORT": 587,
        "EMAIL_HOST_USER": "digest@example.org",
        "EMAIL_HOST_PASSWORD": "p@ss:w",
        "EMAIL_USE_TLS": True,
        "EMAIL_USE_SSL": False,
        "EMAIL_TIMEOUT": 30,
    }
    monkeypatch.setenv("EMAIL_URL", "smtps://u:p@mail.example?timeout=10")
    config = env.env_email_url("EMAIL_URL")
    assert (config["EMAIL_PORT"], config["EMAIL_USE_SSL"], config["EMAIL_USE_TLS"]) == (
        465,
        True,
        False,
    )
    assert config["EMAIL_TIMEOUT"] == 10


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("smtpx://mail.example", "scheme"),
        ("mail.example:25", "scheme"),
        ("smtp://", "no host"),
        ("smtp://mail.example:notaport", "not a mail URL"),
        ("smtps://mail.example?tls=1", "smtps is TLS already"),
        ("smtp://mail.example?tls=maybe", "tls must be"),
        ("smtp://mail.example?starttls=1", "unknown or repeated"),
        ("smtp://mail.example?timeout=0", "timeout"),
    ],
)
def test_it_fails_loudly_on_a_bad_email_url(monkeypatch, value, message):
    monkeypatch.setenv("EMAIL_URL", value.replace("mail.example", "user:s3cret@mail.example"))
    with pytest.raises(ImproperlyConfigured, match=message) as exc:
        env.env_email_url("EMAIL_URL")
    assert "s3cret" not in str(exc.value)


def _wait_for(condition, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_mails_the_digest_once_after_publishing(
    track, draft, smtp_server, monkeypatch, request
):
    if not (settings.REDIS_URL and connection.vendor == "postgresql"):
        pytest.skip("needs REDIS_URL and a PostgreSQL DATABASE_URL")
    monkeypatch.setenv("EMAIL_URL", f"smtp://{smtp_server.host}:{smtp_server.port}")
    request.getfixturevalue("worker")  # started after EMAIL_URL is set: it mails our server
    ids = [make_subscriber(track=track).pk for _ in range(3)]
    make_subscriber(track=track, status="pending")

    daily_services.daily_publish(daily=draft)  # commits: the fan-out goes through Redis

    assert _wait_for(lambda: len(smtp_server.messages) == 3)
    assert _wait_for(
        lambda: Delivery.objects.filter(status=Delivery.Status.SENT).count() == 3, timeout=10
    )
    # Redelivered fan-out and batch, in the worker: nothing more goes out.
    assert tasks.fan_out_digest.delay(draft.pk).get(timeout=60) == 0
    again = tasks.send_digest_batch.delay(draft.pk, ids).get(timeout=60)
    assert again == {"sent": 0, "skipped": 3, "failed": 0, "retry": 0}
    assert len(smtp_server.messages) == 3


def test_it_gives_each_mail_its_own_links(track, draft, smtp_server):
    daily_services.daily_publish(daily=draft)
    subscribers = [make_subscriber(track=track, language=lang) for lang in ("en", "zh", "en")]
    services.digest_send_batch(daily_id=draft.pk, subscriber_ids=[s.pk for s in subscribers])
    tokens = {s.token for s in subscribers}
    for subscriber in subscribers:
        [message] = smtp_server.to(subscriber.email)
        for part in _parts(message):
            assert f"/{subscriber.language}/subscribe/unsubscribe/{subscriber.token}/" in part
            assert f"/subscribe/preferences/{subscriber.token}/" in part
            assert not any(t in part for t in tokens - {subscriber.token})
            assert "token" not in part.replace(subscriber.token, "")  # no slot left behind


def test_it_sends_a_batch_in_queries_that_grow_with_subscribers_not_entries(track, smtp_server):
    from django.test.utils import CaptureQueriesContext

    def queries(entries: int, subscribers: int, day: int) -> int:
        daily = make_daily(
            track=track,
            date=DATE + dt.timedelta(days=day),
            papers=[make_paper(orgs=("Microsoft",), topics=("kv-cache",)) for _ in range(entries)],
        )
        ids = [make_subscriber(track=track).pk for _ in range(subscribers)]
        with CaptureQueriesContext(connection) as captured:
            outcome = services.digest_send_batch(daily_id=daily.pk, subscriber_ids=ids)
        assert len(outcome.sent) == subscribers
        return len(captured.captured_queries)

    base = queries(entries=2, subscribers=2, day=0)
    assert queries(entries=8, subscribers=2, day=1) == base  # entries are prefetched
    per_mail = (queries(entries=2, subscribers=6, day=2) - base) / 4
    assert per_mail == int(per_mail) and per_mail <= 6


def test_the_sweep_finishes_what_a_dead_worker_left_and_mails_no_newcomer(
    track, draft, smtp_server, eager_tasks
):
    daily_services.daily_publish(daily=draft)
    published = Daily.objects.get(pk=draft.pk).published_at
    held = make_subscriber("held@example.org", track=track)  # its worker died mid-send
    make_subscriber("never@example.org", track=track)  # in the batch it never reached
    waiting = make_subscriber("waiting@example.org", track=track)  # a retry not yet due
    done = make_subscriber("done@example.org", track=track)
    Subscriber.objects.update(confirmed_at=published - dt.timedelta(days=1))
    Delivery.objects.create(subscriber=held, daily=draft, claimed_at=published, attempts=1)
    Delivery.objects.create(
        subscriber=waiting,
        daily=draft,
        attempts=1,
        retry_after=published + limits.DELIVERY_LEASE + dt.timedelta(hours=1),
    )
    Delivery.objects.create(subscriber=done, daily=draft, status="sent", sent_at=published)
    newcomer = make_subscriber("new@example.org", track=track)  # confirmed after publication
    Subscriber.objects.filter(pk=newcomer.pk).update(confirmed_at=published + dt.timedelta(hours=1))
    old = make_daily(track=track, date=DATE - dt.timedelta(days=5))
    Daily.objects.filter(pk=old.pk).update(
        published_at=published - limits.RESUME_WINDOW - dt.timedelta(minutes=1)
    )

    with time_machine.travel(published + limits.DELIVERY_LEASE + dt.timedelta(seconds=1)):
        assert tasks.resume_digests.apply().get() == [draft.pk]
        assert tasks.resume_digests.apply().get() == [draft.pk]  # twice: still once each
    assert len(smtp_server.to("held@example.org")) == 1
    assert len(smtp_server.to("never@example.org")) == 1
    assert smtp_server.to("waiting@example.org") == smtp_server.to("done@example.org") == []
    assert smtp_server.to("new@example.org") == []
    assert len(smtp_server.messages) == 2


def test_it_gives_up_a_delivery_whose_worker_died_on_the_last_attempt(track, draft, smtp_server):
    daily_services.daily_publish(daily=draft)
    subscriber = make_subscriber(track=track)
    claimed = timezone.now()
    Delivery.objects.create(
        subscriber=subscriber,
        daily=draft,
        claimed_at=claimed,
        attempts=limits.DELIVERY_MAX_ATTEMPTS,
    )
    with time_machine.travel(claimed + limits.DELIVERY_LEASE + dt.timedelta(seconds=1)):
        outcome = services.digest_send_batch(daily_id=draft.pk, subscriber_ids=[subscriber.pk])
    assert outcome.skipped == [subscriber.pk]
    assert Delivery.objects.get().status == Delivery.Status.FAILED
    assert smtp_server.messages == []


def test_send_digest_reports_failures_and_exits_non_zero(track, draft, smtp_server):
    daily_services.daily_publish(daily=draft)
    smtp_server.refuse["dead@example.org"] = "550 5.1.1 No such user"
    make_subscriber("dead@example.org", track=track)
    make_subscriber("ada@example.org", track=track)
    out = StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("send_digest", "infra", "2026-10-28", stdout=out)
    assert exit_.value.code == 1
    assert out.getvalue().strip() == (
        "infra 2026-10-28: sent 1, skipped 0, failed 1, to retry 0 (2 subscribers due)"
    )
    assert len(smtp_server.to("ada@example.org")) == 1


def test_it_says_which_texts_a_machine_drafted(
    track, draft, smtp_server, eager_tasks, django_capture_on_commit_callbacks
):
    make_subscriber("ada@example.org", track=track)
    track.require_review = False  # an unreviewed machine draft goes out (this track's rule)
    track.save()
    Daily.objects.filter(pk=draft.pk).update(intro_en_provenance=Summary.Provenance.MACHINE)
    Summary.objects.filter(paper__slug="hilo", language="en").update(
        provenance=Summary.Provenance.MACHINE
    )
    Summary.objects.filter(paper__slug="wakman", language="en").update(
        provenance=Summary.Provenance.MACHINE, reviewed_at=timezone.now()
    )
    draft.refresh_from_db()
    _publish(draft, django_capture_on_commit_callbacks)
    [message] = smtp_server.to("ada@example.org")
    text, html = _parts(message)
    assert "<p><em>Intro: machine draft</em></p>" in html
    assert "(Intro: machine draft)" in text
    for hilo, wakman in (text.split("\n2. "), html.split("<li>")[1:]):
        assert "hilo" in hilo and "wakman" in wakman
        assert "Machine draft, not yet reviewed by an editor" in hilo
        assert "Machine draft, reviewed by an editor" in wakman


def test_it_mails_a_track_whose_name_holds_a_line_break_with_the_subject_on_one_line(
    track, draft, smtp_server
):
    # A contributor can store any text as a track's name; none of it may become a header.
    track.name_en = "Infra\r\nBcc: victim@example.org"
    track.save(update_fields=["name_en"])
    daily_services.daily_publish(daily=draft)
    ada = make_subscriber("ada@example.org", track=track)
    lin = make_subscriber("lin@example.org", track=track, language="zh")
    outcome = services.digest_send_batch(daily_id=draft.pk, subscriber_ids=[ada.pk, lin.pk])
    assert outcome.as_dict() == {"sent": 2, "skipped": 0, "failed": 0, "retry": 0}
    [message] = smtp_server.to("ada@example.org")
    # (a long header is folded; unfolding leaves a space in front)
    assert message["Subject"].strip() == "Infra Bcc: victim@example.org — Paper Daily, 2026-10-28"
    assert message["Bcc"] is None
    assert smtp_server.to("victim@example.org") == []
    assert len(smtp_server.to("lin@example.org")) == 1
    assert set(Delivery.objects.values_list("status", flat=True)) == {Delivery.Status.SENT}


def test_it_records_a_failure_for_a_mail_it_cannot_build_and_mails_the_others(
    track, draft, smtp_server
):
    daily_services.daily_publish(daily=draft)
    # Stored before addresses were checked: no header can carry it.
    broken = make_subscriber("broken\n@example.org", track=track)
    ada = make_subscriber("ada@example.org", track=track)
    outcome = services.digest_send_batch(daily_id=draft.pk, subscriber_ids=[broken.pk, ada.pk])
    assert outcome.as_dict() == {"sent": 1, "skipped": 0, "failed": 1, "retry": 0}
    assert len(smtp_server.to("ada@example.org")) == 1
    delivery = Delivery.objects.get(subscriber=broken)
    assert delivery.status == Delivery.Status.FAILED
    assert delivery.last_error
