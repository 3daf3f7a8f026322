"""A module-scoped fixture is made once for its module, whether the tests reading it use the
database or not: tests/conftest.py runs a module's tests that use none beside its others
(pytest-django would put them after every module's database tests, and the fixture would
be made again there, as the cross-lingual corpus was: a minute of embedding)."""

from __future__ import annotations

import pytest

made: list[str] = []


@pytest.fixture(scope="module")
def shared():
    made.append("shared")
    return made


def test_a_database_test_reads_the_module_fixture(shared, db):
    assert made == ["shared"]


def test_a_test_without_the_database_reads_the_same_one(shared):
    assert made == ["shared"]
