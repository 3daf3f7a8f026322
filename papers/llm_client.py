"""The one way this project talks to a model: the official ``openai`` client, built from
settings, and one structured-output request that stores its token usage.

Both the judge (``papers.scoring.llm``) and the drafter (``papers.drafting.llm``) go through
here. Retries of 429, 5xx and timeouts are the client's own (``max_retries``, exponential
backoff with jitter, ``Retry-After`` honoured up to two minutes); what reaches the caller is
either an answer or ``LLMUnavailable`` saying why, after how many attempts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import openai
from django.conf import settings

from papers.models import LLMRequest

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


def _unavailable_reason(exc: openai.OpenAIError, attempts: int) -> str:
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
    """Ask ``model`` for one JSON object following ``schema``; store one ``LLMRequest`` row.

    Raises ``LLMUnavailable`` when the model did not answer after the client's retries and
    ``LLMMalformed`` when the response is not a chat completion; both rows say why. Runs one
    INSERT.
    """
    row = LLMRequest(purpose=purpose, model_name=model[:MODEL_NAME_MAX_LENGTH], paper_id=paper_id)
    try:
        response = client.chat.completions.create(
            model=model,
            messages=messages,
            temperature=0,
            response_format=json_schema_format(schema_name, schema),
        )
    except openai.OpenAIError as exc:
        row.error = _unavailable_reason(exc, attempts_of(client))
        row.save()
        raise LLMUnavailable(row.error) from None
    except json.JSONDecodeError:
        row.error = "the response body is not JSON"
        row.save()
        raise LLMMalformed(row.error) from None
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
        content=content,
        prompt_tokens=row.prompt_tokens or 0,
        completion_tokens=row.completion_tokens or 0,
        finish_reason=str(getattr(choices[0], "finish_reason", "") or ""),
        request=row,
    )
