"""The WSGI entry point (what gunicorn loads) keeps what it loaded out of the collector's way:
a full collection walked every object of Django and the apps, a pause of a quarter second
during which the worker answered no one."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from django.conf import settings


def test_it_freezes_what_the_worker_loaded():
    code = (
        "import gc, json; import digest_site.wsgi; "
        "print(json.dumps([gc.get_freeze_count(), len(gc.get_objects())]))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "digest_site.settings"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    frozen, tracked = json.loads(done.stdout.strip().splitlines()[-1])
    # Django, the apps and their modules: far more than is left for the collector to walk.
    assert frozen > 50_000
    assert tracked < frozen / 10
