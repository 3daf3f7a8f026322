"""One seam for what is not published yet (``digest_site.visibility``): active staff preview
it, everyone else reads the published, and what reads as ``PUBLIC`` (listings, feeds, the
sitemap, the API) shows the published whoever asks. Every public queryset answers
``visible_to(user)`` from that one rule."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client

from dailies.models import Daily, DailyEntry
from dailies.selectors import published_papers, visible_papers
from deepdives.models import DeepDive, ReferenceCode
from digest_site.visibility import PUBLIC, may_preview
from papers.models import Paper
from tests.factories import make_daily, make_deep_dive, make_paper

ROOT = Path(__file__).resolve().parent.parent
DRAFT_DATE = dt.date(2026, 11, 2)


@pytest.fixture
def users(django_user_model):
    def user(name: str, **fields):
        return django_user_model.objects.create_user(name, f"{name}@example.org", "pw", **fields)

    return {
        "staff": user("staff", is_staff=True),
        "inactive staff": user("gone", is_staff=True, is_active=False),
        "reader": user("reader"),
    }


def test_only_active_signed_in_staff_may_preview(users):
    assert may_preview(users["staff"])
    assert not may_preview(users["inactive staff"])
    assert not may_preview(users["reader"])
    assert not may_preview(AnonymousUser())
    assert not may_preview(PUBLIC)


@pytest.fixture
def content(db):
    """Of each kind, something readers see and something they do not: a published daily
    with a deep dive and code, and a draft daily whose paper is in no other daily, with a
    deep dive set to published and the registered program "cosmos"."""
    shown, hidden = make_paper("shown"), make_paper("secret-paper", title="A Secret Result")
    make_daily(papers=[shown])
    make_daily(date=DRAFT_DATE, papers=[hidden], status=Daily.Status.DRAFT)
    make_deep_dive(shown)
    make_deep_dive(hidden, slug="secret-dive")
    make_deep_dive(make_paper("undelivered"), slug="never-in-a-daily")
    ReferenceCode.objects.create(slug="shown", name="Shown", module="m.shown", paper=shown)
    ReferenceCode.objects.create(slug="notes", name="Notes", module="m.notes")
    ReferenceCode.objects.create(
        slug="cosmos", name="COSMOS", module="deepdives.reference.cosmos", paper=hidden
    )


MANAGERS = {
    "dailies": lambda: Daily.objects,
    "entries": lambda: DailyEntry.objects,
    "deep dives": lambda: DeepDive.objects,
    "reference code": lambda: ReferenceCode.objects,
}


@pytest.mark.parametrize("kind", MANAGERS)
def test_a_queryset_shows_readers_the_published_and_staff_everything(content, users, kind):
    manager = MANAGERS[kind]()
    published, everything = set(manager.published()), set(manager.all())
    assert published and published < everything
    for reader in (users["reader"], users["inactive staff"], AnonymousUser(), PUBLIC):
        assert set(manager.visible_to(reader)) == published
    assert set(manager.visible_to(users["staff"])) == everything


def test_papers_show_readers_the_published_and_staff_everything(content, users):
    published = set(published_papers())
    assert {p.slug for p in published} == {"shown"}
    for reader in (users["reader"], AnonymousUser(), PUBLIC):
        assert set(visible_papers(reader)) == published
    assert set(visible_papers(users["staff"])) == set(Paper.objects.all())


PREVIEWS = [
    "/en/infra/2026-11-02/",
    "/en/papers/secret-paper/",
    "/en/deep-dives/secret-dive/",
    "/en/code/cosmos/",
]
# Shared with everyone (and cached for them): staff get the public's, never a preview.
LISTINGS = [
    "/en/",
    "/en/infra/",
    "/en/papers/",
    "/en/deep-dives/",
    "/en/code/",
    "/en/feeds/infra.atom",
    "/en/feeds/infra/papers.atom",
    "/en/feeds/code.atom",
    "/sitemap.xml",
    "/api/v1/dailies/",
    "/api/v1/papers/",
    "/api/v1/papers/secret-paper/",
    "/api/v1/dailies/infra/2026-11-02/",
]


def test_staff_preview_what_readers_cannot_open(content, users, anonymous, settings):
    settings.PAGE_CACHE_ENABLED = False
    staff = Client()
    staff.force_login(users["staff"])
    for url in PREVIEWS:
        assert anonymous.get(url).status_code == 404, url
        assert staff.get(url).status_code == 200, url
    assert "Preview" in staff.get("/en/papers/secret-paper/").content.decode()


def test_listings_feeds_the_sitemap_and_the_api_show_staff_the_public_s(content, users, settings):
    settings.PAGE_CACHE_ENABLED = False
    staff = Client()
    staff.force_login(users["staff"])
    for url in LISTINGS:
        response = staff.get(url)
        assert response.status_code in (200, 404), url
        text = response.content.decode()
        for needle in ("secret-paper", "Secret Result", "secret-dive", "2026-11-02", "never-in-a"):
            assert needle not in text, (url, needle)


def test_the_rule_has_one_home():
    """Only ``digest_site.visibility`` reads ``is_staff`` to decide what a reader sees (the
    page cache no longer reads it at all: staff writes retire nothing by themselves)."""
    apps = [
        "agents",
        "audit",
        "dailies",
        "deepdives",
        "digest_site",
        "follow",
        "papers",
        "search",
        "subscriptions",
    ]
    readers = {
        str(path.relative_to(ROOT))
        for app in apps
        if (ROOT / app).is_dir()
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts and "is_staff" in path.read_text()
    }
    assert readers == {"digest_site/visibility.py"}
