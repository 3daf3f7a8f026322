"""The LLM judge against a real chat-completions server on 127.0.0.1."""

from __future__ import annotations

import json

from papers.ingest.fetch import FetchPolicy
from papers.models import Track
from papers.scoring.llm import LLMJudge
from tests.factories import make_paper, make_track
from tests.recorded_server import Reply

GOOD = {
    "criteria": {"relevance": 5, "novelty": 4, "evidence": 4, "impact": 5, "venue": 2},
    "rationale_en": "Directly about KV cache serving, with production numbers.",
    "rationale_zh": "直接讨论 KV 缓存服务，有生产环境数字。",
}
POLICY = FetchPolicy(
    connect_timeout=2,
    read_timeout=0.5,
    attempts=3,
    backoff_base=0.05,
    backoff_cap=0.2,
    retry_after_cap=2,
)


def _completion(content: str, usage=(120, 40)) -> Reply:
    body = {
        "id": "x",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]},
    }
    return Reply(body=json.dumps(body).encode(), content_type="application/json")


def _judge(server) -> LLMJudge:
    return LLMJudge(base_url=server.url("/v1"), api_key="test-key", model="judge-1", policy=POLICY)


def _score(server):
    track: Track = make_track()
    paper = make_paper("judged")
    return _judge(server).score([paper], track)[0]


def test_a_good_answer_becomes_a_score_with_token_usage(db, recorded_server):
    recorded_server.serve("/v1/chat/completions", _completion(json.dumps(GOOD)))
    result = _score(recorded_server)
    assert result.scorer == "llm-judge" and result.version == "1:judge-1"
    assert result.criteria == GOOD["criteria"]
    assert str(result.total) == "4.35"  # 0.4·5 + 0.15·4 + 0.2·4 + 0.15·5 + 0.1·2
    assert (result.prompt_tokens, result.completion_tokens) == (120, 40)
    request = recorded_server.requests_to("/v1/chat/completions")[0]
    assert request.headers["Authorization"] == "Bearer test-key"


def test_malformed_json_is_asked_again_then_falls_back_to_the_rubric(db, recorded_server):
    recorded_server.serve(
        "/v1/chat/completions",
        _completion("{not json"),
        _completion(json.dumps({"criteria": {"relevance": 9}})),
    )
    result = _score(recorded_server)
    assert result.scorer == "rubric-tfidf"
    assert "LLM judge malformed answer" in result.notes and "rubric-tfidf" in result.notes
    assert len(recorded_server.requests_to("/v1/chat/completions")) == 2


def test_a_malformed_answer_then_a_good_one_is_accepted(db, recorded_server):
    recorded_server.serve(
        "/v1/chat/completions", _completion("not json at all"), _completion(json.dumps(GOOD))
    )
    assert _score(recorded_server).scorer == "llm-judge"


def test_a_timeout_is_retried_and_then_falls_back(db, recorded_server):
    recorded_server.serve(
        "/v1/chat/completions", Reply(delay=1.2, body=b"{}", content_type="application/json")
    )
    result = _score(recorded_server)
    assert result.scorer == "rubric-tfidf"
    assert "unavailable (timed out after 3 attempts)" in result.notes


def test_a_429_honours_retry_after_then_succeeds(db, recorded_server):
    recorded_server.serve(
        "/v1/chat/completions",
        Reply(status=429, headers={"Retry-After": "1"}, body=b"{}"),
        _completion(json.dumps(GOOD)),
    )
    result = _score(recorded_server)
    assert result.scorer == "llm-judge"
    first, second = recorded_server.requests_to("/v1/chat/completions")
    assert second.at - first.at >= 0.95
