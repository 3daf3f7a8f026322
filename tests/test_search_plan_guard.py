"""PostgreSQL's plan guard (``PostgresBackend._guarded``): a statement over a common word runs
with sequential and plain index scans off, so that it finds its rows through the GIN index
instead of reading every paper's toasted vector — sent with its settings in one round trip,
which end with it."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from search.backends import Match, postgres
from tests.test_search_single_word_ranking import PLACES, quasar_papers  # noqa: F401

SETTINGS = "SELECT current_setting('enable_seqscan'), current_setting('enable_indexscan')"


@pytest.fixture
def backend(is_postgres):
    if not is_postgres:
        pytest.skip("the plan guard is the PostgreSQL backend's")
    return postgres.PostgresBackend()


def _setting() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW enable_seqscan")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_a_guarded_statement_is_one_round_trip_and_its_settings_end_with_it(
    quasar_papers,  # noqa: F811
    backend,
):
    common = Match(terms=("quasar",))  # no estimate: guarded
    with CaptureQueriesContext(connection) as queries, backend._guarded(common) as cursor:
        cursor.execute(SETTINGS, [])
        assert cursor.fetchone() == ("off", "off")
    # The settings and the statement in one simple query: no transaction of their own
    # (BEGIN, the settings, the statement, COMMIT were four round trips).
    assert len(queries.captured_queries) == 1
    assert queries.captured_queries[0]["sql"].startswith(postgres.PLAN_GUARD_SQL)
    assert _setting() == "on"
    rare = Match(terms=("quasar",), estimate=postgres.PLAN_GUARD_ABOVE)  # not guarded
    with backend._guarded(rare) as cursor:
        cursor.execute(SETTINGS, [])
        assert cursor.fetchone() == ("on", "on")
    # The same hits either way, through each of the guarded reads.
    for read in (backend._exact_all, backend._exact_head_first):
        assert read(common, offset=0, limit=99) == read(rare, offset=0, limit=99)
        assert len(read(common, offset=0, limit=99)) == len(PLACES)
    assert backend.count(common, limit=99) == len(PLACES)
    assert _setting() == "on"


@pytest.mark.django_db(transaction=True)
def test_inside_a_transaction_a_guarded_statement_runs_in_a_savepoint(
    quasar_papers,  # noqa: F811
    backend,
):
    common = Match(terms=("quasar",))
    with transaction.atomic():
        with backend._guarded(common) as cursor:
            cursor.execute(SETTINGS, [])
            assert cursor.fetchone() == ("off", "off")
        hits = backend._exact_all(common, offset=0, limit=99)
    assert len(hits) == len(PLACES)
    assert _setting() == "on"  # gone with the transaction
