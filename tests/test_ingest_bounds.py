"""Ingest keeps the good: a field over its bound costs one entry, never the run; entity
decoding survives earlier damage; a run killed midway is swept and its source runs again."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from digest_site.celery import app
from papers.ingest import limits
from papers.ingest.fetch import FetchPolicy
from papers.ingest.items import RawItem
from papers.ingest.parsers import parse_arxiv_api, parse_arxiv_rss, parse_feed
from papers.ingest.service import (
    ingest_document,
    ingest_runs_fail_stale,
    ingest_source,
    sources_claim_due,
)
from papers.models import IngestRun, Paper, Source
from papers.tasks import fail_stale_ingest_runs
from tests.arxiv_docs import Entry, api_page, entry_xml, numbered
from tests.factories import make_track
from tests.recorded_server import Reply


def _long_pdf_link(length: int) -> str:
    base = "https://arxiv.org/pdf/2610.00002v1?download="
    return base + "x" * (length - len(base))


def _three_entry_api_feed() -> bytes:
    over_long_title, long_link, good = (
        Entry("2610.00001", title="T" * 600),
        Entry("2610.00002", title="Its PDF link is 400 characters"),
        Entry("2610.00003", title="Gould & Morgan: a good entry"),
    )
    linked = entry_xml(long_link).replace(
        'href="https://arxiv.org/pdf/2610.00002v1"', f'href="{_long_pdf_link(400)}"'
    )
    xml = "".join([entry_xml(over_long_title), linked, entry_xml(good)])
    return api_page([], total=3).replace(b"</feed>", xml.encode() + b"</feed>")


def test_an_over_long_title_costs_its_entry_and_an_over_long_link_only_the_link(
    db, fast_ingest, recorded_server
):
    url = recorded_server.serve("/api/query", Reply(body=_three_entry_api_feed()))
    source = Source.objects.create(
        name="arxiv", kind=Source.Kind.ARXIV_API, url=url, config={"search_query": "cat:cs.DC"}
    )
    source.tracks.add(make_track())

    run = ingest_source(source=source)

    assert run.status == IngestRun.Status.SUCCEEDED, run.message
    assert (run.fetched, run.new) == (3, 2)
    assert run.rejected == [
        {
            "entry": "http://arxiv.org/abs/2610.00001v1",
            "reason": f"title is 600 characters; the limit is {limits.TITLE}",
        }
    ]
    assert (
        "http://arxiv.org/abs/2610.00002v1: PDF link dropped: it is 400 characters; "
        f"the limit is {limits.URL}"
    ) in run.message
    stored = dict(Paper.objects.values_list("arxiv_id", "pdf_url"))
    assert stored == {
        "2610.00002": "https://arxiv.org/pdf/2610.00002v1",  # the link its id gives
        "2610.00003": "https://arxiv.org/pdf/2610.00003v1",
    }
    assert Paper.objects.get(arxiv_id="2610.00003").title == "Gould & Morgan: a good entry"


def _blog_item(title: str, link: str) -> str:
    return f"<item><title>{title}</title><link>{link}</link><description>Post.</description></item>"


def test_a_feed_entry_whose_only_identity_is_an_over_long_link_is_rejected(db):
    base = "https://lab.example/blog/"
    at_limit = base + "a" * (limits.URL - len(base))
    feed = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Lab</title>'
        "<link>https://lab.example/blog</link><description>posts</description>"
        + _blog_item("T" * 600, base + "one")
        + _blog_item("Too long", base + "b" * (400 - len(base)))
        + _blog_item("At the limit", at_limit)
        + _blog_item("Good", base + "good")
        + "</channel></rss>"
    ).encode()

    run = ingest_document(data=feed, fmt=Source.Kind.FEED, tracks=[make_track()], label="lab")

    assert run.status == IngestRun.Status.SUCCEEDED, run.message
    assert run.new == 2
    assert [r["reason"] for r in run.rejected] == [
        f"title is 600 characters; the limit is {limits.TITLE}",
        f"no identifier (link dropped: it is 400 characters; the limit is {limits.URL})",
    ]
    # PostgreSQL enforces the column: the link at the limit fits as the paper's identity.
    kept = Paper.objects.get(title="At the limit")
    assert kept.canonical_id == f"url:{at_limit}"
    assert len(kept.canonical_id) <= Paper._meta.get_field("canonical_id").max_length


BOUNDS = [
    ("title", limits.TITLE, "title"),
    ("abstract", limits.ABSTRACT, "abstract"),
    ("doi", limits.DOI, "DOI"),
    ("comment", limits.COMMENT, "comment"),
    ("journal_ref", limits.JOURNAL_REF, "journal reference"),
    ("primary_category", limits.CATEGORY, "primary category"),
]


@pytest.mark.parametrize(("field", "limit", "what"), BOUNDS, ids=[b[0] for b in BOUNDS])
def test_each_text_field_is_bounded_at_its_edge(field, limit, what):
    at_limit = RawItem(**{"title": "t", "arxiv_id": "2610.00001", field: "x" * limit})
    assert limits.entry_problem(at_limit) == ""
    over = dataclasses.replace(at_limit, **{field: "x" * (limit + 1)})
    assert limits.entry_problem(over) == f"{what} is {limit + 1} characters; the limit is {limit}"


LISTS = [
    ("authors", limits.AUTHORS, limits.AUTHOR_NAME, "an author name"),
    ("affiliations", limits.AFFILIATIONS, limits.AFFILIATION, "an affiliation"),
    ("categories", limits.CATEGORIES, limits.CATEGORY, "a category"),
]


@pytest.mark.parametrize(("field", "count", "each", "what"), LISTS, ids=[b[0] for b in LISTS])
def test_each_list_is_bounded_in_length_and_in_each_value(field, count, each, what):
    item = RawItem(title="t", arxiv_id="2610.00001", **{field: ["x"] * count})
    assert limits.entry_problem(item) == ""
    item = dataclasses.replace(item, **{field: ["x"] * (count + 1)})
    assert limits.entry_problem(item) == f"{field}: {count + 1} listed; the limit is {count}"
    item = dataclasses.replace(item, **{field: ["x" * each]})
    assert limits.entry_problem(item) == ""
    item = dataclasses.replace(item, **{field: ["x" * (each + 1)]})
    assert limits.entry_problem(item) == f"{what} is {each + 1} characters; the limit is {each}"


def test_the_version_is_bounded_by_its_column():
    item = RawItem(title="t", arxiv_id="2610.00001", version=limits.VERSION)
    assert limits.entry_problem(item) == ""
    item.version += 1
    assert limits.entry_problem(item) == f"version is {limits.VERSION + 1}; the limit is 32767"


def test_a_link_is_bounded_at_its_edge_and_the_bounds_match_the_columns():
    base = "https://lab.example/"
    item = RawItem(title="t", url=base + "a" * (limits.URL - len(base)))
    limits.links_bound(item)
    assert item.url and item.notes == []
    item = RawItem(title="t", url=base + "a" * (limits.URL + 1 - len(base)))
    limits.links_bound(item)
    assert item.url == "" and item.notes == [
        f"link dropped: it is {limits.URL + 1} characters; the limit is {limits.URL}"
    ]
    # "url:" + the link, after http becomes https, still fits the identity column.
    assert len("url:") + limits.URL + 1 <= Paper._meta.get_field("canonical_id").max_length
    assert Paper._meta.get_field("title").max_length == limits.TITLE


# --- Entities after damage --------------------------------------------------------------------


def _api_doc() -> bytes:
    damaged = entry_xml(Entry("2610.00001", title="Fish and chips")).replace(
        "Fish and chips", "Fish & chips"
    )
    good = entry_xml(Entry("2610.00002", title="Gould & Morgan <3", summary="A & B > C"))
    return api_page([]).replace(b"</feed>", f"\n{damaged}\n{good}\n</feed>".encode())


def _rss_doc() -> bytes:
    return (
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>cs.DC</title>\n'
        b"<item><title>Fish & chips</title><link>https://arxiv.org/abs/2610.00001</link>"
        b"<description>arXiv:2610.00001v1 Announce Type: new Abstract: x</description></item>\n"
        b"<item><title>Gould &amp; Morgan &lt;3</title>"
        b"<link>https://arxiv.org/abs/2610.00002</link><description>arXiv:2610.00002v1 "
        b"Announce Type: new Abstract: A &amp; B &gt; C</description></item></channel></rss>"
    )


def _feed_doc() -> bytes:
    return (
        b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Lab</title>\n'
        b'<entry><title>Fish & chips</title><link href="https://lab.example/1"/></entry>\n'
        b'<entry><title>Gould &amp; Morgan &lt;3</title><link href="https://lab.example/2"/>'
        b"<summary>A &amp; B &gt; C</summary></entry></feed>"
    )


@pytest.mark.parametrize(
    ("parse", "doc"),
    [(parse_arxiv_api, _api_doc), (parse_arxiv_rss, _rss_doc), (parse_feed, _feed_doc)],
    ids=["arxiv_api", "arxiv_rss", "feed"],
)
def test_entities_after_a_damaged_entry_still_decode(parse, doc):
    feed = parse(doc())
    assert len(feed.rejected) == 1 and "malformed XML" in feed.rejected[0].reason
    (item,) = feed.items
    assert item.title == "Gould & Morgan <3"
    assert item.abstract == "A & B > C"


def test_entity_text_inside_cdata_is_left_as_written():
    doc = api_page(numbered(1)).replace(
        b"<title>Paper 1 on serving</title>", b"<title><![CDATA[R&amp;D &lt;b&gt;]]></title>"
    )
    (item,) = parse_arxiv_api(doc).items
    assert item.title == "R&amp;D &lt;b&gt;"


# --- Runs killed midway -----------------------------------------------------------------------


def _stale_limit() -> dt.timedelta:
    return dt.timedelta(seconds=FetchPolicy.from_settings().run_deadline + limits.STORE_ALLOWANCE)


def _running(source: Source | None, age: dt.timedelta, now: dt.datetime) -> IngestRun:
    run = IngestRun.objects.create(label="killed", source=source)
    IngestRun.objects.filter(pk=run.pk).update(started_at=now - age)
    return run


def test_the_sweep_fails_a_run_killed_midway_and_its_source_runs_again(
    db, fast_ingest, recorded_server, eager_tasks
):
    url = recorded_server.serve("/api/query", Reply(body=api_page(numbered(2))))
    source = Source.objects.create(
        name="arxiv", kind=Source.Kind.ARXIV_API, url=url, config={"search_query": "cat:cs.DC"}
    )
    now = timezone.now()
    age = _stale_limit() + dt.timedelta(minutes=1)
    killed = _running(source, age, now)
    # The fan-out claimed the source when it enqueued the run that was then killed.
    Source.objects.filter(pk=source.pk).update(last_run_at=now - age - dt.timedelta(seconds=1))
    assert sources_claim_due(now=now) == []  # not due: the claim holds it for its interval

    assert fail_stale_ingest_runs.delay().get() == [killed.pk]

    killed.refresh_from_db()
    assert killed.status == IngestRun.Status.FAILED and killed.finished_at is not None
    assert killed.message.startswith("marked failed by the stale-run sweep: still running")
    assert sources_claim_due(now=now) == [source.pk]  # due again
    rerun = ingest_source(source=source)
    assert rerun.status == IngestRun.Status.SUCCEEDED and rerun.new == 2
    assert ingest_runs_fail_stale() == []  # a second sweep finds nothing


def test_the_sweep_leaves_a_run_within_its_limit_alone(db):
    now = timezone.now()
    limit = _stale_limit()
    within = _running(None, limit, now)
    past = _running(None, limit + dt.timedelta(seconds=1), now)
    assert ingest_runs_fail_stale(now=now) == [past.pk]
    within.refresh_from_db()
    assert within.status == IngestRun.Status.RUNNING


def test_the_sweep_is_scheduled_and_registered():
    tasks = [entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()]
    assert "papers.tasks.fail_stale_ingest_runs" in tasks
    assert "papers.tasks.fail_stale_ingest_runs" in app.tasks


def test_the_ingest_command_sweeps_stale_runs_first(db, tmp_path, capsys):
    make_track()
    killed = _running(None, _stale_limit() + dt.timedelta(minutes=5), timezone.now())
    path = tmp_path / "page.xml"
    path.write_bytes(api_page(numbered(1)))
    call_command("ingest", file=path, format="arxiv_api", track=["infra"])
    killed.refresh_from_db()
    assert killed.status == IngestRun.Status.FAILED
    assert "ingest: marked 1 stale running runs failed" in capsys.readouterr().err
