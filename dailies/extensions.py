"""Extension points for the apps that build on dailies.

Dependencies point one way (deepdives → dailies → papers), yet daily and index pages mark
the entries that have a deep dive. Apps above us register a prefetch for the papers shown
on those pages; the pages apply every registered prefetch, so their query count stays fixed.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db.models import Prefetch

PrefetchFactory = Callable[[str], Prefetch]
_paper_prefetches: list[PrefetchFactory] = []


def register_paper_prefetch(factory: PrefetchFactory) -> None:
    """``factory(prefix)`` returns a Prefetch whose lookup starts with ``prefix``."""
    if factory not in _paper_prefetches:
        _paper_prefetches.append(factory)


def paper_prefetches(prefix: str = "") -> list[Prefetch]:
    return [factory(prefix) for factory in _paper_prefetches]
