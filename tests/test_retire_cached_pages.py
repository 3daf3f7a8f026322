"""Operators retire every cached page after a write outside the services; a demo refresh
does it on its own."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from dailies.models import DailyEntry
from digest_site.cache_tags import ALL, versions
from tests.factories import make_daily, make_paper


def test_it_serves_what_a_write_outside_the_services_changed(db, anonymous):
    daily = make_daily(papers=[make_paper("kept"), make_paper("dropped")])
    url = daily.get_absolute_url()
    assert "dropped" in anonymous.get(url).content.decode()
    DailyEntry.objects.filter(paper__slug="dropped").delete()  # as SQL run by hand would
    assert "dropped" in anonymous.get(url).content.decode()  # the cached page
    call_command("retire_cached_pages", stdout=io.StringIO())
    assert "dropped" not in anonymous.get(url).content.decode()


def test_it_fails_loudly_when_the_cache_is_unreachable(db, unreachable_cache):
    with pytest.raises(Exception):  # noqa: B017 - the cache's own connection error
        call_command("retire_cached_pages", stdout=io.StringIO())


def test_a_demo_refresh_retires_the_cached_pages(db, anonymous):
    call_command("load_demo", stdout=io.StringIO())
    before = versions([ALL])
    call_command("load_demo", stdout=io.StringIO())
    assert versions([ALL]) != before
