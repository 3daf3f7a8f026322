"""Extension points for the apps that build on dailies.

Dependencies point one way (deepdives → dailies → papers), yet daily and index pages mark
the entries that have a deep dive. Apps above us register a prefetch for the papers shown
on those pages; the pages apply every registered prefetch, so their query count stays fixed,
and render the template fragments registered for their places, which show what was fetched.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from django.db import transaction
from django.db.models import Prefetch, Q

if TYPE_CHECKING:
    from papers.models import Paper

PrefetchFactory = Callable[[str], Prefetch]
_paper_prefetches: list[PrefetchFactory] = []


def register_paper_prefetch(factory: PrefetchFactory) -> None:
    """``factory(prefix)`` returns a Prefetch whose lookup starts with ``prefix``."""
    if factory not in _paper_prefetches:
        _paper_prefetches.append(factory)


def paper_prefetches(prefix: str = "") -> list[Prefetch]:
    return [factory(prefix) for factory in _paper_prefetches]


# Features apps above us give papers ("deep_dive": the paper has a published deep dive), so
# services here can count them (a daily's intro says how many deep dives it has) without
# naming the other app's models.
PaperFeature = Callable[[list[int]], set[int]]
_paper_features: dict[str, PaperFeature] = {}


def register_paper_feature(name: str, papers_with_it: PaperFeature) -> None:
    """``papers_with_it(paper_ids)`` returns the ids of those papers that have the feature."""
    _paper_features[name] = papers_with_it


def papers_with_feature(name: str, paper_ids: list[int]) -> set[int]:
    """The papers among ``paper_ids`` with the feature; none when no app registered it."""
    feature = _paper_features.get(name)
    return feature(paper_ids) if feature is not None and paper_ids else set()


# Apps above us act when a daily goes out (subscriptions mails it). Publishing calls each
# callback with the daily's id once the publishing transaction has committed.
PublishedCallback = Callable[[int], None]
_published_callbacks: list[PublishedCallback] = []


def register_on_publish(callback: PublishedCallback) -> None:
    """``callback(daily_id)`` runs after the transaction that published the daily commits."""
    if callback not in _published_callbacks:
        _published_callbacks.append(callback)


def published_callbacks() -> list[PublishedCallback]:
    return list(_published_callbacks)


# Apps above us keep what they derive from the published papers in step (search indexes
# them). The services that change which papers readers see, or what they read of them
# (publishing, unpublishing, editing or deleting a published daily), call ``papers_changed``
# with the papers' ids; each callback gets them once the transaction has committed.
PapersChangedCallback = Callable[[list[int]], None]
_papers_changed_callbacks: list[PapersChangedCallback] = []


def register_on_papers_changed(callback: PapersChangedCallback) -> None:
    """``callback(paper_ids)`` runs after a transaction that changed those papers commits."""
    if callback not in _papers_changed_callbacks:
        _papers_changed_callbacks.append(callback)


def papers_changed(paper_ids: Iterable[int]) -> None:
    """Hand ``paper_ids`` (distinct, in order) to every registered callback once the current
    transaction commits; nothing without ids. A callback that fails is logged and undoes
    nothing: the change has committed, and the app repairs what it keeps (search's
    periodic sweep re-indexes stale papers)."""
    ids = sorted(set(paper_ids))
    if not ids:
        return
    for callback in _papers_changed_callbacks:
        transaction.on_commit(lambda cb=callback: cb(ids), robust=True)


# The papers an app above us lists beside a paper on its page (search: the published papers
# whose text is closest). The page lists none when no app registered a provider.
class RelatedPapers(Protocol):
    def __call__(self, paper: Paper, *, language: str) -> list[Paper]: ...


_related_papers: list[RelatedPapers] = []


def register_related_papers(provider: RelatedPapers) -> None:
    """``provider(paper, language=…)`` returns a few published papers like ``paper`` (as the
    paper page reads it: ``selectors.paper_page``), most similar first, each with its
    summaries (``selectors.paper_headings`` reads what the list prints);
    the page lists the last registered provider's."""
    _related_papers[:] = [provider]


def related_papers(paper: Paper, *, language: str) -> list[Paper]:
    return _related_papers[0](paper, language=language) if _related_papers else []


# The published papers nearest in meaning to each of some papers (search: by their
# embeddings), for the editor's desk to show beside its candidates; none when no app
# registered a provider.
@dataclass(frozen=True)
class CoveredPaper:
    paper: Paper
    covered_on: dt.date  # the day of the newest published daily it appeared in
    similarity: float


NearestCovered = Callable[[list[int]], dict[int, list[CoveredPaper]]]
_nearest_covered: list[NearestCovered] = []


def register_nearest_covered(provider: NearestCovered) -> None:
    """``provider(paper_ids)`` returns, by paper id, a few published papers nearest to it
    (itself left out), nearest first, in a fixed number of queries."""
    _nearest_covered[:] = [provider]


def nearest_covered(paper_ids: list[int]) -> dict[int, list[CoveredPaper]]:
    return _nearest_covered[0](paper_ids) if _nearest_covered else {}


# Conditions on papers that apps above us define ("has_deep_dive", "has_verified_code"), so
# public filters (the read API's) can narrow papers without naming the other app's models.
PaperCondition = Callable[[], Q]
_paper_filters: dict[str, PaperCondition] = {}


def register_paper_filter(name: str, condition: PaperCondition) -> None:
    """``condition()`` returns a ``Q`` over ``Paper`` that holds for papers with the feature."""
    _paper_filters[name] = condition


def paper_filter(name: str) -> Q:
    """The registered condition; one that no paper meets when no app registered it."""
    condition = _paper_filters.get(name)
    return condition() if condition is not None else Q(pk__in=[])


# Template fragments apps above us show at named places of the pages and mails built on
# dailies: "paper-marks" beside a paper's title in the index, "entry-actions" among the links
# of a daily's entry or an index item, "paper-page" on the paper's page, "home-links" beside
# the home page's "All papers", "mail-links" and "mail-links-text" after a paper in the
# digest mail (HTML and plain text). Those templates name the place (``{% fragments %}``),
# never the other app's data; the fragments read what that app's prefetches put on the paper.
_fragments: dict[str, list[str]] = {}


def register_fragment(place: str, template_name: str) -> None:
    """Pages render ``template_name`` at ``place`` with their own context (a paper's places
    give it the ``paper``)."""
    names = _fragments.setdefault(place, [])
    if template_name not in names:
        names.append(template_name)


def fragments(place: str) -> list[str]:
    """The templates registered for ``place``, in registration order; none by default."""
    return list(_fragments.get(place, ()))
