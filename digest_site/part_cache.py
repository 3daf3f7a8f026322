"""Parts of a page (a daily's entries) stored in the cache under the versions of the tags they
print, so that a page the page cache must render again renders only the parts that changed.

A part's key is Django's template fragment key (``make_template_fragment_key``) of its name,
what it varies on (the language) and the current version of each of its tags and of ``ALL``
(``digest_site.cache_tags``): the retirement that retires a page that printed a part gives
the part a new key, so the part is retired with the page, by the same tags and nothing else
(``retire_cached_pages`` included).

A render stores parts only when nothing was retired while it read what they print: it reads
the retirement clock before its first query (``clock_before_reads``) and again with the parts
(one round trip), as the page cache does before storing a page. Only what every reader sees
is stored: a preview (staff) neither reads nor stores parts. A cache that is away, or fails
during the render, means "render every part": nothing here raises.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache
from django.core.cache.utils import make_template_fragment_key

from digest_site import cache_tags

log = logging.getLogger(__name__)
T = TypeVar("T")


def clock_before_reads() -> int | None:
    """The retirement clock, read before the render reads anything; None when the cache is
    away (then the render stores no part)."""
    try:
        return cache_tags.clock()
    except Exception as error:  # the cache is away: every part is rendered
        log.warning("part cache: reading the clock failed (%s); rendering every part", error)
        return None


@dataclass
class Parts:
    """A render's parts: those found in the cache (HTML by item) and the keys to store the
    others under (none: this render stores nothing)."""

    found: dict[Hashable, str] = field(default_factory=dict)
    keys: dict[Hashable, str] = field(default_factory=dict)

    def store(self, rendered: Mapping[Hashable, str]) -> None:
        """Store the parts this render made (HTML by item); never raises."""
        stored = {self.keys[item]: html for item, html in rendered.items() if item in self.keys}
        if not stored:
            return
        try:
            cache.set_many(stored, settings.PAGE_CACHE_TIMEOUT)
        except Exception as error:  # the cache went away mid-render: they are rendered again
            log.warning("part cache: storing %d parts failed (%s)", len(stored), error)


def parts(
    name: str, tags: Mapping[Hashable, Iterable[str]], *, started: int | None, vary: Iterable[str]
) -> Parts:
    """The parts ``name`` of the items in ``tags`` (item → the tags its part prints) that the
    cache holds under the tags' current versions, and the keys to store the others under.
    Nothing is found or stored when ``started`` is None or the clock moved since it was read."""
    if started is None or not tags:
        return Parts()
    try:
        keys = _keys(name, tags, tuple(vary))
        found = cache.get_many([cache_tags.CLOCK_KEY, *keys.values()])
    except Exception as error:  # the cache is away: every part is rendered
        log.warning("part cache: reading %s failed (%s); rendering every part", name, error)
        return Parts()
    if found.get(cache_tags.CLOCK_KEY) != started:
        # A retirement began while the render read its rows: they may predate it.
        return Parts()
    return Parts(found={item: found[key] for item, key in keys.items() if key in found}, keys=keys)


def _keys(
    name: str, tags: Mapping[Hashable, Iterable[str]], vary: tuple[str, ...]
) -> dict[Hashable, str]:
    """Each item's key: ``name``, ``vary`` and the versions of its tags and ``ALL``, each tag
    given a version if it has none (a key made with none could come back after an eviction)."""
    each = {item: sorted({*item_tags, cache_tags.ALL}) for item, item_tags in tags.items()}
    every = {tag for item_tags in each.values() for tag in item_tags}
    current = cache_tags.versions(every, settings.PAGE_CACHE_VERSION_RECHECK_MS / 1000)
    missing = [tag for tag, version in current.items() if version is None]
    if missing:
        current.update(cache_tags.stamp(missing))
    return {
        item: make_template_fragment_key(
            name, [*vary, *(f"{tag}={current[tag][0]}:{current[tag][1]!r}" for tag in item_tags)]
        )
        for item, item_tags in each.items()
    }


def cached_value(name: str, tags: Iterable[str], compute: Callable[[], T]) -> T:
    """``compute()``, worked out once per version of ``tags`` (and ``ALL``) and stored in the
    cache: a figure of the whole site that only a retirement of ``tags`` changes (the topics'
    paper counts). The versions are read before ``compute()`` reads the rows, so a change
    that commits meanwhile gives the value a new key. When the cache fails, ``compute()``
    runs each time; its own errors are raised."""
    try:
        key = _keys(name, {name: tags}, ())[name]
        value = cache.get(key)
    except Exception as error:  # the cache is away: worked out here
        log.warning("part cache: %s worked out uncached (%s)", name, error)
        return compute()
    if value is None:
        value = compute()
        try:
            cache.set(key, value, settings.PAGE_CACHE_TIMEOUT)
        except Exception as error:  # worked out again next time
            log.warning("part cache: %s not stored (%s)", name, error)
    return value
