"""The LLM drafter against a real chat-completions server on 127.0.0.1 serving recorded
answers, through the drafting service where what is stored matters."""

from __future__ import annotations

import copy
import json
import time
import tomllib
from pathlib import Path

import pytest

from dailies.drafting import daily_draft
from dailies.models import Daily
from papers.drafting.base import DraftingStopped, IntroEntry, IntroInput
from papers.drafting.llm import PROMPT_VERSION, LLMDrafter
from papers.drafting.offline import OfflineDrafter
from papers.drafting.service import EDITOR_WROTE, glossary_seed, paper_draft, paper_input
from papers.models import DraftRun, LLMRequest, Paper, Summary, Track
from tests.factories import make_daily, make_paper, make_track
from tests.llm_server import (
    PATH,
    completion,
    error,
    recorded,
    slow,
    system_message,
    user_message,
)

DEMO = Path(__file__).resolve().parent.parent / "dailies" / "demo" / "papers"
TIMEOUT_S = 0.3
MAX_RETRIES = 1


@pytest.fixture
def llm(settings, llm_server):
    """Drafting configured against the recorded server, with short timeouts."""
    settings.LLM_BASE_URL = llm_server.base_url
    settings.LLM_API_KEY = "test-key"
    settings.LLM_MODEL = "judge-model"
    settings.LLM_DRAFT_MODEL = "draft-model-1"
    settings.LLM_TIMEOUT_S = TIMEOUT_S
    settings.LLM_MAX_RETRIES = MAX_RETRIES
    settings.LLM_DAILY_TOKEN_BUDGET = 0
    # Scripted replies answer requests in the order they arrive: one language at a time
    # (tests/test_llm_concurrency.py sends them at once).
    settings.LLM_CONCURRENCY = 1
    return llm_server


@pytest.fixture
def infra(db) -> Track:
    track = make_track("infra", name_en="Infra", name_zh="基础设施")
    glossary_seed(track=track)
    return track


def demo_paper(slug: str, track: Track, **fields) -> Paper:
    """A demo paper's title and abstract, with no texts yet."""
    data = tomllib.loads((DEMO / f"{slug}.toml").read_text(encoding="utf-8"))
    paper = make_paper(
        slug,
        title=data["title"],
        abstract=data["abstract"],
        en=None,
        zh=None,
        short_name="",
        **fields,
    )
    paper.tracks.add(track)
    return paper


def texts(paper: Paper) -> dict[str, Summary]:
    return {s.language: s for s in Summary.objects.filter(paper=paper)}


def test_it_drafts_both_languages_from_a_good_answer(llm, infra):
    paper = demo_paper("trustann", infra)
    llm.script(completion(recorded("trustann"), prompt_tokens=1200, completion_tokens=700))

    outcome = paper_draft(paper=paper, track=infra)

    assert outcome.drafter == "llm"
    assert outcome.languages == ["en", "zh"] and outcome.missing == {}
    assert outcome.flags == []
    stored = texts(paper)
    answer = recorded("trustann")
    for language in ("en", "zh"):
        summary = stored[language]
        assert summary.body == answer[language]["summary"]
        assert summary.takeaway == answer[language]["takeaway"]
        assert summary.headline == answer[language]["headline"]
        assert summary.highlights == answer[language]["numbers"]
        assert summary.provenance == Summary.Provenance.MACHINE
        assert (summary.drafter, summary.drafter_version) == ("llm", "1")
        assert (summary.model_name, summary.prompt_version) == ("draft-model-1", PROMPT_VERSION)
    paper.refresh_from_db()
    assert paper.short_name == "TrustANN"

    # One request per language, each from the source, with instructions in its language.
    en, zh = llm.bodies()
    for body, language in ((en, "en"), (zh, "zh")):
        assert body["model"] == "draft-model-1"
        assert body["response_format"]["type"] == "json_schema"
        schema = body["response_format"]["json_schema"]
        assert (schema["name"], schema["strict"]) == ("paper_summary", True)
        assert schema["schema"]["required"] == ["short_name", language]
        user = user_message(body)
        assert paper.title in user and paper.abstract in user  # verbatim
    assert user_message(en) == user_message(zh)  # the Chinese is not asked from the English
    assert "80–130 words" in system_message(en) and "副本" not in system_message(en)
    system = system_message(zh)
    assert "replica → 副本" in system and "failure domain → 故障域" in system
    assert "150–260 个汉字" in system and "30 亿" in system

    rows = list(LLMRequest.objects.order_by("pk"))
    assert [(r.purpose, r.model_name, r.paper_id) for r in rows] == [
        ("draft_paper", "draft-model-1", paper.pk)
    ] * 2
    assert {(r.prompt_tokens, r.completion_tokens, r.ok, r.error) for r in rows} == {
        (1200, 700, True, "")
    }
    run = DraftRun.objects.get(paper=paper)
    assert (run.prompt_tokens, run.completion_tokens) == (2400, 1400)
    assert run.model_name == "draft-model-1" and run.prompt_version == PROMPT_VERSION


def test_it_asks_again_after_malformed_json_then_takes_the_good_answer(llm, infra):
    paper = demo_paper("hilo", infra)
    llm.script(
        completion('{"short_name": "HiLO", "en": {"headline": '), completion(recorded("hilo"))
    )

    outcome = paper_draft(paper=paper, track=infra)

    assert outcome.languages == ["en", "zh"]
    first, _zh, second = llm.bodies()  # both languages first, then the follow-up
    follow_up = second["messages"][-1]
    assert follow_up["role"] == "user" and "the answer is not JSON" in follow_up["content"]
    assert "zh:" not in follow_up["content"]  # the English request speaks for English only
    assert second["messages"][:2] == first["messages"]
    assert texts(paper)["zh"].takeaway == recorded("hilo")["zh"]["takeaway"]
    rows = list(LLMRequest.objects.order_by("pk"))
    assert [r.ok for r in rows] == [False, True, True]
    assert rows[0].error.startswith("answer rejected: en: the answer is not JSON")
    assert rows[0].completion_tokens == 600  # the rejected answer's tokens still count


def _zh_in_english(name: str) -> dict:
    answer = copy.deepcopy(recorded(name))
    answer["zh"] = copy.deepcopy(answer["en"])
    return answer


def test_it_asks_again_when_zh_is_english_then_falls_back_to_the_offline_card(llm, infra):
    paper = demo_paper("trustann", infra)
    llm.script(completion(_zh_in_english("trustann")))

    outcome = paper_draft(paper=paper, track=infra)

    # The offline drafter's Chinese card stands in (issue 38), with the reason in the notes.
    assert outcome.languages == ["en", "zh"]
    assert texts(paper)["zh"].body.startswith("离线资料卡")
    note = next(n for n in DraftRun.objects.get(paper=paper).notes if n.startswith("zh: "))
    assert note.startswith("zh: the model's answer was rejected: ")
    assert "the zh summary is not Chinese" in note
    _en, first, second = llm.bodies()
    assert "zh: the zh headline is not Chinese" in second["messages"][-1]["content"]
    assert second["messages"][:2] == first["messages"]
    assert second["messages"][2] == {
        "role": "assistant",
        "content": json.dumps(_zh_in_english("trustann"), ensure_ascii=False),
    }
    assert set(texts(paper)) == {"en", "zh"}
    assert texts(paper)["zh"].drafter == "offline-card"  # recorded as the card it is
    run = DraftRun.objects.get(paper=paper)
    assert any(note.startswith("asked again: zh: ") for note in run.notes)


def test_it_keeps_the_good_language_of_the_first_answer_and_the_fixed_one_of_the_second(llm, infra):
    paper = demo_paper("trustann", infra)
    second = copy.deepcopy(recorded("trustann"))
    second["en"]["headline"] = "A different English headline the second time"
    llm.script(completion(_zh_in_english("trustann")), completion(second))

    outcome = paper_draft(paper=paper, track=infra)

    assert outcome.languages == ["en", "zh"]
    stored = texts(paper)
    assert stored["en"].headline == recorded("trustann")["en"]["headline"]  # from the first
    assert stored["zh"].body == recorded("trustann")["zh"]["summary"]  # from the second


def test_it_flags_an_invented_number_and_stores_the_draft(llm, infra):
    paper = demo_paper("trustann", infra)
    answer = copy.deepcopy(recorded("trustann"))
    for language in ("en", "zh"):
        for key in ("summary", "numbers"):
            value = answer[language][key]
            answer[language][key] = (
                value.replace("9.36%", "7.5%")
                if isinstance(value, str)
                else [n.replace("9.36%", "7.5%") for n in value]
            )
    llm.script(completion(answer))

    outcome = paper_draft(paper=paper, track=infra)

    assert outcome.languages == ["en", "zh"]
    assert ("en", "number", "7.5%") in outcome.flags and ("zh", "number", "7.5%") in outcome.flags
    stored = texts(paper)
    assert "7.5%" in stored["en"].body
    for language in ("en", "zh"):
        flags = stored[language].flags.filter(kind="number", field="body")
        assert [f.text for f in flags] == ["7.5%"]
        assert stored[language].body[flags[0].start : flags[0].end] == "7.5%"


def test_it_falls_back_to_the_offline_drafter_when_the_takeaway_is_not_in_the_summary(llm, infra):
    paper = demo_paper("hilo", infra)
    answer = copy.deepcopy(recorded("hilo"))
    answer["en"]["takeaway"] = "Products should fail gracefully."
    llm.script(completion(answer))

    outcome = paper_draft(paper=paper, track=infra)

    first, _zh, second = llm.bodies()
    assert (
        "en: the en takeaway does not occur inside the en summary"
        in second["messages"][-1]["content"]
    )
    assert outcome.languages == ["en", "zh"]
    stored = texts(paper)
    offline = OfflineDrafter().draft_paper(paper_input(paper=paper, track=infra))
    assert stored["en"].body == offline.languages["en"].summary
    assert stored["en"].takeaway in stored["en"].body
    assert stored["zh"].body == recorded("hilo")["zh"]["summary"]
    # Each text says who wrote it: the offline drafter the English, the model the Chinese.
    assert (stored["en"].drafter, stored["en"].model_name) == ("offline-extractive", "")
    assert (stored["zh"].drafter, stored["zh"].model_name) == ("llm", "draft-model-1")
    run = DraftRun.objects.get(paper=paper)
    assert any(
        note.startswith("en: the model's answer was rejected: the en takeaway does not occur")
        and note.endswith("drafted by offline-extractive 2 instead")
        for note in run.notes
    )


def test_it_retries_a_429_after_its_retry_after_then_drafts(llm, infra):
    paper = demo_paper("c2kv", infra)
    llm.script(error(429, "Rate limit reached", retry_after="1"), completion(recorded("c2kv")))

    outcome = paper_draft(paper=paper, track=infra)

    assert outcome.languages == ["en", "zh"]
    first, second, _zh = llm.requests_to(PATH)
    assert second.at - first.at >= 0.95
    assert texts(paper)["en"].highlights == []
    # the client's retry is inside one request: one row per language
    assert list(LLMRequest.objects.values_list("ok", flat=True)) == [True, True]


def test_it_leaves_every_language_missing_after_timeouts_within_a_bound(llm, infra, settings):
    settings.LLM_CONCURRENCY = 2  # both languages wait at once: one language's bound
    paper = demo_paper("trustann", infra)
    llm.script(slow(TIMEOUT_S * 4))

    started = time.monotonic()
    outcome = paper_draft(paper=paper, track=infra)
    elapsed = time.monotonic() - started

    attempts = MAX_RETRIES + 1
    # Each attempt waits its timeout; the client's backoff before a retry is at most 0.5 s.
    assert elapsed < attempts * TIMEOUT_S + MAX_RETRIES * 0.5 + 1.0
    assert len(llm.bodies()) == 2 * attempts
    reason = f"the model did not answer: timed out after {attempts} attempts"
    assert outcome.languages == [] and outcome.missing == {"en": reason, "zh": reason}
    assert not Summary.objects.filter(paper=paper).exists()
    rows = LLMRequest.objects.all()
    assert [(row.ok, row.error) for row in rows] == [
        (False, f"timed out after {attempts} attempts")
    ] * 2


def test_a_timeout_on_re_drafting_keeps_the_stored_texts(llm, infra):
    paper = demo_paper("trustann", infra)
    llm.script(completion(recorded("trustann")))
    paper_draft(paper=paper, track=infra)
    before = {code: (s.body, s.updated_at) for code, s in texts(paper).items()}

    llm.script(slow(TIMEOUT_S * 4))
    outcome = paper_draft(paper=paper, track=infra, redraft=True)

    assert outcome.languages == []
    assert {code: (s.body, s.updated_at) for code, s in texts(paper).items()} == before
    run = DraftRun.objects.filter(paper=paper).order_by("-pk").first()
    assert any("timed out after 2 attempts" in note for note in run.notes)


def _spend(tokens: int) -> None:
    LLMRequest.objects.create(
        purpose=LLMRequest.Purpose.SCORE,
        model_name="judge-model",
        prompt_tokens=tokens - tokens // 2,
        completion_tokens=tokens // 2,
        ok=True,
    )


def test_it_stops_drafting_when_the_daily_token_budget_is_spent(llm, infra, settings):
    settings.LLM_DAILY_TOKEN_BUDGET = 5000
    paper = demo_paper("c2kv", infra)
    _spend(5000)
    llm.script(completion(recorded("c2kv")))

    with pytest.raises(DraftingStopped) as stopped:
        paper_draft(paper=paper, track=infra)

    assert str(stopped.value) == "the daily token budget of 5000 tokens is spent (used 5000)"
    assert llm.bodies() == []
    assert not Summary.objects.filter(paper=paper).exists()
    assert DraftRun.objects.get(paper=paper).error == str(stopped.value)


def test_it_drafts_while_one_token_of_the_budget_is_left(llm, infra, settings):
    settings.LLM_DAILY_TOKEN_BUDGET = 5000
    paper = demo_paper("c2kv", infra)
    _spend(4999)
    llm.script(completion(recorded("c2kv")))

    assert paper_draft(paper=paper, track=infra).languages == ["en", "zh"]


def test_a_budget_spent_by_the_first_answer_skips_the_second_request(llm, infra, settings):
    settings.LLM_DAILY_TOKEN_BUDGET = 5000
    paper = demo_paper("trustann", infra)
    _spend(3000)
    llm.script(completion(_zh_in_english("trustann"), prompt_tokens=1500, completion_tokens=500))

    outcome = paper_draft(paper=paper, track=infra)

    # both languages are asked once (the budget is checked per paper); the follow-up is not
    assert len(llm.bodies()) == 2
    assert outcome.languages == ["en", "zh"]  # the offline Chinese card stands in
    notes = DraftRun.objects.get(paper=paper).notes
    assert any(
        n.startswith("zh: the daily token budget of 5000 tokens is spent (used 7000)")
        for n in notes
    )


def test_it_never_overwrites_an_editors_text(llm, infra):
    paper = demo_paper("hilo", infra)
    editor_text = Summary.objects.create(
        paper=paper,
        language="en",
        headline="An editor's headline",
        body="An editor wrote this. Keep it exactly.",
        takeaway="Keep it exactly.",
        provenance=Summary.Provenance.EDITOR,
    )
    llm.script(completion(recorded("hilo")))

    for redraft in (False, True):
        outcome = paper_draft(paper=paper, track=infra, redraft=redraft)
        assert outcome.skipped["en"] == EDITOR_WROTE

    editor_text.refresh_from_db()
    assert editor_text.body == "An editor wrote this. Keep it exactly."
    assert editor_text.provenance == Summary.Provenance.EDITOR
    assert texts(paper)["zh"].body == recorded("hilo")["zh"]["summary"]


# -- intros ---------------------------------------------------------------------------------

INTRO = IntroInput(
    track_name_en="Infra",
    track_name_zh="基础设施",
    date="2026-10-28",
    entries=(
        IntroEntry(
            title="HiLO: Towards Product-Level Graceful Degradation with a Quality-Aware, "
            "Load-Aware Control Framework",
            takeaway="Degrade the product as a whole, not each service on its own.",
            short_name="HiLO",
            is_lead=True,
        ),
        IntroEntry(
            title="Failure-Resilient and Verifiable Distributed Approximate Nearest-Neighbor "
            "Retrieval",
            takeaway="Accept a result only when independent replicas vouch for it.",
            short_name="TrustANN",
        ),
        IntroEntry(
            title="C2KV: Compressed and Composable KV Cache Reuse for Efficient LLM Inference",
            takeaway="Build each document's cache once, small and ready to combine.",
            short_name="C2KV",
        ),
    ),
)


def _drafter() -> LLMDrafter:
    return LLMDrafter.from_settings()


def test_it_drafts_each_language_of_a_daily_intro_in_its_own_request(llm, db):
    intro = recorded("intro")
    llm.script(
        completion({"en": intro["en"]}, prompt_tokens=400, completion_tokens=300),
        completion({"zh": intro["zh"]}, prompt_tokens=410, completion_tokens=320),
    )

    draft = _drafter().draft_intro(INTRO)

    assert draft.texts == intro and draft.missing == {}
    assert (draft.drafter, draft.model, draft.prompt_version) == (
        "llm",
        "draft-model-1",
        PROMPT_VERSION,
    )
    en, zh = llm.bodies()
    for body, language in ((en, "en"), (zh, "zh")):
        schema = body["response_format"]["json_schema"]
        assert schema["name"] == "daily_intro" and schema["schema"]["required"] == [language]
        user = user_message(body)
        for entry in INTRO.entries:
            assert entry.title in user and entry.takeaway in user
    assert system_message(en).startswith("You write the English intro")
    assert system_message(zh).startswith("你为 Paper Daily 撰写某一天的中文导语")
    rows = LLMRequest.objects.order_by("pk")
    assert [(r.purpose, r.paper_id, r.prompt_tokens, r.ok) for r in rows] == [
        ("draft_intro", None, 400, True),
        ("draft_intro", None, 410, True),
    ]
    assert [(u.prompt_tokens, u.completion_tokens) for u in draft.usage] == [(400, 300), (410, 320)]


def test_it_asks_again_when_the_intro_zh_is_english_then_falls_back(llm, db):
    english = recorded("intro")["en"]
    llm.script(completion({"en": english}), completion({"zh": english}))

    draft = _drafter().draft_intro(INTRO)

    en, zh, again = llm.bodies()
    assert "zh: the zh intro is not Chinese" in again["messages"][-1]["content"]
    assert again["messages"][:2] == zh["messages"]  # the Chinese request, asked again
    assert draft.texts["en"] == english
    assert draft.texts["zh"].startswith("今天的")  # the offline intro stands in
    assert any(
        n.startswith("zh: the model's answer was rejected: the zh intro is not")
        for n in draft.notes
    )


def test_the_drafter_model_defaults_to_the_judges(llm, db, settings):
    settings.LLM_DRAFT_MODEL = ""
    llm.script(completion(recorded("intro")))
    assert _drafter().draft_intro(INTRO).model == "judge-model"
    assert llm.bodies()[0]["model"] == "judge-model"


# -- a whole daily --------------------------------------------------------------------------

DAILY_PAPERS = ("hilo", "trustann", "c2kv")


def _answer_by_request(body: dict):
    """The recorded answer for whichever paper (or intro) the request is about."""
    if body["response_format"]["json_schema"]["name"] == "daily_intro":
        return completion(recorded("intro"), prompt_tokens=500, completion_tokens=300)
    user = user_message(body)
    slug = next(s for s in DAILY_PAPERS if recorded(s)["short_name"] in user)
    return completion(recorded(slug), prompt_tokens=1500, completion_tokens=900)


def _draft_daily(track: Track) -> Daily:
    papers = [demo_paper(slug, track) for slug in DAILY_PAPERS]
    return make_daily(
        track=track, papers=papers, status=Daily.Status.DRAFT, intro_en="", intro_zh=""
    )


def test_a_daily_gets_both_languages_of_every_entry_and_both_intros(llm, infra):
    daily = _draft_daily(infra)
    llm.answer_with(_answer_by_request)

    outcome = daily_draft(daily=daily)

    assert outcome.stopped == ""
    assert [o.languages for o in outcome.entries] == [["en", "zh"]] * 3
    assert outcome.flagged == 0 and outcome.intro == ["en", "zh"]
    daily.refresh_from_db()
    assert (daily.intro_en, daily.intro_zh) == (recorded("intro")["en"], recorded("intro")["zh"])
    assert daily.intro_flags == []
    intro_request = llm.bodies()[-1]
    assert intro_request["response_format"]["json_schema"]["name"] == "daily_intro"
    for slug in DAILY_PAPERS:
        assert recorded(slug)["en"]["takeaway"] in user_message(intro_request)
    # 3 papers × 2 languages + the intro's 2 languages
    assert LLMRequest.objects.filter(ok=True).count() == 8


def test_a_spent_budget_stops_the_daily_cleanly_and_keeps_what_was_drafted(llm, infra, settings):
    settings.LLM_DAILY_TOKEN_BUDGET = 2000  # the first paper's two answers spend 4,800
    daily = _draft_daily(infra)
    llm.answer_with(_answer_by_request)

    outcome = daily_draft(daily=daily)

    assert outcome.stopped == "the daily token budget of 2000 tokens is spent (used 4800)"
    assert [o.languages for o in outcome.entries] == [["en", "zh"]]
    assert outcome.intro == [] and len(llm.bodies()) == 2
    assert set(texts(daily.entries.get(position=1).paper)) == {"en", "zh"}
    assert not Summary.objects.filter(paper=daily.entries.get(position=2).paper).exists()
    assert outcome.summary_line()["stopped"] == outcome.stopped
