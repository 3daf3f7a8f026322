"""Template helpers for bilingual content."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, gettext, gettext_lazy

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


@register.filter
def excerpt(summary: Summary | None, length: int = 140) -> str:
    """The start of a summary, cut at a sentence or a word near ``length`` characters."""
    if summary is None:
        return ""
    text = " ".join(summary.body.split())
    if len(text) <= length:
        return text
    cut = text[:length]
    for mark in ("。", "；", ". ", "，", ", ", " "):
        at = cut.rfind(mark)
        if at > length * 0.6:
            cut = cut[: at + len(mark.strip())]
            break
    return cut.rstrip(" ，,;；") + "…"


@register.filter
def score(value: Decimal | None) -> str:
    return "—" if value is None else f"{value:.2f}"


@register.filter
def month_day(value: dt.date) -> str:
    return f"{value:%m-%d}"


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
def deep_dive_minutes(deep_dive) -> int:
    return deep_dive.minutes(get_language())


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


@register.filter
def seconds(milliseconds: int | None) -> str:
    return "—" if milliseconds is None else f"{milliseconds / 1000:.1f} s"


@register.simple_tag
def entry_heading(paper: Paper, summary: Summary | None) -> str:
    """“HiLO: headline” / “HiLO：headline”, or the full title when there is no headline."""
    if summary is None or not summary.headline:
        return paper.title
    colon = "：" if summary.language == Language.ZH else ": "
    return f"{paper.display_name}{colon}{summary.headline}"


@register.filter
def intro_is_machine(daily, language: str) -> bool:
    """The daily's intro in ``language`` is a machine draft (pages say so)."""
    return getattr(daily, f"intro_{language}_provenance", "") == Summary.Provenance.MACHINE
