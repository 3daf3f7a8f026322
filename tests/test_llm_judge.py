"""The LLM judge against a real chat-completions server on 127.0.0.1, through the openai
client."""

from __future__ import annotations

from papers.llm_client import make_client
from papers.models import LLMRequest, Track
from papers.scoring.llm import LLMJudge
from tests.factories import make_paper, make_track
from tests.llm_server import completion, error, slow
from tests.recorded_server import Reply

GOOD = {
    "criteria": {"relevance": 5, "novelty": 4, "evidence": 4, "impact": 5, "venue": 2},
    "rationale_en": "Directly about KV cache serving, with production numbers.",
    "rationale_zh": "直接讨论 KV 缓存服务，有生产环境数字。",
}


def _judge(server) -> LLMJudge:
    client = make_client(base_url=server.base_url, api_key="test-key", timeout_s=0.5, max_retries=2)
    return LLMJudge(model="judge-1", client=client)


def _score(server):
    track: Track = make_track()
    paper = make_paper("judged")
    return _judge(server).score([paper], track)[0]


def test_a_good_answer_becomes_a_score_with_token_usage(db, llm_server):
    llm_server.script(completion(GOOD, prompt_tokens=120, completion_tokens=40))
    result = _score(llm_server)
    assert result.scorer == "llm-judge" and result.version == "1:judge-1"
    assert result.criteria == GOOD["criteria"]
    assert str(result.total) == "4.35"  # 0.4·5 + 0.15·4 + 0.2·4 + 0.15·5 + 0.1·2
    assert (result.prompt_tokens, result.completion_tokens) == (120, 40)
    assert llm_server.header(0, "Authorization") == "Bearer test-key"
    [body] = llm_server.bodies()
    assert body["model"] == "judge-1"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "paper_score"
    assert body["response_format"]["json_schema"]["strict"] is True
    [row] = LLMRequest.objects.all()
    assert (row.purpose, row.model_name, row.paper.slug) == ("score", "judge-1", "judged")
    assert (row.prompt_tokens, row.completion_tokens, row.ok, row.error) == (120, 40, True, "")


def test_malformed_json_is_asked_again_then_falls_back_to_the_rubric(db, llm_server):
    llm_server.script(completion("{not json"), completion({"criteria": {"relevance": 9}}))
    result = _score(llm_server)
    assert result.scorer == "rubric-tfidf"
    assert "LLM judge malformed answer" in result.notes and "rubric-tfidf" in result.notes
    assert len(llm_server.bodies()) == 2
    rows = list(LLMRequest.objects.order_by("pk"))
    assert [row.ok for row in rows] == [False, False]
    assert rows[0].error.startswith("answer rejected: content is not JSON")
    assert "criterion 'relevance' is 9" in rows[1].error


def test_a_malformed_answer_then_a_good_one_is_accepted(db, llm_server):
    llm_server.script(completion("not json at all"), completion(GOOD))
    assert _score(llm_server).scorer == "llm-judge"
    assert list(LLMRequest.objects.order_by("pk").values_list("ok", flat=True)) == [False, True]


def test_a_response_body_that_is_not_json_is_asked_again(db, llm_server):
    llm_server.script(
        Reply(body=b"<html>gateway</html>", content_type="application/json"), completion(GOOD)
    )
    assert _score(llm_server).scorer == "llm-judge"
    first = LLMRequest.objects.order_by("pk").first()
    assert (first.ok, first.error) == (False, "the response body is not JSON")


def test_a_timeout_is_retried_and_then_falls_back(db, llm_server):
    llm_server.script(slow(1.2))
    result = _score(llm_server)
    assert result.scorer == "rubric-tfidf"
    assert "unavailable (timed out after 3 attempts)" in result.notes
    assert len(llm_server.bodies()) == 3
    [row] = LLMRequest.objects.all()
    assert (row.ok, row.error, row.prompt_tokens) == (False, "timed out after 3 attempts", None)


def test_a_429_honours_retry_after_then_succeeds(db, llm_server):
    llm_server.script(error(429, retry_after="1"), completion(GOOD))
    result = _score(llm_server)
    assert result.scorer == "llm-judge"
    first, second = llm_server.requests_to("/v1/chat/completions")
    assert second.at - first.at >= 0.95
    assert LLMRequest.objects.get().ok  # one request row: the client's retries are inside it


def test_a_request_the_server_refuses_is_tried_once_per_response_format(db, llm_server):
    # A 400 is not retried as such; it may be the provider refusing the response_format, so
    # each weaker mode is tried once (tests/test_llm_response_format.py).
    llm_server.script(error(400, "response_format json_schema is not supported"))
    result = _score(llm_server)
    assert result.scorer == "rubric-tfidf"
    assert "unavailable (HTTP 400: " in result.notes and "not supported" in result.notes
    assert llm_server.formats() == ["json_schema", "json_object", "text"]


def test_a_provider_without_json_schema_still_scores_through_json_object(db, llm_server):
    llm_server.refuse("json_schema")
    llm_server.script(completion(GOOD))
    result = _score(llm_server)
    assert result.scorer == "llm-judge" and result.criteria == GOOD["criteria"]
    assert llm_server.formats() == ["json_schema", "json_object"]
