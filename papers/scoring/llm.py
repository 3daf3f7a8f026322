"""An LLM judge for the same rubric, through any OpenAI-compatible chat-completions API (the
official openai client of ``papers.llm_client``, strict structured output ``paper_score``).

Used when LLM_BASE_URL, LLM_API_KEY and LLM_MODEL are set. Its answer must be JSON with every
criterion as an integer 1–5 and a rationale in both languages; a malformed answer is asked
for again, then the paper is scored by the rubric scorer and its score says why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from papers.llm_client import LLMMalformed, LLMUnavailable, llm_complete, make_client
from papers.models import LLMRequest, Paper, Track
from papers.scoring.base import CRITERIA, ScoreResult, total_from
from papers.scoring.rubric import RubricScorer

if TYPE_CHECKING:
    import openai

NAME = "llm-judge"
VERSION = "1"
SCHEMA_NAME = "paper_score"
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["criteria", "rationale_en", "rationale_zh"],
    "properties": {
        "criteria": {
            "type": "object",
            "additionalProperties": False,
            "required": list(CRITERIA),
            "properties": {name: {"type": "integer", "enum": [1, 2, 3, 4, 5]} for name in CRITERIA},
        },
        "rationale_en": {"type": "string"},
        "rationale_zh": {"type": "string"},
    },
}

SYSTEM = (
    "You are an editor of a daily digest of research papers. Score the paper for the given "
    "track on each criterion from 1 (poor) to 5 (excellent): relevance (to the track), novelty "
    "(against what the track usually covers), evidence (quantified results, scale, deployment), "
    "impact (practical value to engineers), venue (the standing of where it is accepted or "
    'published; 2 when none). Answer with one JSON object only: {"criteria": {"relevance": '
    'n, "novelty": n, "evidence": n, "impact": n, "venue": n}, "rationale_en": '
    '"one or two sentences", "rationale_zh": "一两句中文"}.'
)


class MalformedAnswer(Exception):
    pass


@dataclass(frozen=True)
class Answer:
    criteria: dict[str, int]
    rationale_en: str
    rationale_zh: str
    prompt_tokens: int | None
    completion_tokens: int | None


def parse_answer(
    content: str, *, prompt_tokens: int | None = None, completion_tokens: int | None = None
) -> Answer:
    """Validate the message content of an answer; raises MalformedAnswer with the reason."""
    try:
        data = json.loads(content)
    except (TypeError, ValueError) as exc:
        raise MalformedAnswer(f"content is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("criteria"), dict):
        raise MalformedAnswer("no criteria object")
    criteria = {}
    for name in CRITERIA:
        value = data["criteria"].get(name)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
            raise MalformedAnswer(f"criterion {name!r} is {value!r}, not an integer 1–5")
        criteria[name] = value
    texts = [data.get("rationale_en"), data.get("rationale_zh")]
    if not all(isinstance(t, str) and t.strip() for t in texts):
        raise MalformedAnswer("rationale_en and rationale_zh must be non-empty strings")
    return Answer(criteria, texts[0].strip(), texts[1].strip(), prompt_tokens, completion_tokens)


class LLMJudge:
    name = NAME
    version = VERSION

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        client: openai.OpenAI | None = None,
        malformed_retries: int = 1,
    ) -> None:
        """``client`` defaults to ``make_client()`` (settings), with ``base_url``/``api_key``
        overriding the configured endpoint."""
        self.model = model
        self.client = client or make_client(base_url=base_url, api_key=api_key)
        self.malformed_retries = malformed_retries
        self.fallback = RubricScorer()

    def score(self, papers: list[Paper], track: Track) -> list[ScoreResult]:
        return [self._one(paper, track) for paper in papers]

    def _one(self, paper: Paper, track: Track) -> ScoreResult:
        problem = ""
        for _attempt in range(1 + self.malformed_retries):
            try:
                completion = llm_complete(
                    client=self.client,
                    model=self.model,
                    messages=self._messages(paper, track),
                    schema_name=SCHEMA_NAME,
                    schema=SCHEMA,
                    purpose=LLMRequest.Purpose.SCORE,
                    paper_id=paper.pk,
                )
            except LLMMalformed as exc:
                problem = f"malformed answer ({exc})"
                continue
            except LLMUnavailable as exc:
                problem = f"unavailable ({exc})"
                break
            try:
                answer = parse_answer(
                    completion.content,
                    prompt_tokens=completion.request.prompt_tokens,
                    completion_tokens=completion.request.completion_tokens,
                )
            except MalformedAnswer as exc:
                completion.reject(str(exc))
                problem = f"malformed answer ({exc})"
                continue
            return ScoreResult(
                total=total_from(answer.criteria),
                criteria=answer.criteria,
                rationale_en=answer.rationale_en,
                rationale_zh=answer.rationale_zh,
                scorer=NAME,
                version=f"{VERSION}:{self.model}",
                prompt_tokens=answer.prompt_tokens,
                completion_tokens=answer.completion_tokens,
            )
        [result] = self.fallback.score([paper], track)
        note = f"LLM judge {problem}; scored by {result.scorer} instead."
        return ScoreResult(**{**result.__dict__, "notes": note})

    def _messages(self, paper: Paper, track: Track) -> list[dict]:
        venue = f"{paper.get_venue_status_display()} {paper.venue}" if paper.venue_id else "none"
        user = (
            f"Track: {track.name_en}. {track.description_en}\nKeywords: "
            f"{', '.join(track.keywords)}\n\nPaper: {paper.title}\nVenue: {venue}\n"
            f"Comment: {paper.comment or '-'}\nAbstract: {paper.abstract}"
        )
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
