"""Upserting ingested items: one paper per identity, versions move forward, editors win."""

from __future__ import annotations

import pytest

from papers.ingest import upsert
from papers.ingest.items import RawItem
from papers.ingest.normalize import paper_fields
from papers.ingest.parsers import parse_arxiv_api
from papers.ingest.service import ingest_document
from papers.models import (
    IngestRun,
    Organization,
    OrganizationAlias,
    Paper,
    Source,
    Topic,
    Venue,
    VenueAlias,
)
from papers.services import paper_record_edits
from tests.arxiv_docs import Entry, api_page, numbered
from tests.factories import make_track


def _ingest(entries: list[Entry]) -> IngestRun:
    run = ingest_document(
        data=api_page(entries), fmt=Source.Kind.ARXIV_API, tracks=[make_track()], label="test"
    )
    assert run.status == IngestRun.Status.SUCCEEDED, run.message
    return run


def test_the_same_items_twice_make_one_paper_each(db):
    first = _ingest(numbered(5))
    second = _ingest(numbered(5))
    assert (first.new, first.updated, first.unchanged) == (5, 0, 0)
    assert (second.new, second.updated, second.unchanged) == (0, 0, 5)
    assert Paper.objects.count() == 5
    paper = Paper.objects.get(arxiv_id="2610.00001")
    assert paper.canonical_id == "arxiv:2610.00001" and paper.slug == "arxiv-2610-00001"
    assert paper.tracks.filter(slug="infra").exists()


def test_a_newer_version_updates_the_paper_and_queues_it_for_scoring(db):
    _ingest([Entry("2610.00042", version=1, title="First title")])
    Paper.objects.update(needs_scoring=False)
    run = _ingest(
        [Entry("2610.00042", version=2, title="Better title", updated="2026-10-29T10:00:00Z")]
    )
    assert run.updated == 1
    paper = Paper.objects.get()
    assert (paper.version, paper.title, paper.needs_scoring) == (2, "Better title", True)


def test_an_older_version_never_overwrites_a_newer_one(db):
    _ingest([Entry("2610.00042", version=3, title="Third")])
    run = _ingest([Entry("2610.00042", version=1, title="First")])
    assert run.unchanged == 1
    assert Paper.objects.get().title == "Third"


def test_a_feed_listing_two_versions_keeps_the_newest(db):
    run = _ingest(
        [Entry("2610.00007", version=1, title="Old"), Entry("2610.00007", version=2, title="New")]
    )
    assert run.new == 1
    assert Paper.objects.get().title == "New"


def test_an_upsert_of_new_changed_and_unchanged_papers_runs_a_fixed_number_of_queries(
    db, django_assert_num_queries
):
    track = make_track()
    Venue.objects.create(short_name="NSDI", year=2027, slug="nsdi-2027", full_name="NSDI")
    Topic.objects.create(slug="kv-cache", name_en="KV cache", name_zh="KV 缓存")
    _ingest([Entry(f"2610.0000{n}", comment="10 pages") for n in range(1, 7)])
    items = parse_arxiv_api(
        api_page(
            [
                Entry("2610.00001", comment="10 pages"),  # the same: digest unchanged
                Entry("2610.00002", version=2, title="Two, revised", comment="10 pages"),
                Entry("2610.00003", version=2, comment="Accepted to NSDI 2027"),
                Entry("2610.00004"),  # sparser (no comment): digest changed, nothing to write
                Entry("2610.00005"),
                Entry("2610.00097", comment="Accepted to NSDI 2027"),
                Entry("2610.00098", authors=[("B. Author", "Peking University")]),
                Entry("2610.00099"),
            ]
        )
    ).items
    run = IngestRun.objects.create(label="pinned")
    # The matchers' organisation aliases, venue aliases and topics (3); the first look at the
    # stored digests (1); the changed papers, read whole (1); the venue, once for all (1); the
    # new papers inserted and read back (2); one UPDATE of the digest for each paper with
    # nothing else to write (2); one bulk UPDATE of the changed (1); tracks, organisations and
    # topics linked in one insert each (3); the authors made, read back, their old links
    # deleted and the new ones inserted (4).
    with django_assert_num_queries(18):
        result = upsert.papers_upsert(items=items, run=run, source=None, tracks=[track])
    assert (result.new, result.updated, result.unchanged) == (3, 2, 3)
    assert Paper.objects.filter(venue__short_name="NSDI").count() == 2
    assert Paper.objects.get(arxiv_id="2610.00098").organizations.get().label == "PKU"
    new = Paper.objects.filter(first_run=run)
    assert new.filter(topics__slug="kv-cache").count() == new.count() == 3


def test_fields_an_editor_changed_are_never_overwritten(db):
    _ingest([Entry("2610.00042", version=1, title="Raw title", summary="Raw abstract")])
    paper = Paper.objects.get()
    paper.title = "Editor's title"
    paper.save()
    paper_record_edits(paper=paper, fields=["title"])
    _ingest(
        [Entry("2610.00042", version=2, title="Version two title", summary="Version two abstract")]
    )
    paper.refresh_from_db()
    assert paper.title == "Editor's title"
    assert paper.abstract == "Version two abstract"
    assert paper.version == 2


def test_the_ingest_owned_fields_are_what_ingest_writes():
    """One list (Paper.INGEST_OWNED_FIELDS): the fields an item sets, and those matched from
    it (organisations, venue and its status, topics)."""
    written = set(paper_fields(RawItem(title="t"))) | {
        "organizations",
        "venue",
        "venue_status",
        "topics",
    }
    assert written == Paper.INGEST_OWNED_FIELDS


def test_a_reingest_overwrites_ingest_owned_fields_and_never_an_editor_owned_one(db, monkeypatch):
    _ingest([Entry("2610.00042", version=1, title="Raw title", comment="4 pages")])
    Paper.objects.update(short_name="Editor's name", slug="editors-slug")
    real = upsert.paper_fields

    def feed_naming_the_paper(item):  # a source that would also set an editor's field
        return {**real(item), "short_name": "From the feed", "slug": "from-the-feed"}

    monkeypatch.setattr(upsert, "paper_fields", feed_naming_the_paper)
    run = _ingest([Entry("2610.00042", version=2, title="New title", comment="12 pages")])
    assert run.updated == 1
    paper = Paper.objects.get()
    assert (paper.title, paper.comment, paper.version) == ("New title", "12 pages", 2)
    assert (paper.short_name, paper.slug) == ("Editor's name", "editors-slug")


def test_an_editors_version_is_recorded_and_kept(db):
    _ingest([Entry("2610.00042", version=1, title="First")])
    paper = Paper.objects.get()
    paper.version = 2
    paper.save()
    paper_record_edits(paper=paper, fields=["version", "tracks"])
    assert paper.edited_fields == ["version"]
    _ingest([Entry("2610.00042", version=3, title="Third")])
    paper.refresh_from_db()
    assert (paper.title, paper.version) == ("Third", 2)


def test_affiliations_map_to_organisation_labels_through_aliases(db):
    _ingest(
        [
            Entry(
                "2610.00100",
                authors=[
                    ("A. Author", "Microsoft Research Asia"),
                    ("B. Author", "Peking University"),
                ],
            )
        ]
    )
    labels = set(Paper.objects.get().organizations.values_list("label", flat=True))
    assert labels == {"Microsoft", "PKU"}
    # an editor adds an alias; the next paper that needs it gets it
    OrganizationAlias.objects.create(
        pattern="Contoso Labs",
        organization=Organization.objects.create(slug="contoso", label="Contoso"),
    )
    _ingest([Entry("2610.00101", authors=[("C. Author", "Contoso Labs, Redmond")])])
    assert list(
        Paper.objects.get(arxiv_id="2610.00101").organizations.values_list("label", flat=True)
    ) == ["Contoso"]


@pytest.mark.parametrize(
    ("comment", "journal_ref", "expected"),
    [
        ("Accepted to NSDI 2027", "", ("NSDI", 2027, "accepted")),
        ("To appear in OSDI '27. 14 pages", "", ("OSDI", 2027, "to_appear")),
        (
            "12 pages; accepted at the 31st Symposium on Operating Systems Principles (SOSP 2026)",
            "",
            ("SOSP", 2026, "accepted"),
        ),
        ("", "Proceedings of EuroSys 2026, pp. 1-15", ("EuroSys", 2026, "published")),
        (
            "Accepted to Networked Systems Design and Implementation 2027",
            "",
            ("NSDI", 2027, "accepted"),
        ),
        ("10 pages, 5 figures", "", None),
    ],
)
def test_venue_and_status_come_from_the_comment_or_journal_ref(db, comment, journal_ref, expected):
    _ingest([Entry("2610.00200", comment=comment, journal_ref=journal_ref)])
    paper = Paper.objects.select_related("venue").get()
    got = (paper.venue.short_name, paper.venue.year, paper.venue_status) if paper.venue else None
    assert got == expected


def test_editors_extend_the_venue_aliases(db):
    VenueAlias.objects.create(alias="Symposium on Cloud Computing", short_name="SoCC")
    _ingest([Entry("2610.00300", comment="Accepted to the Symposium on Cloud Computing 2026")])
    assert str(Paper.objects.get().venue) == "SoCC 2026"


def test_new_papers_get_topics_suggested_from_their_text(demo):
    run = _ingest(
        [
            Entry(
                "2610.00400",
                title="Expert offloading for mixture-of-experts serving",
                summary="We cut KV cache traffic and quantize experts to INT8.",
            )
        ]
    )
    assert run.new == 1
    slugs = set(Paper.objects.get(arxiv_id="2610.00400").topics.values_list("slug", flat=True))
    assert {"moe", "kv-cache", "quantization"} <= slugs
    assert "vector-search" not in slugs


def test_topics_an_editor_set_are_left_alone_on_update(demo):
    _ingest([Entry("2610.00401", version=1, title="MoE serving", summary="Experts.")])
    paper = Paper.objects.get(arxiv_id="2610.00401")
    paper.topics.set([])
    paper_record_edits(paper=paper, fields=["topics"])
    _ingest([Entry("2610.00401", version=2, title="MoE serving v2", summary="KV cache too.")])
    assert not paper.topics.exists()
