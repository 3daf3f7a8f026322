"""The one way this project talks to a model: the official ``openai`` client, built from
settings, and one structured-output request that stores its token usage.

Providers differ in the structured output they accept: OpenAI takes a strict ``json_schema``,
others (DeepSeek's official API among them) only ``json_object`` and answer 400 to a schema,
some neither. With ``LLM_RESPONSE_FORMAT=auto`` a request refused with 400/422 is sent again
in the next mode of ``RESPONSE_FORMATS`` (the schema then goes into the prompt, and in plain
text the JSON object is cut out of the answer); the mode that answered is remembered for the
endpoint and model, so later requests start there. The caller validates the answer the same
way whichever mode gave it.

Both the judge (``papers.scoring.llm``) and the drafter (``papers.drafting.llm``) go through
here. Retries of 429, 5xx and timeouts are the client's own (``max_retries``, exponential
backoff with jitter, ``Retry-After`` honoured up to two minutes); what reaches the caller is
either an answer or ``LLMUnavailable`` saying why, after how many attempts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings

from papers.models import LLMRequest

if TYPE_CHECKING:
    import openai

RESPONSE_FORMATS = ("json_schema", "json_object", "text")
# Statuses with which a provider refuses a response_format it does not support.
REFUSED_STATUSES = frozenset({400, 422})
# The mode that last answered, per (base URL, model): a few configured endpoints per process,
# so nothing needs retiring; a restart tries the strict mode again.
_answering_format: dict[tuple[str, str], str] = {}

# Statuses the client retries (see openai._base_client.BaseClient._should_retry).
RETRIED_STATUSES = frozenset({408, 409, 429})
MODEL_NAME_MAX_LENGTH = LLMRequest._meta.get_field("model_name").max_length


class LLMUnavailable(Exception):
    """The model did not answer; the message says why ("timed out after 3 attempts")."""


class LLMMalformed(Exception):
    """The server answered, but not with a chat completion (no JSON body, no message)."""


@dataclass(frozen=True)
class Completion:
    """The message content of one answer, its usage, and the stored request row."""

    content: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    request: LLMRequest
    response_format: str = RESPONSE_FORMATS[0]

    def reject(self, reason: str) -> None:
        """Mark the stored request as answered but not usable (one UPDATE)."""
        LLMRequest.objects.filter(pk=self.request.pk).update(
            ok=False, error=f"answer rejected: {reason}"
        )


def llm_configured() -> bool:
    """Whether an endpoint, key and model are set (the judge and the drafter need all three)."""
    return bool(settings.LLM_BASE_URL and settings.LLM_API_KEY and settings.LLM_MODEL)


def make_client(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout_s: float | None = None,
    max_retries: int | None = None,
) -> openai.OpenAI:
    """An ``openai.OpenAI`` client for the configured endpoint; arguments override settings."""
    import openai

    return openai.OpenAI(
        base_url=base_url or settings.LLM_BASE_URL,
        api_key=api_key or settings.LLM_API_KEY,
        timeout=settings.LLM_TIMEOUT_S if timeout_s is None else timeout_s,
        max_retries=settings.LLM_MAX_RETRIES if max_retries is None else max_retries,
    )


def attempts_of(client: openai.OpenAI) -> int:
    return client.max_retries + 1


def json_schema_format(name: str, schema: dict) -> dict:
    """The ``response_format`` of a strict structured-output request."""
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


def schema_instruction(name: str, schema: dict, mode: str) -> str:
    """What a request without a strict schema adds to its system message."""
    text = (
        f"Answer with one JSON object (named {name}) that follows this JSON Schema exactly:\n"
        f"{json.dumps(schema, ensure_ascii=False)}"
    )
    if mode == "text":
        text += "\nWrite only the JSON object: no Markdown code fence, no text before or after it."
    return text


def _with_schema(messages: list[dict], instruction: str) -> list[dict]:
    if messages and messages[0].get("role") == "system":
        first = {**messages[0], "content": f"{messages[0]['content']}\n\n{instruction}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": instruction}, *messages]


_FENCE_RE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)


def extract_json_object(content: str) -> str:
    """The JSON object inside a plain-text answer (in a code fence, or between the first "{"
    and the last "}"); the content unchanged when none parses, so the check says why."""
    candidates = [m[1] for m in _FENCE_RE.finditer(content)]
    start, end = content.find("{"), content.rfind("}")
    if 0 <= start < end:
        candidates.append(content[start : end + 1])
    for candidate in candidates:
        try:
            if isinstance(json.loads(candidate), dict):
                return candidate.strip()
        except ValueError:
            continue
    return content


def _formats_to_try(provider: tuple[str, str]) -> tuple[str, ...]:
    configured = settings.LLM_RESPONSE_FORMAT
    if configured != "auto":
        return (configured,)
    first = _answering_format.get(provider, RESPONSE_FORMATS[0])
    return RESPONSE_FORMATS[RESPONSE_FORMATS.index(first) :]


def _unavailable_reason(exc: openai.OpenAIError, attempts: int) -> str:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return f"timed out after {attempts} attempts"
    if isinstance(exc, openai.APIConnectionError):
        return f"could not connect after {attempts} attempts"
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status in RETRIED_STATUSES or status >= 500:
            return f"HTTP {status} after {attempts} attempts"
        return f"HTTP {status}: {exc.message}"[:500]
    return f"{type(exc).__name__}: {exc}"[:500]


def llm_complete(
    *,
    client: openai.OpenAI,
    model: str,
    messages: list[dict],
    schema_name: str,
    schema: dict,
    purpose: str,
    paper_id: int | None = None,
) -> Completion:
    """Ask ``model`` for one JSON object following ``schema``; store one ``LLMRequest`` row per
    request sent (a mode refused by the provider is one row, with its error).

    Raises ``LLMUnavailable`` when the model did not answer after the client's retries (or
    refused every mode) and ``LLMMalformed`` when the response is not a chat completion; the
    rows say why. Runs one INSERT per request.
    """
    return llm_record(
        llm_send(
            client=client,
            model=model,
            messages=messages,
            schema_name=schema_name,
            schema=schema,
            purpose=purpose,
            paper_id=paper_id,
        )
    )


@dataclass(frozen=True)
class Attempt:
    """One request as sent in one response_format mode, and what came back."""

    mode: str
    response: object = None
    error: str = ""  # why there is no answer
    refused: bool = False  # 400/422: the provider does not take this mode
    malformed: bool = False  # the body is not JSON


@dataclass(frozen=True)
class Exchange:
    """What the network gave for one request, every mode tried; nothing stored yet."""

    model: str
    purpose: str
    paper_id: int | None
    attempts: tuple[Attempt, ...]


def llm_send(
    *,
    client: openai.OpenAI,
    model: str,
    messages: list[dict],
    schema_name: str,
    schema: dict,
    purpose: str,
    paper_id: int | None = None,
) -> Exchange:
    """The requests of ``llm_complete`` without the database: safe to run in several threads
    at once (the client is), their rows written by ``llm_record`` on the caller's thread."""
    provider = (str(client.base_url), model)
    attempts = []
    for mode in _formats_to_try(provider):
        attempt = _send_once(
            client=client,
            model=model,
            messages=messages,
            schema_name=schema_name,
            schema=schema,
            mode=mode,
        )
        attempts.append(attempt)
        if not attempt.refused:
            if settings.LLM_RESPONSE_FORMAT == "auto" and not attempt.error:
                _answering_format[provider] = mode
            break
    return Exchange(model, purpose, paper_id, tuple(attempts))


def llm_record(exchange: Exchange) -> Completion:
    """One ``LLMRequest`` row per attempt of ``exchange`` (one INSERT each); the answer, or
    ``LLMUnavailable`` / ``LLMMalformed`` saying why there is none."""
    for attempt in exchange.attempts:
        row = LLMRequest(
            purpose=exchange.purpose,
            model_name=exchange.model[:MODEL_NAME_MAX_LENGTH],
            paper_id=exchange.paper_id,
        )
        if attempt.refused:
            row.error = attempt.error
            row.save()
            continue
        if attempt.error:
            row.error = attempt.error
            row.save()
            raise (LLMMalformed if attempt.malformed else LLMUnavailable)(row.error)
        return _answer(attempt, row)
    raise LLMUnavailable(exchange.attempts[-1].error)  # every mode refused


def _send_once(
    *,
    client: openai.OpenAI,
    model: str,
    messages: list[dict],
    schema_name: str,
    schema: dict,
    mode: str,
) -> Attempt:
    import openai

    options: dict = {}
    if mode == "json_schema":
        options["response_format"] = json_schema_format(schema_name, schema)
    else:
        messages = _with_schema(messages, schema_instruction(schema_name, schema, mode))
        if mode == "json_object":
            options["response_format"] = {"type": "json_object"}
    try:
        response = client.chat.completions.create(
            model=model, messages=messages, temperature=0, **options
        )
    except openai.OpenAIError as exc:
        refused = isinstance(exc, openai.APIStatusError) and exc.status_code in REFUSED_STATUSES
        return Attempt(mode, error=_unavailable_reason(exc, attempts_of(client)), refused=refused)
    except json.JSONDecodeError:
        return Attempt(mode, error="the response body is not JSON", malformed=True)
    return Attempt(mode, response=response)


def _answer(attempt: Attempt, row: LLMRequest) -> Completion:
    response, mode = attempt.response, attempt.mode
    usage = getattr(response, "usage", None)
    row.prompt_tokens = getattr(usage, "prompt_tokens", None)
    row.completion_tokens = getattr(usage, "completion_tokens", None)
    choices = getattr(response, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        row.error = "no message content in the response"
        row.save()
        raise LLMMalformed(row.error)
    row.ok = True
    row.save()
    return Completion(
        content=extract_json_object(content) if mode == "text" else content,
        prompt_tokens=row.prompt_tokens or 0,
        completion_tokens=row.completion_tokens or 0,
        finish_reason=str(getattr(choices[0], "finish_reason", "") or ""),
        request=row,
        response_format=mode,
    )
