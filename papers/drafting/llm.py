"""The LLM drafter: both languages of a paper's texts, and a daily's intro, from any
OpenAI-compatible chat-completions endpoint through the official ``openai`` client.

Each request asks for one JSON object by strict structured output and is stored as an
``LLMRequest`` with its token usage. The answer is checked per language (``validate``); a
language with a problem is asked for once more with the reason, then falls back to the
offline drafter (English only) or stays missing, with the reason in the draft. When the
model does not answer (timeouts, 429s and 5xx after the client's retries) nothing is written
and every language is missing with the reason, so nothing stored is replaced. Before each
request the day's token budget is checked; when it is spent, ``DraftingStopped`` says so.
"""

from __future__ import annotations

from collections.abc import Callable

import openai
from django.conf import settings

from papers.drafting.base import (
    Drafter,
    DraftingStopped,
    IntroDraft,
    IntroInput,
    PaperDraft,
    PaperInput,
    Usage,
)
from papers.drafting.validate import (
    LANGUAGES,
    Answer,
    IntroAnswer,
    PaperAnswer,
    intro_answer_validate,
    paper_answer_validate,
)
from papers.llm_client import (
    Completion,
    LLMMalformed,
    LLMUnavailable,
    llm_complete,
    make_client,
)
from papers.models import LLMRequest, Paper

NAME = "llm"
VERSION = "1"
# Bump when a prompt or a schema changes: it is stored with every machine draft.
PROMPT_VERSION = "llm-1"

PAPER_SCHEMA_NAME = "paper_summary"
INTRO_SCHEMA_NAME = "daily_intro"

_LANGUAGE_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["headline", "summary", "takeaway", "numbers"],
    "properties": {
        "headline": {"type": "string"},
        "summary": {"type": "string"},
        "takeaway": {"type": "string"},
        "numbers": {"type": "array", "items": {"type": "string"}},
    },
}
PAPER_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["short_name", "en", "zh"],
    "properties": {
        "short_name": {"type": ["string", "null"]},
        "en": _LANGUAGE_SCHEMA,
        "zh": _LANGUAGE_SCHEMA,
    },
}
INTRO_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["en", "zh"],
    "properties": {"en": {"type": "string"}, "zh": {"type": "string"}},
}

PAPER_SYSTEM = """\
You write the entries of Paper Daily, a daily digest of research papers for engineers, in \
English and in Chinese. For the paper you are given, write in each language a headline, a \
summary, its takeaway and its headline numbers, and give the system's short name.

The summary makes four moves, in this order:
1. The pain, in one or two sentences, concrete and from the reader's world.
2. The idea and how it works, in plain words, naming the mechanism's parts.
3. The takeaway: one short sentence that states the principle. Write it inside the summary, \
word for word as you give it in "takeaway".
4. The evidence: the headline numbers with their conditions (at which context length, on \
which hardware, under which load) and what stayed unchanged (accuracy, recall).
Name the organisation when the source names one. Explain in a few words any metric a \
newcomer would not know. English: 80–130 words. Chinese: 150–260 Chinese characters.

Each language is written natively for its readers, never translated sentence by sentence \
from the other; both carry the same facts and numbers. English avoids calques. Chinese is \
natural technical Chinese, keeps English terms where engineers keep them (KV cache, MoE, \
SGLang), uses Chinese punctuation (，。：；“”) and half-width digits (2.38×, 73.04%).

Numbers: use only numbers that occur in the title, abstract or comment given, with their \
conditions; never compute, round, convert or invent one. When the source has no numbers, \
write "numbers": [] and say what the evidence is in words. Never name an organisation or a \
venue the source does not name.

The headline is a few words (English: under 12 words; Chinese: under 20 characters) that \
state what is new, not the paper's title. "numbers" lists at most four headline figures, \
each with its condition, in that language. "short_name" is the system's name as the source \
spells it (HiLO, C2KV), or null when it has none.

Answer with one JSON object following the schema, nothing else."""

INTRO_SYSTEM = """\
You write the intro of one day's issue of Paper Daily, a daily digest of research papers \
for engineers, in English and in Chinese. You are given the day's entries (titles and \
takeaways, the lead story first) and how many deep dives there are.

The intro is three to five sentences in each language: how many papers and deep dives the \
issue has, the common thread of the day, one line on two or three standout items, and who \
should read what first ("serving teams: start with …"). Write each language natively, never \
translated sentence by sentence; Chinese uses Chinese punctuation (，。：“”) and half-width \
digits. Use no number that is not a count of the day's entries or deep dives, and name no \
organisation the entries do not name.

Answer with one JSON object {"en": "...", "zh": "..."}, nothing else."""

FOLLOW_UP = (
    "Your answer cannot be used as it is: {reasons}. Answer again with the whole JSON "
    "object, every language, fixing these problems and following the instructions."
)


def _glossary_lines(paper: PaperInput) -> str:
    lines = []
    for term in paper.glossary:
        if not term.zh:
            continue
        line = f"- {term.en} → {term.zh[0]}"
        if len(term.zh) > 1:
            line += f" (also accepted: {', '.join(term.zh[1:])})"
        if term.avoid:
            line += f"; never: {', '.join(term.avoid)}"
        lines.append(line)
    return "\n".join(lines)


def paper_system_prompt(paper: PaperInput) -> str:
    glossary = _glossary_lines(paper)
    if not glossary:
        return PAPER_SYSTEM
    track = f" of the {paper.track_name} track" if paper.track_name else ""
    return (
        f"{PAPER_SYSTEM}\n\nThe glossary{track}: in Chinese, render each English term as "
        f"given (English term → preferred Chinese rendering).\n{glossary}"
    )


def paper_user_message(paper: PaperInput) -> str:
    """The source, verbatim: the title, the abstract and the comment are not reworded."""
    parts = [f"Title: {paper.title}"]
    if paper.short_name:
        parts.append(f"Known short name: {paper.short_name}")
    if paper.organizations:
        parts.append(f"Organisations: {', '.join(paper.organizations)}")
    if paper.venue:
        parts.append(f"Venue: {paper.venue}")
    if paper.track_name:
        parts.append(f"Track: {paper.track_name}")
    parts.append(f"Abstract:\n{paper.abstract}")
    if paper.comment:
        parts.append(f"Comment: {paper.comment}")
    return "\n\n".join(parts)


def intro_user_message(intro: IntroInput) -> str:
    lines = [
        f"Track: {intro.track_name_en} / {intro.track_name_zh}",
        f"Date: {intro.date}",
        f"Papers: {len(intro.entries)}; deep dives: {intro.deep_dives}",
        "",
        "Entries:",
    ]
    for n, entry in enumerate(intro.entries, 1):
        marks = [m for m, on in (("lead", entry.is_lead), ("deep dive", entry.has_deep_dive)) if on]
        name = f"{entry.short_name}: " if entry.short_name else ""
        mark = f" [{', '.join(marks)}]" if marks else ""
        lines.append(f"{n}. {name}{entry.title}{mark}\n   Takeaway: {entry.takeaway}")
    return "\n".join(lines)


def _reasons(problems: dict[str, str]) -> str:
    return "; ".join(f"{language}: {problems[language]}" for language in sorted(problems))


class LLMDrafter:
    name = NAME
    version = VERSION

    def __init__(
        self,
        *,
        model: str,
        client: openai.OpenAI | None = None,
        fallback: Drafter | None = None,
        token_budget: int = 0,
    ) -> None:
        self.model = model
        self.client = client or make_client()
        self._fallback = fallback
        self.token_budget = token_budget

    @classmethod
    def from_settings(cls) -> LLMDrafter:
        return cls(
            model=settings.LLM_DRAFT_MODEL or settings.LLM_MODEL,
            client=make_client(),
            token_budget=settings.LLM_DAILY_TOKEN_BUDGET,
        )

    @property
    def fallback(self) -> Drafter:
        if self._fallback is None:
            from papers.drafting.offline import OfflineDrafter

            self._fallback = OfflineDrafter()
        return self._fallback

    # -- requests --------------------------------------------------------------------------

    def _budget_problem(self) -> str | None:
        """Why no further request may be made today, or None. Runs one query."""
        if self.token_budget <= 0:
            return None
        from papers.drafting.budget import llm_tokens_used_today

        used = llm_tokens_used_today()
        if used >= self.token_budget:
            return f"the daily token budget of {self.token_budget} tokens is spent (used {used})"
        return None

    def _ask(
        self,
        messages: list[dict],
        *,
        schema_name: str,
        schema: dict,
        purpose: str,
        paper_id: int | None,
        usage: list[Usage],
    ) -> Completion:
        completion = llm_complete(
            client=self.client,
            model=self.model,
            messages=messages,
            schema_name=schema_name,
            schema=schema,
            purpose=purpose,
            paper_id=paper_id,
        )
        usage.append(Usage(completion.prompt_tokens, completion.completion_tokens))
        return completion

    def _converse(
        self,
        messages: list[dict],
        ask: Callable[[list[dict]], tuple[Completion | None, Answer]],
        notes: list[str],
    ) -> tuple[dict[str, object], dict[str, str], list[Answer]]:
        """One request, and one more with the reasons when a language has a problem.

        Returns what is usable per language, why each other language is not, and the
        answers. Raises ``LLMUnavailable`` when the first request got no answer.
        """
        completion, answer = ask(messages)
        answers = [answer]
        good = dict(answer.usable)
        problems = dict(answer.problems)
        if not problems:
            return good, {}, answers
        notes.append(f"asked again: {_reasons(problems)}")
        stopped = self._budget_problem()
        if stopped:
            return good, dict.fromkeys(problems, stopped), answers
        follow_up = [
            {"role": "assistant", "content": completion.content if completion else ""},
            {"role": "user", "content": FOLLOW_UP.format(reasons=_reasons(problems))},
        ]
        try:
            _completion, again = ask([*messages, *follow_up])
        except LLMUnavailable as exc:
            return good, dict.fromkeys(problems, f"the model did not answer: {exc}"), answers
        answers.append(again)
        reasons = {}
        for language, first_problem in problems.items():
            if language in again.usable:
                good[language] = again.usable[language]
            else:
                problem = again.problems.get(language, first_problem)
                reasons[language] = f"the model's answer was rejected: {problem}"
        return good, reasons, answers

    def _asker(self, *, schema_name, schema, purpose, paper_id, usage, validate, answer_type):
        """One request of a conversation: the answer validated, a rejected one marked so on
        its LLMRequest row; a malformed answer is a problem in every language."""

        def ask(messages: list[dict]) -> tuple[Completion | None, object]:
            try:
                completion = self._ask(
                    messages,
                    schema_name=schema_name,
                    schema=schema,
                    purpose=purpose,
                    paper_id=paper_id,
                    usage=usage,
                )
            except LLMMalformed as exc:
                return None, answer_type(problems=dict.fromkeys(LANGUAGES, str(exc)))
            answer = validate(completion.content)
            if answer.problems:
                completion.reject(_reasons(answer.problems))
            return completion, answer

        return ask

    # -- papers ----------------------------------------------------------------------------

    def draft_paper(self, paper: PaperInput) -> PaperDraft:
        """Both languages of one paper, in one request (and one more when a language fails).

        Raises ``DraftingStopped`` before the first request when the day's budget is spent.
        Runs a few queries (the paper's id, the budget, one INSERT per request).
        """
        stopped = self._budget_problem()
        if stopped:
            raise DraftingStopped(stopped)
        draft = PaperDraft(
            drafter=NAME, drafter_version=VERSION, model=self.model, prompt_version=PROMPT_VERSION
        )
        paper_id = (
            Paper.objects.filter(canonical_id=paper.canonical_id)
            .values_list("pk", flat=True)
            .first()
        )

        ask = self._asker(
            schema_name=PAPER_SCHEMA_NAME,
            schema=PAPER_SCHEMA,
            purpose=LLMRequest.Purpose.DRAFT_PAPER,
            paper_id=paper_id,
            usage=draft.usage,
            validate=paper_answer_validate,
            answer_type=PaperAnswer,
        )

        messages = [
            {"role": "system", "content": paper_system_prompt(paper)},
            {"role": "user", "content": paper_user_message(paper)},
        ]
        try:
            good, reasons, answers = self._converse(messages, ask, draft.notes)
        except LLMUnavailable as exc:
            draft.missing = dict.fromkeys(LANGUAGES, f"the model did not answer: {exc}")
            return draft
        draft.languages.update(good)
        for answer in answers:
            draft.notes += answer.notes
            draft.short_name = draft.short_name or answer.short_name
        if reasons:
            offline = self.fallback.draft_paper(paper)
            self._fall_back(offline.languages, offline, draft.languages, draft, reasons)
            draft.short_name = draft.short_name or offline.short_name
        return draft

    @staticmethod
    def _fall_back(offered, offline, into: dict, draft, reasons: dict[str, str]) -> None:
        """Languages the model did not give: the offline drafter's where it writes them,
        else missing; each with the model's reason."""
        for language, reason in reasons.items():
            if offered.get(language):
                into[language] = offered[language]
                if hasattr(draft, "written_by"):  # paper drafts record it per language
                    draft.written_by[language] = (
                        offline.drafter,
                        offline.drafter_version,
                        offline.model,
                        offline.prompt_version,
                    )
                draft.notes.append(
                    f"{language}: {reason}; drafted by {offline.drafter} "
                    f"{offline.drafter_version} instead"
                )
            else:
                draft.missing[language] = reason

    # -- intros ----------------------------------------------------------------------------

    def draft_intro(self, intro: IntroInput) -> IntroDraft:
        """A daily's intro in both languages (one request, one more when a language fails).

        Raises ``DraftingStopped`` before the first request when the day's budget is spent.
        """
        stopped = self._budget_problem()
        if stopped:
            raise DraftingStopped(stopped)
        draft = IntroDraft(
            drafter=NAME, drafter_version=VERSION, model=self.model, prompt_version=PROMPT_VERSION
        )

        ask = self._asker(
            schema_name=INTRO_SCHEMA_NAME,
            schema=INTRO_SCHEMA,
            purpose=LLMRequest.Purpose.DRAFT_INTRO,
            paper_id=None,
            usage=draft.usage,
            validate=intro_answer_validate,
            answer_type=IntroAnswer,
        )

        messages = [
            {"role": "system", "content": INTRO_SYSTEM},
            {"role": "user", "content": intro_user_message(intro)},
        ]
        try:
            good, reasons, _answers = self._converse(messages, ask, draft.notes)
        except LLMUnavailable as exc:
            draft.missing = dict.fromkeys(LANGUAGES, f"the model did not answer: {exc}")
            return draft
        draft.texts.update(good)
        if reasons:
            offline = self.fallback.draft_intro(intro)
            self._fall_back(offline.texts, offline, draft.texts, draft, reasons)
        return draft
