"""Model instances read by hand-written SQL, for the few reads a page makes on every request.

A queryset is built and compiled to SQL on each call: for the daily page's reads (the daily
with its pager, the entries with their papers, organizations, summaries and topics, deep
dives and code, the candidates' scores) that was 38 of an uncached render's 57 ms (medians,
bench machine), against some 3.5 ms for PostgreSQL to plan and run the statements. Those
reads (``dailies.selectors``: the daily, paper, index, topic and search pages) write their
SQL from the models' own table and column names, and make the instances as the ORM does
(``Model.from_db``, each column through its field's and the backend's converters), so the
templates get the same objects either way. Everything else stays with the ORM.

Parameters go through ``adapt`` (as the ORM adapts a lookup's value); a list of values to
match is written by ``one_of``. On PostgreSQL the statements are prepared: they are sent
with their parameters apart (server-side binding) and each connection plans a statement
once and runs its plan from then on (``fetch``). Planning was about half of the statements'
time: the daily page's eight cost 2.2 ms a request as plain statements, 1.2 ms prepared
(bench machine of 2026-12-02). So that one statement serves every length of list, a list is
one array parameter there (``= ANY(%s)``); on SQLite it is ``IN (%s, …)``. Reads that do
not depend on each other (a page's papers' organizations, summaries, topics, deep dives…)
are ``Read``s run together (``run``): on PostgreSQL their statements go out in one round
trip (a pipeline), 0.5 ms less for the daily page's five.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TypeVar

import psycopg
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections
from django.db.backends.postgresql.base import TIMESTAMPTZ_OID
from django.db.backends.postgresql.psycopg_any import register_tzloader
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.db.models import Field, Model, signals
from django.db.models.base import ModelState
from psycopg.pq import Format

T = TypeVar("T")


def quote(name: str) -> str:
    return connection.ops.quote_name(name)


def table(model: type[Model]) -> str:
    """The model's table, quoted."""
    return quote(model._meta.db_table)


def one_of(values: Sequence) -> tuple[str, list]:
    """The test that a column is one of ``values``, to write after the column, and its
    parameters: ``= ANY(%s)`` with the values as one array on PostgreSQL (the statement is
    the same for any number of them, so it is prepared once); elsewhere ``IN (%s, %s, …)``,
    one placeholder per value, or ``IN (NULL)`` (no row) for none."""
    if connection.vendor == "postgresql":
        return "= ANY(%s)", [list(values)]
    if not values:
        return "IN (NULL)", []
    return "IN (" + ", ".join(["%s"] * len(values)) + ")", list(values)


def adapt(value):
    """A parameter as the ORM hands it to the driver (SQLite stores dates and times as text,
    aware datetimes as UTC)."""
    if isinstance(value, dt.datetime):
        return connection.ops.adapt_datetimefield_value(value)
    if isinstance(value, dt.date):
        return connection.ops.adapt_datefield_value(value)
    return value


def _converters(col) -> list:
    # As SQLCompiler.get_converters: the backend's, then the field's.
    return connection.ops.get_db_converters(col) + col.get_db_converters(connection)


def convert(field: Field, value):
    """A value of ``field``'s column (or of an expression of its type) as the ORM returns it."""
    col = field.get_col("")
    for function in _converters(col):
        value = function(value, col, connection)
    return value


class Columns:
    """A model's columns in a SELECT under ``alias``, and the instance made from them.

    ``Columns(Paper, "p").sql`` is ``"p"."id", "p"."slug", …``; ``build(row, start)`` makes
    the Paper from ``row[start:start + len(columns)]``.
    """

    def __init__(self, model: type[Model], alias: str, fields: Iterable[str] | None = None):
        """Every concrete column, or only ``fields`` (names), in their order: an instance
        needs its primary key among them; ``values`` needs none."""
        self.model = model
        self.alias = alias
        meta = model._meta
        self.fields: list[Field] = (
            list(meta.concrete_fields)
            if fields is None
            else [meta.get_field(name) for name in fields]
        )
        self.names = [f.attname for f in self.fields]

    def __len__(self) -> int:
        return len(self.fields)

    @cached_property
    def sql(self) -> str:
        return ", ".join(f"{quote(self.alias)}.{quote(f.column)}" for f in self.fields)

    def _converters(self) -> list[tuple[int, list, object]]:
        # Worked out once per backend (its engine, read without asking the context-local
        # connection handler for the connection), and only for the columns that have any.
        cache = self.__dict__.setdefault("_by_engine", {})
        engine = connections.settings[DEFAULT_DB_ALIAS]["ENGINE"]
        found = cache.get(engine)
        if found is None:
            found = []
            for i, f in enumerate(self.fields):
                col = f.get_col(self.alias)
                if functions := _converters(col):
                    found.append((i, functions, col))
            cache[engine] = found
        return found

    def values(self, row: Sequence, start: int = 0, db=None) -> list:
        """The columns' values of ``row`` from ``start``, converted as the ORM converts them
        (``db``: the default connection, for a caller converting many rows: ``connection``
        is found in a context-local store on each use)."""
        values = list(row[start : start + len(self.fields)])
        found = self._converters()
        if not found:
            return values
        if db is None:
            db = connections[DEFAULT_DB_ALIAS]
        for i, functions, col in found:
            value = values[i]
            for function in functions:
                value = function(value, col, db)
            values[i] = value
        return values

    def build(self, row: Sequence, start: int = 0, db=None) -> Model:
        """The instance, as the ORM makes it from a row (``Model.from_db``). A model without
        an ``__init__`` of its own or listeners to its init signals gets its values straight
        into its ``__dict__``, where ``Model.__init__`` would put them one by one (a fifth
        of an uncached daily's Python time went there); the fields left out are deferred
        all the same (not in the ``__dict__``)."""
        values = self.values(row, start, db)
        if not self._plain:
            return self.model.from_db(DEFAULT_DB_ALIAS, self.names, values)
        obj = self.model.__new__(self.model)
        state = obj._state = ModelState()
        state.adding, state.db = False, DEFAULT_DB_ALIAS
        obj.__dict__.update(zip(self.names, values, strict=True))
        return obj

    @cached_property
    def _plain(self) -> bool:
        # Read at the first build: apps connect their receivers when they are ready.
        model = self.model
        return (
            model.__init__ is Model.__init__
            and not signals.pre_init.has_listeners(model)
            and not signals.post_init.has_listeners(model)
        )


class _PreparedCursor(psycopg.Cursor):
    """A server-side binding cursor whose statements are prepared on first use (the
    connection keeps the last ``prepared_max`` of them, 100 by default)."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=prepare is not False, binary=binary)


class _LoggedCursor(CursorDebugWrapper):
    """Django's wrapper of a cursor whose queries are logged (``DEBUG``, tests' query
    counts), logging a statement as it does a server-side binding cursor's: with its values
    written in (``compose_sql``)."""

    def execute(self, sql, params=None):
        try:
            logged = self.db.ops.compose_sql(sql, params)
        except psycopg.DataError:
            logged = sql
        with self.debug_sql(logged):
            return CursorWrapper.execute(self, sql, params)


def _cursor():
    """A cursor for ``fetch``, wrapped as Django wraps its own (queries logged and counted,
    execute wrappers applied, database errors as Django's)."""
    # The connection itself: each attribute of its proxy (``connection``) looks it up in a
    # context-local store, some ten times a cursor.
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor != "postgresql":
        return db.cursor()
    db.close_if_health_check_failed()
    db.ensure_connection()
    db.validate_thread_sharing()
    with db.wrap_database_errors:
        cursor = _PreparedCursor(db.connection)
    # As Django's create_cursor: timestamps are read in the connection's time zone.
    loader = db.connection.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT)
    if db.timezone != loader.timezone:
        register_tzloader(db.timezone, cursor)
    if db.queries_logged:
        return _LoggedCursor(cursor, db)
    return db.make_cursor(cursor)


def _first_read_checks(read: Callable[[], T]) -> T:
    """``read()``, standing in for the request's connection health check when it is the
    request's first statement on a reused connection.

    With ``CONN_HEALTH_CHECKS`` Django sends ``SELECT 1`` before a request's first statement
    on a persistent connection, and reconnects if it fails: a round trip of its own, a
    twentieth of a gunicorn worker's time on an uncached daily page under load (py-spy,
    bench machine of 2026-12-02). These reads only read, outside any transaction, so the
    read itself is the check: if the server dropped the connection (a restart, a failover),
    it is closed and the read made again on a new one; any other error is the read's own.
    """
    db = connections[DEFAULT_DB_ALIAS]
    due = (
        db.vendor == "postgresql"
        and db.connection is not None
        and db.health_check_enabled
        and not db.health_check_done
        and not db.in_atomic_block
    )
    if not due:
        return read()
    db.health_check_done = True
    try:
        return read()
    except DatabaseError:
        if db.connection is not None and not (db.connection.closed or db.connection.broken):
            raise
    db.close()  # what the check would have done; the next cursor connects afresh
    return read()


def fetch(sql: str, params: Sequence = ()) -> list[tuple]:
    """The rows of ``sql`` with ``params`` (``%s`` placeholders), on the default database."""

    def read() -> list[tuple]:
        with _cursor() as cursor:
            cursor.execute(sql, [adapt(p) for p in params])
            return cursor.fetchall()

    return _first_read_checks(read)


@dataclass(frozen=True)
class Read:
    """A statement whose rows ``apply`` takes (it puts them on the objects in hand)."""

    sql: str
    params: Sequence
    apply: Callable[[list[tuple]], None]


def run(reads: Iterable[Read | None]) -> None:
    """Each read's statement, then its ``apply`` with its rows, in order (a ``None`` is no
    read). On PostgreSQL the statements are sent together and answered in one round trip
    (psycopg's pipeline mode); elsewhere one after another."""
    reads = [read for read in reads if read is not None]
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor != "postgresql" or len(reads) < 2:
        for read in reads:
            read.apply(fetch(read.sql, read.params))
        return
    results = _first_read_checks(lambda: _pipelined(reads))
    for read, rows in zip(reads, results, strict=True):
        read.apply(rows)


def _pipelined(reads: list[Read]) -> list[list[tuple]]:
    """The rows of each of ``reads``' statements, sent together (a pipeline)."""
    db = connections[DEFAULT_DB_ALIAS]
    cursors = [_cursor() for _ in reads]
    try:
        with db.wrap_database_errors, db.connection.pipeline():
            for cursor, read in zip(cursors, reads, strict=True):
                cursor.execute(read.sql, [adapt(p) for p in read.params])
            return [cursor.fetchall() for cursor in cursors]
    finally:
        for cursor in cursors:
            cursor.close()
