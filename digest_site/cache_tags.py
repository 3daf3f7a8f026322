"""Cache tags: what a cached page printed, and the version of each, so that a change retires
exactly the pages that printed what changed.

A page records its tags while it renders (``page_cache.tag(request, "daily:12",
"paper:34")``); the page cache stores it with the version each tag had. A change retires
its tags (``retire``), giving each a new version; a stored page whose tags all still have
the versions it was stored with is current, any other is stale. What a change retires is
decided in one place, ``digest_site.invalidation``.

Versions live in the cache (Redis in production) under ``tag:<name>``; a version is
``(n, t)``: the retirement's number and its time (``time.time()``), which bounds how long
the page cache may still serve a stale copy. Two counters order retirements against the
processes that read them:

- ``tags:clock`` is counted up before a retirement writes its versions: a page is stored
  only if the clock did not move while it rendered (a change committed mid-render may not
  be in it);
- ``tags:published`` is counted up after: each process remembers the versions it read
  while that counter stays the same, and reads the counter again once its memory is older
  than ``PAGE_CACHE_VERSION_RECHECK_MS`` (≤ 1 s), so a retirement anywhere reaches every
  process within that time, and a hit in between costs no round trip.

Every page carries ``ALL``: ``retire_everything()`` (``manage.py retire_cached_pages``)
retires it. A retirement the cache cannot take (it is down) becomes a retirement of
everything: made by this process at its next lookup, and, since the process may be gone by
then, from an ``audit.PendingBump`` row that the periodic publisher turns into one each
minute (``retire_pending``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable

from django.apps import apps
from django.conf import settings
from django.core.cache import cache
from django.db import transaction

log = logging.getLogger(__name__)

CLOCK_KEY = "tags:clock"
PUBLISHED_KEY = "tags:published"
ALL = "all"
# Tag versions never expire on their own: an evicted one only costs a re-render.
TAG_TIMEOUT = None
_NEVER = float("-inf")
Token = tuple[int, float]


def tag_key(tag: str) -> str:
    return f"tag:{tag}"


class _Memory:
    """The versions this process read, valid while ``tags:published`` keeps the value
    ``published`` had when it was read at ``read_at`` (time.monotonic())."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.published: int | None = None
        self.read_at = _NEVER
        self.versions: dict[str, Token] = {}
        # A retirement this process could not make (the cache was down).
        self.pending = False

    def forget(self) -> None:
        with self.lock:
            self.published, self.read_at = None, _NEVER
            self.versions = {}


_memory = _Memory()


def forget() -> None:
    """Know what a process that starts now knows: no versions, no retirement owed (tests)."""
    _memory.forget()
    _memory.pending = False


def _counter(key: str) -> int:
    """``key`` counted up by one; a lost counter starts again from the time, in µs, so
    that its values do not repeat those seen before it was lost."""
    try:
        return cache.incr(key)
    except ValueError:
        cache.add(key, time.time_ns() // 1000, None)
        return cache.incr(key)


def clock() -> int:
    """The retirement clock, read now (one round trip); raises the cache's errors."""
    value = cache.get(CLOCK_KEY)
    if value is None:
        cache.add(CLOCK_KEY, time.time_ns() // 1000, None)
        value = cache.get(CLOCK_KEY)
    return value


def versions(tags: Iterable[str], max_age: float = 0.0) -> dict[str, Token | None]:
    """Each tag's version (None: the cache holds none), from this process's memory when
    ``tags:published`` was read less than ``max_age`` seconds ago and has not moved, else
    from the cache. Raises the cache's errors (the page cache treats them as "cache
    unavailable")."""
    memory = _memory
    if memory.pending:
        _retire_now((ALL,))
        memory.pending = False
        log.warning("cache tags: the retirement that failed is made now (everything)")
    now = time.monotonic()
    if now - memory.read_at >= max_age:
        published = cache.get(PUBLISHED_KEY)
        with memory.lock:
            if published != memory.published or published is None:
                memory.versions = {}
            memory.published, memory.read_at = published, now
    known = memory.versions
    tags = tuple(tags)
    missing = [tag for tag in tags if tag not in known]
    if missing:
        found = cache.get_many([tag_key(tag) for tag in missing])
        with memory.lock:
            for tag in missing:
                version = found.get(tag_key(tag))
                if version is not None:
                    memory.versions[tag] = version
        known = memory.versions
    return {tag: known.get(tag) for tag in tags}


def stamp(tags: Iterable[str]) -> dict[str, Token]:
    """The current version of each tag, giving one to each tag that has none yet (a page
    is stored with these); raises the cache's errors."""
    current = versions(tags, 0.0)
    missing = [tag for tag, version in current.items() if version is None]
    if missing:
        # Not a retirement: the clock stays (pages rendering meanwhile may be stored). Set,
        # not added: two first renders racing make one of them re-render once.
        token = (0, time.time())
        cache.set_many({tag_key(tag): token for tag in missing}, TAG_TIMEOUT)
        with _memory.lock:
            for tag in missing:
                current[tag] = _memory.versions[tag] = token
    return current


def _retire_now(tags: Iterable[str]) -> None:
    """New versions for ``tags``; raises the cache's errors."""
    tags = sorted(set(tags))
    token = (_counter(CLOCK_KEY), time.time())
    cache.set_many({tag_key(tag): token for tag in tags}, TAG_TIMEOUT)
    _counter(PUBLISHED_KEY)
    # This process's readers see the retirement at once; its memory of everything else is
    # re-read, since another process may have retired something in between.
    _memory.forget()


def _retire(tags: tuple[str, ...]) -> None:
    try:
        _retire_now(tags)
    except Exception as error:  # a cache outage must not fail the write that retires
        # Pages that printed what changed may still be stored: the next lookup in this
        # process retires everything first, and a row tells the periodic publisher to if
        # this process is gone by then.
        _memory.pending = True
        _memory.forget()
        _record_pending()
        log.warning(
            "cache tags: %s not retired (%s); everything is, once the cache answers",
            " ".join(tags),
            error,
        )


def retire(*tags: str) -> None:
    """Retire ``tags``: now, and again once the current transaction commits, when the CDN
    in front (``CDN_PURGE_URLS``) is told too. Never raises.

    Now, so that the next request in this process (the same transaction, a test) renders
    afresh; on commit, because a request in another process may meanwhile have rendered the
    rows before the change and stored them under the versions of the first retirement.
    """
    tags = tuple(sorted(set(tags)))
    if not tags:
        return
    _retire(tags)

    def committed() -> None:
        _retire(tags)
        if settings.CDN_PURGE_URLS:
            from digest_site.tasks import cdn_purge

            cdn_purge.delay(list(tags))

    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(committed, robust=True)
    else:
        committed()


def retire_everything() -> None:
    """Retire every cached page; raises the cache's errors (an operator must know)."""
    _retire_now((ALL,))
    if settings.CDN_PURGE_URLS:
        from digest_site.tasks import cdn_purge

        cdn_purge.delay([ALL])


def _record_pending() -> None:
    """Leave a ``PendingBump`` row: in the write's transaction when there is one (a write
    rolled back changed nothing readers see), in a savepoint so that a failure here cannot
    spoil it. Never raises."""
    PendingBump = apps.get_model("audit.PendingBump")

    try:
        with transaction.atomic():
            PendingBump.objects.create()
    except Exception as error:  # a database that also failed: the in-process flag stands
        log.warning("cache tags: the pending retirement is not recorded (%s)", error)


def retire_pending() -> bool:
    """Make the retirement a process could not make, if there is one: this process's own,
    or one recorded in the database by any process (the periodic publisher calls this each
    minute). True when one was made; never raises."""
    PendingBump = apps.get_model("audit.PendingBump")

    try:
        recorded = list(PendingBump.objects.values_list("pk", flat=True))
    except Exception as error:  # the database is away too: this process's own flag only
        log.warning("cache tags: the pending retirements cannot be read (%s)", error)
        recorded = []
    if not _memory.pending and not recorded:
        return False
    try:
        _retire_now((ALL,))
    except Exception as error:  # still down: the next tick tries again
        log.warning("cache tags: the retirement that failed is still not made (%s)", error)
        return False
    _memory.pending = False
    if recorded:
        # Only the rows read before the retirement: one recorded since then needs another.
        try:
            PendingBump.objects.filter(pk__in=recorded).delete()
        except Exception as error:  # left for the next tick, which retires once more
            log.warning("cache tags: the pending retirements are not cleared (%s)", error)
    return True
