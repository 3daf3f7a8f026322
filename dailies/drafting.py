"""Drafting a daily's writing: every entry's summaries (through ``papers.drafting``) and the
daily's intro in both languages.

Only this layer knows whether readers already see a paper (it is in a published daily), so it
tells the paper drafting service: a re-draft of a public text is kept as a proposal for an
editor, never put live by the machine.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from dailies.extensions import papers_with_feature
from dailies.models import Daily, DailyEntry, IntroFields, WeeklyRoundup
from dailies.weekly import week_roundup
from papers.drafting.base import (
    Drafter,
    DraftingStopped,
    GlossaryEntry,
    IntroDraft,
    IntroEntry,
    IntroInput,
    PaperInput,
)
from papers.drafting.grounding import check_intro, check_numbers
from papers.drafting.service import (
    DraftOutcome,
    KnownNames,
    digest,
    get_drafter,
    known_names,
    paper_draft,
    paper_input,
    track_glossary,
)
from papers.languages import LANGUAGE_CODES, Language
from papers.models import Paper, Summary, Track

Progress = Callable[[int], None]

# How far back the re-draft sweep looks for papers changed after they were drafted.
REDRAFT_LOOKBACK = dt.timedelta(days=14)


@dataclass
class DailyDraftOutcome:
    track: str
    date: dt.date
    entries: list[DraftOutcome] = field(default_factory=list)
    intro: list[str] = field(default_factory=list)  # languages of the intro drafted now
    intro_missing: dict[str, str] = field(default_factory=dict)
    stopped: str = ""  # why drafting stopped early (e.g. the token budget), else ""

    @property
    def flagged(self) -> int:
        return sum(1 for outcome in self.entries if outcome.flags)

    def summary_line(self) -> dict:
        return {
            "track": self.track,
            "date": self.date.isoformat(),
            "drafted": sum(1 for outcome in self.entries if outcome.languages),
            "flagged": self.flagged,
            "intro": self.intro,
            **({"stopped": self.stopped} if self.stopped else {}),
        }


def paper_is_public(paper_id: int) -> bool:
    """Readers see the paper: it is in a published daily (one query)."""
    return DailyEntry.objects.published().filter(paper_id=paper_id).exists()


def daily_paper_draft(
    *,
    paper: Paper,
    track: Track | None = None,
    drafter: Drafter | None = None,
    redraft: bool = False,
    names: KnownNames | None = None,
    glossary: tuple[GlossaryEntry, ...] | None = None,
) -> DraftOutcome:
    """Draft one paper's texts, as a proposal when readers already see it."""
    return paper_draft(
        paper=paper,
        track=track,
        drafter=drafter,
        redraft=redraft,
        public=paper_is_public(paper.pk),
        names=names,
        glossary=glossary,
    )


def daily_draft(
    *,
    daily: Daily,
    redraft: bool = False,
    drafter: Drafter | None = None,
    progress: Progress | None = None,
) -> DailyDraftOutcome:
    """Draft every entry of ``daily`` that lacks machine texts (all of them with
    ``redraft``), then its intro. Editors' texts are never touched; a budget that runs out
    stops the batch cleanly, keeping what was drafted, and the outcome says so."""
    drafter = drafter or get_drafter()
    outcome = DailyDraftOutcome(track=daily.track.slug, date=daily.date)
    entries = list(daily.entries.select_related("paper", "paper__venue").order_by("position"))
    names = known_names()  # once for the whole daily
    glossary = track_glossary(daily.track)
    try:
        for entry in entries:
            outcome.entries.append(
                daily_paper_draft(
                    paper=entry.paper,
                    track=daily.track,
                    drafter=drafter,
                    redraft=redraft,
                    names=names,
                    glossary=glossary,
                )
            )
            if progress is not None:
                progress(1)
        intro = daily_intro_draft(daily=daily, drafter=drafter, redraft=redraft)
        outcome.intro, outcome.intro_missing = intro
    except DraftingStopped as exc:
        outcome.stopped = str(exc)
    return outcome


def _intro_entries(entries: list[DailyEntry], dived: set[int]) -> tuple[IntroEntry, ...]:
    """What the drafter reads of each entry (its English takeaway, else its Chinese one);
    ``dived``: the papers with a published deep dive."""
    items = []
    for entry in entries:
        summary = entry.paper.summary(Language.EN)
        items.append(
            IntroEntry(
                title=entry.paper.title,
                takeaway=summary.takeaway if summary else "",
                short_name=entry.paper.short_name,
                is_lead=entry.is_lead,
                has_deep_dive=entry.paper_id in dived,
                organizations=tuple(org.label for org in entry.paper.organizations.all()),
            )
        )
    return tuple(items)


def _intro_input(daily: Daily, entries: list[DailyEntry]) -> IntroInput:
    deep_dives = papers_with_feature("deep_dive", [e.paper_id for e in entries])
    return IntroInput(
        track_name_en=daily.track.name_en,
        track_name_zh=daily.track.name_zh,
        date=daily.date.isoformat(),
        entries=_intro_entries(entries, deep_dives),
        deep_dives=len(deep_dives),
    )


def _intro_source(intro: IntroInput, entries: list[DailyEntry]) -> str:
    """What an intro's numbers may come from: the entries' sources and texts, and the counts
    of the day (any number of its entries: "and 7 more" counts the ones not named)."""
    counts = " ".join(str(n) for n in range(len(intro.entries) + 1))
    parts = [f"{counts} {intro.deep_dives}", intro.date]
    for entry in entries:
        paper = entry.paper
        parts += [paper.title, paper.abstract, paper.comment]
        parts += [s.body for s in paper.summaries.all()]
    return "\n".join(p for p in parts if p)


def _entries_changed_since_intro(daily: Daily) -> bool:
    """Re-assembly changed the selection after the machine intro was drafted."""
    return bool(
        daily.assembled_at
        and daily.intro_drafted_at
        and daily.assembled_at > daily.intro_drafted_at
    )


def _intro_languages(
    owner: IntroFields, *, frozen: str, redraft: bool, stale: bool = False
) -> tuple[list[str], dict[str, str]]:
    """The languages of ``owner``'s intro to draft and, for the others, why not: an
    editor's text is never replaced, nor any text while ``frozen`` says why (published), nor
    a machine draft unless ``redraft`` or ``stale``."""
    wanted: list[str] = []
    missing: dict[str, str] = {}
    for language in LANGUAGE_CODES:
        text = getattr(owner, f"intro_{language}")
        if text and owner.intro_provenance(language) == Summary.Provenance.EDITOR:
            missing[language] = "written by an editor"
        elif frozen:
            missing[language] = f"{frozen}; its intro is not re-drafted"
        elif text and not redraft and not stale:
            missing[language] = "already drafted"
        else:
            wanted.append(language)
    return wanted, missing


def _intro_draft(
    owner: IntroFields,
    *,
    intro: IntroInput,
    entries: list[DailyEntry],
    source: str,
    wanted: list[str],
    missing: dict[str, str],
    drafter: Drafter,
    frozen: Callable[[IntroFields], str],
) -> list[str]:
    """Draft ``intro`` and store each ``wanted`` language's text on ``owner`` (a daily or a
    week's roundup) as a machine draft, flagged where it names a number ``source`` does not
    give or a system or organisation that is not its entry's. ``owner`` is re-read locked
    first; when ``frozen`` now says why it may not change, nothing is stored. Records in
    ``missing`` why a language got no text; returns the languages stored."""
    draft: IntroDraft = drafter.draft_intro(intro)
    glossary = track_glossary(owner.track)
    entry_inputs = [
        paper_input(paper=e.paper, track=owner.track, glossary=glossary) for e in entries
    ]
    organizations = known_names().organizations
    drafted = []
    with transaction.atomic():
        owner = type(owner).objects.select_for_update().get(pk=owner.pk)
        now_frozen = frozen(owner)
        if now_frozen:
            missing.update(dict.fromkeys(wanted, f"meanwhile {now_frozen}"))
            return []
        flags = [f for f in owner.intro_flags or [] if f.get("language") not in wanted]
        for language in wanted:
            text = (draft.texts.get(language) or "").strip()
            if not text:
                missing[language] = draft.missing.get(language, "the drafter wrote none")
                continue
            setattr(owner, f"intro_{language}", text)
            setattr(owner, f"intro_{language}_provenance", Summary.Provenance.MACHINE)
            flags += [
                {"language": language, "kind": f.kind, "text": f.text, "detail": f.detail}
                for f in (
                    *check_numbers(text, source, language=language),
                    *check_intro(
                        text,
                        language=language,
                        entries=entry_inputs,
                        known_organizations=organizations,
                    ),
                )
            ]
            drafted.append(language)
        if drafted:
            owner.intro_flags = flags
            owner.intro_drafter = " ".join(
                p for p in (draft.drafter, draft.drafter_version, draft.model) if p
            )
            owner.intro_drafted_at = timezone.now()
            owner.save(
                update_fields=[
                    "intro_en",
                    "intro_zh",
                    "intro_en_provenance",
                    "intro_zh_provenance",
                    "intro_flags",
                    "intro_drafter",
                    "intro_drafted_at",
                    "updated_at",
                ]
            )
    return drafted


def _daily_frozen(daily: Daily) -> str:
    return f"the daily is {daily.status}" if daily.status != Daily.Status.DRAFT else ""


def daily_intro_draft(
    *, daily: Daily, drafter: Drafter | None = None, redraft: bool = False
) -> tuple[list[str], dict[str, str]]:
    """Draft the intro in each language an editor has not written; returns the languages
    drafted and, for the others, why not. A published daily's intro is never replaced."""
    drafter = drafter or get_drafter()
    entries = list(
        daily.entries.select_related("paper__venue")
        .prefetch_related("paper__summaries", "paper__organizations")
        .order_by("position")
    )
    if not entries:
        return [], dict.fromkeys(LANGUAGE_CODES, "the daily has no entries")
    wanted, missing = _intro_languages(
        daily,
        frozen=_daily_frozen(daily),
        redraft=redraft,
        stale=_entries_changed_since_intro(daily),
    )
    if not wanted:
        return [], missing
    intro = _intro_input(daily, entries)
    drafted = _intro_draft(
        daily,
        intro=intro,
        entries=entries,
        source=_intro_source(intro, entries),
        wanted=wanted,
        missing=missing,
        drafter=drafter,
        frozen=_daily_frozen,
    )
    return drafted, missing


def papers_needing_redraft(*, now: dt.datetime | None = None) -> list[int]:
    """Papers whose source text changed (a new arXiv version) since their machine texts were
    drafted from it. Looks only at papers changed in the last ``REDRAFT_LOOKBACK`` after
    their drafting, so the sweep's cost stays flat; compares digests in Python."""
    since = (now or timezone.now()) - REDRAFT_LOOKBACK
    rows = (
        Summary.objects.filter(provenance=Summary.Provenance.MACHINE, paper__updated_at__gte=since)
        .filter(Q(drafted_at__isnull=True) | Q(paper__updated_at__gt=F("drafted_at")))
        .values_list("paper_id", "source_digest")
    )
    digests: dict[int, set[str]] = {}
    for paper_id, stored in rows:
        digests.setdefault(paper_id, set()).add(stored)
    papers = Paper.objects.filter(pk__in=digests).only(
        "pk", "canonical_id", "title", "abstract", "comment"
    )
    return sorted(p.pk for p in papers if digests[p.pk] != {_source_digest(p)})


def _source_digest(paper: Paper) -> str:
    """The digest ``paper_draft`` stores for the paper's source as it is now."""
    source = PaperInput(
        canonical_id=paper.canonical_id,
        title=paper.title,
        abstract=paper.abstract,
        comment=paper.comment,
    )
    return digest(source.source_text)


def _roundup_frozen(roundup: WeeklyRoundup) -> str:
    return "the roundup is published" if roundup.is_published else ""


def roundup_intro_draft(
    *, roundup: WeeklyRoundup, drafter: Drafter | None = None, redraft: bool = False
) -> tuple[list[str], dict[str, str]]:
    """Draft the weekly roundup's intro, as a daily's (``daily_intro_draft``): from the
    week's published dailies only (its picks, then its highest scores), in each language an
    editor has not written, checked for numbers and organisations the week does not give
    (``intro_flags``). A published intro is never replaced. Returns the languages drafted
    and, for the others, why not."""
    drafter = drafter or get_drafter()
    wanted, missing = _intro_languages(roundup, frozen=_roundup_frozen(roundup), redraft=redraft)
    week = week_roundup(roundup.track, roundup.week_start) if wanted else None
    if week is None:
        missing.update(dict.fromkeys(wanted, "the week has no published daily"))
        return [], missing
    entries = [*week.picks, *week.top_scores]
    intro = IntroInput(
        track_name_en=roundup.track.name_en,
        track_name_zh=roundup.track.name_zh,
        date=week.label,
        entries=_intro_entries(entries, {e.paper_id for e in week.dived}),
        deep_dives=len(week.dived),
        period="week",
        dailies=len(week.dailies),
    )
    # Its numbers may be the week's counts (of papers, dailies, deep dives) or the entries'.
    source = "\n".join(
        [_intro_source(intro, entries), str(week.paper_count), str(len(week.dailies))]
    )
    drafted = _intro_draft(
        roundup,
        intro=intro,
        entries=entries,
        source=source,
        wanted=wanted,
        missing=missing,
        drafter=drafter,
        frozen=_roundup_frozen,
    )
    return drafted, missing
