"""The publishing checklist: what keeps a daily from going out.

One function, ``daily_publishing_blockers``, answers it for every publish path (publish now,
schedule, the scheduler, the command, the admin's buttons), so they can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Prefetch
from django.utils.translation import gettext as _

from dailies.models import Daily, DailyEntry
from papers.languages import LANGUAGE_CODES, Language
from papers.models import Paper, Summary, SummaryFlag

LANGUAGE_NAMES = {Language.EN: "English", Language.ZH: "Chinese"}
ENTRY_NAME_LENGTH = 60  # a title standing in for a missing short name, cut at a word


def entry_name(paper: Paper) -> str:
    """How the checklist and the desk's history name a paper: its short name, else its title
    cut at a word boundary (never mid-word)."""
    # Imported here: the template tags import the demo, which imports the services.
    from dailies.templatetags.digest import clean_truncate

    return paper.short_name or clean_truncate(paper.title, ENTRY_NAME_LENGTH)


@dataclass(frozen=True)
class Blocker:
    """One reason a daily cannot be published; ``entry_id`` / ``language`` say where."""

    code: str
    message: str
    entry_id: int | None = None
    paper_id: int | None = None
    language: str | None = None

    def as_dict(self) -> dict:
        return {
            "code": self.code,
            "message": self.message,
            "entry": self.entry_id,
            "paper": self.paper_id,
            "language": self.language,
        }


def _language_name(language: str) -> str:
    return _(LANGUAGE_NAMES.get(language, language))


def _entries(daily: Daily) -> list[DailyEntry]:
    """The entries with their summaries and open flags (three queries in all)."""
    open_flags = SummaryFlag.objects.filter(resolution=SummaryFlag.Resolution.OPEN)
    summaries = Summary.objects.prefetch_related(Prefetch("flags", queryset=open_flags))
    return list(
        daily.entries.select_related("paper")
        .prefetch_related(Prefetch("paper__summaries", queryset=summaries))
        .order_by("position")
    )


def daily_publishing_blockers(*, daily: Daily) -> list[Blocker]:
    """Every reason ``daily`` may not be published yet, in the order an editor fixes them.

    Runs a few queries; an empty list means it may go out."""
    blockers: list[Blocker] = []
    entries = _entries(daily)
    # An editor's recorded choice to publish in English only: nothing is asked in Chinese.
    languages = [Language.EN] if daily.english_only_at else list(LANGUAGE_CODES)
    if not entries:
        blockers.append(Blocker("no-entries", _("The daily has no entries.")))
    leads = sum(1 for e in entries if e.is_lead)
    if entries and leads != 1:
        blockers.append(
            Blocker(
                "lead",
                _("The daily needs exactly one lead story (it has %(n)d).") % {"n": leads},
            )
        )
    for language in languages:
        if not getattr(daily, f"intro_{language}").strip():
            blockers.append(
                Blocker(
                    "intro-missing",
                    _("The intro is missing in %(language)s.")
                    % {"language": _language_name(language)},
                    language=language,
                )
            )
    for flag in daily.intro_flags or []:
        if flag.get("language") not in languages:
            continue
        blockers.append(
            Blocker(
                "intro-flag",
                _("The %(language)s intro has an unconfirmed %(kind)s: “%(text)s”.")
                % {
                    "language": _language_name(flag.get("language", "")),
                    "kind": flag.get("kind", "flag"),
                    "text": flag.get("text", ""),
                },
                language=flag.get("language"),
            )
        )
    for entry in entries:
        name = entry_name(entry.paper)
        by_language = {s.language: s for s in entry.paper.summaries.all()}
        for language in languages:
            summary = by_language.get(language)
            if summary is None and language not in (entry.accepted_untranslated or []):
                message = _(
                    "#%(position)d %(name)s has no %(language)s summary "
                    "(write one, or accept “not yet translated”)."
                )
                blockers.append(_entry_blocker("summary-missing", message, entry, name, language))
            if summary is None:
                continue
            if (
                daily.track.require_review
                and summary.provenance == Summary.Provenance.MACHINE
                and summary.reviewed_at is None
            ):
                message = _(
                    "#%(position)d %(name)s: the %(language)s summary is a machine "
                    "draft no editor has reviewed (this track requires review)."
                )
                blockers.append(_entry_blocker("unreviewed", message, entry, name, language))
            for flag in summary.flags.all():
                message = _(
                    "#%(position)d %(name)s, %(language)s %(field)s: “%(text)s” — "
                    "%(detail)s Fix the text or confirm it."
                )
                field = flag.field or _("summary")
                blockers.append(
                    _entry_blocker(
                        "flag",
                        message,
                        entry,
                        name,
                        language,
                        field=field,
                        text=flag.text,
                        detail=flag.detail,
                    )
                )
    return blockers


def _entry_blocker(
    code: str, message: str, entry: DailyEntry, name: str, language: str, **params: str
) -> Blocker:
    """A blocker about an entry's text in ``language``: ``message`` may name the entry's
    position, its name and the language (``%(position)d``, ``%(name)s``, ``%(language)s``)."""
    values = {"position": entry.position, "name": name, "language": _language_name(language)}
    return Blocker(
        code,
        message % {**values, **params},
        entry_id=entry.pk,
        paper_id=entry.paper_id,
        language=language,
    )
