"""slug_url(): what reverse() gives for a URL that ends in one slug, in every language and
under a script prefix, without the resolver each time."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import NoReverseMatch, reverse, set_script_prefix
from django.utils import translation

from digest_site.slug_urls import plain_url, slug_url

VIEWS = ["dailies:paper", "search:topic", "deepdives:code", "deepdives:detail", "dailies:track"]
SLUGS = ["kv-cache", "a_b.c~d", "x", "2406.12345v2", "缓存", "with space", "per%cent", "a/b"]


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("viewname", VIEWS)
def test_it_gives_what_reverse_gives(viewname, language):
    with translation.override(language):
        for slug in SLUGS:
            try:
                expected = reverse(viewname, args=[slug])
            except Exception as error:  # a slug the pattern refuses is refused the same way
                with pytest.raises(type(error)):
                    slug_url(viewname, slug)
            else:
                assert slug_url(viewname, slug) == expected, slug


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_dailys_url_is_its_tracks_prefix_and_its_date(language):
    with translation.override(language):
        for track in ("infra", "systems"):
            for date in (dt.date(2026, 10, 28), dt.date(2025, 1, 1)):
                expected = reverse("dailies:daily", kwargs={"track": track, "date": date})
                assert slug_url("dailies:daily", track, date) == expected
        with pytest.raises(NoReverseMatch):  # a track no URL can name
            slug_url("dailies:daily", "in fra", dt.date(2026, 10, 28))


FEEDS = ["dailies:track_feed", "dailies:track_rss", "dailies:papers_feed"]


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("viewname", FEEDS)
def test_plain_url_with_arguments_gives_what_reverse_gives(viewname, language):
    """A track's feeds, linked from every page, are kept per track and language; a slug the
    pattern refuses is refused as reverse() refuses it."""
    with translation.override(language):
        for slug in SLUGS:
            try:
                expected = reverse(viewname, args=[slug])
            except Exception as error:
                with pytest.raises(type(error)):
                    plain_url(viewname, slug)
            else:
                assert plain_url(viewname, slug) == expected, slug
                assert plain_url(viewname, slug) == expected, slug  # and once kept
    assert plain_url("dailies:home") == reverse("dailies:home")


def test_it_follows_the_script_prefix():
    try:
        set_script_prefix("/mounted/")
        assert slug_url("dailies:paper", "gaterq") == "/mounted/en/papers/gaterq/"
        assert slug_url("dailies:paper", "gaterq") == reverse("dailies:paper", args=["gaterq"])
        assert plain_url("dailies:track_feed", "infra") == "/mounted/en/feeds/infra.atom"
    finally:
        set_script_prefix("/")
    assert slug_url("dailies:paper", "gaterq") == "/en/papers/gaterq/"
    assert plain_url("dailies:track_feed", "infra") == "/en/feeds/infra.atom"


def test_pages_link_as_before(demo, anonymous, settings):
    settings.PAGE_CACHE_ENABLED = False
    html = anonymous.get("/zh/infra/2026-10-28/").content.decode()
    assert 'href="/zh/papers/hilo/"' in html and 'href="/zh/topics/' in html
    assert 'href="/en/' not in html.split("<main", 1)[1].split("</main>", 1)[0]
