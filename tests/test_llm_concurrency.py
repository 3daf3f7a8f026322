"""A paper's (and an intro's) language requests are sent at once, up to LLM_CONCURRENCY; their
rows are stored on the caller's thread in language order."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from papers.drafting.service import paper_draft
from papers.models import LLMRequest
from tests.llm_server import PATH, completion, recorded
from tests.test_llm_drafter import demo_paper
from tests.test_llm_drafter import infra as infra_fixture
from tests.test_llm_drafter import llm as llm_fixture
from tests.test_settings import settings_from as settings_from_fixture

llm, infra, settings_from = llm_fixture, infra_fixture, settings_from_fixture
# Each answer waits this long: a request that arrives before it has passed since the first
# one arrived was sent while the first was still waiting for its answer.
ANSWER_DELAY_S = 0.6


def _draft_trustann(llm, infra, settings, concurrency: int):
    settings.LLM_CONCURRENCY = concurrency
    settings.LLM_TIMEOUT_S = 10 * ANSWER_DELAY_S  # the delay is not a timeout
    llm.answer_with(lambda body: completion(recorded("trustann"), delay=ANSWER_DELAY_S))
    paper = demo_paper("trustann", infra)
    outcome = paper_draft(paper=paper, track=infra)
    assert outcome.languages == ["en", "zh"]
    first, second = llm.requests_to(PATH)
    rows = LLMRequest.objects.order_by("pk")
    assert [(r.purpose, r.ok, r.paper_id) for r in rows] == [("draft_paper", True, paper.pk)] * 2
    return second.at - first.at


def test_it_sends_both_languages_at_once(llm, infra, settings):
    assert _draft_trustann(llm, infra, settings, concurrency=2) < ANSWER_DELAY_S


def test_one_at_a_time_at_the_bound(llm, infra, settings):
    assert _draft_trustann(llm, infra, settings, concurrency=1) >= ANSWER_DELAY_S


def test_the_setting_is_at_least_one(settings_from):
    assert settings_from()["LLM_CONCURRENCY"] == 2
    assert settings_from(LLM_CONCURRENCY="1")["LLM_CONCURRENCY"] == 1
    with pytest.raises(ImproperlyConfigured, match="LLM_CONCURRENCY=0 is below the minimum"):
        settings_from(LLM_CONCURRENCY="0")
