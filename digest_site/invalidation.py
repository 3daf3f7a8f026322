"""What a change to public content retires: the one place that maps a change to the cache
tags of the pages that printed what changed (``digest_site.cache_tags``).

The services call ``changed(obj)`` after a change readers can see (publishing, an edit of
a published daily, a summary, an admin save of a paper, topic, track…), and
``daily_listing_changed(daily)`` when a daily joins or leaves the public pages; nothing
else retires anything (no staff POST, login, draft edit or audit record does). The tags
are retired at once and again on commit, and sent to the CDN on commit.

The tags the pages record (``page_cache.tag``):

- ``daily:<id>``, ``paper:<id>``, ``topic:<slug>``, ``track:<slug>``, ``org:<id>``, ``author:<id>``,
  ``deepdive:<slug>``, ``program:<slug>``: a page that prints that object;
- ``week:<track slug>:<ISO week>`` (``week:infra:2026-W44``): a page that prints that week of
  the track (its roundup page, the feed of weeks), retired by its roundup's public changes
  and by a change to any of its published dailies;
- ``nav`` (every HTML page: the tracks in the navigation), ``tracks`` (lists of tracks),
  ``dailies`` (lists of dailies: home, archives, feeds, sitemap), ``topics`` (the topics
  and their counts), ``deepdives``, ``programs``: the shared lists;
- ``index``: the coarse tag of the paper index, search, the search feed and the API's
  lists, which print any paper (precise tags would cost more than they save);
- ``related``: a paper page's related papers, which any other paper's new embedding may
  change (as coarse, for the same reason);
- ``untagged``: a page whose view recorded nothing, retired by every change.

Models are looked up by label (``apps.get_model``) so that the apps low in the stack
(papers) can report their changes without importing the apps above them.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.apps import apps
from django.db.models import Model, Q

from digest_site import cache_tags
from digest_site.page_cache import UNTAGGED


def _model(label: str):
    return apps.get_model(label)


def week(track_slug: str, day) -> set[str]:
    """The week of ``track_slug`` that holds ``day`` (a date)."""
    year, number, _weekday = day.isocalendar()
    return {f"week:{track_slug}:{year}-W{number:02d}"}


def papers(ids: Iterable[int]) -> set[str]:
    """A paper prints on its page, the dailies and topic pages that list it, the home page,
    the index and the feeds (``index``)."""
    tags = {f"paper:{pk}" for pk in ids}
    return tags | {"index"} if tags else tags


def daily(obj: Model) -> set[str]:
    """A daily's content or listing: its page and its neighbours' (their pager links),
    its papers and their topics, and the lists of dailies, papers and topics."""
    Daily = _model("dailies.Daily")
    DailyEntry = _model("dailies.DailyEntry")
    Topic = _model("papers.Topic")
    tags = {f"daily:{obj.pk}", "dailies", "index", "topics"}
    tags |= week(obj.track.slug, obj.date)
    published = Daily.objects.published().filter(track_id=obj.track_id).exclude(pk=obj.pk)
    for neighbour in (
        published.filter(date__lt=obj.date).order_by("-date").first(),
        published.filter(date__gt=obj.date).order_by("date").first(),
    ):
        if neighbour is not None:
            tags.add(f"daily:{neighbour.pk}")
    paper_ids = list(DailyEntry.objects.filter(daily=obj).values_list("paper_id", flat=True))
    tags |= papers(paper_ids)
    slugs = Topic.objects.filter(papers__in=paper_ids).values_list("slug", flat=True).distinct()
    return tags | {f"topic:{slug}" for slug in slugs}


def _papers_of(related: str, obj: Model) -> set[str]:
    Paper = _model("papers.Paper")
    return papers(Paper.objects.filter(**{related: obj}).values_list("pk", flat=True))


def tags_of(obj: Model) -> set[str]:
    """The tags a change to ``obj`` (as it is now, or as it was before) retires."""
    label = obj._meta.label
    if label == "dailies.Daily":
        return daily(obj) if obj.status == obj.Status.PUBLISHED else set()
    if label == "dailies.DailyEntry":
        return tags_of(obj.daily)
    if label == "dailies.WeeklyRoundup":
        # Readers see a roundup's intro once it is published; a draft's changes show nowhere.
        return week(obj.track.slug, obj.week_start) if obj.is_published else set()
    if label == "papers.Paper":
        slugs = obj.topics.values_list("slug", flat=True) if obj.pk else []
        return papers([obj.pk]) | {"topics"} | {f"topic:{slug}" for slug in slugs}
    if label in ("papers.Summary", "papers.SummaryVersion"):
        return papers([obj.paper_id if label == "papers.Summary" else obj.summary.paper_id])
    if label == "papers.Topic":
        return {f"topic:{obj.slug}", "topics", "index"} | _papers_of("topics", obj)
    if label == "papers.Organization":
        return {f"org:{obj.pk}", "index"} | _papers_of("organizations", obj)
    if label == "papers.Author":
        return {f"author:{obj.pk}", "index"} | _papers_of("author_links__author", obj)
    if label == "papers.Venue":
        return {"index"} | _papers_of("venue", obj)
    if label == "papers.Track":
        return {"nav", "tracks", f"track:{obj.slug}", "dailies", "index"}
    if label == "deepdives.DeepDive":
        return {f"deepdive:{obj.slug}", "deepdives", "index", f"paper:{obj.paper_id}"}
    if label == "deepdives.ReferenceCode":
        DeepDive = _model("deepdives.DeepDive")
        shown = DeepDive.objects.filter(Q(reference_code=obj) | Q(paper_id=obj.paper_id))
        tags = {f"program:{obj.slug}", "programs"}
        tags |= {f"deepdive:{slug}" for slug in shown.values_list("slug", flat=True)}
        return tags | ({f"paper:{obj.paper_id}"} if obj.paper_id else set())
    # Anything else readers see (a glossary term): the pages that recorded no tags.
    return set()


def retire(tags: set[str]) -> None:
    """Retire ``tags`` and the pages that recorded none (``untagged``)."""
    if tags:
        cache_tags.retire(*tags, UNTAGGED)


def changed(*objs: Model) -> None:
    """Readers' view of ``objs`` changed: retire what printed them. Give an object as it
    was and as it is when a change may move it (a topic's new slug)."""
    tags: set[str] = set()
    for obj in objs:
        tags |= tags_of(obj)
    retire(tags)


def daily_listing_changed(obj: Model) -> None:
    """``obj`` was published, unpublished or deleted while published: its page, its
    neighbours and every list it is or was on."""
    retire(daily(obj))


def papers_changed(ids: Iterable[int]) -> None:
    retire(papers(ids))


def embeddings_changed(paper_ids: Iterable[int]) -> None:
    """New embeddings of ``paper_ids``: if any of them is in the search index (published),
    what is found by meaning moved: search and "more like this" (``index``) and the
    related papers of every paper page (``related``). An unpublished paper's embedding (a
    desk candidate's) changes nothing readers see."""
    SearchDocument = _model("search.SearchDocument")
    if SearchDocument.objects.filter(paper_id__in=list(paper_ids)).exists():
        retire({"index", "related"})


def search_index_changed() -> None:
    """The search pages read the index: its refresh retires them."""
    retire({"index"})


def everything() -> None:
    """Every cached page (``manage.py retire_cached_pages``); raises the cache's errors."""
    cache_tags.retire_everything()
