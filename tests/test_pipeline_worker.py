"""End to end through a real Celery worker on Redis and PostgreSQL: ingest a feed, score it,
assemble the draft daily, publish it, and read it on the daily page."""

from __future__ import annotations

import datetime as dt
import re
import time
import tomllib
import zoneinfo
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from dailies.models import Daily
from dailies.services import daily_accept_untranslated, daily_schedule
from dailies.tasks import assemble_daily, publish_due_dailies
from papers.drafting.edits import summary_confirm
from papers.models import IngestRun, Paper, Source, Track
from papers.tasks import ingest_source_task, score_pending_papers
from tests.arxiv_docs import Entry, api_page
from tests.recorded_server import Reply

pytestmark = [
    pytest.mark.redis,
    pytest.mark.postgres,
    pytest.mark.skipif(
        not (settings.REDIS_URL and settings.DATABASES["default"]["ENGINE"].endswith("postgresql")),
        reason="needs REDIS_URL and a PostgreSQL DATABASE_URL (CI sets both)",
    ),
]

LABELLED = Path(__file__).resolve().parent / "data" / "scoring_labelled.toml"


def _feed() -> bytes:
    with LABELLED.open("rb") as f:
        papers = tomllib.load(f)["paper"]
    entries = [
        Entry(
            arxiv_id=f"2611.{9000 + i:05d}",
            title=p["title"],
            summary=p["abstract"],
            comment=p["comment"],
            authors=[("A. Researcher", "Microsoft Research")],
        )
        for i, p in enumerate(papers[:12])
    ]
    return api_page(entries)


def test_a_feed_becomes_a_published_daily_through_the_worker(worker, recorded_server, editor):
    from dailies.demo import demo_load

    demo_load()
    track = Track.objects.get(slug="infra")
    url = recorded_server.serve("/api/query", Reply(body=_feed()))
    source = Source.objects.create(
        name="e2e arXiv", kind=Source.Kind.ARXIV_API, url=url, config={"search_query": "cat:cs.DC"}
    )
    source.tracks.add(track)

    outcome = ingest_source_task.delay(source.pk).get(timeout=120)
    assert outcome["status"] == "succeeded" and outcome["new"] == 12
    run = IngestRun.objects.get(source=source)
    assert run.fetched == 12 and run.status == IngestRun.Status.SUCCEEDED

    score_pending_papers.delay().get(timeout=120)
    new_papers = Paper.objects.filter(first_run=run)
    assert all(p.scores.filter(track=track).exists() for p in new_papers)

    tomorrow = (
        timezone.now().astimezone(zoneinfo.ZoneInfo(settings.EDITORIAL_TIME_ZONE))
        + dt.timedelta(days=1)
    ).date()
    assembled = assemble_daily.delay(track.pk, tomorrow.isoformat()).get(timeout=120)
    assert assembled["status"] == "created", assembled
    assert assembled["candidates"] == 12 and assembled["selected"]

    daily = Daily.objects.get(track=track, date=tomorrow)
    # Assembly queued the drafting (offline); let it finish first.
    for _ in range(300):
        if Daily.objects.filter(pk=daily.pk).exclude(intro_en="").exists():
            break
        time.sleep(0.2)
    daily.refresh_from_db()
    assert daily.intro_en and daily.intro_en_provenance == "machine"
    assert all(e.paper.summaries.filter(language="en").exists() for e in daily.entries.all())
    daily.intro_zh = "由流水线组稿。"
    daily.save()
    daily_accept_untranslated(daily=daily, user=None)  # an editor accepts the English
    for entry in daily.entries.all():  # and reviews the machine drafts, as the track requires
        for summary in entry.paper.summaries.all():
            summary_confirm(summary=summary, user=editor)
    daily_schedule(daily=daily, publish_at=timezone.now() - dt.timedelta(minutes=1))
    assert publish_due_dailies.delay().get(timeout=60) == [daily.pk]
    for _ in range(100):
        daily.refresh_from_db()
        if daily.status == Daily.Status.PUBLISHED:
            break
        time.sleep(0.2)
    assert daily.status == Daily.Status.PUBLISHED

    from django.test import Client

    html = Client().get(f"/en/infra/{tomorrow.isoformat()}/").content.decode()
    entries = list(daily.entries.all())
    low = min(e.score for e in entries)
    high = max(e.score for e in entries)
    expected = f"Scored 12 candidates · {len(entries)} selected · scores {low:.2f}–{high:.2f}"
    assert expected in html
    latest = {p.pk: p.latest_score(track.pk) for p in new_papers.prefetch_related("scores")}
    assert all(e.score == latest[e.paper_id].total for e in entries)
    assert len(re.findall(r'<li class="entry', html)) == len(entries)
