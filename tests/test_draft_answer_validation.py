"""Checks of a model's drafting answer, per language, each bound at its edge."""

from __future__ import annotations

import copy
import json

import pytest

from papers.drafting import validate as v
from papers.drafting.validate import intro_answer_validate, paper_answer_validate
from tests.llm_server import recorded


def _answer(**changes) -> str:
    data = copy.deepcopy(recorded("trustann"))
    for path, value in changes.items():
        language, key = path.split("__")
        data[language][key] = value
    return json.dumps(data, ensure_ascii=False)


def _en_summary(words: int, takeaway: str = "Trust what agrees.") -> str:
    filler = " ".join(["replica"] * (words - len(takeaway.split())))
    return f"{filler} {takeaway}"


def _zh_summary(chars: int, takeaway: str = "副本一致才可信。") -> str:
    return "副" * (chars - v.cjk_chars(takeaway)) + "，" + takeaway


def test_it_accepts_the_recorded_answers():
    for name in ("hilo", "trustann", "c2kv"):
        answer = paper_answer_validate(json.dumps(recorded(name), ensure_ascii=False))
        assert answer.problems == {} and set(answer.languages) == {"en", "zh"}
        assert answer.short_name == recorded(name)["short_name"]


@pytest.mark.parametrize(
    "content, reason",
    [
        ("", "the answer is empty"),
        ('{"en": ', "the answer is not JSON"),
        ("[1, 2]", "the answer is JSON but not an object (list)"),
    ],
)
def test_it_reports_a_malformed_answer_for_both_languages(content, reason):
    answer = paper_answer_validate(content)
    assert answer.languages == {}
    assert set(answer.problems) == {"en", "zh"}
    assert all(problem.startswith(reason) for problem in answer.problems.values())


def test_it_reports_missing_and_mistyped_keys_per_language():
    data = copy.deepcopy(recorded("trustann"))
    del data["en"]["takeaway"]
    data["zh"]["numbers"] = "100% → 0"
    answer = paper_answer_validate(json.dumps(data, ensure_ascii=False))
    assert answer.problems == {
        "en": "en.takeaway is missing or not a non-empty string",
        "zh": "zh.numbers is missing or not a list of strings",
    }
    data = copy.deepcopy(recorded("trustann"))
    del data["zh"]
    answer = paper_answer_validate(json.dumps(data, ensure_ascii=False))
    assert answer.problems == {"zh": "zh is missing or not an object"}
    assert set(answer.languages) == {"en"}


def test_it_reports_a_zh_text_in_english_and_an_en_text_in_chinese():
    data = copy.deepcopy(recorded("trustann"))
    data["en"], data["zh"] = data["zh"], data["en"]
    answer = paper_answer_validate(json.dumps(data, ensure_ascii=False))
    assert "the zh summary is not Chinese (0% CJK, at least 50%)" in answer.problems["zh"]
    assert "the en summary is Chinese, not English" in answer.problems["en"]


def test_chinese_that_keeps_engineering_terms_in_latin_letters_is_chinese():
    text = "KV cache 放不进显存时，SGLang 与 vLLM 都要把 MoE 专家权重挪到主机内存。"
    assert v.cjk_share(text) >= v.ZH_MIN_CJK_SHARE
    assert v.cjk_share("Store the 显存-bound KV cache on the host instead.") <= v.EN_MAX_CJK_SHARE


def test_the_language_thresholds_are_edges():
    # Two CJK characters against two Latin words: exactly the zh threshold, which passes.
    assert v.cjk_share("Hello world 中文") == v.ZH_MIN_CJK_SHARE
    assert v._language_problem("zh", "Hello world 中文", "headline") is None
    assert v._language_problem("zh", "Hello big world 中文", "headline")
    # One CJK character against three Latin words: exactly the en threshold, which passes.
    assert v.cjk_share("Keep the 降 term") == v.EN_MAX_CJK_SHARE
    assert v._language_problem("en", "Keep the 降 term", "headline") is None
    assert v._language_problem("en", "Keep 降 term", "headline")


@pytest.mark.parametrize(
    "words, ok",
    [(v.EN_SUMMARY_WORDS[0] - 1, False), (v.EN_SUMMARY_WORDS[0], True)]
    + [(v.EN_SUMMARY_WORDS[1], True), (v.EN_SUMMARY_WORDS[1] + 1, False)],
)
def test_the_en_summary_length_bounds(words, ok):
    summary = _en_summary(words)
    assert v.english_words(summary) == words
    answer = paper_answer_validate(_answer(en__summary=summary, en__takeaway="Trust what agrees."))
    assert ("en" in answer.languages) is ok
    if not ok:
        assert f"the en summary has {words} words, outside 40–220" in answer.problems["en"]


@pytest.mark.parametrize(
    "chars, ok",
    [(v.ZH_SUMMARY_CHARS[0] - 1, False), (v.ZH_SUMMARY_CHARS[0], True)]
    + [(v.ZH_SUMMARY_CHARS[1], True), (v.ZH_SUMMARY_CHARS[1] + 1, False)],
)
def test_the_zh_summary_length_bounds(chars, ok):
    summary = _zh_summary(chars)
    assert v.cjk_chars(summary) == chars
    answer = paper_answer_validate(_answer(zh__summary=summary, zh__takeaway="副本一致才可信。"))
    assert ("zh" in answer.languages) is ok
    if not ok:
        assert f"the zh summary has {chars} characters, outside 80–450" in answer.problems["zh"]


def test_the_headline_fits_its_column():
    at_limit = "Replicas " + "x" * (v.HEADLINE_MAX_CHARS - len("Replicas "))
    assert paper_answer_validate(_answer(en__headline=at_limit)).problems == {}
    over = paper_answer_validate(_answer(en__headline=at_limit + "x"))
    assert "the en headline has 201 characters, over 200" in over.problems["en"]


def test_the_takeaway_is_one_short_sentence():
    words = " ".join(["agree"] * (v.EN_TAKEAWAY_MAX_WORDS - 1)) + " replicas."
    assert v.english_words(words) == v.EN_TAKEAWAY_MAX_WORDS
    answer = paper_answer_validate(_answer(en__summary=_en_summary(120, words), en__takeaway=words))
    assert answer.problems == {}
    longer = "more " + words
    answer = paper_answer_validate(
        _answer(en__summary=_en_summary(120, longer), en__takeaway=longer)
    )
    assert "the en takeaway has 41 words, outside 0–40" in answer.problems["en"]
    zh = "副" * v.ZH_TAKEAWAY_MAX_CHARS + "。"
    answer = paper_answer_validate(_answer(zh__summary=_zh_summary(200, zh), zh__takeaway=zh))
    assert answer.problems == {}
    zh = "副" + zh
    answer = paper_answer_validate(_answer(zh__summary=_zh_summary(200, zh), zh__takeaway=zh))
    assert "the zh takeaway has 81 characters" in answer.problems["zh"]


def test_the_takeaway_must_occur_in_the_summary_up_to_whitespace_quotes_and_full_stop():
    summary = recorded("trustann")["zh"]["summary"]
    answer = paper_answer_validate(
        _answer(zh__takeaway="结果可不可信，要由彼此独立的副本 共同作证")
    )
    # The stored takeaway is the summary's own span, so it occurs there verbatim.
    assert answer.languages["zh"].takeaway == "结果可不可信，要由彼此独立的副本共同作证。"
    assert answer.languages["zh"].takeaway in summary
    assert v.takeaway_span('Say "hi".', "We say. Say “hi”. Done") == "Say “hi”."
    missing = paper_answer_validate(_answer(zh__takeaway="副本越多越好。"))
    assert missing.problems == {"zh": "the zh takeaway does not occur inside the zh summary"}


def test_the_headline_numbers_are_bounded():
    at_limit = ["100% → 0"] * (v.NUMBERS_MAX - 1) + ["x" * v.NUMBER_MAX_CHARS]
    assert paper_answer_validate(_answer(en__numbers=at_limit)).problems == {}
    too_many = paper_answer_validate(_answer(en__numbers=at_limit + ["9.36%"]))
    assert "en.numbers has 9 items, over 8" in too_many.problems["en"]
    too_long = paper_answer_validate(_answer(en__numbers=["x" * (v.NUMBER_MAX_CHARS + 1)]))
    assert "a en number is over 200 characters" in too_long.problems["en"]


def test_a_short_name_that_is_not_a_short_string_is_ignored_with_a_note():
    data = dict(recorded("trustann"), short_name="x" * (v.SHORT_NAME_MAX_CHARS + 1))
    answer = paper_answer_validate(json.dumps(data, ensure_ascii=False))
    assert answer.short_name is None and answer.problems == {}
    assert answer.notes and answer.notes[0].startswith("short_name ")
    data["short_name"] = None
    assert paper_answer_validate(json.dumps(data, ensure_ascii=False)).notes == []


def test_an_intro_is_checked_per_language_with_its_bounds():
    good = recorded("intro")
    assert intro_answer_validate(json.dumps(good, ensure_ascii=False)).problems == {}
    low = " ".join(["papers"] * (v.EN_INTRO_WORDS[0] - 1))
    answer = intro_answer_validate(json.dumps({"en": low, "zh": good["zh"]}, ensure_ascii=False))
    assert answer.problems == {"en": "the en intro has 24 words, outside 25–250"}
    assert answer.texts == {"zh": good["zh"]}
    at_low = low + " today"
    answer = intro_answer_validate(json.dumps({"en": at_low, "zh": good["zh"]}))
    assert answer.problems == {}
    answer = intro_answer_validate(json.dumps({"en": good["en"], "zh": 3}))
    assert answer.problems == {"zh": "zh is missing or not a non-empty string"}


def _zh_with(sentence: str) -> str:
    summary = recorded("trustann")["zh"]["summary"]
    return summary.replace("。", f"。{sentence} ", 1)


def test_a_chinese_summary_with_english_sentences_is_refused():
    text = _zh_with(
        "The replicas disagree when one of them is stale. "
        "TrustANN compares the answers of two replicas before it returns them."
    )
    assert v.cjk_share(text) >= v.ZH_MIN_CJK_SHARE  # the share alone lets it through
    answer = paper_answer_validate(_answer(zh__summary=text))
    assert "zh" not in answer.languages and "en" in answer.languages
    assert "the zh summary has an English sentence (“The replicas disagree" in answer.problems["zh"]


@pytest.mark.parametrize(
    "sentence",
    [
        "KV cache",
        "time to first token (TTFT)",
        "Cache-Affinity Routing for Prefix-Heavy LLM Serving",
        "SGLang, vLLM and TensorRT-LLM",
    ],
)
def test_terms_and_names_in_latin_letters_are_allowed_in_chinese(sentence):
    answer = paper_answer_validate(_answer(zh__summary=_zh_with(sentence)))
    assert answer.problems == {}


def test_the_english_run_bound_is_an_edge():
    under = "it is the one we keep"  # 6 words, 4 function words
    assert v.english_sentence(under) == under
    assert v.english_sentence("it is the one we") is None  # 5 words
    assert v.english_sentence("replica shard router is the gateway") is not None
    assert v.english_sentence("replica shard router gateway is fast") is None  # 1 function word


def test_an_intro_in_chinese_with_an_english_sentence_is_refused():
    zh = "今天共 3 篇论文、1 篇深度解读，主线是 KV cache 的分层与调度。" * 2
    english = " We think that serving teams should start with this one."
    data = {"en": recorded("intro")["en"], "zh": zh + english}
    answer = intro_answer_validate(json.dumps(data, ensure_ascii=False))
    assert "has an English sentence" in answer.problems["zh"]
    data["zh"] = zh
    assert intro_answer_validate(json.dumps(data, ensure_ascii=False)).problems == {}
