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


def test_it_runs_with_nothing_set_on_sqlite(settings_from):
    s = settings_from()
    assert s["DATABASES"]["default"]["ENGINE"] == "django.db.backends.sqlite3"
    assert s["CELERY_TASK_ALWAYS_EAGER"] is True
    assert s["CACHES"]["default"]["BACKEND"] == "django.core.cache.backends.locmem.LocMemCache"
    assert s["DEBUG"] is True


def test_it_switches_to_postgres_and_redis_from_urls(settings_from):
    s = settings_from(
        DATABASE_URL="postgres://u@db.internal:5432/digest", REDIS_URL="redis://cache:6379/2"
    )
    assert s["DATABASES"]["default"]["ENGINE"] == "django.db.backends.postgresql"
    assert s["DATABASES"]["default"]["NAME"] == "digest"
    assert s["CELERY_BROKER_URL"] == "redis://cache:6379/2"
    assert s["CACHES"]["default"]["BACKEND"] == "digest_site.cache_backend.BreakerRedisCache"


def test_cache_url_puts_the_cache_apart_from_the_broker(settings_from):
    s = settings_from(REDIS_URL="redis://broker:6379/0", CACHE_URL="redis://cache:6379/0")
    assert s["CELERY_BROKER_URL"] == "redis://broker:6379/0"
    assert s["CACHES"]["default"]["LOCATION"] == "redis://cache:6379/0"


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
def test_production_refuses_to_start_without_its_essentials(settings_from, missing):
    environ = dict(PRODUCTION)
    del environ[missing]
    with pytest.raises(ImproperlyConfigured, match=missing):
        settings_from(**environ)


def test_production_passes_the_deploy_check_at_warning_level():
    result = _manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_runs_tasks_on_the_broker_and_caches_in_redis(settings_from):
    s = settings_from(**PRODUCTION)
    assert s["CELERY_TASK_ALWAYS_EAGER"] is False
    assert s["CELERY_BROKER_URL"] == "redis://cache.internal:6379/0"
    assert s["CACHES"]["default"]["BACKEND"] == "digest_site.cache_backend.BreakerRedisCache"


def test_it_rejects_an_unknown_environment_name(settings_from):
    with pytest.raises(ImproperlyConfigured, match="DJANGO_ENV"):
        settings_from(DJANGO_ENV="prod")


def test_the_site_url_follows_the_embedded_servers_host_and_port(settings_from, monkeypatch):
    monkeypatch.delenv("SITE_URL", raising=False)
    assert settings_from(PORT="8123")["SITE_URL"] == "http://127.0.0.1:8123"
    assert settings_from(HOST="0.0.0.0", PORT="9000")["SITE_URL"] == "http://localhost:9000"
    assert settings_from(HOST="::1", PORT="9000")["SITE_URL"] == "http://[::1]:9000"
    monkeypatch.delenv("HOST")
    monkeypatch.delenv("PORT")
    assert settings_from()["SITE_URL"] == "http://127.0.0.1:8000"
    assert settings_from(SITE_URL="https://daily.example/", PORT="1")["SITE_URL"] == (
        "https://daily.example"
    )


def test_make_run_hands_its_host_and_port_to_the_site():
    makefile = (ROOT / "Makefile").read_text()
    assert "export HOST PORT" in makefile
