"""Only published papers are ever found: not through the page, not through the API, not
even when the index holds a row it should not."""

from __future__ import annotations

import datetime as dt

import pytest

from dailies.services import daily_publish, daily_unpublish
from papers.models import Paper
from search.backends import current
from search.index import IndexDocument
from search.models import SearchDocument
from tests.factories import make_daily, make_paper


@pytest.fixture
def quasars(db, django_capture_on_commit_callbacks):
    """Four papers about quasars; only one is in a published daily."""
    with django_capture_on_commit_callbacks(execute=True):
        public = make_paper("public-quasar", title="Public quasar caching", topics=("astro",))
        draft = make_paper("draft-quasar", title="Draft quasar caching", topics=("astro",))
        scheduled = make_paper("scheduled-quasar", title="Scheduled quasar caching")
        make_paper("ingested-quasar", title="Ingested quasar caching", topics=("astro",))
        make_daily(date=dt.date(2026, 9, 2), papers=[draft], status="draft")
        make_daily(date=dt.date(2026, 9, 3), papers=[scheduled], status="scheduled")
        daily = make_daily(date=dt.date(2026, 9, 1), papers=[public], status="draft")
        daily_publish(daily=daily)
    return daily


def _api_slugs(client, query: str) -> list[str]:
    response = client.get(f"/api/v1/search?{query}")
    assert response.status_code == 200
    return [r["slug"] for r in response.json()["results"]]


def test_it_finds_only_the_published_paper(quasars, anonymous):
    html = anonymous.get("/en/papers/?q=quasar").content.decode()
    assert 'id="public-quasar"' in html
    for hidden in ("draft-quasar", "scheduled-quasar", "ingested-quasar"):
        assert hidden not in html
    assert _api_slugs(anonymous, "q=quasar") == ["public-quasar"]
    assert _api_slugs(anonymous, "topic=astro") == ["public-quasar"]
    assert list(SearchDocument.objects.values_list("paper__slug", flat=True)) == ["public-quasar"]


def test_it_forgets_a_paper_when_its_daily_is_unpublished(
    quasars, anonymous, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        daily_unpublish(daily=quasars)
    assert "public-quasar" not in anonymous.get("/en/papers/?q=quasar").content.decode()
    assert _api_slugs(anonymous, "q=quasar") == []
    assert not SearchDocument.objects.exists()


def test_it_hides_a_stale_index_row_of_an_unpublished_paper(quasars, anonymous):
    # An index row the refresh never removed (a crash, a manual edit): readers check
    # publication again, so the page and the API still leave the paper out.
    draft = Paper.objects.get(slug="draft-quasar")
    stale = IndexDocument(draft.pk, dt.date(2026, 9, 2))
    stale.add("A", draft.title)
    current().write([stale], replace=[draft.pk])
    assert SearchDocument.objects.filter(paper=draft).exists()
    assert "draft-quasar" not in anonymous.get("/en/papers/?q=quasar").content.decode()
    assert _api_slugs(anonymous, "q=quasar") == ["public-quasar"]
    assert _api_slugs(anonymous, "q=draft+quasar") == []


def test_it_shows_unpublished_papers_to_no_one_not_even_staff(quasars, editor_client):
    # Search is the readers' index: editors preview drafts on the daily pages instead.
    assert "draft-quasar" not in editor_client.get("/en/papers/?q=quasar").content.decode()
