"""The day's token use: today's requests (editorial day), prompt and completion tokens."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine

from papers.drafting.budget import llm_tokens_used_today, start_of_today
from papers.models import LLMRequest

pytestmark = pytest.mark.django_db
# 2026-10-28 00:00 in Asia/Shanghai is 2026-10-27 16:00 UTC.
MIDNIGHT = dt.datetime(2026, 10, 27, 16, 0, tzinfo=dt.UTC)


def _request(at: dt.datetime, prompt: int | None, completion: int | None) -> None:
    with time_machine.travel(at, tick=False):
        LLMRequest.objects.create(
            purpose=LLMRequest.Purpose.DRAFT_PAPER,
            model_name="m",
            prompt_tokens=prompt,
            completion_tokens=completion,
            ok=completion is not None,
        )


def test_it_sums_the_tokens_of_todays_requests_from_the_editorial_midnight():
    _request(MIDNIGHT - dt.timedelta(seconds=1), 1000, 1000)  # yesterday
    _request(MIDNIGHT, 100, 20)  # at the edge: today
    _request(MIDNIGHT + dt.timedelta(hours=5), 50, None)  # failed: prompt counted
    now = MIDNIGHT + dt.timedelta(hours=6)
    assert start_of_today(now) == MIDNIGHT
    assert llm_tokens_used_today(now) == 170


def test_it_is_zero_on_a_day_without_requests():
    assert llm_tokens_used_today(MIDNIGHT) == 0
