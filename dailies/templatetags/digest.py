"""Template helpers for bilingual content."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import quote

from django import template
from django.urls import reverse
from django.utils.html import conditional_escape, escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, gettext, gettext_lazy, ngettext

from dailies import citation
from dailies.models import IMPORT_SCORER
from papers.author_names import author_name_slug
from papers.languages import Language, localized
from papers.models import Paper, Summary
from papers.validators import safe_url as _safe_url

register = template.Library()

NATIVE_NAMES = {Language.EN: "English", Language.ZH: "中文"}


@register.simple_tag
def local(obj, field: str):
    """``obj.<field>_<current language>``, else the other language (a ``Localized``)."""
    return localized(obj, field, get_language())


@register.simple_tag
def local_name(obj):
    """A track's or topic's name in the current language."""
    return obj.name(get_language())


@register.simple_tag
def summary_for(paper: Paper) -> Summary | None:
    return paper.summary(get_language())


@register.filter
def safe_url(value: str | None) -> str:
    """A stored URL for an href: itself when it is a public http(s) URL, else ""."""
    return _safe_url(value)


@register.filter
def unbroken(value) -> SafeString:
    """``value`` kept on one line (a date in a heading: "2026-10-" then "28" reads as two)."""
    return format_html('<span class="unbroken">{}</span>', value)


@register.filter
def native_name(code: str) -> str:
    return NATIVE_NAMES.get(code, code)


@register.filter
def with_takeaway(summary: Summary | None) -> SafeString:
    """The summary text with its takeaway sentence emphasised where it stands.

    If an editor's summary does not contain the takeaway verbatim, the takeaway follows it.
    """
    if summary is None:
        return mark_safe("")
    body, takeaway = summary.body.strip(), summary.takeaway.strip()
    emphasised = format_html('<strong class="takeaway">{}</strong>', takeaway)
    if takeaway and takeaway in body:
        before, _, after = body.partition(takeaway)
        return mark_safe(f"{escape(before)}{emphasised}{escape(after)}")
    if takeaway:
        return mark_safe(f"{escape(body)} {emphasised}")
    return escape(body)


# Stops that end a sentence; an elided text drops them before its ellipsis ("。……", ".…"
# read as doubled stops).
_STOPS = "。．.！!？?；;，,、：: "


def _is_cjk(text: str) -> bool:
    return any("\u3400" <= ch <= "\u9fff" for ch in text)


def clean_truncate(text: str, length: int) -> str:
    """``text`` cut near ``length`` characters at a sentence, clause or word boundary, ending
    with one ellipsis: "……" in Chinese, "…" otherwise, never after a stop."""
    text = " ".join(str(text).split())
    if len(text) <= length:
        return text
    cut = text[:length]
    for mark in ("。", "；", ". ", "，", ", ", " "):
        at = cut.rfind(mark)
        if at > length * 0.6:
            cut = cut[: at + len(mark.strip())]
            break
    cut = cut.rstrip(_STOPS)
    return cut + ("……" if _is_cjk(cut) else "…")


@register.filter
def excerpt(summary: Summary | None, length: int = 140) -> str:
    """The start of a summary, cut cleanly near ``length`` characters (see clean_truncate)."""
    if summary is None:
        return ""
    return clean_truncate(summary.body, length)


@register.filter
def truncate_clean(text: str | None, length: int = 200) -> str:
    return clean_truncate(text or "", int(length))


@register.simple_tag
def paper_count(count: int) -> str:
    """A daily card's count: "3 papers" / "3 篇"."""
    return ngettext("%(counter)s paper", "%(counter)s papers", count) % {"counter": count}


@register.simple_tag
def scored_candidates(count: int) -> str:
    """A daily's candidates: "Scored 40 candidates"."""
    return ngettext("Scored %(counter)s candidate", "Scored %(counter)s candidates", count) % {
        "counter": count
    }


@register.simple_tag
def selected_count(count: int) -> str:
    """A daily's entries: "10 selected"."""
    return ngettext("%(counter)s selected", "%(counter)s selected", count) % {"counter": count}


@register.filter
def score(value: Decimal | None) -> str:
    return "—" if value is None else f"{value:.2f}"


@register.filter
def month_day(value: dt.date) -> str:
    return f"{value:%m-%d}"


@register.filter
def iso_date(value: dt.date | dt.datetime | None) -> str:
    """Dates always carry their year: 2026-10-28."""
    return f"{value:%Y-%m-%d}" if value else ""


@register.simple_tag
def venue_badge(paper: Paper) -> str:
    """“Accepted at NSDI 2027” / “已录用 NSDI 2027”; empty when there is no venue."""
    if paper.venue_id is None:
        return ""
    labels = {
        Paper.VenueStatus.SUBMITTED: gettext("Submitted to %(venue)s"),
        Paper.VenueStatus.ACCEPTED: gettext("Accepted at %(venue)s"),
        Paper.VenueStatus.TO_APPEAR: gettext("To appear at %(venue)s"),
        Paper.VenueStatus.PUBLISHED: gettext("Published at %(venue)s"),
    }
    pattern = labels.get(paper.venue_status, "%(venue)s")
    return pattern % {"venue": str(paper.venue)}


@register.filter
def get_item(mapping: dict, key):
    return mapping.get(key) if mapping else None


CRITERION_LABELS = {
    "relevance": gettext_lazy("Relevance to the track"),
    "novelty": gettext_lazy("Novelty"),
    "evidence": gettext_lazy("Strength of evidence"),
    "impact": gettext_lazy("Practical impact"),
    "venue": gettext_lazy("Venue"),
}


@register.filter
def criterion_label(name: str) -> str:
    return str(CRITERION_LABELS.get(name, name.replace("_", " ").capitalize()))


@register.simple_tag
def rationale(score) -> str:
    return score.rationale(get_language())


@register.simple_tag
def own_rationale(score) -> str:
    """The rationale in the page's language only: none rather than the other's text (a
    daily's score breakdowns)."""
    return score.rationale_zh if get_language() == Language.ZH else score.rationale_en


@register.filter
def seconds(milliseconds: int | None) -> str:
    return "—" if milliseconds is None else f"{milliseconds / 1000:.1f} s"


@register.simple_tag
def entry_heading(paper: Paper, summary: Summary | None) -> str:
    """“HiLO: headline” / “HiLO：headline”, or the full title when there is no headline; a
    headline that already opens with the name (“HiLO: …”, “HiLO cuts …”) is printed as it is,
    so pages, feeds, mail and the API never print the name twice."""
    if summary is None or not summary.headline:
        return full_title(paper)
    name, headline = paper.display_name, summary.headline
    if _opens_with_name(headline, name):
        return headline
    colon = "：" if summary.language == Language.ZH else ": "
    return f"{name}{colon}{headline}"


def _opens_with_name(headline: str, name: str) -> bool:
    """``headline`` starts with ``name`` as a whole word (“HiLO:”, “HiLO 把…”; not “HiLOX”)."""
    if not name or not headline.startswith(name):
        return False
    following = headline[len(name) : len(name) + 1]
    return not following or not (following.isalnum() and following.isascii() or following in "-_")


@register.simple_tag
def headline_mark(summary: Summary | None) -> SafeString:
    """Beside a headline (``entry_heading``) printed with no note of who wrote its summary
    (a daily card's lead, a home entry without its takeaway, a search result whose excerpt
    came from elsewhere, a list of headings): "Machine draft" when a machine drafted the
    summary, reviewed or not; nothing for an editor's, or where no headline is printed."""
    if summary is None or not summary.headline or summary.provenance == Summary.Provenance.EDITOR:
        return SafeString("")
    return format_html(' <span class="provenance-mark">{}</span>', Summary.Provenance.MACHINE.label)


@register.simple_tag
def intro_is_machine(daily, language: str) -> bool:
    """The daily's intro in ``language`` is a machine draft (pages say so)."""
    return getattr(daily, f"intro_{language}_provenance", "") == Summary.Provenance.MACHINE


@register.simple_tag
def machine_note(summary: Summary | None) -> str:
    """What a feed or a mail prints under a summary a machine drafted, as the pages do
    (``dailies/_provenance.html``); nothing for an editor's."""
    if summary is None or summary.provenance == Summary.Provenance.EDITOR:
        return ""
    if summary.reviewed_at:
        return gettext("Machine draft, reviewed by an editor")
    return gettext("Machine draft, not yet reviewed by an editor")


@register.simple_tag
def full_title(paper: Paper) -> str:
    """The title, led by the system's short name when the title does not contain it."""
    short = paper.short_name.strip()
    if short and short.casefold() not in paper.title.casefold():
        return f"{short}: {paper.title}"
    return paper.title


# How many authors a byline names before "et al.".
BYLINE_AUTHORS = 3


@register.filter
def byline(authors: list[str] | None) -> str:
    """The first three authors, then "et al." when there are more."""
    names = [str(a).strip() for a in authors or [] if str(a).strip()]
    if len(names) <= BYLINE_AUTHORS:
        return ", ".join(names)
    # Bylines are in the authors' (Latin) script in both languages, and so is "et al.".
    return ", ".join(names[:BYLINE_AUTHORS]) + " et al."


def _linked_names(names: list) -> str:
    """Each name a link to its author's page (a name without letters stays text)."""
    parts = []
    for name in names:
        text = str(name).strip()
        slug = author_name_slug(text)
        if not text:
            continue
        if slug:
            url = reverse("follow:author", args=[slug])
            parts.append(format_html('<a href="{}">{}</a>', url, text))
        else:
            parts.append(conditional_escape(text))
    return ", ".join(parts)


@register.filter
def byline_links(authors: list[str] | None) -> SafeString:
    """``byline`` with each name a link to its author's page."""
    names = [a for a in authors or [] if str(a).strip()]
    if len(names) <= BYLINE_AUTHORS:
        return mark_safe(_linked_names(names))
    return mark_safe(_linked_names(names[:BYLINE_AUTHORS]) + " et al.")


@register.filter
def author_links(authors: list[str] | None) -> SafeString:
    """Every name of the byline, each a link to its author's page."""
    return mark_safe(_linked_names(list(authors or [])))


ARXIV_ABS = "https://arxiv.org/abs/{}"
ARXIV_PDF = "https://arxiv.org/pdf/{}"
DOI_URL = "https://doi.org/{}"


@register.simple_tag
def paper_links(paper: Paper) -> list[dict]:
    """The paper's public links, each through ``safe_url``: arXiv abstract (or the source
    page), PDF, DOI. An arXiv id gives its abstract and PDF when no link was stored."""
    arxiv_id = (paper.arxiv_id or "").strip()
    abs_url = _safe_url(paper.abs_url) or (
        _safe_url(ARXIV_ABS.format(arxiv_id)) if arxiv_id else ""
    )
    pdf_url = _safe_url(paper.pdf_url) or (
        _safe_url(ARXIV_PDF.format(arxiv_id)) if arxiv_id else ""
    )
    links = []
    if abs_url:
        label = gettext("arXiv abstract") if "arxiv.org/" in abs_url else gettext("Source page")
        links.append({"kind": "abs", "label": label, "url": abs_url})
    if pdf_url:
        links.append({"kind": "pdf", "label": gettext("PDF"), "url": pdf_url})
    doi = (paper.doi or "").strip()
    doi_url = _safe_url(DOI_URL.format(quote(doi, safe="/"))) if doi else ""
    if doi_url:
        links.append({"kind": "doi", "label": f"DOI {doi}", "url": doi_url})
    return links


def _year(paper: Paper) -> str:
    if paper.published_on:
        return str(paper.published_on.year)
    if paper.venue_id and paper.venue.year:
        return str(paper.venue.year)
    return ""


_BIB_ESCAPES = str.maketrans({ch: "\\" + ch for ch in "{}&%$#_"})


def _bib_escape(text: str) -> str:
    return text.translate(_BIB_ESCAPES)


@register.simple_tag
def bibtex(paper: Paper, links: list[dict] | None = None) -> str:
    """A BibTeX entry: @article for arXiv preprints, @inproceedings at a venue, else @misc.
    ``links``: the paper's ``paper_links``, when the caller has them already."""
    year = _year(paper)
    key = "".join(ch for ch in (paper.short_name or paper.slug) if ch.isalnum()).lower()
    key = f"{key}{year}" or paper.slug
    fields = [("title", "{" + _bib_escape(paper.title) + "}")]
    if paper.authors:
        fields.append(("author", _bib_escape(" and ".join(str(a) for a in paper.authors))))
    kind = "misc"
    if paper.venue_id:
        kind = "inproceedings"
        fields.append(("booktitle", _bib_escape(paper.venue.full_name or str(paper.venue))))
    if year:
        fields.append(("year", year))
    if paper.arxiv_id:
        fields += [("eprint", paper.arxiv_id), ("archivePrefix", "arXiv")]
        if paper.primary_category:
            fields.append(("primaryClass", paper.primary_category))
    if paper.doi:
        fields.append(("doi", _bib_escape(paper.doi)))
    if links is None:
        links = paper_links(paper)
    urls = {link["kind"]: link["url"] for link in links}
    if urls.get("abs"):
        fields.append(("url", urls["abs"]))
    if kind == "misc" and paper.kind != Paper.Kind.PAPER:
        fields.append(("howpublished", _bib_escape(paper.get_kind_display())))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{kind}{{{key},\n{body}\n}}"


@register.simple_tag
def citation_meta(paper: Paper) -> list[tuple[str, str]]:
    """The paper's Highwire ``citation_*`` tags (``dailies.citation``)."""
    return citation.citation_meta(paper, paper_links(paper))


@register.simple_tag
def coins(paper: Paper) -> str:
    """The title of the paper's COinS span (``dailies.citation``)."""
    return citation.coins(paper, paper_links(paper))


@register.simple_tag
def plain_citation(paper: Paper) -> str:
    """Authors (year). Title. Venue. arXiv:id / DOI."""
    parts = []
    authors = byline(paper.authors)
    year = _year(paper)
    if authors:
        parts.append(f"{authors} ({year})." if year else f"{authors}.")
    elif year:
        parts.append(f"({year}).")
    parts.append(paper.title.rstrip(".") + ".")
    badge = venue_badge(paper)
    if badge:
        parts.append(badge + ".")
    if paper.arxiv_id:
        parts.append(f"arXiv:{paper.arxiv_id}.")
    if paper.doi:
        parts.append(f"doi:{paper.doi}.")
    return " ".join(parts)


@register.filter
def scorer_label(score) -> str:
    """Who scored, for readers: the scorer and version, or, for a score taken over from a
    daily as published (the import's internal label), a sentence saying so."""
    if score is None:
        return ""
    if score.scorer == IMPORT_SCORER:
        return gettext("as published in the daily")
    return f"{score.scorer} {score.scorer_version}".strip()


OVERVIEW_LINE = 110  # characters of an entry's one line in a daily's overview


@dataclass
class OverviewRow:
    """One line of the overview at the top of a daily: rank, score, name, one line."""

    rank: int
    anchor: str
    score: str | None
    name: str
    line: str
    language: str
    has_link: bool


@register.simple_tag
def overview_rows(entries) -> list[OverviewRow]:
    """A daily's entries as its overview lists them (``dailies/_daily_overview.html``), from
    what the page read with them: no query."""
    rows = []
    for rank, entry in enumerate(entries, start=1):
        paper = entry.paper
        summary = paper.summary(get_language())
        line = (summary.takeaway or summary.body) if summary else paper.abstract
        rows.append(
            OverviewRow(
                rank=rank,
                anchor=paper.slug,
                score=score(entry.score) if entry.score is not None else None,
                name=paper.short_name or clean_truncate(paper.title, 60),
                line=clean_truncate(line, OVERVIEW_LINE),
                language=summary.language if summary else "en",
                has_link=bool(paper_links(paper)),
            )
        )
    return rows


@register.filter
def without_link(rows: list[OverviewRow]) -> list[OverviewRow]:
    return [row for row in rows if not row.has_link]
