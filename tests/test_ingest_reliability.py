"""Concurrent ingests, redelivered tasks and a worker that dies midway leave one clean state."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from papers.ingest import upsert
from papers.ingest.service import ingest_document, sources_claim_due
from papers.models import IngestRun, Paper, Source
from papers.tasks import ingest_due_sources, ingest_source_task
from tests.arxiv_docs import api_page, numbered
from tests.factories import make_track
from tests.recorded_server import Reply


def _state():
    return sorted(Paper.objects.values_list("canonical_id", "version", "title", "abstract"))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_ingests_of_the_same_feed_at_once_create_no_duplicates():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: SQLite serialises writers, so nothing would race")
    track = make_track()
    document = api_page(numbered(400))
    barrier = threading.Barrier(2)
    runs = []

    def one() -> None:
        try:
            barrier.wait()
            runs.append(
                ingest_document(
                    data=document, fmt=Source.Kind.ARXIV_API, tracks=[track], label="race"
                )
            )
        finally:
            connections.close_all()

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.status for r in runs] == [IngestRun.Status.SUCCEEDED] * 2, [r.message for r in runs]
    assert Paper.objects.count() == 400
    assert sum(r.new for r in runs) == 400
    assert Paper.tracks.through.objects.count() == 400


def test_a_redelivered_task_leaves_the_same_state_as_one_run(
    db, fast_ingest, recorded_server, eager_tasks
):
    url = recorded_server.serve("/api/query", Reply(body=api_page(numbered(7))))
    source = Source.objects.create(
        name="arxiv dc", kind=Source.Kind.ARXIV_API, url=url, config={"search_query": "cat:cs.DC"}
    )
    source.tracks.add(make_track())
    ingest_source_task.delay(source.pk).get()
    once = _state()
    ingest_source_task.delay(source.pk).get()  # the broker delivers it again
    assert _state() == once
    assert Paper.objects.count() == 7
    assert list(IngestRun.objects.order_by("pk").values_list("new", "unchanged")) == [
        (7, 0),
        (0, 7),
    ]


def test_a_run_that_dies_midway_stores_nothing_and_a_rerun_is_clean(db, monkeypatch):
    track = make_track()
    document = api_page(numbered(30))
    real = upsert._link

    def dying_link(*args, **kwargs):
        # the first chunk's papers are already inserted when this runs
        raise RuntimeError("worker lost")

    monkeypatch.setattr(upsert, "_link", dying_link)
    with pytest.raises(RuntimeError):
        ingest_document(data=document, fmt=Source.Kind.ARXIV_API, tracks=[track], label="dies")
    assert Paper.objects.count() == 0
    failed = IngestRun.objects.get()
    assert failed.status == IngestRun.Status.FAILED and "worker lost" in failed.message
    monkeypatch.setattr(upsert, "_link", real)
    run = ingest_document(data=document, fmt=Source.Kind.ARXIV_API, tracks=[track], label="again")
    assert run.new == 30 and Paper.objects.count() == 30


def _arxiv_source(url: str) -> Source:
    source = Source.objects.create(
        name="arxiv dc", kind=Source.Kind.ARXIV_API, url=url, config={"search_query": "cat:cs.DC"}
    )
    source.tracks.add(make_track())
    return source


def _runs() -> list[str]:
    return list(IngestRun.objects.order_by("pk").values_list("status", flat=True))


@pytest.fixture
def eager_retries(eager_tasks):
    """Eager tasks whose retries run at once, as a worker would run them later: Celery only
    re-applies a retried eager task when it does not propagate the Retry (.get() still
    raises a task's failure)."""
    from digest_site.celery import app

    app.conf.task_eager_propagates = False
    yield
    app.conf.task_eager_propagates = True


def test_a_run_that_could_not_reach_the_source_is_retried(
    db, fast_ingest, recorded_server, eager_retries
):
    down = [Reply(status=503)] * 3  # every attempt of one fetch (fast_ingest: 3)
    url = recorded_server.serve("/api/query", *down, Reply(body=api_page(numbered(3))))
    outcome = ingest_source_task.delay(_arxiv_source(url).pk).get()
    assert (outcome["status"], outcome["new"]) == (IngestRun.Status.SUCCEEDED, 3)
    assert _runs() == [IngestRun.Status.FAILED, IngestRun.Status.SUCCEEDED]
    assert Paper.objects.count() == 3


def test_a_source_still_unreachable_after_two_retries_ends_failed(
    db, fast_ingest, recorded_server, eager_retries
):
    url = recorded_server.serve("/api/query", Reply(status=503))
    outcome = ingest_source_task.delay(_arxiv_source(url).pk).get()
    assert outcome["status"] == IngestRun.Status.FAILED
    assert _runs() == [IngestRun.Status.FAILED] * 3  # the run and its two retries
    assert len(recorded_server.log) == 9


def test_a_run_that_would_fail_again_is_not_retried(
    db, fast_ingest, recorded_server, eager_retries
):
    page = b"<!DOCTYPE html><html><body>maintenance</body></html>"
    url = recorded_server.serve("/api/query", Reply(body=page, content_type="text/html"))
    outcome = ingest_source_task.delay(_arxiv_source(url).pk).get()
    assert outcome["status"] == IngestRun.Status.FAILED
    assert _runs() == [IngestRun.Status.FAILED]
    assert len(recorded_server.log) == 1


def test_due_sources_are_claimed_once(db):
    source = Source.objects.create(
        name="due", kind=Source.Kind.ARXIV_API, config={"search_query": "x"}, interval_minutes=60
    )
    Source.objects.create(name="off", kind=Source.Kind.ARXIV_API, enabled=False)
    Source.objects.create(name="hand", kind=Source.Kind.MANUAL)
    assert sources_claim_due() == [source.pk]
    assert sources_claim_due() == []  # a second fan-out at the same moment gets nothing


def test_the_fan_out_enqueues_after_commit(db, django_capture_on_commit_callbacks):
    Source.objects.create(name="due", kind=Source.Kind.ARXIV_API, config={"search_query": "x"})
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        claimed = ingest_due_sources()
    assert len(claimed) == 1 and len(callbacks) == 1
