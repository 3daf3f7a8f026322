"""Search is its own app above dailies: publishing reaches the index, and the paper page gets
its related papers, through dailies' extension points, which search registers in ready()."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import transaction

from dailies import extensions
from dailies.services import daily_publish, daily_unpublish
from papers.models import Paper
from search.index import search_index_on_papers_changed
from search.models import SearchDocument
from search.related import related_papers
from tests.factories import make_daily, make_paper


@pytest.fixture
def calls(monkeypatch) -> list[list[int]]:
    """Only a recording callback is registered, for one test."""
    seen: list[list[int]] = []
    monkeypatch.setattr(extensions, "_papers_changed_callbacks", [])
    extensions.register_on_papers_changed(seen.append)
    extensions.register_on_papers_changed(seen.append)  # registering twice is once
    return seen


def test_search_registers_its_index_and_its_related_papers():
    assert apps.get_app_config("search").name == "search"
    assert search_index_on_papers_changed in extensions._papers_changed_callbacks
    assert extensions._related_papers == [related_papers]


def test_changed_papers_reach_the_callbacks_once_the_transaction_commits(
    db, calls, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        extensions.papers_changed([5, 3, 5])
        assert calls == []  # not before the commit
    assert calls == [[3, 5]]


def test_no_changed_papers_schedule_nothing(db, calls, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as scheduled:
        extensions.papers_changed([])
    assert scheduled == [] and calls == []


def test_a_failing_callback_does_not_undo_the_publication(
    db, monkeypatch, django_capture_on_commit_callbacks, caplog
):
    def broken(paper_ids: list[int]) -> None:
        raise RuntimeError("index down")

    monkeypatch.setattr(extensions, "_papers_changed_callbacks", [broken])
    daily = make_daily(status="draft", papers=[make_paper("quasar")])
    with django_capture_on_commit_callbacks(execute=True):
        daily_publish(daily=daily, user=None)
    daily.refresh_from_db()
    assert daily.is_published
    assert "index down" in caplog.text


def test_publishing_and_unpublishing_reach_the_index_through_the_extension_point(
    db, calls, django_capture_on_commit_callbacks
):
    paper = make_paper("quasar")
    daily = make_daily(status="draft", papers=[paper])
    with django_capture_on_commit_callbacks(execute=True):
        daily_publish(daily=daily, user=None)
    with django_capture_on_commit_callbacks(execute=True):
        daily_unpublish(daily=daily, user=None)
    assert calls == [[paper.pk], [paper.pk]]


def test_the_index_follows_publication_with_search_registered(
    db, django_capture_on_commit_callbacks
):
    paper = make_paper("quasar")
    daily = make_daily(status="draft", papers=[paper])
    with django_capture_on_commit_callbacks(execute=True):
        daily_publish(daily=daily, user=None)
    assert SearchDocument.objects.filter(paper=paper).exists()
    with django_capture_on_commit_callbacks(execute=True):
        daily_unpublish(daily=daily, user=None)
    assert not SearchDocument.objects.filter(paper=paper).exists()


def test_the_paper_page_lists_no_related_papers_without_a_provider(
    indexed_demo, anonymous, monkeypatch, settings
):
    settings.PAGE_CACHE_ENABLED = False
    assert '<ul class="related">' in anonymous.get("/en/papers/bellowskv/").content.decode()
    monkeypatch.setattr(extensions, "_related_papers", [])
    assert extensions.related_papers(Paper.objects.get(slug="bellowskv"), language="en") == []
    response = anonymous.get("/en/papers/bellowskv/")
    assert response.status_code == 200
    assert '<ul class="related">' not in response.content.decode()
