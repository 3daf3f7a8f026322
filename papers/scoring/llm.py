"""An LLM judge for the same rubric, through any OpenAI-compatible chat-completions API.

Used when LLM_BASE_URL, LLM_API_KEY and LLM_MODEL are set. Its answer must be JSON with every
criterion as an integer 1–5 and a rationale in both languages; a malformed answer is asked
for again, then the paper is scored by the rubric scorer and its score says why.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import httpx

from papers.ingest.fetch import FetchPolicy, backoff_delay, retry_after_seconds
from papers.models import Paper, Track
from papers.scoring.base import CRITERIA, ScoreResult, total_from
from papers.scoring.rubric import RubricScorer

NAME = "llm-judge"
VERSION = "1"
RETRY_STATUSES = {429, 500, 502, 503, 504}

SYSTEM = (
    "You are an editor of a daily digest of research papers. Score the paper for the given "
    "track on each criterion from 1 (poor) to 5 (excellent): relevance (to the track), novelty "
    "(against what the track usually covers), evidence (quantified results, scale, deployment), "
    "impact (practical value to engineers), venue (the standing of where it is accepted or "
    'published; 2 when none). Answer with one JSON object only: {"criteria": {"relevance": '
    'n, "novelty": n, "evidence": n, "impact": n, "venue": n}, "rationale_en": '
    '"one or two sentences", "rationale_zh": "一两句中文"}.'
)


class JudgeUnavailable(Exception):
    pass


class MalformedAnswer(Exception):
    pass


@dataclass(frozen=True)
class Answer:
    criteria: dict[str, int]
    rationale_en: str
    rationale_zh: str
    prompt_tokens: int | None
    completion_tokens: int | None


def parse_answer(payload: dict) -> Answer:
    """Validate a chat-completions response; raises MalformedAnswer with the reason."""
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise MalformedAnswer("no message content in the response") from None
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
    usage = payload.get("usage") or {}
    return Answer(
        criteria,
        texts[0].strip(),
        texts[1].strip(),
        usage.get("prompt_tokens"),
        usage.get("completion_tokens"),
    )


class LLMJudge:
    name = NAME
    version = VERSION

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        policy: FetchPolicy | None = None,
        malformed_retries: int = 1,
        client: httpx.Client | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key = api_key
        self.model = model
        self.policy = policy or FetchPolicy.from_settings()
        self.malformed_retries = malformed_retries
        self.fallback = RubricScorer()
        self.client = client

    def score(self, papers: list[Paper], track: Track) -> list[ScoreResult]:
        return [self._one(paper, track) for paper in papers]

    def _one(self, paper: Paper, track: Track) -> ScoreResult:
        problem = ""
        for _attempt in range(1 + self.malformed_retries):
            try:
                answer = parse_answer(self._ask(paper, track))
            except MalformedAnswer as exc:
                problem = f"malformed answer ({exc})"
                continue
            except JudgeUnavailable as exc:
                problem = f"unavailable ({exc})"
                break
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

    def _ask(self, paper: Paper, track: Track) -> dict:
        body = {
            "model": self.model,
            "temperature": 0,
            "messages": self._messages(paper, track),
            "response_format": {"type": "json_object"},
        }
        headers = {"Authorization": f"Bearer {self.api_key}"}
        timeout = httpx.Timeout(self.policy.read_timeout, connect=self.policy.connect_timeout)
        client = self.client or httpx.Client(timeout=timeout)
        last = "no attempt"
        try:
            for attempt in range(self.policy.attempts):
                try:
                    reply = client.post(self.url, json=body, headers=headers, timeout=timeout)
                except httpx.TimeoutException:
                    last, delay = "timed out", backoff_delay(self.policy, attempt)
                except httpx.TransportError as exc:
                    last, delay = f"network error: {exc}", backoff_delay(self.policy, attempt)
                else:
                    if reply.status_code in RETRY_STATUSES:
                        last = f"HTTP {reply.status_code}"
                        delay = retry_after_seconds(
                            reply.headers.get("Retry-After"), self.policy.retry_after_cap
                        )
                        if delay is None:
                            delay = backoff_delay(self.policy, attempt)
                    elif reply.status_code >= 400:
                        raise JudgeUnavailable(f"HTTP {reply.status_code}")
                    else:
                        try:
                            return reply.json()
                        except ValueError:
                            raise MalformedAnswer("response body is not JSON") from None
                if attempt + 1 < self.policy.attempts:
                    time.sleep(delay)
        finally:
            if self.client is None:
                client.close()
        raise JudgeUnavailable(f"{last} after {self.policy.attempts} attempts")
