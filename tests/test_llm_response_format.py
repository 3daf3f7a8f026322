"""Structured output across providers: a local chat-completions server that refuses
response_format modes with a 400, as DeepSeek's API refuses ``json_schema``."""

from __future__ import annotations

import json

import pytest

from papers.drafting.service import paper_draft
from papers.llm_client import extract_json_object
from papers.models import LLMRequest, Summary
from tests.llm_server import REFUSAL_MESSAGE, completion, recorded, system_message
from tests.test_llm_drafter import demo_paper, texts
from tests.test_llm_drafter import infra as infra_fixture
from tests.test_llm_drafter import llm as llm_fixture

# The drafter tests' fixtures: the server configured with short timeouts, the Infra track.
llm, infra = llm_fixture, infra_fixture


def _fenced(name: str) -> str:
    """A plain-text answer as chat models write it: a sentence, then the JSON in a fence."""
    return f"Here is the entry.\n```json\n{json.dumps(recorded(name), ensure_ascii=False)}\n```"


def test_it_falls_back_to_json_object_with_the_schema_in_the_prompt(llm, infra):
    paper = demo_paper("trustann", infra)
    llm.refuse("json_schema")
    llm.script(completion(recorded("trustann")))

    outcome = paper_draft(paper=paper, track=infra)

    assert outcome.languages == ["en", "zh"] and outcome.missing == {}
    # the zh request starts where the en one succeeded
    assert llm.formats() == ["json_schema", "json_object", "json_object"]
    refused, answered, _zh = llm.bodies()
    assert "JSON Schema" not in system_message(refused)
    assert '"required": ["short_name", "en"]' in system_message(answered)
    assert texts(paper)["zh"].body == recorded("trustann")["zh"]["summary"]
    rows = list(LLMRequest.objects.order_by("pk"))
    assert [r.ok for r in rows] == [False, True, True]
    assert rows[0].error.startswith("HTTP 400") and REFUSAL_MESSAGE in rows[0].error


def test_it_remembers_the_mode_that_answered_for_the_provider(llm, infra):
    first, second = demo_paper("trustann", infra), demo_paper("hilo", infra)
    llm.refuse("json_schema")
    llm.script(completion(recorded("trustann")), completion(recorded("hilo")))

    paper_draft(paper=first, track=infra)
    outcome = paper_draft(paper=second, track=infra)

    assert outcome.languages == ["en", "zh"]
    # one refused request in all: every later one starts in json_object
    assert llm.formats() == ["json_schema"] + ["json_object"] * 4


def test_it_falls_back_to_plain_text_and_extracts_the_json(llm, infra):
    paper = demo_paper("c2kv", infra)
    llm.refuse("json_schema", "json_object")
    llm.script(completion(_fenced("c2kv")))

    outcome = paper_draft(paper=paper, track=infra)

    assert outcome.languages == ["en", "zh"] and outcome.missing == {}
    assert llm.formats() == ["json_schema", "json_object", "text", "text"]
    body = llm.bodies()[-1]
    assert "response_format" not in body
    assert "no Markdown code fence" in system_message(body)
    assert texts(paper)["en"].takeaway == recorded("c2kv")["en"]["takeaway"]


def test_a_plain_text_answer_gets_the_same_checks(llm, infra):
    paper = demo_paper("hilo", infra)
    llm.refuse("json_schema", "json_object")
    bad = recorded("hilo")
    bad["zh"] = bad["en"]  # English where the Chinese should be
    llm.script(
        completion(_fenced("hilo")),  # en
        completion(f"```json\n{json.dumps(bad)}\n```"),  # zh, in English
        completion(_fenced("hilo")),  # zh, asked again
    )

    outcome = paper_draft(paper=paper, track=infra)

    assert outcome.languages == ["en", "zh"]
    assert llm.formats() == ["json_schema", "json_object", "text", "text", "text"]
    rejected = LLMRequest.objects.filter(error__startswith="answer rejected").get()
    assert "the zh summary is not Chinese" in rejected.error


def test_every_mode_refused_leaves_the_languages_missing_and_nothing_stored(llm, infra):
    paper = demo_paper("trustann", infra)
    llm.refuse("json_schema", "json_object", "text")

    outcome = paper_draft(paper=paper, track=infra)

    assert outcome.languages == [] and set(outcome.missing) == {"en", "zh"}
    assert REFUSAL_MESSAGE in outcome.missing["zh"]
    assert llm.formats() == ["json_schema", "json_object", "text"] * 2  # each language
    assert not Summary.objects.filter(paper=paper).exists()


@pytest.mark.parametrize("mode", ["json_object", "text"])
def test_an_operator_setting_uses_that_mode_alone(llm, infra, settings, mode):
    settings.LLM_RESPONSE_FORMAT = mode
    paper = demo_paper("trustann", infra)
    llm.script(completion(_fenced("trustann") if mode == "text" else recorded("trustann")))

    outcome = paper_draft(paper=paper, track=infra)

    assert outcome.languages == ["en", "zh"]
    assert llm.formats() == [mode, mode]


def test_an_operator_setting_does_not_fall_back(llm, infra, settings):
    settings.LLM_RESPONSE_FORMAT = "json_schema"
    paper = demo_paper("trustann", infra)
    llm.refuse("json_schema")
    llm.script(completion(recorded("trustann")))

    outcome = paper_draft(paper=paper, track=infra)

    assert outcome.languages == []
    assert llm.formats() == ["json_schema"] * 2  # each language, once


def test_extract_json_object_reads_fences_and_surrounding_text():
    assert extract_json_object('Sure!\n```json\n{"a": 1}\n```\nDone.') == '{"a": 1}'
    assert extract_json_object('The answer: {"a": {"b": 2}} as asked.') == '{"a": {"b": 2}}'
    assert extract_json_object("no object here") == "no object here"
