"""manage.py ingest: files, sources, JSON output and exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command, execute_from_command_line

from papers.ingest.service import FORMATS
from papers.models import Paper, Source
from tests.arxiv_docs import api_page, numbered
from tests.factories import make_track

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures" / "arxiv"


def test_it_imports_a_file_and_prints_json_last(db, tmp_path, capsys):
    make_track()
    path = tmp_path / "page.xml"
    path.write_bytes(api_page(numbered(3)))
    call_command("ingest", file=path, format="arxiv_api", track=["infra"], json=True)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    result = json.loads(last)
    assert result["status"] == "succeeded"
    assert (result["fetched"], result["new"], result["updated"], result["unchanged"]) == (
        3,
        3,
        0,
        0,
    )
    assert result["rejected"] == []
    assert Paper.objects.count() == 3


def test_a_format_is_spelled_as_its_source_kind():
    """One spelling per kind: the parser table, --format and Source.kind are the same words."""
    assert set(FORMATS) == set(Source.Kind) - {Source.Kind.MANUAL}
    assert all(type(kind) is Source.Kind for kind in FORMATS)


def test_the_format_is_named_by_its_source_kind(db, tmp_path):
    make_track()
    path = tmp_path / "page.xml"
    path.write_bytes(api_page(numbered(2)))
    call_command("ingest", "--file", str(path), "--format", "arxiv_api", "--track", "infra")
    assert Paper.objects.count() == 2
    with pytest.raises(CommandError, match="invalid choice: 'arxiv-api'"):
        call_command("ingest", "--file", str(path), "--format", "arxiv-api", "--track", "infra")


@pytest.mark.skipif(not FIXTURES.exists(), reason="shared fixtures not beside the project")
def test_it_imports_the_recorded_rss_listing(db, capsys):
    make_track()
    call_command(
        "ingest",
        file=FIXTURES / "arxiv_rss_multicat_2026-09-24.xml",
        format="arxiv_rss",
        track=["infra"],
        json=True,
    )
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["status"] == "succeeded"
    assert result["new"] == Paper.objects.count() > 0


def _manage(capsys, *args: str) -> tuple[int, str, str]:
    """``manage.py args`` as manage.py runs it (its argv, exit status, stdout and stderr), in
    this process: a fresh process cost a migrated SQLite file of its own, about 40 s on CI."""
    capsys.readouterr()
    try:
        execute_from_command_line(["manage.py", *args])
        status = 0
    except SystemExit as exit:
        status = exit.code
    out = capsys.readouterr()
    return status, out.out, out.err


# Outside a transaction: manage.py's entry closes the database connections when it ends.
def test_it_exits_non_zero_with_a_one_line_error(transactional_db, tmp_path, capsys):
    bad = tmp_path / "page.html"
    bad.write_bytes(b"<!DOCTYPE html><html><body>not a feed</body></html>")
    status, out, err = _manage(
        capsys, "ingest", "--file", str(bad), "--format", "arxiv_api", "--json"
    )
    assert status == 1
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("ingest: failed:")
    assert json.loads(out.strip().splitlines()[-1])["status"] == "failed"
    status, out, err = _manage(capsys, "ingest", "nosuchsource")
    assert status == 2
    assert err.strip() == "ingest: no source named 'nosuchsource' (known: none)"
