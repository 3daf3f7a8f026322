"""Drafting services: choose the drafter, draft a paper's texts and store them with their
provenance, re-check a text and seed a glossary (the editor's edits are in ``edits``).

An editor's text is never overwritten: drafting replaces only machine drafts, keeps the
text it replaces as a ``SummaryVersion``, and for a text readers already see (``public``)
only proposes the new draft. Every written text is checked against its source
(``grounding``) and what the checks find is stored as ``SummaryFlag`` rows.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from papers.drafting.base import (
    Drafter,
    DraftingStopped,
    GlossaryEntry,
    LanguageDraft,
    PaperDraft,
    PaperInput,
)
from papers.drafting.glossary import glossary_seed_terms
from papers.drafting.grounding import check_draft
from papers.languages import LANGUAGE_CODES
from papers.models import (
    FLAG_DETAIL_MAX_LENGTH,
    FLAG_TEXT_MAX_LENGTH,
    DraftRun,
    GlossaryTerm,
    Organization,
    OrganizationAlias,
    Paper,
    Summary,
    SummaryFlag,
    SummaryVersion,
    Track,
    Venue,
    VenueAlias,
)

SHORT_NAME_MAX_LENGTH = Paper._meta.get_field("short_name").max_length
EDITOR_WROTE = "written by an editor"
UNCHANGED = "already drafted from the same source"
PROPOSED_ALREADY = "a re-draft from the same source is already proposed"


def get_drafter() -> Drafter:
    """The LLM drafter when an endpoint, key and model are configured, else the offline
    extractive drafter (the embedded default)."""
    model = getattr(settings, "LLM_DRAFT_MODEL", "") or settings.LLM_MODEL
    if settings.LLM_BASE_URL and settings.LLM_API_KEY and model:
        from papers.drafting.llm import LLMDrafter

        return LLMDrafter.from_settings()
    from papers.drafting.offline import OfflineDrafter

    return OfflineDrafter()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def track_glossary(track: Track) -> tuple[GlossaryEntry, ...]:
    """The track's glossary as the drafters and checks take it (one query)."""
    return tuple(
        GlossaryEntry(
            en=term.en,
            zh=(term.zh, *[a for a in term.zh_alternatives if a != term.zh]),
            avoid=tuple(term.avoid),
        )
        for term in track.glossary.all()
    )


def paper_input(
    *,
    paper: Paper,
    track: Track | None = None,
    glossary: tuple[GlossaryEntry, ...] | None = None,
) -> PaperInput:
    """What a paper is drafted from: its title, abstract and comments verbatim, its
    organisations and venue, and the track's glossary (pass ``glossary`` to reuse one loaded
    for a batch). Runs two or three queries."""
    track = track or paper.tracks.order_by("position", "slug").first()
    organizations: list[str] = []
    for org in paper.organizations.all():
        for name in (org.label, org.name):
            if name and name not in organizations:
                organizations.append(name)
    venue = f"{paper.venue.short_name} {paper.venue.year}" if paper.venue else ""
    if glossary is None:
        glossary = track_glossary(track) if track is not None else ()
    return PaperInput(
        canonical_id=paper.canonical_id,
        title=paper.title,
        abstract=paper.abstract,
        comment=paper.comment,
        short_name=paper.short_name,
        organizations=tuple(organizations),
        venue=venue,
        track_name=track.name_en if track else "",
        glossary=glossary,
    )


@dataclass(frozen=True)
class KnownNames:
    """Every organisation and venue the site knows, each as the group of its names (label,
    full and Chinese names, aliases): a draft naming one that is not the paper's is flagged.
    Load once per batch (``known_names()``)."""

    organizations: tuple[tuple[str, ...], ...] = ()
    venues: tuple[tuple[str, ...], ...] = ()


def known_names() -> KnownNames:
    """Runs four queries."""
    organizations: dict[int, list[str]] = {}
    for pk, label, name, name_zh in Organization.objects.values_list(
        "pk", "label", "name", "name_zh"
    ):
        organizations[pk] = [n for n in (label, name, name_zh) if n]
    for org_id, pattern in OrganizationAlias.objects.values_list("organization_id", "pattern"):
        organizations.setdefault(org_id, []).append(pattern)
    venues: dict[str, list[str]] = {}
    for short_name, full_name in Venue.objects.values_list("short_name", "full_name"):
        venues.setdefault(short_name, [short_name]).extend([full_name] if full_name else [])
    for short_name, alias, full_name in VenueAlias.objects.values_list(
        "short_name", "alias", "full_name"
    ):
        group = venues.setdefault(short_name, [short_name])
        group.extend(n for n in (alias, full_name) if n)
    return KnownNames(
        organizations=tuple(_unique(g) for _, g in sorted(organizations.items())),
        venues=tuple(_unique(g) for _, g in sorted(venues.items())),
    )


def _unique(names: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n.strip() for n in names if n and n.strip()))


@dataclass
class DraftOutcome:
    """What ``paper_draft`` did for one paper."""

    paper_id: int
    canonical_id: str
    drafter: str
    languages: list[str] = field(default_factory=list)  # written (live text replaced or new)
    proposed: list[str] = field(default_factory=list)  # stored as a proposed version
    skipped: dict[str, str] = field(default_factory=dict)  # language → why left as it was
    flags: list[tuple[str, str, str]] = field(default_factory=list)  # (language, kind, text)
    missing: dict[str, str] = field(default_factory=dict)  # language → why it has no text
    run_id: int | None = None

    @property
    def editor_languages(self) -> list[str]:
        return [code for code, why in self.skipped.items() if why == EDITOR_WROTE]

    def as_dict(self) -> dict:
        """One line of ``draft_daily --json``."""
        return {
            "id": self.canonical_id,
            "languages": list(self.languages),
            "drafter": self.drafter,
            "flags": [
                {"language": lang, "kind": kind, "text": text} for lang, kind, text in self.flags
            ],
            "proposed": list(self.proposed),
            "skipped": dict(self.skipped),
            "missing": dict(self.missing),
        }


# -- grounding ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Finding:
    kind: str
    field: str
    item: int | None
    text: str
    detail: str
    start: int
    end: int

    @property
    def key(self) -> tuple[str, str, int | None, str]:
        return (self.kind, self.field, self.item, self.text)


def _check_texts(
    *,
    language: str,
    headline: str,
    body: str,
    takeaway: str,
    highlights: list[str],
    source: PaperInput,
    names: KnownNames,
) -> list[_Finding]:
    """Run the grounding checks on each field of one language's text."""
    fields: list[tuple[str, int | None, str]] = [
        (SummaryFlag.Field.HEADLINE, None, headline),
        (SummaryFlag.Field.BODY, None, body),
        (SummaryFlag.Field.TAKEAWAY, None, takeaway),
        *[(SummaryFlag.Field.NUMBERS, i, text) for i, text in enumerate(highlights)],
    ]
    findings: list[_Finding] = []
    for name, item, text in fields:
        if not text:
            continue
        for flag in check_draft(
            text,
            language=language,
            paper=source,
            known_organizations=names.organizations,
            known_venues=names.venues,
        ):
            findings.append(
                _Finding(
                    kind=flag.kind,
                    field=name,
                    item=item,
                    text=flag.text[:FLAG_TEXT_MAX_LENGTH],
                    detail=flag.detail[:FLAG_DETAIL_MAX_LENGTH],
                    start=flag.start,
                    end=flag.end,
                )
            )
    return findings


def _flag_rows(summary: Summary, findings: list[_Finding]) -> list[SummaryFlag]:
    return [
        SummaryFlag(
            summary=summary,
            kind=f.kind,
            field=f.field,
            item=f.item,
            text=f.text,
            detail=f.detail,
            start=f.start,
            end=f.end,
        )
        for f in findings
    ]


def summary_recheck(
    *,
    summary: Summary,
    user=None,
    source: PaperInput | None = None,
    names: KnownNames | None = None,
    now=None,
) -> list[SummaryFlag]:
    """Check the summary's current text again: open flags that no longer apply are resolved
    FIXED, new findings are added (a finding an editor already confirmed stays confirmed).
    Returns the open flags."""
    now = now or timezone.now()
    source = source or paper_input(paper=summary.paper)
    findings = _check_texts(
        language=summary.language,
        headline=summary.headline,
        body=summary.body,
        takeaway=summary.takeaway,
        highlights=list(summary.highlights),
        source=source,
        names=names or known_names(),
    )
    by_key = {f.key: f for f in findings}
    open_flags = list(summary.flags.filter(resolution=SummaryFlag.Resolution.OPEN))
    confirmed = {
        (f.kind, f.field, f.item, f.text)
        for f in summary.flags.filter(resolution=SummaryFlag.Resolution.CONFIRMED)
    }
    gone = [f.pk for f in open_flags if (f.kind, f.field, f.item, f.text) not in by_key]
    if gone:
        SummaryFlag.objects.filter(pk__in=gone).update(
            resolution=SummaryFlag.Resolution.FIXED, resolved_by=user, resolved_at=now
        )
    still = {(f.kind, f.field, f.item, f.text) for f in open_flags}
    new = [f for f in findings if f.key not in still and f.key not in confirmed]
    SummaryFlag.objects.bulk_create(_flag_rows(summary, new))
    return list(summary.flags.filter(resolution=SummaryFlag.Resolution.OPEN))


# -- drafting -----------------------------------------------------------------------------


def _needs_draft(
    summary: Summary | None, proposed_digests: set[str], source_digest: str, *, redraft: bool
) -> str | None:
    """Why this language should be left as it is, or None when it is to be drafted."""
    if summary is None:
        return None
    if summary.provenance == Summary.Provenance.EDITOR:
        return EDITOR_WROTE
    if redraft:
        return None
    if summary.source_digest == source_digest:
        return UNCHANGED
    if source_digest in proposed_digests:
        return PROPOSED_ALREADY
    return None


def version_of(summary: Summary, reason: str, user=None) -> SummaryVersion:
    """The summary's text and provenance as it stands, kept as a version (not saved)."""
    kept = {name: getattr(summary, name) for name in SummaryVersion.KEPT_FIELDS}
    kept["highlights"] = list(summary.highlights)  # a copy: the live list may change after
    return SummaryVersion(summary=summary, reason=reason, created_by=user, **kept)


def _clean_language(text: LanguageDraft) -> dict:
    return {
        "headline": text.headline.strip(),
        "body": text.summary.strip(),
        "takeaway": text.takeaway.strip(),
        "highlights": [n.strip() for n in text.numbers if n and n.strip()],
    }


def _problem(values: dict, paper: Paper, language: str) -> str | None:
    """Why a drafted text cannot be stored, or None."""
    # A draft may leave the takeaway (a principle) to the editor, never the summary.
    if not values["body"]:
        return "the draft has no summary"
    if values["takeaway"] and values["takeaway"] not in values["body"]:
        return "the takeaway does not occur inside the summary"
    try:
        Summary(paper=paper, language=language, **values).full_clean(
            exclude=["paper"], validate_unique=False, validate_constraints=False
        )
    except ValidationError as error:
        fields = "; ".join(f"{k}: {' '.join(v)}" for k, v in error.message_dict.items())
        return f"the draft does not fit: {fields}"
    return None


def paper_draft(
    *,
    paper: Paper,
    track: Track | None = None,
    drafter: Drafter | None = None,
    redraft: bool = False,
    public: bool = False,
    now=None,
    names: KnownNames | None = None,
    glossary: tuple[GlossaryEntry, ...] | None = None,
) -> DraftOutcome:
    """Draft ``paper``'s texts in every language the drafter writes and store them.

    - An editor's text (provenance EDITOR) is never touched.
    - Without ``redraft``, a machine text drafted from the same source is left alone (and
      the drafter is not even asked when every language is up to date).
    - A replaced machine text is kept as a REPLACED_BY_REDRAFT version; with ``public``
      (readers already see the paper) the live text stays and the draft is stored as a
      PROPOSED version for an editor to apply.
    - Each written text is checked against the source; its flags replace the open flags of
      the text it replaced.
    - One ``DraftRun`` records what was written, what is missing and why, notes and tokens.

    ``DraftingStopped`` from the drafter (e.g. the token budget is spent) is recorded on the
    run and propagates, so a batch stops. Runs a few queries per language; the drafter's
    request (which may be slow) is made outside the transaction.
    """
    drafter = drafter or get_drafter()
    started = now or timezone.now()
    source = paper_input(paper=paper, track=track, glossary=glossary)
    source_digest = digest(source.source_text)
    outcome = DraftOutcome(paper_id=paper.pk, canonical_id=paper.canonical_id, drafter=drafter.name)

    existing = {s.language: s for s in paper.summaries.all()}
    proposed = _proposed_digests(existing.values())
    reasons = {
        code: _needs_draft(
            existing.get(code), proposed.get(code, set()), source_digest, redraft=redraft
        )
        for code in LANGUAGE_CODES
    }
    run = DraftRun(
        paper=paper,
        label=str(paper)[: DraftRun._meta.get_field("label").max_length],
        drafter=drafter.name,
        drafter_version=getattr(drafter, "version", ""),
        started_at=started,
    )
    if all(reasons.values()):
        outcome.skipped = dict(reasons)
        run.skipped = outcome.skipped
        run.finished_at = now or timezone.now()
        run.save()
        outcome.run_id = run.pk
        return outcome

    try:
        draft = drafter.draft_paper(source)
    except DraftingStopped as stopped:
        run.error = str(stopped) or "drafting stopped"
        run.finished_at = now or timezone.now()
        run.missing = {code: run.error for code, why in reasons.items() if why is None}
        run.save()
        raise

    with transaction.atomic():
        _store_draft(
            paper=paper,
            draft=draft,
            source=source,
            source_digest=source_digest,
            redraft=redraft,
            public=public,
            now=started,
            names=names or known_names(),
            outcome=outcome,
        )
        run.drafter = draft.drafter or drafter.name
        run.drafter_version = draft.drafter_version
        run.model_name = draft.model
        run.prompt_version = draft.prompt_version
        run.languages = outcome.languages + outcome.proposed
        run.skipped = outcome.skipped
        run.missing = outcome.missing
        run.notes = list(draft.notes)
        run.prompt_tokens = sum(u.prompt_tokens for u in draft.usage)
        run.completion_tokens = sum(u.completion_tokens for u in draft.usage)
        run.finished_at = now or timezone.now()
        run.save()
    outcome.drafter = run.drafter
    outcome.run_id = run.pk
    return outcome


def _proposed_digests(summaries) -> dict[str, set[str]]:
    summaries = list(summaries)
    if not summaries:
        return {}
    rows = SummaryVersion.objects.filter(
        summary__in=summaries, reason=SummaryVersion.Reason.PROPOSED
    ).values_list("summary__language", "source_digest")
    found: dict[str, set[str]] = {}
    for language, value in rows:
        found.setdefault(language, set()).add(value)
    return found


def _store_draft(
    *,
    paper: Paper,
    draft: PaperDraft,
    source: PaperInput,
    source_digest: str,
    redraft: bool,
    public: bool,
    now,
    names: KnownNames,
    outcome: DraftOutcome,
) -> None:
    # Read again under a lock: an editor may have saved while the drafter was working.
    current = {s.language: s for s in Summary.objects.select_for_update().filter(paper=paper)}
    proposed = _proposed_digests(current.values())
    provenance = {
        "drafter": (draft.drafter or "")[:60],
        "drafter_version": (draft.drafter_version or "")[:30],
        "model_name": (draft.model or "")[:100],
        "prompt_version": (draft.prompt_version or "")[:30],
        "source_digest": source_digest,
        "drafted_at": now,
    }
    for code in LANGUAGE_CODES:
        summary = current.get(code)
        why = _needs_draft(summary, proposed.get(code, set()), source_digest, redraft=redraft)
        if why:
            outcome.skipped[code] = why
            continue
        text = draft.languages.get(code)
        if text is None:
            reason = draft.missing.get(code) or "the drafter did not write it"
            if summary is None:
                outcome.missing[code] = reason
            else:
                draft.notes.append(f"{code}: not re-drafted ({reason}); the previous text stays")
            continue
        values = _clean_language(text)
        problem = _problem(values, paper, code)
        if problem:
            if summary is None:
                outcome.missing[code] = problem
            else:
                draft.notes.append(f"{code}: not re-drafted ({problem}); the previous text stays")
            continue
        if summary is not None and public:
            version = SummaryVersion(
                summary=summary,
                **values,
                provenance=Summary.Provenance.MACHINE,
                **{**provenance, **_written_by(draft, code)},
                reason=SummaryVersion.Reason.PROPOSED,
            )
            version.save()
            outcome.proposed.append(code)
            continue
        if summary is not None:
            version_of(summary, SummaryVersion.Reason.REPLACED_BY_REDRAFT).save()
            # The old text's open flags go with it; resolved ones stay as history.
            summary.flags.filter(resolution=SummaryFlag.Resolution.OPEN).delete()
        else:
            summary = Summary(paper=paper, language=code)
        for name, value in {**values, **provenance, **_written_by(draft, code)}.items():
            setattr(summary, name, value)
        summary.provenance = Summary.Provenance.MACHINE
        summary.reviewed_by = summary.reviewed_at = None
        summary.full_clean()
        summary.save()
        findings = _check_texts(language=code, **texts_of(summary), source=source, names=names)
        SummaryFlag.objects.bulk_create(_flag_rows(summary, findings))
        outcome.languages.append(code)
        outcome.flags += [(code, f.kind, f.text) for f in findings]
    _set_short_name(paper, draft.short_name)


def _written_by(draft: PaperDraft, language: str) -> dict:
    """The provenance of a language another drafter wrote (the LLM drafter's fallback)."""
    if language not in draft.written_by:
        return {}
    drafter, version, model, prompt = draft.written_by[language]
    return {
        "drafter": drafter[:60],
        "drafter_version": version[:30],
        "model_name": model[:100],
        "prompt_version": prompt[:30],
    }


def texts_of(summary: Summary) -> dict:
    """The summary's text fields, as the checks, the edits and the audit compare them."""
    return {
        "headline": summary.headline,
        "body": summary.body,
        "takeaway": summary.takeaway,
        "highlights": list(summary.highlights),
    }


def _set_short_name(paper: Paper, short_name: str | None) -> None:
    """The draft's short name, when the paper has none and no editor cleared or set it."""
    short_name = (short_name or "").strip()
    if not short_name or paper.short_name or "short_name" in (paper.edited_fields or []):
        return
    if len(short_name) > SHORT_NAME_MAX_LENGTH:
        return
    paper.short_name = short_name
    Paper.objects.filter(pk=paper.pk, short_name="").update(short_name=short_name)


@transaction.atomic
def glossary_seed(*, track: Track) -> int:
    """Create the track's seed glossary terms that are not there yet (terms editors
    changed are left as they are). Returns how many were created."""
    have = set(track.glossary.values_list("en", flat=True))
    rows = [
        GlossaryTerm(track=track, **term)
        for term in glossary_seed_terms(track.slug)
        if term["en"] not in have
    ]
    for row in rows:
        row.full_clean(validate_unique=False)
    GlossaryTerm.objects.bulk_create(rows)
    return len(rows)
