"""manage.py ingest: files, sources, JSON output and exit status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

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


def _manage(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env["VAR_DIR"] = str(tmp)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_exits_non_zero_with_a_one_line_error(tmp_path):
    bad = tmp_path / "page.html"
    bad.write_bytes(b"<!DOCTYPE html><html><body>not a feed</body></html>")
    # One fresh SQLite database for both commands; the checks are the commands' own business.
    migrated = _manage("migrate", "-v0", "--skip-checks", tmp=tmp_path)
    assert migrated.returncode == 0, migrated.stderr
    result = _manage("ingest", "--file", str(bad), "--format", "arxiv_api", "--json", tmp=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("ingest: failed:")
    assert json.loads(result.stdout.strip().splitlines()[-1])["status"] == "failed"
    unknown = _manage("ingest", "nosuchsource", tmp=tmp_path)
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == "ingest: no source named 'nosuchsource' (known: none)"
