"""deploy/varnish/default.vcl on a real Varnish (7, vmod xkey) in front of a live server: a
published daily is served by Varnish, an edit through the admin purges exactly its tags,
and Varnish then serves the new text. Skipped only where varnishd is missing and neither
REQUIRE_BROWSER nor CI says it must run (.ci/run installs it)."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.admin_forms import change_form_data
from tests.factories import make_daily, make_paper

VARNISHD = shutil.which("varnishd") or "/usr/sbin/varnishd"
VCL = Path(__file__).resolve().parent.parent / "deploy" / "varnish" / "default.vcl"
MUST_RUN = bool(os.environ.get("REQUIRE_BROWSER") or os.environ.get("CI"))
if not Path(VARNISHD).exists() and not MUST_RUN:
    pytest.skip("needs varnishd (apt-get install varnish varnish-modules)", allow_module_level=True)

DAILY = "/en/infra/2026-10-28/"
OTHER = "/en/infra/2026-10-20/"
EDITED = "A corrected summary. Takeaway sentence here."


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def varnish(live_server, tmp_path):
    """varnishd in the foreground, with the deployed VCL pointed at the live server."""
    backend = re.search(r":(\d+)$", live_server.url).group(1)
    vcl = tmp_path / "default.vcl"
    vcl.write_text(VCL.read_text().replace('.port = "8000";', f'.port = "{backend}";'))
    port = _free_port()
    proc = subprocess.Popen(
        [
            VARNISHD,
            "-F",
            "-j",
            "none",
            "-n",
            str(tmp_path / "varnish"),
            "-f",
            str(vcl),
            "-a",
            f"127.0.0.1:{port}",
            "-s",
            "malloc,32m",
            "-T",
            "none",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"varnishd did not start: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=20)
    proc.stderr.close()


def _get(base: str, path: str) -> tuple[str, str]:
    """The body and Cache-Status of ``path`` through Varnish."""
    with urllib.request.urlopen(base + path, timeout=10) as response:
        return response.read().decode(), response.headers["Cache-Status"]


def test_varnish_serves_a_daily_and_drops_exactly_what_an_admin_edit_retired(
    transactional_db, varnish, settings, eager_tasks, editor_client
):
    daily = make_daily(papers=[make_paper("kv-paper"), make_paper("beside")])
    make_daily(date=dt.date(2026, 10, 20), papers=[make_paper("far-paper")])
    settings.CDN_PURGE_URLS = [f"{varnish}/"]
    for path in (DAILY, OTHER):
        body, status = _get(varnish, path)
        assert status.endswith("Varnish; fwd=miss; stored"), status
        body, status = _get(varnish, path)
        assert status.endswith("Varnish; hit"), status
    assert EDITED not in body

    summary = daily.entries.get(position=1).paper.summaries.get(language="en")
    url = f"/admin/papers/summary/{summary.pk}/change/"
    data = change_form_data(editor_client.get(url))
    data["body"] = EDITED
    response = editor_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]

    body, status = _get(varnish, DAILY)
    assert status.endswith("Varnish; fwd=miss; stored") and EDITED[:20] in body
    assert _get(varnish, OTHER)[1].endswith("Varnish; hit")  # not what the edit touched
