"""The LLM drafter: both languages of a paper's texts, and a daily's intro, from any
OpenAI-compatible chat-completions endpoint through the official ``openai`` client.

Each language of a paper is drafted from the source in its own request, with instructions
in that language, two or three entries our editors wrote as examples of the house voice
(chosen by topic), and for Chinese only the glossary terms the source uses: the Chinese is
written, not translated from the English. Each request asks for one JSON object (structured
output, see ``papers.llm_client``) and is stored as an ``LLMRequest`` with its token usage.
The answer is checked (``validate``); a language with a problem is asked for once more with
the reason, then falls back to the offline drafter (English only) or stays missing, with the
reason in the draft. When the model does not answer (timeouts, 429s and 5xx after the
client's retries) nothing more is asked and the languages not drafted are missing with the
reason, so nothing stored is replaced. Before a paper's first request and before a follow-up
the day's token budget is checked; when it is spent, ``DraftingStopped`` says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, TypeVar

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
from papers.drafting.grounding import glossary_term_pattern
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
    Exchange,
    LLMMalformed,
    LLMUnavailable,
    llm_record,
    llm_send,
    make_client,
)
from papers.models import LLMRequest, Paper, Summary

if TYPE_CHECKING:
    import openai

T = TypeVar("T")

NAME = "llm"
VERSION = "1"
# Bump when a prompt or a schema changes: it is stored with every machine draft.
PROMPT_VERSION = "llm-3"
# Editor-written entries shown per request as examples of the house voice, chosen by topic
# among the most recent FEW_SHOT_POOL editor texts.
FEW_SHOT_EXAMPLES = 3
FEW_SHOT_POOL = 300

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
PAPER_SCHEMAS = {
    language: {
        "type": "object",
        "additionalProperties": False,
        "required": ["short_name", language],
        "properties": {"short_name": {"type": ["string", "null"]}, language: _LANGUAGE_SCHEMA},
    }
    for language in LANGUAGES
}
INTRO_SCHEMAS = {
    language: {
        "type": "object",
        "additionalProperties": False,
        "required": [language],
        "properties": {language: {"type": "string"}},
    }
    for language in LANGUAGES
}

PAPER_SYSTEM_EN = """\
You write the English entries of Paper Daily, a daily digest of research papers for \
engineers. For the paper you are given, write a headline, a summary, its takeaway and its \
headline numbers, and give the system's short name.

The summary makes four moves, in this order:
1. The pain, in one or two sentences, concrete and from the reader's world.
2. The idea and how it works, in plain words, naming the mechanism's parts.
3. The takeaway: one short sentence that states the principle. Write it inside the summary, \
word for word as you give it in "takeaway".
4. The evidence: the headline numbers with their conditions (at which context length, on \
which hardware, under which load) and what stayed unchanged (accuracy, recall).
Name the organisation when the source names one. Explain in a few words any metric a \
newcomer would not know. 80–130 words, in the third person ("PrefixRoute routes…"), never \
the paper's "we"; natural English that avoids calques.

Numbers: use only numbers that occur in the title, abstract or comment given, each with its \
own metric and conditions; never compute, round, convert or invent one. When the source has \
no numbers, write "numbers": [] and say what the evidence is in words. Never name an \
organisation or a venue the source does not name.

The headline is under 12 words and states what is new, not the paper's title. "numbers" \
lists at most four headline figures, each with its condition. "short_name" is the system's \
name as the source spells it (HiLO, C2KV), or null when it has none.

Answer with one JSON object following the schema ({"short_name": …, "en": {…}}), nothing \
else."""

PAPER_SYSTEM_ZH = """\
你为 Paper Daily 撰写中文条目。Paper Daily 是面向工程师的研究论文日报。根据给出的论文（标题、\
摘要、备注），直接用中文写出标题（headline）、摘要（summary）、要点（takeaway）和关键数字\
（numbers），并给出系统的简称（short_name）。直接从原文用中文写作：不要先想英文再翻译，也不要逐\
句翻译摘要。

摘要按顺序完成四步：
1. 痛点：一两句话，具体，来自读者熟悉的场景。
2. 思路与机制：用平实的话说明做法，点出机制的各个部分。
3. 要点：一句短话点明原则，写进摘要里，与 "takeaway" 一字不差。
4. 证据：关键数字及其条件（多长的上下文、什么硬件、什么负载），以及哪些指标保持不变（准确率、\
召回率）。
原文提到机构时写明机构。新手可能不懂的指标，用几个字解释。长度 150–260 个汉字，用第三人称\
（“PrefixRoute 把……”），不用论文里的“我们”。

用自然的技术中文（显存、降级、近邻检索）；工程师习惯保留英文的术语照写英文（KV cache、MoE、\
SGLang），但不要写整句英文。用中文标点（，。：；“”），数字用半角（2.38×、73.04%）。

数字：只用标题、摘要或备注里出现的数字，各自带着原文的指标和条件；不要计算、四舍五入或编造。\
同一个数可以换成自然的中文数量单位（3 billion 写作 30 亿，12,000 写作 1.2 万，2.38× 写作 \
2.38 倍），此外不做任何换算。原文没有数字时 "numbers" 写 []，用文字说明证据。不要写原文没有\
提到的机构或会议。

标题不超过 20 个字，说明新在哪里，不是论文标题。"numbers" 最多四项，每项带条件。\
"short_name" 是原文写法的系统名（HiLO、C2KV），没有则为 null。

只回答一个符合 schema 的 JSON 对象（{"short_name": …, "zh": {…}}），不要其他内容。"""

PAPER_SYSTEM = {"en": PAPER_SYSTEM_EN, "zh": PAPER_SYSTEM_ZH}
_EXAMPLES_HEADING = {
    "en": "Entries our editors wrote, to show the house voice (never reuse their facts or "
    "numbers):",
    "zh": "编辑写过的条目，供体会文风（不要沿用其中的事实或数字）：",
}
_EXAMPLE_LABELS = {
    "en": ("Paper", "Headline", "Summary", "Takeaway"),
    "zh": ("论文", "标题", "摘要", "要点"),
}

INTRO_SYSTEM_EN = """\
You write the English intro of one day's issue of Paper Daily, a daily digest of research \
papers for engineers. You are given the day's entries (titles and takeaways, the lead story \
first) and how many deep dives there are.

The intro is three to five sentences: how many papers and deep dives the issue has, the \
common thread of the day, one line on two or three standout items, and who should read what \
first ("serving teams: start with …"). Use no number that is not a count of the day's \
entries or deep dives, and name no organisation the entries do not name.

Answer with one JSON object {"en": "..."}, nothing else."""

INTRO_SYSTEM_ZH = """\
你为 Paper Daily 撰写某一天的中文导语。Paper Daily 是面向工程师的研究论文日报。给出的是当天的\
条目（标题和要点，头条在前）以及深度解读的篇数。直接用中文写作，不要先想英文再翻译。

导语三到五句：这一期有几篇论文、几篇深度解读，当天的共同主线，两三个亮点各用一句话，以及谁该先读\
什么（“做推理服务的团队：先看……”）。用中文标点（，。：“”），数字用半角。除了当天条目或深度解读\
的篇数，不要写任何数字；不要写条目没有提到的机构。

只回答一个 JSON 对象 {"zh": "..."}，不要其他内容。"""

WEEK_INTRO_SYSTEM_EN = """\
You write the English intro of a weekly roundup of Paper Daily, a daily digest of research \
papers for engineers: one track's week, gathered from its dailies. You are given the week's \
entries (titles and takeaways: the editors' picks first, marked lead, then the week's highest \
scores) and how many dailies and deep dives the week has.

The intro is three to five sentences: how many papers, dailies and deep dives the roundup has, \
the common thread of the week, one line on two or three standout items, and who should read \
what first ("serving teams: start with …"). Use no number that is not a count of the week's \
entries, dailies or deep dives, and name no organisation the entries do not name.

Answer with one JSON object {"en": "..."}, nothing else."""

WEEK_INTRO_SYSTEM_ZH = """\
你为 Paper Daily 撰写某个赛道一周周报的中文导语。Paper Daily 是面向工程师的研究论文日报，周报汇集\
该赛道一周的日报。给出的是本周的条目（标题和要点：先是编辑精选，标为 lead，再是本周评分最高的论文）\
以及本周日报的期数和深度解读的篇数。直接用中文写作，不要先想英文再翻译。

导语三到五句：这份周报有几篇论文、汇集几期日报、几篇深度解读，本周的共同主线，两三个亮点各用一句\
话，以及谁该先读什么（“做推理服务的团队：先看……”）。用中文标点（，。：“”），数字用半角。除了本周\
条目、日报期数或深度解读的篇数，不要写任何数字；不要写条目没有提到的机构。

只回答一个 JSON 对象 {"zh": "..."}，不要其他内容。"""

# The instructions of an intro's request, by what it introduces (``IntroInput.period``).
INTRO_SYSTEM = {
    "day": {"en": INTRO_SYSTEM_EN, "zh": INTRO_SYSTEM_ZH},
    "week": {"en": WEEK_INTRO_SYSTEM_EN, "zh": WEEK_INTRO_SYSTEM_ZH},
}

FOLLOW_UP = (
    "Your answer cannot be used as it is: {reasons}. Answer again with the whole JSON "
    "object, every language, fixing these problems and following the instructions."
)


def _glossary_lines(paper: PaperInput) -> str:
    """The glossary terms the source uses (a whole glossary invites the model to use them)."""
    lines = []
    source = paper.source_text
    for term in paper.glossary:
        if not term.zh or not glossary_term_pattern(term.en).search(source):
            continue
        line = f"- {term.en} → {term.zh[0]}"
        if len(term.zh) > 1:
            line += f" (also accepted: {', '.join(term.zh[1:])})"
        if term.avoid:
            line += f"; never: {', '.join(term.avoid)}"
        lines.append(line)
    return "\n".join(lines)


@dataclass(frozen=True)
class Example:
    """An entry an editor wrote, as a few-shot example of the house voice."""

    canonical_id: str
    language: str
    title: str
    words: frozenset[str]
    headline: str
    summary: str
    takeaway: str


_TOPIC_WORD_RE = re.compile(r"[a-z][a-z0-9-]{3,}")
_NOT_TOPIC_TEXT = (
    "this that with from which these their than such into over under both each more less "
    "while when where paper propose proposes present presents show shows using used based "
    "existing system systems approach method results"
)
_NOT_TOPIC = frozenset(_NOT_TOPIC_TEXT.split())


def topic_words(text: str) -> frozenset[str]:
    return frozenset(_TOPIC_WORD_RE.findall(text.lower())) - _NOT_TOPIC


def editor_examples() -> list[Example]:
    """The most recent editor-written texts, with their papers' topic words. One query."""
    rows = (
        Summary.objects.filter(provenance=Summary.Provenance.EDITOR)
        .exclude(body="")
        .exclude(takeaway="")
        .select_related("paper")
        .only(
            "language",
            "headline",
            "body",
            "takeaway",
            "paper__canonical_id",
            "paper__title",
            "paper__abstract",
        )
        .order_by("-updated_at", "-pk")[: FEW_SHOT_POOL * len(LANGUAGES)]
    )
    return [
        Example(
            canonical_id=row.paper.canonical_id,
            language=row.language,
            title=row.paper.title,
            words=topic_words(f"{row.paper.title} {row.paper.abstract}"),
            headline=row.headline,
            summary=row.body,
            takeaway=row.takeaway,
        )
        for row in rows
    ]


def choose_examples(paper: PaperInput, language: str, pool: list[Example]) -> list[Example]:
    """Up to FEW_SHOT_EXAMPLES of ``language`` whose papers share the most topic words with
    ``paper`` (never the paper itself); the most recent first among equals."""
    words = topic_words(f"{paper.title} {paper.abstract}")
    candidates = [
        (len(words & example.words), -n, example)
        for n, example in enumerate(pool)
        if example.language == language and example.canonical_id != paper.canonical_id
    ]
    candidates.sort(key=lambda c: (c[0], c[1]), reverse=True)
    return [example for _, _, example in candidates[:FEW_SHOT_EXAMPLES]]


def _examples_text(language: str, examples: list[Example]) -> str:
    paper, headline, summary, takeaway = _EXAMPLE_LABELS[language]
    blocks = [
        f"{paper}: {e.title}\n{headline}: {e.headline}\n{summary}: {e.summary}\n"
        f"{takeaway}: {e.takeaway}"
        for e in examples
    ]
    return _EXAMPLES_HEADING[language] + "\n\n" + "\n\n".join(blocks)


def paper_system_prompt(
    paper: PaperInput, language: str, examples: list[Example] | None = None
) -> str:
    """The instructions of one language's request, in that language."""
    parts = [PAPER_SYSTEM[language]]
    glossary = _glossary_lines(paper) if language == "zh" else ""
    if glossary:
        track = f"（{paper.track_name}）" if paper.track_name else ""
        parts.append(
            f"术语表{track}：原文用到的英文术语，中文按下列写法（英文术语 → 首选中文写法）。\n"
            f"{glossary}"
        )
    if examples:
        parts.append(_examples_text(language, examples))
    return "\n\n".join(parts)


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
    week = intro.period == "week"
    lines = [
        f"Track: {intro.track_name_en} / {intro.track_name_zh}",
        f"Week: {intro.date} (a weekly roundup of {intro.dailies} dailies; entries marked "
        "lead are the editors' picks, the others the week's highest scores)"
        if week
        else f"Date: {intro.date}",
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
        self._examples: list[Example] | None = None

    @classmethod
    def from_settings(cls) -> LLMDrafter:
        return cls(
            model=settings.LLM_DRAFT_MODEL or settings.LLM_MODEL,
            client=make_client(),
            token_budget=settings.LLM_DAILY_TOKEN_BUDGET,
        )

    @property
    def examples(self) -> list[Example]:
        """The editors' texts to choose examples from: loaded once per drafter (a batch)."""
        if self._examples is None:
            self._examples = editor_examples()
        return self._examples

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

    def _asker(
        self, *, language, schema_name, schema, purpose, paper_id, usage, validate, answer_type
    ):
        """One language's requests: ``send`` only talks to the model (any thread), ``receive``
        stores its LLMRequest rows and checks the answer (the caller's thread), a rejected
        answer marked so on its row; a malformed answer is a problem in the language."""
        return _Asker(
            send=partial(
                llm_send,
                client=self.client,
                model=self.model,
                schema_name=schema_name,
                schema=schema,
                purpose=purpose,
                paper_id=paper_id,
            ),
            language=language,
            validate=validate,
            answer_type=answer_type,
            usage=usage,
        )

    def _converse(
        self, conversations: dict[str, tuple[list[dict], _Asker]], notes: list[str]
    ) -> tuple[dict[str, object], dict[str, str], list[Answer], str | None]:
        """Each language's request at once, and for a language with a problem one more with
        the reasons (again all at once).

        Returns what is usable per language, why each other language is not, the answers,
        and why the model did not answer a first request (then nothing more is asked).
        """
        languages = list(conversations)
        sent = all_at_once(
            [partial(asker.send, messages=messages) for messages, asker in conversations.values()]
        )
        good: dict[str, object] = {}
        problems: dict[str, str] = {}
        answers: list[Answer] = []
        completions = {}
        unavailable = None
        for language, exchange in zip(languages, sent, strict=True):
            try:
                completions[language], answer = conversations[language][1].receive(exchange)
            except LLMUnavailable as exc:
                unavailable = unavailable or f"the model did not answer: {exc}"
                continue
            answers.append(answer)
            good.update(answer.usable)
            problems.update(answer.problems)
        if unavailable:
            missing = [language for language in languages if language not in good]
            return good, dict.fromkeys(missing, unavailable), answers, unavailable
        if not problems:
            return good, {}, answers, None
        for language in problems:
            notes.append(f"asked again: {_reasons({language: problems[language]})}")
        stopped = self._budget_problem()
        if stopped:
            return good, dict.fromkeys(problems, stopped), answers, None
        again_sent = all_at_once(
            [
                partial(
                    conversations[language][1].send,
                    messages=[
                        *conversations[language][0],
                        {
                            "role": "assistant",
                            "content": completions[language].content
                            if completions[language]
                            else "",
                        },
                        {
                            "role": "user",
                            "content": FOLLOW_UP.format(
                                reasons=_reasons({language: problems[language]})
                            ),
                        },
                    ],
                )
                for language in problems
            ]
        )
        reasons = {}
        for language, exchange in zip(problems, again_sent, strict=True):
            try:
                _completion, again = conversations[language][1].receive(exchange)
            except LLMUnavailable as exc:
                reasons[language] = f"the model did not answer: {exc}"
                continue
            answers.append(again)
            if language in again.usable:
                good[language] = again.usable[language]
            else:
                problem = again.problems.get(language, problems[language])
                reasons[language] = f"the model's answer was rejected: {problem}"
        return good, reasons, answers, None

    # -- papers ----------------------------------------------------------------------------

    def draft_paper(self, paper: PaperInput) -> PaperDraft:
        """Each language of one paper in its own request, sent at once (and one more for a
        language that fails).

        Raises ``DraftingStopped`` before the first request when the day's budget is spent.
        When the model does not answer, the languages not drafted are missing with the
        reason. Runs a few queries (the paper's id, the budget, the editors' examples once
        per drafter, one INSERT per request).
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
        user = {"role": "user", "content": paper_user_message(paper)}
        conversations = {}
        for language in LANGUAGES:
            ask = self._asker(
                language=language,
                schema_name=PAPER_SCHEMA_NAME,
                schema=PAPER_SCHEMAS[language],
                purpose=LLMRequest.Purpose.DRAFT_PAPER,
                paper_id=paper_id,
                usage=draft.usage,
                validate=partial(paper_answer_validate, languages=(language,)),
                answer_type=PaperAnswer,
            )
            examples = choose_examples(paper, language, self.examples)
            system = paper_system_prompt(paper, language, examples)
            conversations[language] = ([{"role": "system", "content": system}, user], ask)
        good, reasons, answers, unavailable = self._converse(conversations, draft.notes)
        draft.languages.update(good)
        for answer in answers:
            draft.notes += answer.notes
            draft.short_name = draft.short_name or answer.short_name
        if unavailable:
            draft.missing.update(reasons)
        elif reasons:
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
                # Paper drafts record their writer per language (the offline Chinese is a
                # card, recorded as such by the offline drafter).
                written_by = getattr(offline, "written_by", {}).get(language) or (
                    offline.drafter,
                    offline.drafter_version,
                    offline.model,
                    offline.prompt_version,
                )
                if hasattr(draft, "written_by"):
                    draft.written_by[language] = written_by
                draft.notes.append(
                    f"{language}: {reason}; drafted by {written_by[0]} {written_by[1]} instead"
                )
            else:
                draft.missing[language] = reason

    # -- intros ----------------------------------------------------------------------------

    def draft_intro(self, intro: IntroInput) -> IntroDraft:
        """A daily's or a week's intro (``intro.period``), each language in its own request,
        sent at once (and one more for a language that fails).

        Raises ``DraftingStopped`` before the first request when the day's budget is spent.
        """
        stopped = self._budget_problem()
        if stopped:
            raise DraftingStopped(stopped)
        draft = IntroDraft(
            drafter=NAME, drafter_version=VERSION, model=self.model, prompt_version=PROMPT_VERSION
        )
        user = {"role": "user", "content": intro_user_message(intro)}
        conversations = {
            language: (
                [{"role": "system", "content": INTRO_SYSTEM[intro.period][language]}, user],
                self._asker(
                    language=language,
                    schema_name=INTRO_SCHEMA_NAME,
                    schema=INTRO_SCHEMAS[language],
                    purpose=LLMRequest.Purpose.DRAFT_INTRO,
                    paper_id=None,
                    usage=draft.usage,
                    validate=partial(intro_answer_validate, languages=(language,)),
                    answer_type=IntroAnswer,
                ),
            )
            for language in LANGUAGES
        }
        good, reasons, _answers, unavailable = self._converse(conversations, draft.notes)
        draft.texts.update(good)
        if unavailable:
            draft.missing = reasons
        elif reasons:
            offline = self.fallback.draft_intro(intro)
            self._fall_back(offline.texts, offline, draft.texts, draft, reasons)
        return draft


@dataclass(frozen=True)
class _Asker:
    send: Callable[..., Exchange]
    language: str
    validate: Callable[[str | None], Answer]
    answer_type: type
    usage: list[Usage]

    def receive(self, exchange: Exchange) -> tuple[Completion | None, Answer]:
        """The exchange's rows stored and its answer checked; raises ``LLMUnavailable``."""
        try:
            completion = llm_record(exchange)
        except LLMMalformed as exc:
            return None, self.answer_type(problems={self.language: str(exc)})
        self.usage.append(Usage(completion.prompt_tokens, completion.completion_tokens))
        answer = self.validate(completion.content)
        if answer.problems:
            completion.reject(_reasons(answer.problems))
        return completion, answer


def all_at_once(calls: list[Callable[[], T]]) -> list[T]:
    """The results of ``calls``, run on up to LLM_CONCURRENCY threads at once (in order).
    The calls only talk to the model: database work stays on the caller's thread."""
    workers = min(settings.LLM_CONCURRENCY, len(calls))
    if workers <= 1:
        return [call() for call in calls]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm") as pool:
        return list(pool.map(lambda call: call(), calls))
