"""A daily's entries cached under the versions of the tags they print
(``digest_site.part_cache``): a daily the page cache renders again renders only the entries
whose tags were retired, a public change shows at once, and a preview neither reads nor
keeps them."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from dailies.models import Daily
from dailies.record import daily_pin
from digest_site import cache_tags
from papers.drafting.edits import summary_edit
from papers.models import Organization, Paper, Score, Summary, Topic, Track
from papers.services import public_content_save
from tests.factories import make_daily, make_paper

DAILY = "/en/infra/2026-10-28/"


def _render(client, url: str = DAILY) -> tuple[str, int]:
    """The page as rendered (the page cache retired first), and its query count."""
    cache_tags.retire("nav")
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return response.content.decode(), len(queries)


@pytest.fixture
def daily(db):
    """A published daily of three papers, pinned with their scorer's records (whose
    breakdown names the track)."""
    papers = [make_paper(f"p{i}", orgs=("Acme",), topics=("kv",)) for i in range(3)]
    daily = make_daily(papers=papers)
    for paper in papers:
        Score.objects.create(
            paper=paper,
            track=daily.track,
            total="4.00",
            criteria={},
            scorer="t",
            scorer_version="1",
        )
    daily_pin(daily=daily, now=timezone.now())
    return daily


def _entries(html: str) -> str:
    return html.split('<ol class="entries">', 1)[1].split('<nav class="pager"', 1)[0]


def test_a_daily_rendered_again_reads_its_papers_lists_only_for_what_changed(daily, anonymous):
    first, first_queries = _render(anonymous)
    again, again_queries = _render(anonymous)
    # daily, entries+papers, summaries, the selection chart; then each paper list's query
    # (organisations, topics, deep dives, reference code) when an entry must be rendered
    assert (first_queries, again_queries) == (8, 4)
    assert again == first
    cache_tags.retire(f"paper:{Paper.objects.get(slug='p1').pk}")
    assert _render(anonymous) == (first, 8)


def test_each_language_keeps_its_own_entries(daily, anonymous):
    _render(anonymous)
    chinese, _ = _render(anonymous, "/zh/infra/2026-10-28/")
    assert "一段中文摘要" in chinese and "An English summary" not in chinese


def _rename_topic(editor) -> str:
    topic = Topic.objects.get(slug="kv")
    topic.name_en = "Renamed topic"
    public_content_save(obj=topic, user=editor)
    return "Renamed topic"


def _rename_org(editor) -> str:
    org = Organization.objects.get(slug="acme")
    org.label = "Renamed Lab"
    public_content_save(obj=org, user=editor)
    return "Renamed Lab"


def _rename_track(editor) -> str:
    track = Track.objects.get(slug="infra")
    track.name_en = "Renamed Track"
    public_content_save(obj=track, user=editor)
    return "Renamed Track"


def _edit_summary(editor) -> str:
    summary = Summary.objects.get(paper__slug="p2", language="en")
    summary_edit(summary=summary, user=editor, headline="An edited headline")
    return "An edited headline"


def _retitle_paper(editor) -> str:
    paper = Paper.objects.get(slug="p0")
    paper.title = "A retitled paper"
    paper.short_name = ""
    public_content_save(obj=paper, user=editor)
    return "A retitled paper"


def _publish_a_deep_dive(editor) -> str:
    from deepdives.models import DeepDive
    from deepdives.services import deep_dive_publish

    paper = Paper.objects.get(slug="p1")
    dive = DeepDive.objects.create(
        paper=paper, slug="p1-dive", title_en="Dive", body_en="# Dive\n\nWords.", status="draft"
    )
    deep_dive_publish(deep_dive=dive, user=editor)
    return 'href="/en/deep-dives/p1-dive/"'


@pytest.mark.parametrize(
    "change",
    [
        _rename_topic,
        _rename_org,
        _rename_track,
        _edit_summary,
        _retitle_paper,
        _publish_a_deep_dive,
    ],
)
def test_a_public_change_shows_in_the_entries_at_once(daily, anonymous, editor, change):
    _render(anonymous)
    shown = change(editor)
    html, _ = _render(anonymous)
    assert shown in _entries(html)


def test_retiring_every_page_retires_the_entries(daily, anonymous):
    _render(anonymous)
    Summary.objects.filter(paper__slug="p0", language="en").update(headline="Restored by hand")
    cache_tags.retire_everything()  # manage.py retire_cached_pages, after SQL run by hand
    assert "Restored by hand" in _render(anonymous)[0]


def test_a_preview_shows_the_draft_as_edited_since_the_last_preview(db, editor_client, editor):
    make_daily(papers=[make_paper("kv-paper")], status=Daily.Status.DRAFT)
    _render(editor_client)
    summary = Summary.objects.get(paper__slug="kv-paper", language="en")
    # The paper is in no published daily: the edit retires nothing.
    summary_edit(summary=summary, user=editor, headline="Edited in the draft")
    assert "Edited in the draft" in _render(editor_client)[0]


def test_a_preview_keeps_nothing_a_reader_then_gets(daily, anonymous, editor_client):
    _render(editor_client)
    Summary.objects.filter(paper__slug="p0", language="en").update(headline="Written by hand")
    assert "Written by hand" in _render(anonymous)[0]


def test_the_scorers_record_names_the_track(daily, anonymous):
    assert "Scored by" in _entries(_render(anonymous)[0])


def test_a_reader_keeps_nothing_a_preview_then_gets(daily, anonymous, editor_client):
    _render(anonymous)
    Summary.objects.filter(paper__slug="p0", language="en").update(headline="Written by hand")
    assert "Written by hand" in _render(editor_client)[0]
