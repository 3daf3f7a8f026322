"""What the MCP server's tools answer (``agents.server``): the read API's own answers, for
agents. Plain synchronous functions on the ORM, reading only what the public reads
(``PUBLIC``, the published), within the API's bounds; bad input raises ``ToolInputError``
with a message saying what is wrong.

Every bound of the agents' access is here (the API's, plus the HTTP request's size).
"""

from __future__ import annotations

import json
import re

from django.conf import settings
from django.urls import reverse
from django.utils import translation
from rest_framework.utils.encoders import JSONEncoder

from dailies import selectors, weekly
from dailies.converters import IsoWeekConverter
from dailies.public_api.common import MAX_PAGE_SIZE, PAGE_SIZE
from dailies.public_api.serializers import (
    DailyDetailSerializer,
    PaperDetailSerializer,
    TopicSerializer,
)
from dailies.public_api.views import paper_rows, published_daily
from dailies.templatetags.digest import entry_heading
from papers.languages import Language, localized
from papers.models import Summary
from search.api import SearchQuerySerializer, SearchView, _papers
from search.backends import MAX_RESULTS, Hit
from search.service import browse, ordered_papers, search

# The API's bounds: a page of at most MAX_PAGE_SIZE items, results up to MAX_RESULTS deep.
DEFAULT_LIMIT = PAGE_SIZE
MAX_LIMIT = MAX_PAGE_SIZE
MAX_OFFSET = MAX_RESULTS
# The largest request body /mcp/ reads (a tool call is a few hundred bytes).
MAX_BODY_BYTES = 64 * 1024


class ToolInputError(ValueError):
    """An argument the tool cannot use; the message says which and why."""


class _SiteRequest:
    """What the API's serializers ask of a request: absolute URLs, on the site's address
    (``SITE_URL``), whichever transport the agent came by."""

    def build_absolute_uri(self, path: str) -> str:
        return f"{settings.SITE_URL}{path}"


def _lang(lang: str) -> str:
    if lang not in Language.values:
        raise ToolInputError(f"lang must be one of: {', '.join(Language.values)} (got {lang!r}).")
    return lang


def _limit(limit: int, *, name: str = "limit") -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise ToolInputError(f"{name} must be between 1 and {MAX_LIMIT} (got {limit}).")
    return limit


def _context(lang: str) -> dict:
    return {"request": _SiteRequest(), "lang": lang}


def search_papers(
    query: str = "",
    *,
    topic: str | None = None,
    track: str | None = None,
    lang: str = Language.EN,
    limit: int = DEFAULT_LIMIT,
    offset: int = 0,
) -> dict:
    """The search API's answer (``GET /api/v1/search``) through the search service."""
    data = {"q": query, "lang": lang, "limit": limit, "offset": offset}
    data.update({k: v for k, v in (("topic", topic), ("track", track)) if v})
    params = SearchQuerySerializer(data=data)
    if not params.is_valid():
        problems = "; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in params.errors.items())
        raise ToolInputError(problems)
    data = params.validated_data
    start, stop = data["offset"], data["offset"] + data["limit"]
    if data["q"]:
        results = search(data["q"], data["filters"], language=data["lang"])
        count, pairs = results.count(), ordered_papers(results[start:stop], _papers())
    else:
        listed = browse(data["filters"]).prefetch_related(None)
        count = min(listed.count(), MAX_RESULTS)
        pks = list(listed.values_list("pk", flat=True)[start : min(stop, MAX_RESULTS)])
        pairs = ordered_papers([Hit(pk, 0.0) for pk in pks], _papers())
    with translation.override(data["lang"]):
        rows = [
            SearchView._row(_SiteRequest(), paper, hit, scored=bool(data["q"]), lang=data["lang"])
            for paper, hit in pairs
        ]
    return {"count": count, "results": _plain(rows)}


def get_daily(track: str, date: str, *, lang: str = Language.EN) -> dict:
    """A published daily with its entries, as ``GET /api/v1/dailies/<track>/<date>/``."""
    lang = _lang(lang)
    daily = published_daily(track, date)
    if daily is None:
        raise ToolInputError(f"No published daily of track {track!r} on {date!r}.")
    with translation.override(lang):
        return _plain(DailyDetailSerializer(daily, context=_context(lang)).data)


def get_paper(slug: str, *, lang: str = Language.EN) -> dict:
    """A published paper, as ``GET /api/v1/papers/<slug>/``."""
    lang = _lang(lang)
    paper = paper_rows().prefetch_related("scores__track").filter(slug=slug).first()
    if paper is None:
        raise ToolInputError(f"No published paper {slug!r}.")
    with translation.override(lang):
        return _plain(PaperDetailSerializer(paper, context=_context(lang)).data)


def list_topics(*, lang: str = Language.EN, limit: int = DEFAULT_LIMIT) -> dict:
    """The topics of published papers, the most papers first, as ``GET /api/v1/topics/``."""
    lang = _lang(lang)
    topics = list(selectors.topics_with_papers()[: _limit(limit)])
    with translation.override(lang):
        return {"results": _plain(TopicSerializer(topics, many=True, context=_context(lang)).data)}


def get_week(track: str, week: str, *, lang: str = Language.EN) -> dict:
    """A track's weekly roundup (``2026-W44``), as its page shows it: the week's published
    dailies, editors' picks, highest scores, deep dives and verified code, and its intro
    once an editor has published it."""
    lang = _lang(lang)
    converter = IsoWeekConverter()
    try:
        if not _WEEK.fullmatch(week):
            raise ValueError(week)
        monday = converter.to_python(week)
    except ValueError:
        raise ToolInputError(f"week must be an ISO week such as 2026-W44 (got {week!r}).") from None
    track_obj = selectors.published_tracks().filter(slug=track).first()
    found = weekly.week_roundup(track_obj, monday) if track_obj is not None else None
    if found is None:
        raise ToolInputError(f"No published daily of track {track!r} in {week}.")
    with translation.override(lang):
        return _week_out(found, lang)


_WEEK = re.compile(IsoWeekConverter.regex)


def _url(path: str) -> str:
    return f"{settings.SITE_URL}{path}"


def _entry_out(entry, lang: str) -> dict:
    paper = entry.paper
    summary = paper.summary(lang)
    return {
        "slug": paper.slug,
        "title": paper.title,
        "heading": entry_heading(paper, summary),
        "takeaway": summary.takeaway if summary else "",
        "score": float(entry.score) if entry.score is not None else None,
        "daily": entry.daily.date.isoformat(),
        "url": _url(reverse("dailies:paper", args=[paper.slug])),
    }


def _week_out(week: weekly.Week, lang: str) -> dict:
    roundup = week.intro_roundup
    intro = None
    if roundup is not None:
        text = localized(roundup, "intro", lang)
        intro = {
            "text": str(text),
            "language": text.language,
            "not_yet_translated": text.language != lang,
            "machine_draft": roundup.intro_provenance(text.language) == Summary.Provenance.MACHINE,
            "published_at": roundup.published_at.isoformat(),
        }
    sections = {
        "picks": week.picks,
        "top_scores": week.top_scores,
        "deep_dives": week.dived,
        "verified_code": week.verified,
    }
    return {
        "track": week.track.slug,
        "week": week.label,
        "first_day": week.monday.isoformat(),
        "last_day": week.sunday.isoformat(),
        "url": _url(reverse("dailies:week", args=[week.track.slug, week.monday])),
        "intro": intro,
        "papers": week.paper_count,
        "dailies": [
            {"date": d.date.isoformat(), "url": _url(d.get_absolute_url())} for d in week.dailies
        ],
        **{name: [_entry_out(e, lang) for e in entries] for name, entries in sections.items()},
    }


def _plain(data):
    """DRF's output as plain JSON values (dates and decimals as the API renders them)."""
    return json.loads(json.dumps(data, cls=JSONEncoder))


__all__ = [
    "MAX_BODY_BYTES",
    "MAX_LIMIT",
    "MAX_OFFSET",
    "ToolInputError",
    "get_daily",
    "get_paper",
    "get_week",
    "list_topics",
    "search_papers",
]
