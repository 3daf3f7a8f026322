"""The selection of a daily, visible: the score histogram, the near misses, each score's
breakdown, and one note where a daily recorded no scores."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from dailies.selection import NEAR_MISSES
from papers.models import Paper, Score
from tests.factories import make_daily, make_paper, make_track

# Pages are read as a browser reads them, whitespace collapsed (the templates' line breaks
# are djhtml's).

DATE = dt.date(2026, 10, 28)
IN_WINDOW = timezone.make_aware(dt.datetime(2026, 10, 27, 12, 0))


def _candidate(track, total: str, *, slug: str | None = None, **fields) -> Paper:
    paper = make_paper(slug, **fields)
    Paper.objects.filter(pk=paper.pk).update(created_at=IN_WINDOW)
    paper.tracks.add(track)
    Score.objects.create(
        paper=paper,
        track=track,
        total=Decimal(total),
        criteria={"relevance": 4, "novelty": 3},
        rationale_en=f"Rationale of {paper.slug}.",
        rationale_zh=f"{paper.slug} 的理由。",
        scorer="heuristic",
        scorer_version="2",
    )
    return paper


def _daily_with_candidates(n_unselected: int = 8):
    track = make_track(min_score=Decimal("3.00"))
    selected = [_candidate(track, t) for t in ("4.60", "4.40", "4.20")]
    others = [_candidate(track, f"{3.95 - 0.25 * i:.2f}") for i in range(n_unselected)]
    daily = make_daily(date=DATE, papers=selected, scores=["4.60", "4.40", "4.20"], track=track)
    return daily, selected, others


def _bars(html: str) -> dict[str, int]:
    counts = {"bar-selected": 0, "bar-other": 0}
    for css, label in re.findall(r'<rect class="(bar-\w+)"[^>]*><title>([^<]+)</title>', html):
        counts[css] += int(label.rsplit(": ", 1)[1])
    return counts


def test_it_draws_every_scored_candidate_in_the_histogram(db, anonymous):
    daily, selected, others = _daily_with_candidates()
    html = " ".join(anonymous.get(f"/en/infra/{DATE}/").content.decode().split())
    assert _bars(html) == {"bar-selected": len(selected), "bar-other": len(others)}
    assert "11 scored candidates, 3 selected." in html
    assert "<svg" in html and 'role="img"' in html and "style=" not in html.split("<svg", 1)[1]


def test_it_marks_the_track_minimum_and_the_lowest_selected(db, anonymous):
    _daily_with_candidates()
    html = " ".join(anonymous.get(f"/en/infra/{DATE}/").content.decode().split())
    assert re.search(r'<line class="cut-min" x1="', html)
    assert re.search(r'<line class="cut-lowest" x1="', html)
    assert "track minimum 3.00" in html and "lowest selected 4.20" in html


def test_it_lists_the_next_five_candidates_by_score_below_the_cut(db, anonymous):
    _, _, others = _daily_with_candidates()
    html = " ".join(anonymous.get(f"/en/infra/{DATE}/").content.decode().split())
    near = html.split('<ol class="near-misses">', 1)[1].split("</ol>", 1)[0]
    shown = re.findall(r'<span class="score nm-score">([\d.]+)</span>', near)
    assert shown == ["3.95", "3.70", "3.45", "3.20", "2.95"]
    assert len(shown) == NEAR_MISSES
    assert f"Rationale of {others[0].slug}." in near
    assert others[5].slug not in near


def test_it_opens_each_score_onto_its_breakdown_rationale_and_scorer(db, anonymous):
    _, selected, _ = _daily_with_candidates()
    html = " ".join(anonymous.get(f"/en/infra/{DATE}/").content.decode().split())
    entry = html.split(f'id="{selected[0].slug}"', 1)[1].split("</li>", 1)[0]
    details = entry.split('<details class="score-details">', 1)[1].split("</details>", 1)[0]
    assert "4.60" in details and "Relevance to the track" in details
    assert f"Rationale of {selected[0].slug}." in details and "heuristic 2" in details


def test_it_says_once_that_a_daily_recorded_no_scores(demo, anonymous):
    html = " ".join(anonymous.get("/en/infra/2026-10-27/").content.decode().split())
    assert html.count("No score was recorded for this daily") == 1
    assert 'class="score"' not in html and "—" not in html.split('<ol class="entries">')[1]


def test_it_hides_the_internal_label_of_imported_scores(demo, anonymous):
    html = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    assert "daily-import" not in html and "as published in the daily" in html
    assert "daily-import" not in " ".join(
        anonymous.get("/en/papers/hilo/").content.decode().split()
    )


def test_it_says_how_many_of_the_recorded_candidates_have_stored_scores(demo, anonymous):
    html = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    assert "Scores of 10 of the 202 candidates are stored" in html


def test_it_leaves_out_scores_recorded_after_assembly(db, anonymous):
    daily, selected, others = _daily_with_candidates(n_unselected=2)
    daily.assembled_at = timezone.now()
    daily.save(update_fields=["assembled_at"])
    later = Score.objects.filter(paper=others[0]).get()
    Score.objects.filter(pk=later.pk).update(created_at=daily.assembled_at + dt.timedelta(hours=1))
    html = " ".join(anonymous.get(f"/en/infra/{DATE}/").content.decode().split())
    assert _bars(html) == {"bar-selected": 3, "bar-other": 1}


@pytest.mark.parametrize("extra", [0, 12])
def test_its_query_count_does_not_grow_with_the_candidates(db, anonymous, extra):
    daily, _, _ = _daily_with_candidates(n_unselected=2)
    with CaptureQueriesContext(connection) as small:
        anonymous.get(f"/en/infra/{DATE}/")
    for _ in range(extra):
        _candidate(daily.track, "2.00")
    cache.clear()  # the page cache would answer the second request without a query
    with CaptureQueriesContext(connection) as large:
        anonymous.get(f"/en/infra/{DATE}/")
    assert len(large.captured_queries) == len(small.captured_queries)


def test_it_says_when_the_editor_set_another_score_than_the_scorers(db, anonymous):
    track = make_track(min_score=Decimal("3.00"))
    paper = _candidate(track, "4.60")
    make_daily(date=DATE, papers=[paper], scores=["4.15"], track=track)
    html = " ".join(anonymous.get(f"/en/infra/{DATE}/").content.decode().split())
    entry = html.split(f'id="{paper.slug}"', 1)[1].split("</li>", 1)[0]
    assert "4.15" in entry and "scorer's total 4.60, set by the editor" in entry


def test_it_says_when_no_scorers_record_is_stored_for_a_score(db, anonymous):
    make_daily(date=DATE, papers=[make_paper()], scores=["4.15"])
    html = " ".join(anonymous.get(f"/en/infra/{DATE}/").content.decode().split())
    assert "No scorer's record is stored for this score." in html
    assert "set by the editor" not in html


def test_a_near_miss_shows_its_full_title_and_its_rationale_cut_short(db, anonymous):
    daily, _, others = _daily_with_candidates(n_unselected=1)
    Score.objects.filter(paper=others[0]).update(rationale_en="Why. " * 80)
    Paper.objects.filter(pk=others[0].pk).update(short_name="NM", title="A near miss")
    html = " ".join(anonymous.get(f"/en/infra/{DATE}/").content.decode().split())
    near = html.split('<ol class="near-misses">', 1)[1].split("</ol>", 1)[0]
    assert '<span lang="en">NM: A near miss</span>' in near
    shown = near.split('<p class="rationale">')[-1].split("</p>", 1)[0]
    assert shown.endswith("…") and len(shown) <= 201
    assert ("Why. " * 80).strip() in near  # the breakdown keeps it whole


def test_its_candidates_are_those_ingested_since_the_previous_dailys_cut_off(db, anonymous):
    track = make_track(min_score=Decimal("3.00"))
    make_daily(date=DATE - dt.timedelta(days=1), track=track, papers=[make_paper()])
    earlier = _candidate(track, "3.90", slug="earlier")  # in the window of the daily before
    Paper.objects.filter(pk=earlier.pk).update(
        created_at=timezone.make_aware(dt.datetime(2026, 10, 26, 20, 0))
    )
    later = _candidate(track, "3.80", slug="later")  # after this daily's cut-off: the next one's
    Paper.objects.filter(pk=later.pk).update(
        created_at=timezone.make_aware(dt.datetime(2026, 10, 28, 1, 0))
    )
    in_window = _candidate(track, "3.70", slug="in-window")
    # Selected: a candidate wherever it was ingested.
    old_pick = _candidate(track, "4.40", slug="old-pick")
    Paper.objects.filter(pk=old_pick.pk).update(
        created_at=timezone.make_aware(dt.datetime(2026, 9, 1, 12, 0))
    )
    make_daily(date=DATE, track=track, papers=[old_pick], scores=["4.40"])
    html = " ".join(anonymous.get(f"/en/infra/{DATE}/").content.decode().split())
    assert _bars(html) == {"bar-selected": 1, "bar-other": 1}
    near = html.split('<ol class="near-misses">', 1)[1].split("</ol>", 1)[0]
    assert in_window.slug in near and earlier.slug not in near and later.slug not in near


def test_each_candidate_carries_its_newest_rubric_as_stored(db):
    """A candidate's rubric is its newest score's, in the stored order."""
    from dailies.selection import daily_selection

    daily, selected, others = _daily_with_candidates(2)
    newest = Score.objects.create(
        paper=others[0],
        track=daily.track,
        total=Decimal("3.10"),
        criteria={"novelty": 2, "relevance": 5, "rigour": 3.5},
        scorer="llm",
        scorer_version="1",
    )
    entries = list(daily.entries.all())
    by_paper = daily_selection(daily, entries).by_paper
    assert by_paper[others[0].pk].criteria == Score.objects.get(pk=newest.pk).criteria
    assert list(by_paper[others[0].pk].criteria) == list(Score.objects.get(pk=newest.pk).criteria)
    assert by_paper[selected[0].pk].criteria == {"relevance": 4, "novelty": 3}


def test_just_below_the_cut_leaves_out_papers_a_published_daily_of_the_track_selected(
    db, anonymous
):
    """Issue 38: HiLO, PSR and KVStream, published on earlier days, were listed below the cut."""
    track = make_track(min_score=Decimal("3.00"))
    shown_before = _candidate(track, "3.90", slug="shown-before")
    make_daily(date=DATE - dt.timedelta(days=2), track=track, papers=[shown_before])
    make_daily(date=DATE - dt.timedelta(days=1), track=track, papers=[make_paper()])
    fresh = _candidate(track, "3.70", slug="fresh")
    pick = _candidate(track, "4.40", slug="pick")
    make_daily(date=DATE, track=track, papers=[pick], scores=["4.40"])
    html = " ".join(anonymous.get(f"/en/infra/{DATE}/").content.decode().split())
    near = html.split('<ol class="near-misses">', 1)[1].split("</ol>", 1)[0]
    assert fresh.slug in near and shown_before.slug not in near
    assert _bars(html) == {"bar-selected": 1, "bar-other": 1}


def test_just_below_the_cut_lists_only_papers_of_the_track(db, anonymous):
    """A paper scored for the track but not one of its papers (a robotics paper) was never an
    assembly candidate."""
    track = make_track(min_score=Decimal("3.00"))
    stray = _candidate(track, "3.90", slug="quadruped-control")
    stray.tracks.clear()
    fresh = _candidate(track, "3.70", slug="fresh")
    make_daily(date=DATE, track=track, papers=[_candidate(track, "4.40")], scores=["4.40"])
    html = " ".join(anonymous.get(f"/en/infra/{DATE}/").content.decode().split())
    near = html.split('<ol class="near-misses">', 1)[1].split("</ol>", 1)[0]
    assert fresh.slug in near and stray.slug not in near


def test_a_near_miss_rationale_is_in_the_pages_language_only(db, anonymous):
    from papers.scoring.rubric import RubricScorer

    daily, _, others = _daily_with_candidates(n_unselected=2)
    result = RubricScorer().score([others[0]], daily.track)[0]
    Score.objects.filter(paper=others[0]).update(rationale_zh=result.rationale_zh)
    Score.objects.filter(paper=others[1]).update(rationale_zh="")
    html = " ".join(anonymous.get(f"/zh/infra/{DATE}/").content.decode().split())
    near = html.split('<ol class="near-misses">', 1)[1].split("</ol>", 1)[0]
    shown = re.findall(r'<p class="rationale">([^<]*)</p>', near)
    assert shown and all(not re.search(r"[A-Za-z]{3,}", text) for text in shown), shown
    assert "（无）" in result.rationale_zh and "none" not in result.rationale_zh
    assert f"Rationale of {others[1].slug}." not in near


def test_a_draft_the_day_before_closes_the_window_for_readers_as_for_assembly(
    db, anonymous, editor_client
):
    """Issue 35: with the previous day's daily left as a draft, the public chart of the next
    published daily counted a candidate of the draft's window (``bar-other: 2``) that the
    staff preview and assembly do not (1): the window is assembly's, whoever reads."""
    from dailies.assembly import daily_candidates

    track = make_track(min_score=Decimal("3.00"))
    make_daily(date=DATE - dt.timedelta(days=2), track=track, papers=[make_paper()])
    make_daily(date=DATE - dt.timedelta(days=1), track=track, papers=[make_paper()], status="draft")
    selected = _candidate(track, "4.60")
    in_window = _candidate(track, "3.40")
    drafts_own = _candidate(track, "3.45")
    Paper.objects.filter(pk=drafts_own.pk).update(created_at=IN_WINDOW - dt.timedelta(days=1))
    make_daily(date=DATE, track=track, papers=[selected], scores=["4.60"])
    url = f"/en/infra/{DATE}/"
    public = _bars(" ".join(anonymous.get(url).content.decode().split()))
    cache.clear()
    preview = _bars(" ".join(editor_client.get(url).content.decode().split()))
    assert public == preview == {"bar-selected": 1, "bar-other": 1}
    assert [p.pk for p in daily_candidates(track, DATE)] == [in_window.pk]
