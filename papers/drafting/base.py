"""What a drafter is given and what it gives back. Both drafters (``offline``, ``llm``) take
and return these; the drafting service stores them. Nothing here touches the database."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class GlossaryEntry:
    """One term of a track's glossary: the English term and its accepted Chinese renderings
    (the first preferred), plus renderings known to be wrong."""

    en: str
    zh: tuple[str, ...]
    avoid: tuple[str, ...] = ()


@dataclass(frozen=True)
class PaperInput:
    """The source a paper's texts are drafted from (title, abstract, comments: verbatim)."""

    canonical_id: str
    title: str
    abstract: str
    comment: str = ""
    short_name: str = ""
    organizations: tuple[str, ...] = ()
    venue: str = ""
    track_name: str = ""
    glossary: tuple[GlossaryEntry, ...] = ()

    @property
    def source_text(self) -> str:
        """The text every number and name of a draft must come from."""
        return "\n".join(part for part in (self.title, self.abstract, self.comment) if part)


@dataclass(frozen=True)
class LanguageDraft:
    headline: str
    summary: str
    takeaway: str
    numbers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Usage:
    """Token usage of one request to a model."""

    prompt_tokens: int
    completion_tokens: int


@dataclass
class PaperDraft:
    """A drafter's answer for one paper. ``languages`` holds what it wrote; ``missing`` says,
    per language it did not write, why (the service stores the reason)."""

    drafter: str
    drafter_version: str
    model: str = ""
    prompt_version: str = ""
    short_name: str | None = None
    languages: dict[str, LanguageDraft] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    usage: list[Usage] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # A language another drafter wrote (e.g. the offline fallback of the LLM drafter):
    # language → (drafter, version, model, prompt version), stored as that text's provenance.
    written_by: dict[str, tuple[str, str, str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class IntroEntry:
    title: str
    takeaway: str
    short_name: str = ""
    is_lead: bool = False
    has_deep_dive: bool = False
    organizations: tuple[str, ...] = ()  # short labels (Alibaba, NVIDIA)


@dataclass(frozen=True)
class IntroInput:
    track_name_en: str
    track_name_zh: str
    date: str
    entries: tuple[IntroEntry, ...]
    deep_dives: int = 0
    # "day": one daily's intro (``date`` is its day); "week": a track's weekly roundup
    # (``date`` is its ISO week, 2026-W44), whose entries are the week's picks (``is_lead``)
    # then its highest scores, gathered from ``dailies`` dailies.
    period: str = "day"
    dailies: int = 1


@dataclass
class IntroDraft:
    drafter: str
    drafter_version: str
    model: str = ""
    prompt_version: str = ""
    texts: dict[str, str] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    usage: list[Usage] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class DraftingStopped(Exception):
    """Drafting cannot go on (e.g. the day's token budget is spent); the message says why."""


class Drafter(Protocol):
    name: str
    version: str

    def draft_paper(self, paper: PaperInput) -> PaperDraft: ...

    def draft_intro(self, intro: IntroInput) -> IntroDraft: ...
