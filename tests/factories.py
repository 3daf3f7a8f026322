"""Small factories for the tests: each makes a valid row with sensible defaults."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal

from django.utils import timezone

from dailies.assembly import date_of_ingest
from dailies.models import Daily, DailyEntry
from deepdives.models import DeepDive
from digest_site.cache_tags import ALL, retire
from papers.authors import paper_authors_sync
from papers.identity import canonical_id
from papers.models import Organization, Paper, Summary, Topic, Track

_seq = itertools.count(1)


def make_track(slug: str = "infra", **fields) -> Track:
    defaults = {"name_en": slug.title(), "name_zh": f"{slug}赛道"}
    track, _ = Track.objects.get_or_create(slug=slug, defaults={**defaults, **fields})
    return track


def make_paper(
    slug: str | None = None,
    *,
    title: str | None = None,
    en: str | None = "An English summary. Takeaway sentence here. More evidence.",
    zh: str | None = "一段中文摘要。这是要点句。更多证据。",
    orgs: tuple[str, ...] = (),
    topics: tuple[str, ...] = (),
    **fields,
) -> Paper:
    n = next(_seq)
    slug = slug or f"paper-{n}"
    title = title or f"Paper number {n}: {slug}"
    paper = Paper.objects.create(
        slug=slug,
        title=title,
        short_name=fields.pop("short_name", slug.title()),
        canonical_id=canonical_id(title=title),
        **fields,
    )
    if en:
        Summary.objects.create(
            paper=paper,
            language="en",
            body=en,
            takeaway="Takeaway sentence here.",
            headline=f"{slug} headline",
        )
    if zh:
        Summary.objects.create(paper=paper, language="zh", body=zh, takeaway="这是要点句。")
    for label in orgs:
        org, _ = Organization.objects.get_or_create(slug=label.lower(), defaults={"label": label})
        paper.organizations.add(org)
    for slug_ in topics:
        topic, _ = Topic.objects.get_or_create(
            slug=slug_, defaults={"name_en": slug_, "name_zh": slug_}
        )
        paper.topics.add(topic)
    if paper.authors:
        paper_authors_sync({paper.pk: paper.authors})
    return paper


def upcoming_date(track: Track) -> dt.date:
    """The date of a coming daily whose window holds the present, a day or more from its
    cut-off whatever the hour: the day after the next cut-off's. (Tomorrow by UTC's date is
    not: its cut-off, 07:00 in Shanghai, is 23:00 UTC today, so from 23:00 UTC papers made
    now fall after it.)"""
    return date_of_ingest(track, timezone.now()) + dt.timedelta(days=1)


def make_daily(
    *,
    track: Track | None = None,
    date: dt.date = dt.date(2026, 10, 28),
    papers: list[Paper] | None = None,
    scores: list[str] | None = None,
    status: str = Daily.Status.PUBLISHED,
    intro_en: str = "Today's intro.",
    intro_zh: str = "今天的导语。",
    candidates: int | None = 50,
) -> Daily:
    track = track or make_track()
    now = timezone.now()
    daily = Daily.objects.create(
        track=track,
        date=date,
        status=status,
        intro_en=intro_en,
        intro_zh=intro_zh,
        candidates_scored=candidates,
        published_at=now if status == Daily.Status.PUBLISHED else None,
        publish_at=now + dt.timedelta(hours=1) if status == Daily.Status.SCHEDULED else None,
    )
    papers = papers if papers is not None else [make_paper() for _ in range(3)]
    for i, paper in enumerate(papers):
        score = Decimal(scores[i]) if scores else Decimal("4.00") - Decimal("0.05") * i
        DailyEntry.objects.create(
            daily=daily, paper=paper, position=i + 1, is_lead=(i == 0), score=score
        )
    retire(ALL)  # written by hand, not through the services
    return daily


def make_deep_dive(
    paper: Paper,
    *,
    body_en: str = "# Title\n\nSome words.",
    body_zh: str = "",
    status: str = DeepDive.Status.PUBLISHED,
    **fields,
) -> DeepDive:
    return DeepDive.objects.create(
        paper=paper,
        slug=fields.pop("slug", f"{paper.slug}-dive"),
        title_en=fields.pop("title_en", f"{paper.slug} deep dive"),
        title_zh=fields.pop("title_zh", ""),
        body_en=body_en,
        body_zh=body_zh,
        status=status,
        **fields,
    )


HILO_TITLE = (
    "HiLO: Towards Product-Level Graceful Degradation with a Quality-Aware, Load-Aware "
    "Control Framework"
)
HILO_ABSTRACT = (
    "Large online products degrade service by service during traffic surges, and the "
    "services' choices conflict. However, no service can see the product's quality as a "
    "whole. We present HiLO, a control framework from Microsoft for graceful degradation at "
    "the level of a whole product. A small set of validated product states is defined in "
    "advance, each assigning a degradation level to every service. A central controller, fed "
    "by load reports, chooses one state at a time and applies it across the product. In "
    "production it handled nine real traffic surges, up to 2.38× baseline peak, while the "
    "OneDCG relevance score fell by at most 0.425 points against a 0.5-point limit."
)


def make_candidate(
    slug: str | None = None,
    *,
    title: str = HILO_TITLE,
    abstract: str = HILO_ABSTRACT,
    **fields,
) -> Paper:
    """An ingested paper with its abstract and no summary yet (what drafting starts from)."""
    fields.setdefault("short_name", "")
    return make_paper(slug, title=title, en=None, zh=None, abstract=abstract, **fields)


def make_subscriber(
    email: str | None = None,
    *,
    track: Track | None = None,
    language: str = "en",
    status: str = "confirmed",
    topic: Topic | None = None,
):
    from subscriptions.models import Subscriber

    return Subscriber.objects.create(
        email=email or f"reader{next(_seq)}@example.org",
        track=track or make_track(),
        language=language,
        status=status,
        topic=topic,
        confirmed_at=timezone.now() if status == Subscriber.Status.CONFIRMED else None,
    )
