"""What the daily page prints of each entry and near miss, worked out once in Python.

A daily lists ten or more entries, each with its score's breakdown, organisations, venue,
heading, summary and provenance. The template engine spends most of the page's render on
per-entry lookups, filters and tags (a ``{% url %}``, a date filter, a related manager per
loop); here each is done once, in plain Python, and the templates only place the strings.
The functions are the template tags' and filters' own, so the HTML stays the same.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.utils.safestring import SafeString
from django.utils.timezone import template_localtime
from django.utils.translation import ngettext
from markupsafe import Markup

from dailies.models import Daily, DailyEntry
from dailies.selection import Candidate, Selection
from dailies.selectors import HomeTrack
from dailies.templatetags.digest import (
    clean_truncate,
    criterion_label,
    entry_heading,
    full_title,
    iso_date,
    scorer_label,
    venue_badge,
    with_takeaway,
)
from dailies.templatetags.digest import score as score_text
from digest_site import fragment_cache, jinja
from digest_site.slug_urls import slug_url
from papers.languages import Language, pick_language
from papers.models import Paper, Summary, Topic, Track

# How much of a near miss's rationale the list shows.
NEAR_MISS_RATIONALE = 200


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """A scorer's record as the score breakdown prints it."""

    total: str
    scorer: str
    track: str  # the track's name in the page's language; "" without a track
    created_iso: str  # <time datetime>: local time, ISO 8601 (the ``date:'c'`` filter)
    created_date: str  # the date printed (``iso_date``)
    overridden_total: str | None  # the scorer's total, when the editor set another score
    criteria: list[tuple[str, object]]  # (label, value), in the stored order
    rationale: str
    title: str = ""  # the paper's full title (near misses)
    short_rationale: str = ""  # the rationale cut for the near-miss list


@dataclass(frozen=True, slots=True)
class EntryRow:
    """One entry of the daily as its page prints it."""

    is_lead: bool
    paper: Paper
    url: str
    score: str | None  # the shown score; None when the entry has none
    record: ScoreRow | None  # the scorer's record behind it
    orgs: list[str]
    topics: list[Topic]
    badge: str
    kind: str  # the kind's label, "" for a paper
    heading: str
    full_title: str | None  # printed under a headline
    summary: Summary | None
    summary_html: SafeString
    untranslated: bool  # the summary is in the other language


def score_row(
    score: Candidate, *, language: str, track: Track, shown=None, near_miss: bool = False
) -> ScoreRow:
    """``score`` as its breakdown prints it; ``shown`` is the score the page shows for it
    (an entry's, which an editor may have set), None for a near miss."""
    # A rationale is printed in the page's language only: none rather than the other's text.
    rationale = score.rationale_zh if language == Language.ZH else score.rationale_en
    return ScoreRow(
        total=score_text(score.total),
        scorer=scorer_label(score),
        track=track.name(language),
        created_iso=template_localtime(score.created_at).isoformat(),
        created_date=iso_date(score.created_at),
        overridden_total=(
            score_text(score.total) if shown is not None and score.total != shown else None
        ),
        criteria=[(criterion_label(name), value) for name, value in score.criteria.items()],
        rationale=rationale,
        title=full_title(score) if near_miss else "",
        short_rationale=clean_truncate(rationale, NEAR_MISS_RATIONALE) if near_miss else "",
    )


def entry_row(
    entry: DailyEntry, record: Candidate | None, *, track: Track, language: str
) -> EntryRow:
    """``entry`` (read with ``selectors.daily_page_entries``) as its daily's page prints it,
    with its paper's newest score for the track (``record``)."""
    paper = entry.paper
    summary = pick_language(paper.summary_list, language)
    return EntryRow(
        is_lead=entry.is_lead,
        paper=paper,
        url=slug_url("dailies:paper", paper.slug),
        score=score_text(entry.score) if entry.score is not None else None,
        record=(
            score_row(record, language=language, track=track, shown=entry.score) if record else None
        ),
        orgs=[org.label for org in paper.organization_list],
        topics=paper.topic_list,
        badge=venue_badge(paper),
        kind=paper.get_kind_display() if paper.kind != Paper.Kind.PAPER else "",
        heading=entry_heading(paper, summary),
        full_title=full_title(paper) if summary and summary.headline else None,
        summary=summary,
        summary_html=with_takeaway(summary),
        untranslated=summary is not None and summary.language != language,
    )


def entries_html(
    entries: list[DailyEntry],
    selection: Selection,
    *,
    track: Track,
    language: str,
    published_at: dt.datetime | None,
) -> list[Markup]:
    """Each of a daily's entries as its page prints it (``dailies/_entry.html``).

    An entry's HTML is worked out from its paper with what was read onto it (venue,
    organisations, summaries, topics, deep dives, code), its score, its paper's scorer's
    record, the track and the daily's publication time, and from nothing else, so it is
    kept under exactly those (``fragment_cache``): a page rendered again after a publish
    elsewhere, or an edit of another entry, renders only what changed."""
    translate = jinja.translator()
    html = []
    for entry in entries:
        record = selection.by_paper.get(entry.paper_id)

        def values(entry=entry, record=record) -> dict:
            row = entry_row(entry, record, track=track, language=language)
            return {"row": row, "published_at": published_at}

        inputs = (entry.paper, entry.score, entry.is_lead, record, track, language, published_at)
        html.append(
            jinja.render_kept(
                fragment_cache.entries, "dailies/_entry.html", inputs, values, translate
            )
        )
    return html


def home_sections(sections: list[HomeTrack]) -> list[Markup]:
    """Each track's section of the home page (``dailies/_home_track.html``), as read by
    ``selectors.home_tracks``. A section is built and rendered from its rows alone, so it is
    kept under them (``fragment_cache``): a render after a publish elsewhere, or an edit of
    another track's entry, builds and renders only the sections whose rows changed."""
    translate = jinja.translator()
    return [
        jinja.render_kept(
            fragment_cache.home_tracks,
            "dailies/_home_track.html",
            section.rows,
            section.values,
            translate,
        )
        for section in sections
    ]


def near_miss_rows(selection: Selection, *, track: Track, language: str) -> list[ScoreRow]:
    """The best candidates below the cut, as the list under the chart prints them."""
    return [
        score_row(s, language=language, track=track, near_miss=True) for s in selection.near_misses
    ]


def selection_words(selection: Selection) -> dict[str, str]:
    """The selection chart's sentences that have a plural (``make messages`` reads only
    ``_("…")`` in a Jinja partial, so they are translated here)."""
    summary = ngettext(
        "%(counter)s scored candidate, %(selected)s selected.",
        "%(counter)s scored candidates, %(selected)s selected.",
        selection.count,
    ) % {"counter": selection.count, "selected": selection.selected_count}
    partial = ngettext(
        "Scores of %(stored)s of the %(counter)s candidate are stored; the chart shows those.",
        "Scores of %(stored)s of the %(counter)s candidates are stored; the chart shows those.",
        selection.recorded or 0,
    ) % {"counter": selection.recorded, "stored": selection.count}
    return {"summary": summary, "partial": partial}


@dataclass(frozen=True, slots=True)
class Neighbour:
    """A daily the pager links: its date and URL."""

    date: dt.date
    url: str


def neighbours(daily: Daily) -> tuple[Neighbour | None, Neighbour | None]:
    """The pager's previous and next daily of a daily read with
    ``selectors.daily_page`` (their URLs as ``Daily.get_absolute_url`` makes
    them, without making the dailies)."""
    slug = daily.track.slug
    return tuple(
        Neighbour(date, slug_url("dailies:daily", slug, date)) if date else None
        for date in (daily.previous_date, daily.next_date)
    )
