"""Model instances read by hand-written SQL, for the few reads a page makes on every request.

A queryset is built and compiled to SQL on each call: for the daily page's reads (the daily
with its pager, the entries with their papers, organizations, summaries and topics, deep
dives and code, the candidates' scores) that was 38 of an uncached render's 57 ms (medians,
bench machine), against some 3.5 ms for PostgreSQL to plan and run the statements. Those
reads (``dailies.selectors``: the daily, paper, index, topic and search pages) write their
SQL from the models' own table and column names, and make the instances as the ORM does
(``Model.from_db``, each column through its field's and the backend's converters), so the
templates get the same objects either way. Everything else stays with the ORM.

Parameters go through ``adapt`` (as the ORM adapts a lookup's value) and an ``IN`` list is
written with one placeholder per value (``placeholders``): the SQL is the same on
PostgreSQL and SQLite.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from functools import cached_property

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Field, Model


def quote(name: str) -> str:
    return connection.ops.quote_name(name)


def table(model: type[Model]) -> str:
    """The model's table, quoted."""
    return quote(model._meta.db_table)


def placeholders(values: Sequence) -> str:
    """``(%s, %s, …)``, one per value; ``(NULL)`` for none (``IN (NULL)`` matches no row)."""
    return "(" + ", ".join(["%s"] * len(values)) + ")" if values else "(NULL)"


def adapt(value):
    """A parameter as the ORM hands it to the driver (SQLite stores dates and times as text,
    aware datetimes as UTC)."""
    ops = connection.ops
    if isinstance(value, dt.datetime):
        return ops.adapt_datetimefield_value(value)
    if isinstance(value, dt.date):
        return ops.adapt_datefield_value(value)
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

    def _converters(self, db) -> list[tuple[int, list, object]]:
        # Worked out once per backend, and only for the columns that have any.
        cache = self.__dict__.setdefault("_by_vendor", {})
        if db.vendor not in cache:
            found = []
            for i, f in enumerate(self.fields):
                col = f.get_col(self.alias)
                if functions := _converters(col):
                    found.append((i, functions, col))
            cache[db.vendor] = found
        return cache[db.vendor]

    def values(self, row: Sequence, start: int = 0) -> list:
        """The columns' values of ``row`` from ``start``, converted as the ORM converts them."""
        values = list(row[start : start + len(self.fields)])
        db = connections[DEFAULT_DB_ALIAS]  # the connection itself, not its proxy each time
        for i, functions, col in self._converters(db):
            value = values[i]
            for function in functions:
                value = function(value, col, db)
            values[i] = value
        return values

    def build(self, row: Sequence, start: int = 0) -> Model:
        """The instance, as the ORM makes it from a row."""
        return self.model.from_db(DEFAULT_DB_ALIAS, self.names, self.values(row, start))


def fetch(sql: str, params: Sequence = ()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, [adapt(p) for p in params])
        return cursor.fetchall()
