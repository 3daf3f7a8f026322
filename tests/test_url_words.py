"""Track slugs share the URL space with the site's sections: every word the layout takes is
reserved, so a new top-level section cannot silently collide with a track."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError
from django.urls import URLResolver, get_resolver
from django.urls.resolvers import LocalePrefixPattern, RegexPattern

from digest_site.urlwords import RESERVED_WORDS
from papers.models import validate_track_slug

WORD = re.compile(r"[-\w]+")


def _first_segments(patterns, prefix: str = "") -> set[str]:
    """The first path segment of every pattern, after the language prefix or none."""
    found = set()
    for pattern in patterns:
        if isinstance(pattern.pattern, LocalePrefixPattern):
            found |= _first_segments(pattern.url_patterns)
            continue
        route = str(pattern.pattern)
        if isinstance(pattern.pattern, RegexPattern):
            route = route.removeprefix("^")
        route = prefix + route
        if "/" in route:
            found.add(route.split("/", 1)[0])
        elif isinstance(pattern, URLResolver):
            found |= _first_segments(pattern.url_patterns, route)  # include("") and the like
        else:
            found.add(route)
    return found


def _words() -> set[str]:
    segments = _first_segments(get_resolver().url_patterns)
    return {s for s in segments if WORD.fullmatch(s)}  # not "", "robots.txt", "<slug:track>"


def test_every_word_that_begins_a_url_is_reserved():
    words = _words()
    # The walk sees both levels: the sections beside the tracks and the top level.
    assert {"papers", "deep-dives", "subscribe", "theme", "admin", "api", "healthz"} <= words
    assert words <= RESERVED_WORDS, sorted(words - RESERVED_WORDS)


def test_the_static_files_prefix_is_reserved():
    assert settings.STATIC_URL.strip("/").split("/")[0] in RESERVED_WORDS


def test_only_the_tracks_pages_and_the_sitemaps_begin_with_a_variable():
    """A second pattern that begins with a variable would compete with the tracks for
    their addresses, whatever words are reserved."""
    segments = _first_segments(get_resolver().url_patterns)
    assert {s for s in segments if "<" in s} == {"<slug:track>", "sitemap-<slug:section>.xml"}


@pytest.mark.parametrize("word", sorted(RESERVED_WORDS))
def test_the_track_slug_validator_refuses_every_reserved_word(word):
    with pytest.raises(ValidationError, match="reserved"):
        validate_track_slug(word)
