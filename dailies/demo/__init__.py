"""The demo content: the Infra track's dailies of 2026-10-26 to 10-29 and their 16 items.

``demo_load()`` is idempotent: it upserts on slugs and dates, so running it twice leaves the
same rows. Text lives in TOML beside this file; it was written for this project.
"""

from __future__ import annotations

import datetime as dt
import tomllib
import zoneinfo
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.db import transaction

from dailies.extensions import papers_changed
from dailies.models import IMPORT_SCORER, Daily, DailyEntry
from dailies.services import daily_publish
from papers.drafting.service import glossary_seed
from papers.identity import canonical_id
from papers.models import Organization, Paper, Score, Source, Summary, Topic, Track, Venue
from papers.services import summary_set

DEMO_DIR = Path(__file__).resolve().parent
IMPORT_SCORER_VERSION = "1"


def _toml(path: Path) -> dict:
    with path.open("rb") as f:
        return tomllib.load(f)


def _load_vocabulary(data: dict) -> Track:
    track_data = dict(data["track"])
    track_data["min_score"] = Decimal(track_data["min_score"])
    track, _ = Track.objects.update_or_create(slug=track_data.pop("slug"), defaults=track_data)
    for topic in data["topics"]:
        Topic.objects.update_or_create(slug=topic["slug"], defaults=_without(topic, "slug"))
    for org in data["organizations"]:
        Organization.objects.update_or_create(slug=org["slug"], defaults=_without(org, "slug"))
    for venue in data["venues"]:
        Venue.objects.update_or_create(slug=venue["slug"], defaults=_without(venue, "slug"))
    for source_data in data.get("sources", []):
        source, _ = Source.objects.update_or_create(
            name=source_data["name"], defaults=_without(source_data, "name")
        )
        source.tracks.add(track)
    return track


def _without(data: dict, *keys: str) -> dict:
    return {k: v for k, v in data.items() if k not in keys}


def _load_paper(data: dict, track: Track) -> Paper:
    venue = Venue.objects.get(slug=data["venue"]) if data.get("venue") else None
    paper, _ = Paper.objects.update_or_create(
        slug=data["slug"],
        defaults={
            "canonical_id": canonical_id(
                arxiv_id=data.get("arxiv_id", ""),
                doi=data.get("doi", ""),
                url=data.get("url", ""),
                title=data["title"],
            ),
            "kind": data["kind"],
            "title": data["title"],
            "short_name": data.get("short_name", ""),
            "abstract": data.get("abstract", ""),
            "abs_url": data.get("url", ""),
            "venue": venue,
            "venue_status": data.get("venue_status", "") if venue else "",
        },
    )
    paper.organizations.set(Organization.objects.filter(slug__in=data.get("organizations", [])))
    paper.topics.set(Topic.objects.filter(slug__in=data.get("topics", [])))
    paper.tracks.add(track)
    for language in ("en", "zh"):
        text = data.get(language)
        if text:
            summary_set(
                paper=paper,
                language=language,
                headline=text.get("headline", ""),
                body=text["summary"],
                takeaway=text["takeaway"],
                highlights=text.get("highlights", []),
                provenance=Summary.Provenance.EDITOR,
            )
    return paper


def _publish_time(date: dt.date) -> dt.datetime:
    tz = zoneinfo.ZoneInfo(settings.EDITORIAL_TIME_ZONE)
    return dt.datetime.combine(date, dt.time(8, 0), tzinfo=tz)


def _load_daily(data: dict, intro: dict, track: Track, papers: dict[str, Paper]) -> Daily:
    date = dt.date.fromisoformat(str(data["date"]))
    daily, _ = Daily.objects.update_or_create(
        track=track,
        date=date,
        defaults={
            "intro_en": intro["intro_en"].strip(),
            "intro_zh": intro["intro_zh"].strip(),
            "candidates_scored": data.get("candidates_scored"),
        },
    )
    # Entries are replaced whole: positions, lead and papers are unique within a daily.
    daily.entries.all().delete()
    for position, entry in enumerate(data["entries"], start=1):
        paper = papers[entry["paper"]]
        score = Decimal(entry["score"]) if "score" in entry else None
        DailyEntry.objects.create(
            daily=daily,
            paper=paper,
            position=position,
            is_lead=entry.get("lead", False),
            score=score,
        )
        if score is not None:
            _record_imported_score(paper, track, score, date)
    if not daily.is_published:
        daily_publish(daily=daily, now=_publish_time(date))
    _dated_as_published(daily)
    return daily


def _dated_as_published(daily: Daily) -> None:
    """The demo's texts were written for their day: their content times (the feeds' Atom
    ``updated``) are the daily's publication, not the moment the demo was loaded."""
    at = Daily.objects.values_list("published_at", flat=True).get(pk=daily.pk)
    papers = DailyEntry.objects.filter(daily=daily).values("paper_id")
    Daily.objects.filter(pk=daily.pk).update(updated_at=at)
    Paper.objects.filter(pk__in=papers).update(updated_at=at)
    Summary.objects.filter(paper__in=papers).update(updated_at=at)


def _record_imported_score(paper: Paper, track: Track, total: Decimal, date: dt.date) -> None:
    Score.objects.get_or_create(
        paper=paper,
        track=track,
        scorer=IMPORT_SCORER,
        scorer_version=IMPORT_SCORER_VERSION,
        defaults={
            "total": total,
            "rationale_en": f"Score as published in the daily of {date:%Y-%m-%d}.",
            "rationale_zh": f"{date:%Y-%m-%d} 日报发布时的分数。",
        },
    )


@transaction.atomic
def demo_load() -> dict[str, int]:
    """Load or refresh the demo track, papers and dailies. Returns counts."""
    track = _load_vocabulary(_toml(DEMO_DIR / "track.toml"))
    glossary_seed(track=track)
    papers = {}
    for path in sorted((DEMO_DIR / "papers").glob("*.toml")):
        data = _toml(path)
        papers[data["slug"]] = _load_paper(data, track)
    intros = {str(d["date"]): d for d in _toml(DEMO_DIR / "intros.toml")["daily"]}
    dailies = [
        _load_daily(d, intros[str(d["date"])], track, papers)
        for d in _toml(DEMO_DIR / "dailies.toml")["daily"]
    ]
    papers_changed(p.pk for p in papers.values())
    return {"papers": len(papers), "dailies": len(dailies)}
