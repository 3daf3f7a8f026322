"""Starting Django imports none of the heavy libraries: every manage.py command, gunicorn
worker and Celery worker start would pay for them (issue 33: django.setup() took 6.6 s)."""

import json
import os
import subprocess
import sys

import pytest

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
# What the URLs' views need but a process that serves no page does not (a Celery worker,
# most manage.py commands): the API's DRF serializers and drf-spectacular's schema (which
# bring requests, pygments, markdown and django.test), Markdown, the Redis client.
FOR_PAGES = (
    "rest_framework.fields",
    "drf_spectacular.openapi",
    "django.test",
    "markdown",
    "redis",
)


@pytest.fixture(scope="module")
def imported() -> dict[str, list[str]]:
    """The modules of ``HEAVY + FOR_PAGES`` a fresh process holds after django.setup(),
    and after it then loads the URLs and the Celery app."""
    script = (
        "import json, sys, django; django.setup(); "
        f"names = {HEAVY + FOR_PAGES!r}; "
        "setup = [m for m in names if m in sys.modules]; "
        "import digest_site.urls, digest_site.celery; "
        "print(json.dumps({'setup': setup, 'urls': [m for m in names if m in sys.modules]}))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "digest_site.settings"}
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_starting_django_imports_neither_a_heavy_library_nor_what_only_pages_need(imported):
    assert imported["setup"] == []


def test_loading_the_urls_and_celery_app_imports_no_heavy_library(imported):
    assert [m for m in imported["urls"] if m in HEAVY] == []
