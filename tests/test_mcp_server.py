"""The read-only MCP server, driven by the official SDK's own client: over stdio
(``manage.py mcp_server`` as a subprocess) and over streamable HTTP (``/mcp/`` of the site
served by gunicorn on 127.0.0.1), on a database of the demo plus a draft daily whose paper
no tool may return; and in process, the API's throttle and bounds on ``/mcp/``."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests import background
from tests.conftest import ROOT

TOOLS = {"search_papers", "get_daily", "get_paper", "list_topics", "get_week"}
# A draft daily in the demo's week, with a paper of its own that no tool may return.
DRAFT = """
import datetime as dt
from dailies.models import Daily, DailyEntry
from papers.models import Paper, Track
paper = Paper.objects.create(slug="secret-mcp-paper", title="Secret Zanzibar caching paper",
                             canonical_id="title:secret-zanzibar", abstract="Zanzibar caching.")
daily = Daily.objects.create(track=Track.objects.get(slug="infra"), date=dt.date(2026, 10, 30))
DailyEntry.objects.create(daily=daily, paper=paper, position=1, is_lead=True)
"""
PORTS = range(18710, 18720)


def _env(var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(VAR_DIR=str(var_dir), API_ANON_RATE="1000/minute")
    return env


# The site, made in one process (each Django start costs seconds): migrated, the demo (its
# papers embedded, as load_demo does), then the draft daily.
BUILD = (
    "from django.core.management import call_command\n"
    "call_command('migrate', verbosity=0, skip_checks=True)\n"
    "call_command('load_demo')\n" + DRAFT
)


def _build_site(var_dir: Path) -> dict[str, str]:
    """Make a fresh SQLite site of its own in ``var_dir`` (the servers are other processes);
    its environment."""
    env = _env(var_dir)
    with (var_dir / "build.log").open("w") as log:
        code = subprocess.run(
            [sys.executable, "manage.py", "shell", "--no-imports", "-c", BUILD],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=600,
        ).returncode
    assert code == 0, (var_dir / "build.log").read_text()[-2000:]
    return env


_site: dict = {}


def prebuild(config: pytest.Config) -> None:
    """Queue the site in the session's background lane (tests/background.py) as soon as the
    session knows it runs this module: the minute it takes, mostly embedding the demo's
    papers, passes on the other core while the tests before this module run."""
    var_dir = Path(tempfile.mkdtemp(prefix="mcp-site-"))
    config.add_cleanup(lambda: shutil.rmtree(var_dir, ignore_errors=True))
    _site.update(dir=var_dir, future=background.submit(_build_site, var_dir))


@pytest.fixture(scope="module")
def site_env(request) -> dict[str, str]:
    """The site: the demo and the draft daily."""
    if not _site:
        prebuild(request.config)
    return background.result(_site["future"], _build_site, _site["dir"])


def _free_port() -> int:
    for port in PORTS:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.fail(f"no free port in {PORTS}")


@pytest.fixture(scope="module")
def http_url(site_env, tmp_path_factory):
    """The site under gunicorn on 127.0.0.1, as in production (WSGI)."""
    port = _free_port()
    log = (tmp_path_factory.mktemp("gunicorn") / "log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "digest_site.wsgi:application"]
        + ["-b", f"127.0.0.1:{port}", "-w", "1", "--timeout", "60"],
        cwd=ROOT,
        env=site_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("gunicorn did not start")
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/mcp/"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def _session(target) -> dict:
    """Every tool called once through the SDK's client, with what the checks read."""

    async def run() -> dict:
        async with Client(target) as client:
            listed = await client.list_tools()
            calls = {
                "search": ("search_papers", {"query": "KV cache", "limit": 5}),
                "search_secret": ("search_papers", {"query": "Zanzibar"}),
                "listing": ("search_papers", {"limit": 100}),
                "daily": ("get_daily", {"track": "infra", "date": "2026-10-28", "lang": "zh"}),
                "draft_daily": ("get_daily", {"track": "infra", "date": "2026-10-30"}),
                "paper": ("get_paper", {"slug": "hilo"}),
                "secret_paper": ("get_paper", {"slug": "secret-mcp-paper"}),
                "topics": ("list_topics", {"limit": 3}),
                "too_many": ("list_topics", {"limit": 101}),
                "week": ("get_week", {"track": "infra", "week": "2026-W44"}),
                "bad_week": ("get_week", {"track": "infra", "week": "2026-W54"}),
            }
            answers = {name: await client.call_tool(*call) for name, call in calls.items()}
            return {"tools": {t.name for t in listed.tools}, **answers}

    return anyio.run(run)


def _check(answers: dict) -> None:
    assert answers["tools"] == TOOLS
    search = answers["search"].structured_content
    assert not answers["search"].is_error and 0 < len(search["results"]) <= 5
    # Semantic search answers any query with the nearest published papers: never the draft's.
    found = json.dumps(answers["search_secret"].structured_content)
    assert "secret-mcp-paper" not in found and "Zanzibar" not in found
    slugs = {r["slug"] for r in answers["listing"].structured_content["results"]}
    assert "hilo" in slugs and "secret-mcp-paper" not in slugs
    daily = answers["daily"].structured_content
    assert daily["date"] == "2026-10-28" and daily["entries"]
    assert daily["title"].startswith("基础设施")
    for name in ("draft_daily", "secret_paper", "too_many", "bad_week"):
        assert answers[name].is_error, name
    assert "between 1 and 100" in answers["too_many"].content[0].text
    assert answers["paper"].structured_content["slug"] == "hilo"
    assert len(answers["topics"].structured_content["results"]) == 3
    week = answers["week"].structured_content
    assert week["week"] == "2026-W44" and week["picks"]
    assert "2026-10-30" not in {d["date"] for d in week["dailies"]}
    assert "secret-mcp-paper" not in json.dumps(week)
    assert week["intro"] is None  # no editor has published one


def test_it_serves_the_published_content_over_stdio(site_env):
    params = StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp_server"], cwd=str(ROOT), env=site_env
    )
    _check(_session(params))


def test_it_serves_the_published_content_over_streamable_http(http_url):
    _check(_session(http_url))


# -- in process: the throttle and the body bound ----------------------------------------------

LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
HEADERS = {
    "HTTP_ACCEPT": "application/json, text/event-stream",
    "HTTP_MCP_PROTOCOL_VERSION": "2025-06-18",
}


def test_it_throttles_as_the_api_does(db, client, settings):
    settings.API_ANON_RATE = "2/minute"
    answers = [
        client.post("/mcp/", LIST_TOOLS, content_type="application/json", **HEADERS)
        for _ in range(3)
    ]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert {t["name"] for t in answers[0].json()["result"]["tools"]} == TOOLS
    assert answers[2]["Retry-After"]


def test_it_refuses_a_body_over_its_bound(db, client):
    from agents.tools import MAX_BODY_BYTES

    body = json.dumps({**LIST_TOOLS, "params": {"pad": "x" * MAX_BODY_BYTES}})
    response = client.post("/mcp/", body, content_type="application/json", **HEADERS)
    assert response.status_code == 413
