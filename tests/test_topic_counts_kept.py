"""The topics' paper counts, worked out once per content version and kept beside the pages:
counted again after every publish, unpublish or edit that bumps the version, and right when
the cache is down."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dailies.models import Daily
from dailies.selectors import index_paper_count, published_topics
from dailies.services import daily_publish, daily_unpublish
from papers.models import Topic
from tests.factories import make_daily, make_paper


@pytest.fixture(autouse=True)
def _uncached_pages(settings):
    settings.PAGE_CACHE_ENABLED = False


def _counts() -> list[tuple[str, int]]:
    return [(t.slug, t.n) for t in published_topics()]


def _counting_queries(captured) -> list[str]:
    return [
        q["sql"] for q in captured if "COUNT(" in q["sql"] and "papers_paper_topics" in q["sql"]
    ]


def test_the_counts_are_counted_once_per_version(db, anonymous):
    make_daily(papers=[make_paper(topics=("kv",)), make_paper(topics=("kv", "moe"))])
    with CaptureQueriesContext(connection) as first:
        assert _counts() == [("kv", 2), ("moe", 1)]
    with CaptureQueriesContext(connection) as again:
        assert _counts() == [("kv", 2), ("moe", 1)]
    assert len(_counting_queries(first)) == 1 and len(first) == 1
    assert _counting_queries(again) == [] and len(again) == 1  # the topics they name
    # Pages read them too: the home page and the topic index print the kept counts.
    with CaptureQueriesContext(connection) as page:
        html = anonymous.get("/en/topics/").content.decode()
    assert _counting_queries(page) == []
    assert re.findall(
        r'href="/en/topics/([^/]+)/">[^<]+</a> <span class="muted">\((\d+)\)', html
    ) == [
        ("kv", "2"),
        ("moe", "1"),
    ]


def test_publishing_and_unpublishing_count_them_again(db, editor):
    make_daily(papers=[make_paper(topics=("kv",))])
    draft = make_daily(
        date=dt.date(2026, 10, 29),
        papers=[make_paper(topics=("kv",)), make_paper(topics=("moe",))],
        status=Daily.Status.DRAFT,
    )
    assert _counts() == [("kv", 1)]
    daily_publish(daily=draft, user=editor)
    assert _counts() == [("kv", 2), ("moe", 1)]
    daily_unpublish(daily=draft, user=editor)
    assert _counts() == [("kv", 1)]


def test_a_topic_deleted_since_its_count_is_left_out(db):
    make_daily(papers=[make_paper(topics=("kv",)), make_paper(topics=("moe",))])
    assert [slug for slug, _ in _counts()] == ["kv", "moe"]
    Topic.objects.filter(slug="moe").delete()  # the kept counts still name it
    assert _counts() == [("kv", 1)]


def test_with_the_cache_down_they_are_counted_each_time(db, unreachable_cache):
    make_daily(papers=[make_paper(topics=("kv",))])
    for _ in range(2):
        with CaptureQueriesContext(connection) as captured:
            assert _counts() == [("kv", 1)]
        assert len(_counting_queries(captured)) == 1


def test_the_index_count_is_kept_and_counted_again_after_a_publish(db, editor, anonymous):
    make_daily(papers=[make_paper(topics=("kv",)), make_paper()])
    draft = make_daily(
        date=dt.date(2026, 10, 29), papers=[make_paper(topics=("kv",))], status=Daily.Status.DRAFT
    )
    kv = Topic.objects.get(slug="kv")
    assert (index_paper_count(), index_paper_count(topic=kv)) == (2, 1)
    with CaptureQueriesContext(connection) as again:
        assert (index_paper_count(), index_paper_count(topic=kv)) == (2, 1)
    assert len(again) == 0
    daily_publish(daily=draft, user=editor)
    assert (index_paper_count(), index_paper_count(topic=kv)) == (3, 2)
    assert "3 papers have appeared" in anonymous.get("/en/papers/").content.decode()
    html = anonymous.get("/en/topics/kv/").content.decode()
    assert "2 papers on this topic" in html


def test_the_kept_counts_name_the_topics_as_they_are_now(db):
    """A rename bumps no version: the topics named by the kept counts are read each time."""
    make_daily(papers=[make_paper(topics=("kv",)), make_paper(topics=("kv", "moe"))])
    assert [t.name_en for t in published_topics()] == ["kv", "moe"]
    Topic.objects.filter(slug="kv").update(name_en="KV cache", name_zh="KV 缓存")
    with CaptureQueriesContext(connection) as again:
        topics = published_topics()
    assert _counting_queries(again) == [] and len(again) == 1
    assert [(t.name_en, t.name_zh, t.n) for t in topics][0] == ("KV cache", "KV 缓存", 2)
    for topic in topics:
        orm = Topic.objects.get(pk=topic.pk)
        assert {f.attname: getattr(topic, f.attname) for f in Topic._meta.concrete_fields} == {
            f.attname: getattr(orm, f.attname) for f in Topic._meta.concrete_fields
        }
        assert not topic.get_deferred_fields()
