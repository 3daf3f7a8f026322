"""The search backends, one per database vendor behind one interface (``base.Backend``):
PostgreSQL (weighted tsvectors, GIN, pg_trgm; ``postgres``) and SQLite (FTS5; ``sqlite``).

Both store and match the terms made by ``search.text``; neither parses text itself. Both
rank with the same formula (``ranking``) and keep the same vocabulary (``vocabulary``), so
the two find the same papers in the same order. Each query returns at most ``MAX_RESULTS``
results.
"""

from __future__ import annotations

from django.db import connection

from search.backends.base import MAX_RESULTS, Backend, Filters, Hit, Match
from search.backends.postgres import PostgresBackend
from search.backends.sqlite import SqliteBackend
from search.backends.vocabulary import learn_spellings, term_counts

__all__ = [
    "MAX_RESULTS",
    "Backend",
    "Filters",
    "Hit",
    "Match",
    "current",
    "learn_spellings",
    "term_counts",
]


def current() -> Backend:
    """The backend for the default database's vendor."""
    return PostgresBackend() if connection.vendor == "postgresql" else SqliteBackend()
