"""On PostgreSQL, indexing papers leaves no pending list in the search GIN indexes: a
search never reads unmerged entries (migration 0007)."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection, transaction
from django.db.utils import DatabaseError

from search.index import search_index_refresh
from search.service import search

SEARCH_GIN_INDEXES = importlib.import_module(
    "dailies.migrations.0007_search_gin_without_pending_list"
).SEARCH_GIN_INDEXES


@pytest.fixture
def pgstattuple(is_postgres):
    if not is_postgres:
        pytest.skip("GIN indexes are PostgreSQL's; SQLite searches its FTS5 table")
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
    except DatabaseError:
        pytest.skip("the pgstattuple extension (PostgreSQL contrib) is not installed")


def _pending_pages() -> dict[str, int]:
    with connection.cursor() as cursor:
        found = {}
        for name in SEARCH_GIN_INDEXES:
            cursor.execute("SELECT pending_pages FROM pgstatginindex(%s::regclass)", [name])
            found[name] = cursor.fetchone()[0]
        return found


def test_it_leaves_no_pending_list_after_indexing(indexed_demo, pgstattuple):
    from papers.models import Paper

    search_index_refresh(paper_ids=Paper.objects.values_list("pk", flat=True))

    assert search("KV cache").count() > 0
    assert _pending_pages() == dict.fromkeys(SEARCH_GIN_INDEXES, 0)
