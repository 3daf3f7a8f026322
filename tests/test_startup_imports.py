"""Starting Django imports none of the heavy libraries: every manage.py command, gunicorn
worker and Celery worker start would pay for them (issue 33: django.setup() took 6.6 s)."""

import json
import os
import subprocess
import sys

from tests.conftest import ROOT

# Each is imported by the function that uses it (scoring, drafting, charts, segmenting).
HEAVY = (
    "numpy",
    "scipy",
    "sklearn",
    "matplotlib",
    "jieba",
    "openai",
    "snowballstemmer",
    # The MCP SDK and what it brings (agents/server.py): imported by /mcp/ and mcp_server.
    "mcp",
    "starlette",
    "pydantic",
)


def test_starting_django_and_loading_its_urls_imports_no_heavy_library():
    script = (
        "import json, sys, django; django.setup(); import digest_site.urls, digest_site.celery; "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "digest_site.settings"}
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
