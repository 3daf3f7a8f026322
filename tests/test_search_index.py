"""The index follows publication and edits, and can be rebuilt."""

from __future__ import annotations

import datetime as dt
from collections import Counter

from django.core.management import call_command

from dailies.services import daily_publish, daily_publish_if_due, daily_schedule, daily_unpublish
from papers.services import summary_set
from search.index import stale_paper_ids
from search.models import SearchDocument, SearchTerm
from search.service import search
from search.tasks import refresh_stale_search_index
from tests.factories import make_daily, make_paper


def _slugs(query: str) -> list[str]:
    from papers.models import Paper

    hits = search(query)[:10]
    slugs = dict(Paper.objects.values_list("pk", "slug"))
    return [slugs[h.paper_id] for h in hits]


def _vocabulary() -> dict[str, int]:
    return dict(SearchTerm.objects.filter(documents__gt=0).values_list("term", "documents"))


def test_it_indexes_the_demo_when_it_loads(indexed_demo):
    assert SearchDocument.objects.count() == 16
    assert _vocabulary()["kv"] >= 7


def test_it_indexes_a_daily_when_it_is_published_on_schedule(
    db, django_capture_on_commit_callbacks
):
    paper = make_paper("late", title="Pulsar timing for schedulers")
    daily = make_daily(date=dt.date(2026, 9, 1), papers=[paper], status="draft")
    at = dt.datetime(2026, 9, 1, 8, tzinfo=dt.UTC)
    with django_capture_on_commit_callbacks(execute=True):
        daily_schedule(daily=daily, publish_at=at)
    assert _slugs("pulsar") == []
    with django_capture_on_commit_callbacks(execute=True):
        assert daily_publish_if_due(daily_id=daily.pk, now=at + dt.timedelta(minutes=1))
    assert _slugs("pulsar") == ["late"]


def test_it_keeps_the_vocabulary_counts_exact(db, django_capture_on_commit_callbacks):
    papers = [make_paper(title=f"Quasar lens number {i}") for i in range(3)]
    first = make_daily(date=dt.date(2026, 9, 1), papers=papers[:2], status="draft")
    second = make_daily(date=dt.date(2026, 9, 2), papers=papers[1:], status="draft")
    with django_capture_on_commit_callbacks(execute=True):
        daily_publish(daily=first)
        daily_publish(daily=second)
    assert _vocabulary()["quasar"] == 3
    with django_capture_on_commit_callbacks(execute=True):
        daily_unpublish(daily=first)
    # papers[1] is still in the second daily
    assert _vocabulary()["quasar"] == 2
    assert set(_slugs("quasar lens")) == {papers[1].slug, papers[2].slug}
    before = _vocabulary()
    call_command("rebuild_search_index", verbosity=0)
    assert _vocabulary() == before


def test_it_picks_up_edited_summaries_in_the_periodic_sweep(
    db, django_capture_on_commit_callbacks, eager_tasks
):
    paper = make_paper("edited", title="Lens design")
    daily = make_daily(date=dt.date(2026, 9, 1), papers=[paper], status="draft")
    daily.entries.update(accepted_untranslated=["zh"])  # English only, accepted
    with django_capture_on_commit_callbacks(execute=True):
        daily_publish(daily=daily)
    assert _slugs("magnetar") == []
    summary_set(
        paper=paper,
        language="zh",
        body="关于磁星 magnetar 的新摘要。",
        takeaway="关于磁星 magnetar 的新摘要。",
    )
    assert stale_paper_ids() == [paper.pk]
    refresh_stale_search_index.delay().get()
    assert _slugs("magnetar") == ["edited"]
    assert _slugs("磁星") == ["edited"]
    assert stale_paper_ids() == []


def test_it_rebuilds_from_scratch(indexed_demo, capsys):
    SearchDocument.objects.all().delete()
    SearchTerm.objects.all().delete()
    call_command("rebuild_search_index")
    assert SearchDocument.objects.count() == 16
    assert "indexed 16 published papers" in capsys.readouterr().out
    assert _slugs("graceful degradation") == ["hilo"]
    assert _slugs("degredation") == ["hilo"]


def test_it_ranks_newer_papers_first_on_a_tie(db, django_capture_on_commit_callbacks):
    older = make_paper("older", title="Tiered caching, part one", en="Same.", zh=None)
    newer = make_paper("newer", title="Tiered caching, part two", en="Same.", zh=None)
    with django_capture_on_commit_callbacks(execute=True):
        for day, paper in ((1, older), (2, newer)):
            daily = make_daily(date=dt.date(2026, 9, day), papers=[paper], status="draft")
            daily.entries.update(accepted_untranslated=["zh"])  # English only, accepted
            daily_publish(daily=daily)
    hits = search("tiered caching")[:2]
    assert hits[0].score == hits[1].score
    assert [h.paper_id for h in hits] == [newer.pk, older.pk]


def test_it_counts_terms_once_per_paper(db, django_capture_on_commit_callbacks):
    paper = make_paper(title="Cache cache cache", en="Cache everywhere, caches too.", zh=None)
    daily = make_daily(date=dt.date(2026, 9, 1), papers=[paper], status="draft")
    daily.entries.update(accepted_untranslated=["zh"])  # English only, accepted
    with django_capture_on_commit_callbacks(execute=True):
        daily_publish(daily=daily)
    assert _vocabulary()["cach"] == 1
    assert Counter(_slugs("cache")) == Counter([paper.slug])
