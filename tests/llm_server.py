"""A real chat-completions server on 127.0.0.1 that serves recorded answers.

Built on ``tests.recorded_server.RecordedServer``: ``POST /v1/chat/completions`` takes its
replies from a script (the last one repeats) or from a chooser that reads the request body.
Replies are shaped like OpenAI's (id, object, created, model, choices[0].message.content,
finish_reason, usage) or are errors with a status, headers (Retry-After) and a delay. Every
request body is logged, so tests can check the response_format, the schema and the messages.

``refuse(*modes)`` makes it answer 400, as DeepSeek's API does to a ``json_schema``, to every
request whose ``response_format`` type is one of ``modes`` ("text": no response_format).

Recorded answers live in tests/data/llm/<name>.json as the message content (one JSON object).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from tests.recorded_server import RecordedServer, Reply

PATH = "/v1/chat/completions"
DATA = Path(__file__).resolve().parent / "data" / "llm"
_ids = itertools.count(1)


def recorded(name: str) -> dict:
    """A recorded answer's content (tests/data/llm/<name>.json)."""
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def completion(
    content: str | dict,
    *,
    model: str = "draft-model-1",
    prompt_tokens: int = 900,
    completion_tokens: int = 600,
    finish_reason: str = "stop",
    delay: float = 0.0,
) -> Reply:
    """A 200 chat completion whose message content is ``content`` (a dict is dumped)."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    body = {
        "id": f"chatcmpl-rec{next(_ids):06d}",
        "object": "chat.completion",
        "created": 1793232000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
        "system_fingerprint": "fp_recorded",
    }
    return Reply(body=json.dumps(body).encode(), content_type="application/json", delay=delay)


def error(status: int, message: str = "", *, retry_after: str | None = None) -> Reply:
    """An OpenAI-style error body with ``status`` (and a Retry-After header if given)."""
    kind = {429: "rate_limit_exceeded", 400: "invalid_request_error"}.get(status, "server_error")
    body = {"error": {"message": message or f"recorded {status}", "type": kind, "code": kind}}
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return Reply(
        status=status,
        body=json.dumps(body).encode(),
        headers=headers,
        content_type="application/json",
    )


# DeepSeek's answer to a response_format it does not support.
REFUSAL_MESSAGE = "This response_format type is unavailable now"


def response_format_of(body: dict) -> str:
    """The request's response_format type: json_schema, json_object or text (none given)."""
    return (body.get("response_format") or {}).get("type", "text")


def slow(seconds: float) -> Reply:
    """An answer that comes after ``seconds`` (longer than the client's timeout: a timeout)."""
    return completion("{}", delay=seconds)


class LLMServer(RecordedServer):
    """``RecordedServer`` with chat-completions helpers; use as a context manager."""

    def __init__(self) -> None:
        super().__init__()
        self.body_chooser = None
        self.refused: frozenset[str] = frozenset()

    @property
    def base_url(self) -> str:
        return self.url("/v1")

    def script(self, *replies: Reply) -> None:
        self.body_chooser = None
        self.serve(PATH, *replies)

    def answer_with(self, chooser) -> None:
        """Answer each request by its JSON body: ``chooser(body: dict) -> Reply``."""
        self.body_chooser = chooser

    def refuse(self, *modes: str) -> None:
        """Answer 400 to requests in these response_format modes (before the script)."""
        self.refused = frozenset(modes)

    def _next(self, path: str, query: dict) -> Reply:
        if path == PATH and (self.body_chooser is not None or self.refused):
            # Called under the server's lock right after the request was logged.
            body = json.loads(self.log[-1].body)
            if response_format_of(body) in self.refused:
                return error(400, REFUSAL_MESSAGE)
            if self.body_chooser is not None:
                return self.body_chooser(body)
        return super()._next(path, query)

    def bodies(self) -> list[dict]:
        """The JSON bodies of the chat-completions requests, in order."""
        return [json.loads(entry.body) for entry in self.requests_to(PATH)]

    def formats(self) -> list[str]:
        """The response_format type of each chat-completions request, in order."""
        return [response_format_of(body) for body in self.bodies()]

    def header(self, index: int, name: str) -> str | None:
        """A header of the ``index``-th request, by case-insensitive name."""
        headers = self.requests_to(PATH)[index].headers
        return next((v for k, v in headers.items() if k.lower() == name.lower()), None)


def user_message(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def system_message(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "system")
