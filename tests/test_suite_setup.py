"""How the suite itself runs: settings that keep it fast without changing what it checks."""

from __future__ import annotations

import numpy  # noqa: F401  (loads its BLAS)
import pytest
from django.conf import settings
from django.db import connection
from threadpoolctl import threadpool_info

from tests.conftest import refuse_unless_test_database


def test_numpy_runs_on_one_blas_thread_as_the_verifier_runs_the_programs():
    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas and all(pool["num_threads"] == 1 for pool in blas), blas


SQLITE = "django.db.backends.sqlite3"
POSTGRES = "django.db.backends.postgresql"


@pytest.mark.parametrize(
    "engine, name",
    [
        (SQLITE, str(settings.VAR_DIR / "db.sqlite3")),
        (SQLITE, "/srv/paper-daily/db.sqlite3"),
        (POSTGRES, "paper_daily"),
        (POSTGRES, "h_i"),
    ],
)
def test_the_shared_demo_refuses_a_database_that_is_not_a_test_one(engine, name):
    """demo_site commits the demo and flushes the database after its module: never into
    the developer's own."""
    with pytest.raises(RuntimeError, match="not a test database"):
        refuse_unless_test_database({"ENGINE": engine, "NAME": name}, configured="paper_daily")


def test_the_shared_demo_refuses_the_configured_database_even_named_as_a_test_one():
    with pytest.raises(RuntimeError, match="not a test database"):
        refuse_unless_test_database({"ENGINE": POSTGRES, "NAME": "test_x"}, configured="test_x")


@pytest.mark.parametrize(
    "engine, name",
    [
        (SQLITE, "file:memorydb_default?mode=memory&cache=shared"),
        (SQLITE, "/tmp/test_db.sqlite3"),
        (POSTGRES, "test_h_i"),
        (POSTGRES, "test_h_i_gw1"),
    ],
)
def test_the_shared_demo_accepts_the_test_databases_pytest_django_makes(engine, name):
    refuse_unless_test_database({"ENGINE": engine, "NAME": name}, configured="h_i")


def test_the_database_this_run_writes_is_a_test_one(db):
    refuse_unless_test_database(connection.settings_dict)
