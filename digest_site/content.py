"""The content version: one token that changes whenever anything readers can see changes.

Public pages are cached under it (``digest_site.page_cache``) and their ETag and
Last-Modified derive from it, so bumping it retires every cached page at once. Publishing,
unpublishing, an edit of public content, a verification run and a search-index refresh call
``content_version_bump()``; it sits low in the stack so papers, dailies, deepdives and audit
can all import it.

The token lives in the cache (Redis in production, so every worker sees the same one). It is
``<time in ns, hex>-<random>``: the time is the version's Last-Modified, and successive
versions are at least a second apart so that a client echoing a Last-Modified never matches
a newer version (HTTP dates count whole seconds). In a burst of bumps the time runs ahead of
the clock by at most ``MAX_LEAD_NS``; the page cache sends no Last-Modified until the clock
catches up (the ETag still works).

A bump the cache cannot take (it is down) is made later: by the same process at its next use
of the version, and, since that process may be gone by then, from a ``PendingBump`` row it
leaves in the database, which the periodic publisher turns into a bump each minute
(``content_version_bump_pending``). Until one of them is made, pages stored before the change
must not come back with the cache.

Each process remembers the token it last read or made. ``content_version(max_age)`` answers
from that memory while it is younger than ``max_age`` seconds (the page cache passes
``PAGE_CACHE_VERSION_RECHECK_MS``), so a cached page needs no round trip to the cache. A
bump in this process replaces the memory at once; a bump in another process (another
worker, Celery) is seen here once the memory is older than ``max_age``.

``kept_per_version(name, compute)`` keeps a site-wide value that only a bump can change (the
topics' paper counts) under the current token, worked out by the first request that needs it.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

log = logging.getLogger(__name__)

VERSION_KEY = "content:version"
# Never expires on its own: a lost token only costs one round of re-rendering.
VERSION_TIMEOUT = None
_SECOND_NS = 1_000_000_000
MAX_LEAD_NS = 5 * _SECOND_NS
_NEVER = float("-inf")
# The token this process last read or made, and when (time.monotonic()).
_seen: tuple[str | None, float] = (None, _NEVER)
# A bump this process could not make (the cache was down); made at the next use of the version.
_bump_pending = False
T = TypeVar("T")


def _new_token(previous: str | None) -> str:
    now = time.time_ns()
    previous_ns = version_time_ns(previous) if previous else None
    if previous_ns is not None:
        now = max(now, min(previous_ns + _SECOND_NS, now + MAX_LEAD_NS))
    return f"{now:x}-{secrets.token_hex(4)}"


def version_time_ns(token: str) -> int | None:
    """When ``token`` was made (ns since the epoch), or None for a foreign value."""
    try:
        return int(token.split("-", 1)[0], 16)
    except (AttributeError, ValueError):
        return None


def _remember(token: str | None) -> None:
    global _seen
    _seen = (token, time.monotonic() if token is not None else _NEVER)


def content_version(max_age: float = 0.0) -> str:
    """The current token; a first call makes one. With ``max_age`` (seconds), the token this
    process read or made less than that long ago, without asking the cache. Raises the
    cache's errors (the page cache treats them as "cache unavailable").

    A bump that failed in this process (the cache was down) is made first: the pages
    stored before it must not come back with the cache."""
    global _bump_pending
    token, read_at = _seen
    if token is not None and time.monotonic() - read_at < max_age:
        return token
    if _bump_pending:
        token = _bumped()
        _bump_pending = False
        log.warning("content version: the bump that failed is made now")
    else:
        token = cache.get(VERSION_KEY)
        if token is None:
            token = content_version_init()
    _remember(token)
    return token


def content_version_init() -> str:
    """Make a token when there is none (a cleared or evicted cache); the first one wins."""
    cache.add(VERSION_KEY, _new_token(None), VERSION_TIMEOUT)
    return cache.get(VERSION_KEY)


def _bumped() -> str:
    """A new token, stored; raises the cache's errors."""
    token = _new_token(cache.get(VERSION_KEY))
    cache.set(VERSION_KEY, token, VERSION_TIMEOUT)
    return token


def _bump() -> None:
    global _bump_pending
    try:
        token = _bumped()
    except Exception as error:  # a cache outage must not fail the write that bumps
        # The pages stored under the current token may show what just changed (an
        # unpublished daily): the next use of the version in this process bumps first, and
        # until then it asks the cache each time (and renders uncached while it is down).
        _bump_pending = True
        _remember(None)
        _record_pending()
        log.warning("content version: not bumped (%s); bumped when the cache answers", error)
    else:
        _bump_pending = False
        _remember(token)


def content_version_bump() -> None:
    """Retire every cached page: now, and again once the current transaction commits.

    Now, so that the next request in this process (the same transaction, a test) renders
    afresh; on commit, because a request in another process may meanwhile have rendered the
    old rows and stored them under the intermediate version. Never raises.
    """
    _bump()
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(_bump, robust=True)


def _record_pending() -> None:
    """Leave a ``PendingBump`` row: in the write's transaction when there is one (a write
    rolled back changed nothing readers see), in a savepoint so that a failure here cannot
    spoil it. Never raises."""
    from audit.models import PendingBump

    try:
        with transaction.atomic():
            PendingBump.objects.create()
    except Exception as error:  # a database that also failed: the in-process flag stands
        log.warning("content version: the pending bump is not recorded (%s)", error)


def content_version_bump_pending() -> bool:
    """Make the bump a process could not make, if there is one: this process's own, or one
    recorded in the database by any process (the periodic publisher calls this each minute,
    so a worker that published during an outage and then served no page, or died, still
    retires the pages it left stale). True when one was made; never raises."""
    global _bump_pending
    from audit.models import PendingBump

    try:
        recorded = list(PendingBump.objects.values_list("pk", flat=True))
    except Exception as error:  # the database is away too: this process's own flag only
        log.warning("content version: the pending bumps cannot be read (%s)", error)
        recorded = []
    if not _bump_pending and not recorded:
        return False
    _bump_pending = True
    try:
        content_version()
    except Exception as error:  # still down: the next tick tries again
        log.warning("content version: the bump that failed is still not made (%s)", error)
        return False
    if recorded:
        # Only the rows read before the bump: one recorded since then needs another.
        try:
            PendingBump.objects.filter(pk__in=recorded).delete()
        except Exception as error:  # left for the next tick, which bumps once more
            log.warning("content version: the pending bumps are not cleared (%s)", error)
    return True


# How long a value kept per content version lives (``kept_per_version``): a day, so that
# values of retired versions leave the cache on their own.
KEPT_TIMEOUT = 24 * 60 * 60


def kept_per_version(name: str, compute: Callable[[], T]) -> T:
    """``compute()``, worked out once per content version and kept in the cache beside the
    pages: for site-wide figures that only a bump can change (the topics' paper counts),
    which every page showing them would otherwise recount from every published paper.

    The value must pickle small and plain (ids and numbers, not model instances: those
    belong to the code that pickled them). When the cache is down, ``compute()`` is
    called each time; its errors are its own.
    """
    try:
        key = f"content:{name}:{content_version(settings.PAGE_CACHE_VERSION_RECHECK_MS / 1000)}"
        value = cache.get(key)
    except Exception as error:  # the cache is down: work it out here
        log.warning("content version: %s worked out uncached (%s)", name, error)
        return compute()
    if value is None:
        value = compute()
        try:
            cache.set(key, value, KEPT_TIMEOUT)
        except Exception as error:
            log.warning("content version: %s not kept (%s)", name, error)
    return value
