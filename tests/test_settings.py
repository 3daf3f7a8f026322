"""Settings come from the environment; bad values and a bare production fail loudly."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from digest_site import env

ROOT = Path(__file__).resolve().parent.parent
SECRET = "k3Y-" + "x9Lq2Vw8Rt5Zp1Mn4Bc7Df0Gh6Jk" * 2


UNSET = {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "ALLOWED_HOSTS", "DEBUG"}


def _manage(*args: str, **environ: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in UNSET}
    clean.update(environ)
    clean["VAR_DIR"] = str(ROOT / "var" / "settings-test")
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def settings_from(monkeypatch):
    """The settings module's names as it reads them from an environment: the module run
    afresh in this process (each manage.py boot to read them took 5-13 s on CI's machine);
    Django's own settings are left alone. The deploy check below still boots manage.py."""

    def read(**environ: str) -> dict:
        for name in UNSET:
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("VAR_DIR", str(ROOT / "var" / "settings-test"))
        for name, value in environ.items():
            monkeypatch.setenv(name, value)
        return runpy.run_path(str(ROOT / "digest_site" / "settings.py"))

    return read


@pytest.mark.parametrize("value", ["maybe", "2", "yes please"])
def test_it_rejects_a_bad_boolean(monkeypatch, value):
    monkeypatch.setenv("SOME_FLAG", value)
    with pytest.raises(ImproperlyConfigured, match="SOME_FLAG"):
        env.env_bool("SOME_FLAG")


def test_it_reads_booleans_integers_and_lists(monkeypatch):
    monkeypatch.setenv("A_FLAG", "Yes")
    monkeypatch.setenv("A_NUMBER", "42")
    monkeypatch.setenv("A_LIST", "a.example, b.example,,")
    assert env.env_bool("A_FLAG") is True
    assert env.env_int("A_NUMBER", 1) == 42
    assert env.env_list("A_LIST") == ["a.example", "b.example"]


def test_it_rejects_a_bad_integer_and_one_below_its_minimum(monkeypatch):
    monkeypatch.setenv("A_NUMBER", "forty")
    with pytest.raises(ImproperlyConfigured, match="not an integer"):
        env.env_int("A_NUMBER", 1)
    monkeypatch.setenv("A_NUMBER", "-3")
    with pytest.raises(ImproperlyConfigured, match="minimum"):
        env.env_int("A_NUMBER", 1, minimum=0)


def test_it_runs_with_nothing_set_on_sqlite():
    result = _manage(
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings as s; "
        "print(s.DATABASES['default']['ENGINE'], s.CELERY_TASK_ALWAYS_EAGER, "
        "s.CACHES['default']['BACKEND'], s.DEBUG)",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "django.db.backends.sqlite3",
        "True",
        "django.core.cache.backends.locmem.LocMemCache",
        "True",
    ]


def test_it_switches_to_postgres_and_redis_from_urls():
    result = _manage(
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings as s; print(s.DATABASES['default']['ENGINE'], "
        "s.DATABASES['default']['NAME'], s.CELERY_BROKER_URL, s.CACHES['default']['BACKEND'])",
        DATABASE_URL="postgres://u@db.internal:5432/digest",
        REDIS_URL="redis://cache:6379/2",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "django.db.backends.postgresql",
        "digest",
        "redis://cache:6379/2",
        "digest_site.cache_backend.BreakerRedisCache",
    ]


def test_cache_url_puts_the_cache_apart_from_the_broker():
    result = _manage(
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings as s; "
        "print(s.CELERY_BROKER_URL, s.CACHES['default']['LOCATION'])",
        REDIS_URL="redis://broker:6379/0",
        CACHE_URL="redis://cache:6379/0",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["redis://broker:6379/0", "redis://cache:6379/0"]


@pytest.mark.parametrize(("value", "threshold"), [(None, "5"), ("1", "5"), ("0", "None")])
def test_postgres_statements_are_prepared_unless_db_prepare_says_not(value, threshold):
    environ = {"DATABASE_URL": "postgres://u@db.internal:5432/digest"}
    if value is not None:
        environ["DB_PREPARE"] = value
    result = _manage(
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings as s; "
        "print(s.DATABASES['default']['OPTIONS']['prepare_threshold'])",
        **environ,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [threshold]


PRODUCTION = {
    "DJANGO_ENV": "production",
    "SECRET_KEY": SECRET,
    "ALLOWED_HOSTS": "papers.example.org",
    "DATABASE_URL": "postgres://u@db.internal:5432/digest",
    "REDIS_URL": "redis://cache.internal:6379/0",
    "EMAIL_URL": "smtp://mail.internal:25",
}


@pytest.mark.parametrize(
    "missing", ["SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "REDIS_URL", "EMAIL_URL"]
)
def test_production_refuses_to_start_without_its_essentials(missing):
    environ = dict(PRODUCTION)
    del environ[missing]
    result = _manage("check", **environ)
    assert result.returncode != 0
    assert missing in result.stderr


def test_production_passes_the_deploy_check_at_warning_level():
    result = _manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_runs_tasks_on_the_broker_and_caches_in_redis():
    result = _manage(
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings as s; "
        "print(s.CELERY_TASK_ALWAYS_EAGER, s.CELERY_BROKER_URL, s.CACHES['default']['BACKEND'])",
        **PRODUCTION,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "False",
        "redis://cache.internal:6379/0",
        "digest_site.cache_backend.BreakerRedisCache",
    ]


def test_it_rejects_an_unknown_environment_name():
    result = _manage("check", DJANGO_ENV="prod")
    assert result.returncode != 0 and "DJANGO_ENV" in result.stderr
