"""One oversized text node fails only its entry, and a run says how many entries it lost
(entries the document held that could be neither read nor named)."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from papers.ingest import limits
from papers.ingest.parsers import parse_arxiv_rss
from papers.ingest.service import ingest_document
from papers.models import IngestRun, Paper, Source
from tests.factories import make_track
from tests.test_ingest_parsers import _fixture

# A real arXiv RSS listing of four items (2609.26811, 2609.26820, 2609.26831, 2609.26842).
RSS = "arxiv_rss_multicat_2026-09-24.xml"
SECOND = "2609.26820"


def _with_second_item(text: str, *, tag: str = "description") -> bytes:
    """The listing with ``text`` put first inside the second item's ``tag``."""
    data = _fixture(RSS).decode()
    second = data.index("<item>", data.index("<item>") + 1)
    at = data.index(f"<{tag}>", second) + len(f"<{tag}>")
    return (data[:at] + text + data[at:]).encode()


def _ingest(data: bytes) -> IngestRun:
    return ingest_document(
        data=data, fmt=Source.Kind.ARXIV_RSS, tracks=[make_track()], label="listing"
    )


def test_an_abstract_over_10_mb_fails_only_its_entry(db):
    run = _ingest(_with_second_item("x " * 5_300_000))  # 10.6 MB in one text node

    assert run.status == IngestRun.Status.SUCCEEDED
    assert (run.new, run.lost) == (3, 0)
    [rejected] = run.rejected
    assert SECOND in rejected["entry"] and "the limit is" in rejected["reason"]
    assert Paper.objects.count() == 3 and not Paper.objects.filter(arxiv_id=SECOND).exists()


def test_the_text_node_bound_at_its_edge():
    # In an element no parser reads, so only this bound can refuse it.
    def unread(size: int) -> bytes:
        return _with_second_item(f'<x:note xmlns:x="urn:x">{"a" * size}</x:note>')

    feed = parse_arxiv_rss(unread(limits.TEXT_NODE))
    assert len(feed.items) == 4 and feed.rejected == []

    feed = parse_arxiv_rss(unread(limits.TEXT_NODE + 1))
    assert len(feed.items) == 3
    [rejected] = feed.rejected
    assert SECOND in rejected.entry
    assert rejected.reason == (
        f"a text node is {limits.TEXT_NODE + 1} characters; the limit is {limits.TEXT_NODE}"
    )


def test_a_run_counts_the_entries_it_could_not_read(db):
    # An unterminated comment: libxml2's recovery cannot find the two items after it.
    data = _with_second_item("<!--", tag="title")
    run = _ingest(data)

    assert run.status == IngestRun.Status.SUCCEEDED
    assert run.lost == 2
    assert "2 lost (could not be read)" in run.message


@pytest.mark.parametrize("flag", [[], ["--json"]])
def test_the_command_shows_the_entries_lost(db, tmp_path, capsys, flag):
    path = tmp_path / "listing.xml"
    path.write_bytes(_with_second_item("<!--", tag="title"))
    make_track(slug="systems")
    call_command(
        "ingest", "--file", str(path), "--format", "arxiv_rss", "--track", "systems", *flag
    )
    out = capsys.readouterr().out.strip().splitlines()[-1]
    if flag:
        assert json.loads(out)["lost"] == 2
    else:
        assert "2 lost (could not be read)" in out
