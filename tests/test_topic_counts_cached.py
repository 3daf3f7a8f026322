"""The topics' paper counts (the home page's chips, the index's suggestions, the topic
index) are counted once per version of the ``topics`` and ``index`` tags, and a change of
which papers are published shows in them at once."""

from __future__ import annotations

import datetime as dt

from django.db import connection
from django.test.utils import CaptureQueriesContext

from dailies.models import Daily
from dailies.services import daily_publish, daily_unpublish
from digest_site import cache_tags
from tests.factories import make_daily, make_paper


def _home(client) -> tuple[str, int]:
    """The home page as rendered (the page cache retired first), and its query count."""
    cache_tags.retire("nav")
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/en/")
    assert response.status_code == 200
    return response.content.decode(), len(queries)


def _chip(html: str, slug: str) -> str:
    return html.split(f'href="/en/topics/{slug}/">', 1)[1].split("</a>", 1)[0]


def test_a_home_page_rendered_again_does_not_count_the_topics_again(db, anonymous):
    make_daily(papers=[make_paper(topics=("kv",)) for _ in range(2)])
    first, first_queries = _home(anonymous)
    again, again_queries = _home(anonymous)
    assert again == first
    assert again_queries == first_queries - 1


def test_a_daily_published_or_unpublished_counts_in_the_chips_at_once(db, anonymous, editor):
    make_daily(papers=[make_paper(topics=("kv",))])
    draft = make_daily(
        date=dt.date(2026, 10, 29),
        papers=[make_paper(topics=("kv",)), make_paper(topics=("new",))],
        status=Daily.Status.DRAFT,
    )
    html, _ = _home(anonymous)
    assert _chip(html, "kv").endswith('<span class="chip-count">1</span>')
    assert 'href="/en/topics/new/"' not in html
    daily_publish(daily=draft, user=editor)
    html, _ = _home(anonymous)
    assert _chip(html, "kv").endswith('<span class="chip-count">2</span>')
    assert _chip(html, "new").endswith('<span class="chip-count">1</span>')
    daily_unpublish(daily=draft, user=editor)
    html, _ = _home(anonymous)
    assert _chip(html, "kv").endswith('<span class="chip-count">1</span>')
    assert 'href="/en/topics/new/"' not in html
