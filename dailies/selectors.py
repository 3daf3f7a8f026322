"""Reads for the public pages. Each list has its own prefetching queryset so that its page
costs a fixed number of queries, whatever the number of entries."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import (
    Count,
    Exists,
    F,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
)

from dailies.extensions import paper_prefetches, read_paper_prefetches
from dailies.models import Daily, DailyEntry, DailyStatus, published_q
from digest_site.cache_tags import kept_under
from digest_site.rows import Columns, Read, convert, fetch, one_of, quote, run, table
from digest_site.visibility import PUBLIC, Reader, may_preview
from papers.models import Organization, Paper, Score, Summary, Topic, Track, Venue


def published_papers() -> QuerySet[Paper]:
    """Papers that appear in at least one published daily — the only papers readers see."""
    return Paper.objects.filter(Exists(DailyEntry.objects.published().filter(paper=OuterRef("pk"))))


def published_tracks() -> QuerySet[Track]:
    """Tracks readers see: an active one's pages answer, and a published daily names its
    track whether it is active or not."""
    return Track.objects.filter(
        Q(is_active=True) | Exists(Daily.objects.published().filter(track=OuterRef("pk")))
    )


def visible_papers(user: Reader) -> QuerySet[Paper]:
    """The papers ``user`` may read: every paper when they preview, else the published ones
    (``Paper`` cannot say which are: publication is the dailies')."""
    return Paper.objects.all() if may_preview(user) else published_papers()


def _paper_lookups(prefix: str) -> list:
    return [
        f"{prefix}organizations",
        f"{prefix}summaries",
        f"{prefix}topics",
        *paper_prefetches(prefix),
    ]


def daily_entries(daily: Daily) -> list[DailyEntry]:
    """A daily's entries in order, with everything its page shows (a fixed 5+ queries)."""
    return list(
        daily.entries.select_related("paper", "paper__venue")
        .prefetch_related(*_paper_lookups("paper__"))
        .order_by("position")
    )


# The public pages' reads by hand-written SQL (``digest_site.rows``): the reads they make on
# every uncached request, whose querysets cost more to build and compile than to run.
_DAILY, _TRACK = Columns(Daily, "d"), Columns(Track, "t")
_ENTRY, _PAPER, _VENUE = Columns(DailyEntry, "e"), Columns(Paper, "p"), Columns(Venue, "v")
_ORGANIZATION, _TOPIC = Columns(Organization, "o"), Columns(Topic, "t")
_SUMMARY = Columns(Summary, "s")
# What a daily's page prints of a paper (its entry, byline, links and citation); the rest
# (the abstract, where it came from, the ingest's bookkeeping) is left deferred. A search
# result prints the same, and an excerpt that may come from the abstract.
_PRINTED_PAPER = [
    "id",
    "slug",
    "kind",
    "title",
    "short_name",
    "authors",
    "abs_url",
    "pdf_url",
    "doi",
    "arxiv_id",
    "primary_category",
    "published_on",
    "venue",
    "venue_status",
]
_DAILY_PAPER = Columns(Paper, "p", _PRINTED_PAPER)
_SEARCHED_PAPER = Columns(Paper, "p", [*_PRINTED_PAPER, "abstract"])


def _visible(alias: str, user: Reader) -> tuple[str, list]:
    """``Daily.objects.visible_to(user)`` as SQL on the dailies under ``alias``: every daily
    when ``user`` previews, else the published ones (``published_q``)."""
    if may_preview(user):
        return "1 = 1", []
    return f"{alias}.status = %s", [DailyStatus.PUBLISHED]


def _published(user: Reader = PUBLIC) -> tuple[str, list]:
    """``visible_papers(user)`` as SQL on the papers under ``p``: ``AND`` a published entry
    of theirs, or nothing when ``user`` previews (then every paper)."""
    if may_preview(user):
        return "", []
    visible, status = _visible("d", user)
    return (
        f" AND EXISTS (SELECT 1 FROM {table(DailyEntry)} e JOIN {table(Daily)} d "
        f"ON d.id = e.daily_id WHERE e.paper_id = p.id AND {visible})",
        status,
    )


def daily_page(track: str, date: dt.date, *, user: Reader) -> Daily | None:
    """The daily of ``track`` (its slug) on ``date`` if ``user`` may see it, with its track and
    the dates of the same track's dailies just before and after it that ``user`` may see
    (``previous_date``, ``next_date``, None at either end): one query."""
    (visible, status), (neighbour_visible, _) = _visible("d", user), _visible("n", user)
    neighbour = (
        f"(SELECT n.date FROM {table(Daily)} n WHERE n.track_id = d.track_id "
        f"AND n.date {{op}} d.date AND {neighbour_visible} ORDER BY n.date {{order}} LIMIT 1)"
    )
    rows = fetch(
        f"SELECT {_DAILY.sql}, {_TRACK.sql}, {neighbour.format(op='<', order='DESC')}, "
        f"{neighbour.format(op='>', order='ASC')} "
        f"FROM {table(Daily)} d JOIN {table(Track)} t ON t.id = d.track_id "
        f"WHERE t.slug = %s AND d.date = %s AND {visible}",
        [*status, *status, track, date, *status],
    )
    if not rows:
        return None
    (row,) = rows
    daily = _DAILY.build(row)
    daily.track = _TRACK.build(row, len(_DAILY))
    date_field = Daily._meta.get_field("date")
    daily.previous_date, daily.next_date = (convert(date_field, v) for v in row[-2:])
    return daily


def _linked(
    papers: dict[int, Paper], name: str, columns: Columns, attribute: str, order: str
) -> Read | None:
    """The read of what each of ``papers`` links through its many-to-many field ``name``,
    appended to its list ``attribute`` in ``order`` (a column of ``columns``' table)."""
    return _linked_read(
        list(papers), name, columns, order, partial(_put_linked, papers, columns, attribute)
    )


def _linked_read(
    paper_ids: list[int],
    name: str,
    columns: Columns,
    order: str,
    apply: Callable[[list[tuple]], None],
) -> Read | None:
    """The read of the rows of what ``paper_ids`` link through ``name``, each the paper's id
    and then ``columns``, in ``order``: ``apply`` takes them."""
    if not paper_ids:
        return None
    field = Paper._meta.get_field(name)
    links, alias = field.remote_field.through, quote(columns.alias)
    ids, ids_params = one_of(paper_ids)
    return Read(
        f"SELECT x.{quote(field.m2m_column_name())}, {columns.sql} "
        f"FROM {table(columns.model)} {alias} JOIN {table(links)} x "
        f"ON x.{quote(field.m2m_reverse_name())} = {alias}.id "
        f"WHERE x.{quote(field.m2m_column_name())} {ids} "
        f"ORDER BY {alias}.{quote(order)}, {alias}.id",
        ids_params,
        apply,
    )


def _put_linked(
    papers: dict[int, Paper], columns: Columns, attribute: str, rows: Sequence[tuple]
) -> None:
    """``_linked_read``'s rows built and appended to their papers' lists ``attribute``."""
    db = connections[DEFAULT_DB_ALIAS]
    for row in rows:
        getattr(papers[row[0]], attribute).append(columns.build(row, 1, db))


def _summaries(
    papers: dict[int, Paper], columns: Columns = _SUMMARY, *, picked_for: str | None = None
) -> Read | None:
    """The read of each of ``papers``' summaries (their ``columns``: all, or only what a
    page prints, the rest deferred) into its ``summary_list``; with ``picked_for`` (a
    language), only the one ``pick_language`` picks for it: the summary in that language,
    else the one in the other (a paper has one per language, in the two languages)."""
    return _summaries_read(
        list(papers), columns, picked_for, partial(_put_summaries, papers, columns)
    )


def _summaries_read(
    paper_ids: list[int],
    columns: Columns,
    picked_for: str | None,
    apply: Callable[[list[tuple]], None],
) -> Read | None:
    """The read of the rows of ``paper_ids``' summaries (``_summaries``): ``apply`` takes
    them."""
    if not paper_ids:
        return None
    ids, ids_params = one_of(paper_ids)
    if picked_for:
        ids += (
            " AND (s.language = %s OR NOT EXISTS (SELECT 1 FROM"
            f" {table(Summary)} o WHERE o.paper_id = s.paper_id AND o.language = %s))"
        )
        ids_params = [*ids_params, picked_for, picked_for]
    return Read(
        f"SELECT {columns.sql} FROM {table(Summary)} s "
        f"WHERE s.paper_id {ids} ORDER BY s.language, s.id",
        ids_params,
        apply,
    )


def _put_summaries(papers: dict[int, Paper], columns: Columns, rows: Sequence[tuple]) -> None:
    """``_summaries_read``'s rows built and appended to their papers' ``summary_list``."""
    db = connections[DEFAULT_DB_ALIAS]
    for row in rows:
        summary = columns.build(row, db=db)
        papers[summary.paper_id].summary_list.append(summary)


def daily_page_entries(
    daily: Daily, *also: Callable[[list[DailyEntry]], Read | None], language: str
) -> list[DailyEntry]:
    """``daily_entries`` for the daily's own page in ``language``: the entries in order with
    their papers and venues (one query), each paper's organizations, the summary an entry
    prints (the one ``pick_language`` picks) and topics in plain lists
    (``organization_list``, ``summary_list``, ``topic_list``: a query each, the columns an
    entry prints: ``_ENTRY_LISTS``), and what apps above us prefetch
    (``extensions.read_paper_prefetches``); ``also`` make the caller's reads that need the
    entries (the daily's selection), run with those."""
    rows = fetch(
        f"SELECT {_ENTRY.sql}, {_DAILY_PAPER.sql}, {_VENUE.sql} FROM {table(DailyEntry)} e "
        f"JOIN {table(Paper)} p ON p.id = e.paper_id "
        f"LEFT JOIN {table(Venue)} v ON v.id = p.venue_id "
        "WHERE e.daily_id = %s ORDER BY e.position, e.id",
        [daily.pk],
    )
    entries, db = [], connections[DEFAULT_DB_ALIAS]
    for row in rows:
        entry = _ENTRY.build(row, db=db)
        paper = _DAILY_PAPER.build(row, len(_ENTRY), db)
        venue_at = len(_ENTRY) + len(_DAILY_PAPER)
        paper.venue = _VENUE.build(row, venue_at, db) if row[venue_at] is not None else None
        entry.daily, entry.paper = daily, paper
        entries.append(entry)
    read_paper_lists(
        [e.paper for e in entries],
        *(read(entries) for read in also),
        columns=_ENTRY_LISTS,
        language=language,
    )
    return entries


def read_paper_lists(
    papers: list[Paper],
    *also: Read | None,
    columns: tuple[Columns, Columns, Columns] = (_ORGANIZATION, _SUMMARY, _TOPIC),
    language: str | None = None,
) -> None:
    """Each paper's organizations, summaries (with ``language``, only the one a page in it
    prints: ``_summaries``) and topics in plain lists (``organization_list``,
    ``summary_list``, ``topic_list``: a query each, by hand-written SQL; all their columns,
    or ``columns``, the rest deferred), and what apps above us prefetch
    (``extensions.read_paper_prefetches``); ``also``, the caller's own reads of the same
    papers, run with them (one round trip on PostgreSQL: ``rows.run``)."""
    by_id = {paper.pk: paper for paper in papers}
    for paper in papers:
        paper.organization_list, paper.summary_list, paper.topic_list = [], [], []
    organizations, summaries, topics = columns
    read_paper_prefetches(
        papers,
        _linked(by_id, "organizations", organizations, "organization_list", "label"),
        _summaries(by_id, summaries, picked_for=language),
        _linked(by_id, "topics", topics, "topic_list", "name_en"),
        *also,
    )


# What the index, topic and search pages print of a paper's lists: its organizations'
# labels, its summaries' headlines and bodies (an excerpt) and who wrote them, its topics'
# names and links, and a link to each daily it appeared in, by its date (and the tracks
# the page's filter offers). The rest (the summaries' checks and highlights, the topics'
# keywords, the dailies' intros and bookkeeping) stays deferred: a paper's item is kept
# under everything read onto it (``digest_site.fragment_cache``), so what is not printed is
# not read either.
_LISTED_ORGANIZATION = Columns(Organization, "o", ["id", "label"])
_LISTED_TOPIC = Columns(Topic, "t", ["id", "slug", "name_en", "name_zh"])
_LISTED = (
    _LISTED_ORGANIZATION,
    Columns(
        Summary, "s", ["id", "paper", "language", "headline", "body", "provenance", "reviewed_at"]
    ),
    _LISTED_TOPIC,
)
# What a daily's entry prints of its paper's lists: the organizations' labels and topics as
# an index item does, and of its summary the text, highlights and who wrote and corrected
# it (not the drafting's bookkeeping). An entry is kept under everything read onto it.
_ENTRY_LISTS = (
    _LISTED_ORGANIZATION,
    Columns(
        Summary,
        "s",
        ["id", "paper", "language", "headline", "body", "takeaway", "highlights"]
        + ["provenance", "reviewed_at", "edited_at"],
    ),
    _LISTED_TOPIC,
)
_APPEARED_IN = Columns(Daily, "d", ["id", "track", "date", "status"])


def _appearances(papers: list[Paper], *, user: Reader, daily: Columns = _DAILY) -> Read | None:
    """The read of each paper's entries that ``user`` may see, with their dailies (their
    ``daily`` columns) and tracks, newest first (``published_entries``)."""
    by_id = {paper.pk: paper for paper in papers}
    for paper in papers:
        paper.published_entries = []
    if not by_id:
        return None
    ids, ids_params = one_of(list(by_id))
    visible, status = _visible("d", user)

    def apply(rows: list[tuple]) -> None:
        for row in rows:
            entry = _ENTRY.build(row)
            entry.daily = daily.build(row, len(_ENTRY))
            entry.daily.track = _TRACK.build(row, len(_ENTRY) + len(daily))
            entry.paper = by_id[entry.paper_id]
            entry.paper.published_entries.append(entry)

    return Read(
        f"SELECT {_ENTRY.sql}, {daily.sql}, {_TRACK.sql} FROM {table(DailyEntry)} e "
        f"JOIN {table(Daily)} d ON d.id = e.daily_id JOIN {table(Track)} t ON t.id = d.track_id "
        f"WHERE {visible} AND e.paper_id {ids} "
        "ORDER BY d.date DESC, t.position, e.id",
        [*status, *ids_params],
        apply,
    )


def search_result_papers(ids: Sequence[int]) -> dict[int, Paper]:
    """The papers of ``ids`` that readers may see (``published_papers()``: a stale search
    index row never shows an unpublished paper), by id, with their venues and what a search
    result prints of them (``_SEARCHED_PAPER``; the rest deferred): one query, by
    hand-written SQL."""
    if not ids:
        return {}
    published, status = _published()
    within, params = one_of(list(ids))
    rows = fetch(
        f"SELECT {_SEARCHED_PAPER.sql}, {_VENUE.sql} FROM {table(Paper)} p "
        f"LEFT JOIN {table(Venue)} v ON v.id = p.venue_id WHERE p.id {within}{published}",
        [*params, *status],
    )
    papers, db = {}, connections[DEFAULT_DB_ALIAS]
    venue_at = len(_SEARCHED_PAPER)
    for row in rows:
        paper = _SEARCHED_PAPER.build(row, db=db)
        paper.venue = _VENUE.build(row, venue_at, db) if row[venue_at] is not None else None
        papers[paper.pk] = paper
    return papers


_HEADING_SUMMARY = Columns(Summary, "s", ["id", "paper", "language", "headline", "provenance"])


def paper_headings(ids: Sequence[int]) -> dict[int, Paper]:
    """The papers of ``ids`` that readers may see (``published_papers()``), by id, with what
    a list of their headings prints (``digest.entry_heading``: the short name and title, and
    each summary's language and headline in ``summary_list``, with who wrote it for
    ``digest.headline_mark``): one round trip, by
    hand-written SQL."""
    if not ids:
        return {}
    published, status = _published()
    within, params = one_of(list(ids))
    papers: dict[int, Paper] = {}
    db = connections[DEFAULT_DB_ALIAS]

    def found(rows: list[tuple]) -> None:
        for row in rows:
            paper = papers[row[0]] = _HEADING.build(row, db=db)
            paper.summary_list = []

    def summaries(rows: list[tuple]) -> None:
        for row in rows:
            summary = _HEADING_SUMMARY.build(row, db=db)
            if paper := papers.get(summary.paper_id):  # not a paper readers may see
                paper.summary_list.append(summary)

    run(
        [
            Read(
                f"SELECT {_HEADING.sql} FROM {table(Paper)} p WHERE p.id {within}{published}",
                [*params, *status],
                found,
            ),
            Read(
                f"SELECT {_HEADING_SUMMARY.sql} FROM {table(Summary)} s "
                f"WHERE s.paper_id {within} ORDER BY s.language, s.id",
                params,
                summaries,
            ),
        ]
    )
    return papers


def read_index_lists(papers: list[Paper], *, language: str | None = None) -> None:
    """What an index, topic or search page prints of its papers (``index_papers()`` without
    its prefetches, ``.prefetch_related(None)``): ``read_paper_lists`` (with ``language``,
    only the summary an item prints in it; a search's excerpt may come from either), and
    each paper's published entries with their dailies (what the pages print of them:
    ``_APPEARED_IN``) and tracks, newest first (``published_entries``): one query more."""
    read_paper_lists(
        papers,
        _appearances(papers, user=PUBLIC, daily=_APPEARED_IN),
        columns=_LISTED,
        language=language,
    )


_SCORE = Columns(Score, "s")


def paper_page(slug: str, *, user: Reader) -> Paper | None:
    """The paper of ``slug`` if ``user`` may read it (``visible_papers``), with its venue,
    what ``read_paper_lists`` reads, the entries ``user`` may see (``published_entries``, as
    ``_read_appearances``) and its scores with their tracks, newest first (``score_list``):
    eight queries, by hand-written SQL."""
    published, status = _published(user)
    rows = fetch(
        f"SELECT {_PAPER.sql}, {_VENUE.sql} FROM {table(Paper)} p "
        f"LEFT JOIN {table(Venue)} v ON v.id = p.venue_id WHERE p.slug = %s{published}",
        [slug, *status],
    )
    if not rows:
        return None
    (row,) = rows
    paper = _PAPER.build(row)
    paper.venue = _VENUE.build(row, len(_PAPER)) if row[len(_PAPER)] is not None else None
    paper.score_list = []

    def scores(rows: list[tuple]) -> None:
        for row in rows:
            score = _SCORE.build(row)
            score.track, score.paper = _TRACK.build(row, len(_SCORE)), paper
            paper.score_list.append(score)

    read_paper_lists(
        [paper],
        _appearances([paper], user=user),
        Read(
            f"SELECT {_SCORE.sql}, {_TRACK.sql} FROM {table(Score)} s "
            f"JOIN {table(Track)} t ON t.id = s.track_id WHERE s.paper_id = %s "
            "ORDER BY s.created_at DESC, s.id DESC",
            [paper.pk],
            scores,
        ),
    )
    return paper


def daily_neighbours(daily: Daily, *, user: Reader) -> tuple[Daily | None, Daily | None]:
    """The previous and next daily of the same track that ``user`` may see (2 queries)."""
    same_track = (
        Daily.objects.visible_to(user).filter(track_id=daily.track_id).select_related("track")
    )
    previous = same_track.filter(date__lt=daily.date).order_by("-date").first()
    following = same_track.filter(date__gt=daily.date).order_by("date").first()
    return previous, following


# What the home page prints of a track's newest dailies: their dates and links, and the
# newest one's intro with its provenance (the rest — the other intros' checks, the
# drafting's and the schedule's bookkeeping — stays deferred; a section is kept under what
# was read: ``daily_page.home_sections``).
_HOME_DAILY = Columns(
    Daily,
    "d",
    ["id", "track", "date", "status", "intro_en", "intro_zh"]
    + ["intro_en_provenance", "intro_zh_provenance"],
)


@dataclass(frozen=True, slots=True)
class HomeTrack:
    """A track's section of the home page as read (``home_tracks``): the track, and the rows
    (as the database returned them) of everything the section prints, from which
    ``values()`` builds what its template (``dailies/_home_track.html``) is given.

    ``rows`` is the section's whole input: its track's row, its newest dailies', the newest
    one's entries' (each with its paper's heading), the others' leads', their entry counts,
    the entries' papers' organizations' and the papers' summaries' in ``language``.
    ``daily_page.home_sections`` keeps the rendered section under them: a section kept from
    an earlier render costs the copy of its rows for its key, not the some 65 instances built
    from them and their copy (at a year's scale, six tracks, 2.7 of an uncached home page's
    10.5 ms went there)."""

    track: Track
    language: str
    rows: tuple

    def values(self) -> dict:
        """The template's values, built from ``rows`` alone as the ORM builds instances
        (``rows.Columns.build``), the newest daily's entries' and the leads' papers one
        instance each, with their ``organization_list`` and ``summary_list``."""
        _track, daily_rows, entry_rows, lead_rows, counts, organization_rows, summary_rows = (
            self.rows
        )
        db = connections[DEFAULT_DB_ALIAS]
        dailies = []
        for row in daily_rows:
            daily = _HOME_DAILY.build(row, db=db)
            daily.track = self.track  # its URL names the track: no query each
            dailies.append(daily)
        papers: dict[int, Paper] = {}
        entries: list[DailyEntry] = []
        leads: dict[int, DailyEntry] = {}
        _put_brief_entries(papers, entries.append, entry_rows)
        _put_brief_entries(papers, lambda e: leads.setdefault(e.daily_id, e), lead_rows)
        _put_linked(papers, _ORGANIZATION, "organization_list", organization_rows)
        _put_summaries(papers, _BRIEF_SUMMARY, summary_rows)
        return {
            "track": self.track,
            "dailies": dailies,
            "entries": entries,
            "counts": dict(counts),
            "leads": leads,
            "language": self.language,
        }


def home_tracks(*, language: str, recent: int = 6) -> list[HomeTrack]:
    """For the home page: each active track (in order) with its ``recent`` newest published
    dailies, the newest one's entries, the others' leads and every one's entry count, read
    as rows (``HomeTrack``; seven queries in four round trips however many tracks, dailies
    and entries, by hand-written SQL).

    The tracks come with the date of their ``recent``-th newest published daily (an offset
    into the track's newest-first index), and only dailies from that date on are read: the
    same few index entries and rows however long the archives grow."""
    visible, status = _visible("d", PUBLIC)
    track_rows = fetch(
        f"SELECT {_TRACK.sql}, (SELECT d.date FROM {table(Daily)} d WHERE d.track_id = t.id "
        f"AND {visible} ORDER BY d.date DESC LIMIT 1 OFFSET %s) FROM {table(Track)} t "
        "WHERE t.is_active ORDER BY t.position, t.slug",
        [*status, recent - 1],
    )
    if not track_rows:
        return []
    db, date_field = connections[DEFAULT_DB_ALIAS], Daily._meta.get_field("date")
    newest, params = [], []
    sections: dict[int, _Section] = {}
    for row in track_rows:
        track = _TRACK.build(row, db=db)
        sections[track.pk] = _Section(track, row)
        # No date: the track has fewer than ``recent`` published dailies, all shown.
        since = convert(date_field, row[-1])
        newest.append("d.track_id = %s" if since is None else "(d.track_id = %s AND d.date >= %s)")
        params += [track.pk] if since is None else [track.pk, since]
    by_daily: dict[int, _Section] = {}
    for row in fetch(
        f"SELECT {_HOME_DAILY.sql} FROM {table(Daily)} d WHERE {visible} "
        f"AND ({' OR '.join(newest)}) ORDER BY d.track_id, d.date DESC",
        [*status, *params],
    ):
        section = by_daily[row[_DAILY_ID]] = sections[row[_DAILY_TRACK]]
        section.dailies.append(row)
    sections = {pk: section for pk, section in sections.items() if section.dailies}
    run(
        [
            _brief_entries(
                [section.dailies[0][_DAILY_ID] for section in sections.values()],
                leads_only=False,
                apply=partial(_rows_to, by_daily, _ENTRY_DAILY, "entries"),
            ),
            _brief_entries(
                list(by_daily),
                leads_only=True,
                apply=partial(_rows_to, by_daily, _ENTRY_DAILY, "leads"),
            ),
            _entry_counts(list(by_daily), partial(_rows_to, by_daily, 0, "counts")),
        ]
    )
    # Each paper's rows go to every section that prints it (a paper may be in two tracks).
    listed: dict[int, list[_Section]] = {}
    printed: dict[int, list[_Section]] = {}
    for section in sections.values():
        for row in section.entries:
            listed.setdefault(row[_ENTRY_PAPER], []).append(section)
        for row in (*section.entries, *section.leads):
            if section not in (shown := printed.setdefault(row[_ENTRY_PAPER], [])):
                shown.append(section)
    run(
        [
            _linked_read(
                list(listed),
                "organizations",
                _ORGANIZATION,
                "label",
                partial(_rows_to_papers, listed, 0, "organizations"),
            ),
            _summaries_read(
                list(printed),
                _BRIEF_SUMMARY,
                language,
                partial(_rows_to_papers, printed, _SUMMARY_PAPER, "summaries"),
            ),
        ]
    )
    return [section.read(language) for section in sections.values()]


class _Section:
    """A home section's rows as ``home_tracks`` gathers them."""

    __slots__ = (
        "track",
        "row",
        "dailies",
        "entries",
        "leads",
        "counts",
        "organizations",
        "summaries",
    )

    def __init__(self, track: Track, row: tuple) -> None:
        self.track, self.row = track, row
        self.dailies, self.entries, self.leads, self.counts = [], [], [], []
        self.organizations, self.summaries = [], []

    def read(self, language: str) -> HomeTrack:
        rows = (
            self.row,
            tuple(self.dailies),
            tuple(self.entries),
            tuple(self.leads),
            tuple(sorted(self.counts)),
            tuple(self.organizations),
            tuple(self.summaries),
        )
        return HomeTrack(self.track, language, rows)


def _rows_to(by_daily: dict[int, _Section], at: int, name: str, rows: list[tuple]) -> None:
    # Each row to its daily's section (the daily's id at ``at``), in its list ``name``.
    for row in rows:
        getattr(by_daily[row[at]], name).append(row)


def _rows_to_papers(
    by_paper: dict[int, list[_Section]], at: int, name: str, rows: list[tuple]
) -> None:
    # Each row to every section that prints its paper (the paper's id at ``at``).
    for row in rows:
        for section in by_paper[row[at]]:
            getattr(section, name).append(row)


# What a daily card and a home entry print of an entry, its paper and its summaries (the
# heading, the takeaway, and who wrote it): the home page lists some 80 papers at a year's
# scale, whose abstracts, author lists and summary checks it does not print; the others stay
# deferred (reading one is a query). Tests pin those pages' query counts as the lists grow,
# so a template that prints another field fails them.
_BRIEF_ENTRY = Columns(DailyEntry, "e", ["id", "daily", "position", "is_lead", "score", "paper"])
_HEADING = Columns(Paper, "p", ["id", "slug", "title", "short_name"])
_BRIEF_SUMMARY = Columns(
    Summary,
    "s",
    ["id", "paper", "language", "headline", "body", "takeaway", "provenance", "reviewed_at"],
)
# Where the rows above hold the ids the home page groups them by.
_DAILY_ID, _DAILY_TRACK = _HOME_DAILY.names.index("id"), _HOME_DAILY.names.index("track_id")
_ENTRY_DAILY, _ENTRY_PAPER = (_BRIEF_ENTRY.names.index(n) for n in ("daily_id", "paper_id"))
_SUMMARY_PAPER = _BRIEF_SUMMARY.names.index("paper_id")


def _brief_entries(
    daily_ids: list[int], *, leads_only: bool, apply: Callable[[list[tuple]], None]
) -> Read | None:
    """The read of the rows of the entries of ``daily_ids`` in order (only their leads with
    ``leads_only``), each with its paper's heading (``_put_brief_entries``)."""
    if not daily_ids:
        return None
    ids, params = one_of(daily_ids)
    return Read(
        f"SELECT {_BRIEF_ENTRY.sql}, {_HEADING.sql} FROM {table(DailyEntry)} e "
        f"JOIN {table(Paper)} p ON p.id = e.paper_id WHERE e.daily_id {ids}"
        f"{' AND e.is_lead' if leads_only else ''} ORDER BY e.daily_id, e.position, e.id",
        params,
        apply,
    )


def _put_brief_entries(
    papers: dict[int, Paper], into: Callable[[DailyEntry], None], rows: Sequence[tuple]
) -> None:
    """``_brief_entries``' rows built: ``into(entry)`` takes each, with its paper; a paper
    read twice (a lead of the newest daily) is one instance, kept in ``papers`` by id, with
    an empty ``summary_list`` and ``organization_list`` to fill."""
    db = connections[DEFAULT_DB_ALIAS]
    for row in rows:
        entry = _BRIEF_ENTRY.build(row, db=db)
        paper = papers.get(entry.paper_id)
        if paper is None:
            paper = papers[entry.paper_id] = _HEADING.build(row, len(_BRIEF_ENTRY), db)
            paper.summary_list, paper.organization_list = [], []
        entry.paper = paper
        into(entry)


def _entry_counts(daily_ids: list[int], apply: Callable[[list[tuple]], None]) -> Read | None:
    """The read of each of ``daily_ids``' entry count, as rows of its id and the count (none
    for a daily without entries)."""
    if not daily_ids:
        return None
    ids, params = one_of(daily_ids)
    return Read(
        f"SELECT e.daily_id, COUNT(*) FROM {table(DailyEntry)} e WHERE e.daily_id {ids} "
        "GROUP BY e.daily_id",
        params,
        apply,
    )


def daily_cards(
    dailies: list[Daily], *, language: str
) -> tuple[dict[int, DailyEntry], dict[int, int]]:
    """For a track's archive: the lead entry of each of ``dailies`` by daily id, with its
    paper's heading and the summary the page prints in ``language`` (``paper.summary_list``:
    the one ``pick_language`` picks, alone), and each daily's entry count.

    By hand-written SQL (``digest_site.rows``): the leads and counts in one round trip, then
    the papers' summaries (three queries however many dailies)."""
    papers: dict[int, Paper] = {}
    leads: dict[int, DailyEntry] = {}
    counts: dict[int, int] = {}
    ids = [d.pk for d in dailies]
    take_leads = partial(_put_brief_entries, papers, lambda e: leads.setdefault(e.daily_id, e))
    run(
        [
            _brief_entries(ids, leads_only=True, apply=take_leads),
            _entry_counts(ids, counts.update),
        ]
    )
    run([_summaries(papers, _BRIEF_SUMMARY, picked_for=language)])
    return leads, counts


def track_archive(track: Track) -> QuerySet[Daily]:
    # Each card links its daily, whose URL names the track: join it, not one query a card.
    return (
        Daily.objects.visible_to(PUBLIC)
        .filter(track=track)
        .select_related("track")
        .order_by("-date")
    )


def index_papers() -> QuerySet[Paper]:
    """Papers of published dailies, newest daily first, then by their place in that daily
    (``last_appeared``, ``last_position``, then ``pk``).

    Each paper is read through its latest published appearance: the join keeps the entries
    that no later published entry of the same paper outranks (newer day; on the same day a
    better place, then the older entry). The order is then the dailies' own, so the
    database walks the published dailies newest first (``dailies_daily_status_date_idx``)
    and stops when a page is full, instead of ranking every published paper: a page costs
    the same on the first day and after years. The page slices this queryset; prefetches
    then run once per page (fixed query count).
    """
    published_entries = (
        DailyEntry.objects.visible_to(PUBLIC)
        .select_related("daily", "daily__track")
        .order_by("-daily__date", "daily__track__position")
    )
    later = DailyEntry.objects.visible_to(PUBLIC).filter(paper=OuterRef("pk"))
    outranked = (
        Q(daily__date__gt=OuterRef("last_appeared"))
        | Q(daily__date=OuterRef("last_appeared"), position__lt=OuterRef("last_position"))
        | Q(
            daily__date=OuterRef("last_appeared"),
            position=OuterRef("last_position"),
            pk__lt=OuterRef("appearance"),
        )
    )
    return (
        Paper.objects.filter(published_q("daily_entries__daily__"))
        .annotate(
            last_appeared=F("daily_entries__daily__date"),
            last_position=F("daily_entries__position"),
            appearance=F("daily_entries__pk"),
        )
        .filter(~Exists(later.filter(outranked)))
        .select_related("venue")
        .prefetch_related(
            *_paper_lookups(""),
            Prefetch("daily_entries", queryset=published_entries, to_attr="published_entries"),
        )
        .order_by("-last_appeared", "last_position", "pk")
    )


def index_paper_count(*, topic: Topic | None = None) -> int:
    """How many papers ``index_papers()`` lists (of ``topic``): the distinct papers of the
    published entries. Worked out once per version of the ``topics`` tag, as the topics' counts are
    (``published_topics``), since every page of the index shows it; a topic's is its count
    among those."""
    if topic is not None:
        return dict(_kept_topic_counts()).get(topic.pk, 0)
    return kept_under(
        "topics",
        "index-count",
        lambda: DailyEntry.objects.visible_to(PUBLIC).values("paper_id").distinct().count(),
    )


def topics_with_papers() -> QuerySet[Topic]:
    """Topics that have published papers, the most papers first, each with ``n`` (lazy).

    Only the topic links of papers in published entries are joined and counted (a link is
    unique per paper and topic, so each counts one paper): counting every link and testing
    each against the published papers reads the links of every ingested candidate, ten
    times the published papers over a year.
    """
    published = DailyEntry.objects.published().values("paper_id")
    return (
        Topic.objects.filter(papers__in=published)
        .annotate(n=Count("papers"))
        .order_by("-n", "name_en")
    )


def _kept_topic_counts(counted: list[Topic] | None = None) -> list[tuple[int, int]]:
    """(topic id, papers) of ``topics_with_papers()``, kept per version of the ``topics``
    tag; when they are counted here, the topics counted are added to ``counted``."""

    def count() -> list[tuple[int, int]]:
        topics = list(topics_with_papers())
        if counted is not None:
            counted.extend(topics)
        return [(topic.pk, topic.n) for topic in topics]

    return kept_under("topics", "topic-counts", count)


def published_topics() -> list[Topic]:
    """``topics_with_papers()`` as a list, its counts worked out once per version of
    the ``topics`` tag (``digest_site.cache_tags.kept_under``): the home page, the index's
    chips and the topic index show them on every render, and counting them reads the topic
    links of every published paper (tens of milliseconds at a year's scale). One query
    either way: the count when the version's counts are not kept yet, else the topics they
    name (by hand-written SQL: their names as they are now, a rename not retiring them)."""
    counted: list[Topic] = []
    counts = _kept_topic_counts(counted)
    if counted:
        return counted
    if not counts:
        return []
    within, params = one_of([pk for pk, _ in counts])
    db = connections[DEFAULT_DB_ALIAS]
    by_pk = {
        topic.pk: topic
        for topic in (
            _TOPIC.build(row, db=db)
            for row in fetch(
                f"SELECT {_TOPIC.sql} FROM {table(Topic)} t WHERE t.id {within}", params
            )
        )
    }
    topics = []
    for pk, n in counts:
        if topic := by_pk.get(pk):  # a topic deleted since it was counted is left out
            topic.n = n
            topics.append(topic)
    return topics


def parse_date(value: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None
