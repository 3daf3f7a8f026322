"""A published daily is a record: its chart, near misses, entries' rubrics and stats stay as
they were published, whatever is scored, ingested or re-tuned later; a draft's preview reads
the newest scores."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.utils import timezone

from dailies.models import Daily
from dailies.services import daily_publish, daily_unpublish
from papers.models import Paper, Score
from papers.scoring.rubric import RubricScorer
from papers.scoring.service import papers_score
from tests.factories import make_daily, make_paper, make_track

DATE = dt.date(2026, 10, 28)
IN_WINDOW = timezone.make_aware(dt.datetime(2026, 10, 27, 12, 0))
PAGES = [
    f"/en/infra/{DATE}/",
    f"/zh/infra/{DATE}/",
    f"/api/v1/dailies/infra/{DATE}/",
    f"/api/v1/dailies/infra/{DATE}/?lang=zh",
    "/en/feeds/infra.atom",
    "/zh/feeds/infra/papers.atom",
]


def _candidate(track, total: str, slug: str | None = None) -> Paper:
    paper = make_paper(slug)
    Paper.objects.filter(pk=paper.pk).update(created_at=IN_WINDOW)
    paper.tracks.add(track)
    Score.objects.create(
        paper=paper,
        track=track,
        total=Decimal(total),
        criteria={"relevance": 5, "novelty": 4, "evidence": 4, "impact": 4, "venue": 3},
        rationale_en=f"Published rationale of {paper.slug}.",
        rationale_zh=f"{paper.slug} 发布时的理由。",
        scorer="rubric-tfidf",
        scorer_version="1",
    )
    return paper


def _published_daily():
    track = make_track(min_score=Decimal("3.00"))
    selected = [_candidate(track, t) for t in ("4.85", "4.40", "4.20")]
    others = [_candidate(track, t) for t in ("3.90", "3.60", "3.10", "2.40")]
    daily = make_daily(
        date=DATE,
        papers=selected,
        scores=["4.85", "4.40", "4.20"],
        track=track,
        status=Daily.Status.DRAFT,
    )
    daily_publish(daily=daily)
    return track, daily, selected, others


def _read(client, pages: list[str] = PAGES) -> dict[str, str]:
    """Each page as a reader gets it now: rendered afresh, not from a cache."""
    cache.clear()
    found = {}
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        # Each response's CSP nonce is its own; nothing else may differ.
        found[url] = re.sub(r'nonce="[^"]*"', "", response.content.decode())
    return found


def _assert_unchanged(before: dict[str, str], after: dict[str, str]) -> None:
    for url in PAGES:
        assert after[url] == before[url], f"{url} changed"


def test_rescoring_leaves_a_published_daily_as_published(db, anonymous):
    track, daily, selected, others = _published_daily()
    before = _read(anonymous)
    Paper.objects.filter(tracks=track).update(needs_scoring=True)
    call_command("score", track="infra")
    assert Score.objects.filter(track=track, scorer="rubric-tfidf").count() == 14
    _assert_unchanged(before, _read(anonymous))
    assert "Published rationale of" in before[PAGES[0]]


def test_a_new_scorer_version_leaves_a_published_daily_as_published(db, anonymous):
    track, daily, selected, others = _published_daily()
    before = _read(anonymous)

    class NextRubric(RubricScorer):
        version = "4"

        def score(self, papers, track):
            return [replace(r, version="4") for r in super().score(papers, track)]

    papers = list(Paper.objects.filter(tracks=track).select_related("venue"))
    papers_score(track=track, papers=papers, scorer=NextRubric())
    assert Score.objects.filter(track=track, scorer_version="4").count() == len(papers)
    _assert_unchanged(before, _read(anonymous))


def test_new_candidates_and_a_new_minimum_leave_a_published_daily_as_published(db, anonymous):
    track, daily, selected, others = _published_daily()
    before = _read(anonymous)
    for n, total in enumerate(("4.95", "3.95", "3.80")):
        _candidate(track, total, slug=f"late-{n}")
    track.min_score = Decimal("4.00")
    track.save()
    _assert_unchanged(before, _read(anonymous))


def test_a_draft_preview_reads_the_newest_scores_and_publishing_pins_them(db, editor_client):
    track = make_track(min_score=Decimal("3.00"))
    paper = _candidate(track, "4.20")
    daily = make_daily(
        date=DATE, papers=[paper], scores=["4.20"], track=track, status=Daily.Status.DRAFT
    )
    Score.objects.create(paper=paper, track=track, total=Decimal("3.55"), scorer="x")
    assert "3.55" in _read(editor_client, PAGES[:1])[PAGES[0]]  # the preview: the newest
    daily_publish(daily=daily)
    daily.refresh_from_db()
    assert daily.pinned_at is not None and daily.pinned_min_score == Decimal("3.00")
    assert [s.total for s in daily.pinned_scores.all()] == [Decimal("3.55")]
    Score.objects.create(paper=paper, track=track, total=Decimal("2.50"), scorer="x")
    page = _read(editor_client)[PAGES[0]]
    assert "3.55" in page and "2.50" not in page


def test_publishing_again_keeps_the_first_pins(db, anonymous):
    track, daily, selected, others = _published_daily()
    pinned = set(daily.pinned_scores.values_list("pk", flat=True))
    daily_unpublish(daily=daily)
    _candidate(track, "4.95", slug="late")
    Score.objects.create(paper=selected[0], track=track, total=Decimal("3.00"), scorer="x")
    daily_publish(daily=daily)
    assert set(daily.pinned_scores.values_list("pk", flat=True)) == pinned


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_chart_keeps_the_candidates_it_was_published_with(db, anonymous, lang):
    track, daily, selected, others = _published_daily()
    _candidate(track, "4.95", slug="late")
    html = _read(anonymous)[f"/{lang}/infra/{DATE}/"]
    near = html.split('<ol class="near-misses">', 1)[1].split("</ol>", 1)[0]
    assert re.findall(r'<span class="score nm-score">([\d.]+)</span>', near) == [
        "3.90",
        "3.60",
        "3.10",
        "2.40",
    ]
