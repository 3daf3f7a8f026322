"""How the read API writes dailies, papers and topics: every field their pages show, in the
language asked for (``context["lang"]``), a missing text falling back to the other language
and marked as the pages mark it ("not yet translated").

Serializers read prefetched relations only; the views' querysets prefetch them.
"""

from __future__ import annotations

from urllib.parse import quote

from django.urls import reverse
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from dailies.models import Daily, DailyStats
from dailies.templatetags.digest import (
    CRITERION_LABELS,
    criterion_label,
    entry_heading,
    venue_badge,
)
from papers.languages import Language, localized
from papers.models import Paper, Score, Summary
from papers.validators import safe_url

NOT_TRANSLATED = "Not yet translated — shown in the original language."
SCORE = {"max_digits": 3, "decimal_places": 2, "coerce_to_string": False}


def _lang(serializer: serializers.Serializer) -> str:
    return serializer.context.get("lang", Language.EN)


def _absolute(serializer: serializers.Serializer, path: str) -> str:
    request = serializer.context.get("request")
    return request.build_absolute_uri(path) if request is not None else path


def _api_url(serializer: serializers.Serializer, name: str, **kwargs) -> str:
    path = reverse(f"api:{name}", kwargs=kwargs)
    return _absolute(serializer, f"{path}?lang={_lang(serializer)}")


def _fallback_note(language: str, requested: str, text: str) -> dict:
    missing = bool(text) and language != requested
    return {
        "language": language,
        "not_yet_translated": missing,
        "note": gettext(NOT_TRANSLATED) if missing else None,
    }


class FallbackFields(serializers.Serializer):
    language = serializers.ChoiceField(
        choices=Language.values, help_text="The language the text is written in."
    )
    not_yet_translated = serializers.BooleanField(
        help_text="The text is missing in the requested language; this is the other one."
    )
    note = serializers.CharField(
        allow_null=True, help_text="The pages' “not yet translated” note, or null."
    )


class SummaryOut(FallbackFields):
    heading = serializers.CharField(help_text="As the pages head the entry: “HiLO: headline”.")
    headline = serializers.CharField(allow_blank=True)
    body = serializers.CharField(help_text="The summary; it contains the takeaway sentence.")
    takeaway = serializers.CharField(help_text="The sentence the pages emphasise.")
    highlights = serializers.ListField(
        child=serializers.CharField(), help_text="Headline numbers, each with its conditions."
    )
    provenance = serializers.ChoiceField(
        choices=Summary.Provenance.values, help_text="machine (a draft) or editor."
    )
    reviewed = serializers.BooleanField(help_text="A machine draft an editor confirmed.")
    provenance_label = serializers.CharField(help_text="What the pages say about its author.")
    edited_at = serializers.DateTimeField(allow_null=True)


def summary_out(paper: Paper, lang: str) -> dict | None:
    """The paper's summary in ``lang`` (else the other one, marked). Reads prefetched
    ``summaries``."""
    summary = paper.summary(lang)
    if summary is None:
        return None
    if summary.provenance == Summary.Provenance.EDITOR:
        label = gettext("Written by an editor")
    elif summary.reviewed_at:
        label = gettext("Machine draft, reviewed by an editor")
    else:
        label = gettext("Machine draft, not yet reviewed by an editor")
    return {
        **_fallback_note(summary.language, lang, summary.body),
        "heading": entry_heading(paper, summary),
        "headline": summary.headline,
        "body": summary.body,
        "takeaway": summary.takeaway,
        "highlights": [str(h) for h in summary.highlights or []],
        "provenance": summary.provenance,
        "reviewed": bool(summary.reviewed_at),
        "provenance_label": label,
        "edited_at": summary.edited_at,
    }


class NamedOut(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField(help_text="In the requested language.")


class TopicRefOut(NamedOut):
    url = serializers.URLField(help_text="The topic's page.")


class OrganizationOut(serializers.Serializer):
    slug = serializers.SlugField()
    label = serializers.CharField(help_text="The short label shown on entries.")
    name = serializers.CharField(allow_blank=True)


class VenueOut(serializers.Serializer):
    short_name = serializers.CharField()
    year = serializers.IntegerField()
    full_name = serializers.CharField(allow_blank=True)
    status = serializers.ChoiceField(choices=Paper.VenueStatus.values, allow_blank=True)
    label = serializers.CharField(help_text="The badge: “Accepted at NSDI 2027”.")


class LinksOut(serializers.Serializer):
    abstract = serializers.URLField(allow_null=True)
    pdf = serializers.URLField(allow_null=True)
    doi = serializers.URLField(allow_null=True)


class DeepDiveOut(serializers.Serializer):
    title = serializers.CharField()
    minutes = serializers.IntegerField(help_text="Reading time of the text in this language.")
    url = serializers.URLField()


class CodeOut(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField()
    last_status = serializers.CharField(help_text="never, passed or failed.")
    url = serializers.URLField(help_text="The reference-code page.")


class PaperSerializer(serializers.Serializer):
    """A paper as a daily's entry shows it."""

    id = serializers.IntegerField()
    slug = serializers.SlugField()
    title = serializers.CharField()
    short_name = serializers.CharField(allow_blank=True)
    kind = serializers.ChoiceField(choices=Paper.Kind.values)
    authors = serializers.ListField(child=serializers.CharField())
    summary = serializers.SerializerMethodField()
    organizations = serializers.SerializerMethodField()
    venue = serializers.SerializerMethodField()
    topics = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField()
    deep_dive = serializers.SerializerMethodField()
    code = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField(help_text="The paper's page.")
    api_url = serializers.SerializerMethodField()

    @extend_schema_field(SummaryOut(allow_null=True))
    def get_summary(self, paper: Paper) -> dict | None:
        return summary_out(paper, _lang(self))

    @extend_schema_field(OrganizationOut(many=True))
    def get_organizations(self, paper: Paper) -> list[dict]:
        return [
            {"slug": o.slug, "label": o.label, "name": o.name} for o in paper.organizations.all()
        ]

    @extend_schema_field(VenueOut(allow_null=True))
    def get_venue(self, paper: Paper) -> dict | None:
        venue = paper.venue
        if venue is None:
            return None
        return {
            "short_name": venue.short_name,
            "year": venue.year,
            "full_name": venue.full_name,
            "status": paper.venue_status,
            "label": venue_badge(paper),
        }

    @extend_schema_field(TopicRefOut(many=True))
    def get_topics(self, paper: Paper) -> list[dict]:
        lang = _lang(self)
        return [
            {
                "slug": t.slug,
                "name": t.name(lang),
                "url": _absolute(self, reverse("search:topic", args=[t.slug])),
            }
            for t in paper.topics.all()
        ]

    @extend_schema_field(LinksOut)
    def get_links(self, paper: Paper) -> dict:
        doi = f"https://doi.org/{quote(paper.doi, safe='/')}" if paper.doi else ""
        return {
            "abstract": safe_url(paper.abs_url) or None,
            "pdf": safe_url(paper.pdf_url) or None,
            "doi": safe_url(doi) or None,
        }

    @extend_schema_field(DeepDiveOut(allow_null=True))
    def get_deep_dive(self, paper: Paper) -> dict | None:
        lang = _lang(self)
        for dive in getattr(paper, "deep_dive_list", []):
            return {
                "title": str(dive.title(lang)) or str(dive),
                "minutes": dive.minutes(lang),
                "url": _absolute(self, dive.get_absolute_url()),
            }
        return None

    @extend_schema_field(CodeOut(many=True))
    def get_code(self, paper: Paper) -> list[dict]:
        return [
            {
                "slug": code.slug,
                "name": code.name,
                "last_status": code.last_status,
                "url": _absolute(self, code.get_absolute_url()),
            }
            for code in getattr(paper, "reference_code_list", [])
        ]

    def get_url(self, paper: Paper) -> str:
        return _absolute(self, reverse("dailies:paper", args=[paper.slug]))

    def get_api_url(self, paper: Paper) -> str:
        return _api_url(self, "paper-detail", slug=paper.slug)


class AppearanceOut(serializers.Serializer):
    track = NamedOut()
    date = serializers.DateField()
    position = serializers.IntegerField()
    is_lead = serializers.BooleanField()
    score = serializers.DecimalField(**SCORE, allow_null=True, help_text="The score shown.")
    url = serializers.URLField(help_text="The entry on the daily's page.")
    api_url = serializers.URLField(help_text="The daily in this API.")


class PaperListSerializer(PaperSerializer):
    """A paper as the cross-day index lists it: with the published dailies it was in."""

    dailies = serializers.SerializerMethodField(
        help_text="The published dailies it appeared in, newest first."
    )

    @extend_schema_field(AppearanceOut(many=True))
    def get_dailies(self, paper: Paper) -> list[dict]:
        lang = _lang(self)
        rows = []
        for entry in paper.published_entries:
            daily = entry.daily
            rows.append(
                {
                    "track": {"slug": daily.track.slug, "name": daily.track.name(lang)},
                    "date": daily.date,
                    "position": entry.position,
                    "is_lead": entry.is_lead,
                    "score": entry.score,
                    "url": _absolute(self, f"{daily.get_absolute_url()}#{paper.slug}"),
                    "api_url": _daily_api_url(self, daily),
                }
            )
        return rows


class CriterionOut(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()
    value = serializers.FloatField(help_text="1–5.")


class ScoreOut(serializers.Serializer):
    track = NamedOut()
    total = serializers.DecimalField(**SCORE, help_text="1.00–5.00 in steps of 0.05.")
    criteria = CriterionOut(many=True, help_text="The rubric; empty when none was recorded.")
    rationale = serializers.CharField(allow_blank=True)
    rationale_language = serializers.CharField(
        allow_null=True, help_text="en or zh: the language of the rationale; null without one."
    )
    scorer = serializers.CharField()
    scorer_version = serializers.CharField()
    created_at = serializers.DateTimeField()


def _rubric(criteria: dict | None) -> list[tuple[str, float]]:
    """The numeric criteria in the rubric's own order (the database may store JSON keys in
    another), unknown names after the known ones."""
    known = list(CRITERION_LABELS)
    values = [
        (str(k), v)
        for k, v in (criteria or {}).items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    ]
    return sorted(
        values, key=lambda kv: (known.index(kv[0]) if kv[0] in known else len(known), kv[0])
    )


def _rationale_language(score: Score, lang: str) -> str | None:
    text = localized(score, "rationale", lang)
    return text.language if text else None


class PaperDetailSerializer(PaperListSerializer):
    """A paper as its page shows it: also the abstract and every score with its rubric."""

    abstract = serializers.CharField(allow_blank=True)
    published_on = serializers.DateField(allow_null=True)
    scores = serializers.SerializerMethodField(help_text="Newest first.")

    @extend_schema_field(ScoreOut(many=True))
    def get_scores(self, paper: Paper) -> list[dict]:
        lang = _lang(self)
        scores = sorted(paper.scores.all(), key=lambda s: (s.created_at, s.pk), reverse=True)
        return [
            {
                "track": {"slug": s.track.slug, "name": s.track.name(lang)},
                "total": s.total,
                "criteria": [
                    {"name": str(k), "label": criterion_label(str(k)), "value": v}
                    for k, v in _rubric(s.criteria)
                ],
                "rationale": s.rationale(lang),
                "rationale_language": _rationale_language(s, lang),
                "scorer": s.scorer,
                "scorer_version": s.scorer_version,
                "created_at": s.created_at,
            }
            for s in scores
        ]


def _daily_api_url(serializer: serializers.Serializer, daily: Daily) -> str:
    return _api_url(serializer, "daily-detail", track=daily.track.slug, date=daily.date.isoformat())


class IntroOut(FallbackFields):
    text = serializers.CharField(allow_blank=True)
    provenance = serializers.ChoiceField(choices=Summary.Provenance.values)


class StatsOut(serializers.Serializer):
    candidates = serializers.IntegerField(allow_null=True, help_text="Candidates scored.")
    selected = serializers.IntegerField()
    score_low = serializers.DecimalField(**SCORE, allow_null=True)
    score_high = serializers.DecimalField(**SCORE, allow_null=True)


class LeadOut(serializers.Serializer):
    slug = serializers.SlugField()
    heading = serializers.CharField()
    api_url = serializers.URLField()


class DailySerializer(serializers.Serializer):
    """A daily as the home and track pages list it."""

    track = serializers.SerializerMethodField()
    date = serializers.DateField()
    title = serializers.SerializerMethodField(help_text="“Infra — Paper Daily, 2026-10-28”.")
    intro = serializers.SerializerMethodField()
    published_at = serializers.DateTimeField()
    stats = serializers.SerializerMethodField()
    lead = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField(help_text="The daily's page.")
    api_url = serializers.SerializerMethodField()

    @extend_schema_field(NamedOut)
    def get_track(self, daily: Daily) -> dict:
        return {"slug": daily.track.slug, "name": daily.track.name(_lang(self))}

    def get_title(self, daily: Daily) -> str:
        return gettext("%(track_name)s — Paper Daily, %(date)s") % {
            "track_name": daily.track.name(_lang(self)),
            "date": daily.date.isoformat(),
        }

    @extend_schema_field(IntroOut)
    def get_intro(self, daily: Daily) -> dict:
        lang = _lang(self)
        intro = localized(daily, "intro", lang)
        return {
            **_fallback_note(intro.language, lang, intro),
            "text": str(intro),
            "provenance": daily.intro_provenance(intro.language),
        }

    def _stats(self, daily: Daily) -> DailyStats:
        return DailyStats(daily.candidates_scored, daily.selected, daily.low, daily.high)

    @extend_schema_field(StatsOut)
    def get_stats(self, daily: Daily) -> dict:
        stats = self._stats(daily)
        return {
            "candidates": stats.candidates,
            "selected": stats.selected,
            "score_low": stats.low,
            "score_high": stats.high,
        }

    @extend_schema_field(LeadOut(allow_null=True))
    def get_lead(self, daily: Daily) -> dict | None:
        for entry in getattr(daily, "lead_entries", []):
            paper = entry.paper
            return {
                "slug": paper.slug,
                "heading": entry_heading(paper, paper.summary(_lang(self))),
                "api_url": _api_url(self, "paper-detail", slug=paper.slug),
            }
        return None

    def get_url(self, daily: Daily) -> str:
        return _absolute(self, daily.get_absolute_url())

    def get_api_url(self, daily: Daily) -> str:
        return _daily_api_url(self, daily)


class EntryOut(serializers.Serializer):
    position = serializers.IntegerField()
    is_lead = serializers.BooleanField()
    score = serializers.DecimalField(**SCORE, allow_null=True, help_text="The score shown.")
    paper = PaperSerializer()


class NeighbourOut(serializers.Serializer):
    date = serializers.DateField()
    url = serializers.URLField()
    api_url = serializers.URLField()


class DailyDetailSerializer(DailySerializer):
    """A daily as its page shows it: every entry in order, and the previous/next daily."""

    entries = serializers.SerializerMethodField()
    previous = serializers.SerializerMethodField()
    next = serializers.SerializerMethodField()

    def _stats(self, daily: Daily) -> DailyStats:
        return DailyStats.from_entries(daily.candidates_scored, daily.entry_list)

    @extend_schema_field(EntryOut(many=True))
    def get_entries(self, daily: Daily) -> list[dict]:
        papers = PaperSerializer(context=self.context)
        return [
            {
                "position": e.position,
                "is_lead": e.is_lead,
                "score": e.score,
                "paper": papers.to_representation(e.paper),
            }
            for e in daily.entry_list
        ]

    def _neighbour(self, daily: Daily | None) -> dict | None:
        if daily is None:
            return None
        return {
            "date": daily.date,
            "url": _absolute(self, daily.get_absolute_url()),
            "api_url": _daily_api_url(self, daily),
        }

    @extend_schema_field(NeighbourOut(allow_null=True))
    def get_previous(self, daily: Daily) -> dict | None:
        return self._neighbour(daily.neighbours[0])

    @extend_schema_field(NeighbourOut(allow_null=True))
    def get_next(self, daily: Daily) -> dict | None:
        return self._neighbour(daily.neighbours[1])


class TopicSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.SerializerMethodField(help_text="In the requested language.")
    name_en = serializers.CharField()
    name_zh = serializers.CharField()
    papers = serializers.IntegerField(source="n", help_text="Published papers with the topic.")
    url = serializers.SerializerMethodField(help_text="The topic's page.")
    papers_api_url = serializers.SerializerMethodField()

    def get_name(self, topic) -> str:
        return topic.name(_lang(self))

    def get_url(self, topic) -> str:
        return _absolute(self, reverse("search:topic", args=[topic.slug]))

    def get_papers_api_url(self, topic) -> str:
        return _absolute(self, f"{reverse('api:paper-list')}?topic={topic.slug}&lang={_lang(self)}")
