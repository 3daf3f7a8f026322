"""The offline drafter: an English card of the abstract's own sentences by role, each able to
stand alone and in the third person, a Chinese card of the entry's facts (no translation),
within bounds, deterministic, and unbothered by junk abstracts."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from papers.drafting import offline
from papers.drafting.base import GlossaryEntry, IntroEntry, IntroInput, PaperInput
from papers.drafting.offline import OfflineDrafter, clean_text, split_sentences

DEMO_PAPERS = sorted(
    (Path(__file__).resolve().parent.parent / "dailies/demo/papers").glob("*.toml")
)
DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
CJK = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")


def _demo(path: Path) -> PaperInput:
    with path.open("rb") as f:
        data = tomllib.load(f)
    return PaperInput(canonical_id=data["slug"], title=data["title"], abstract=data["abstract"])


def _outputs(draft) -> list[str]:
    en = draft.languages["en"]
    return [en.headline, en.summary, en.takeaway, *en.numbers]


def _assert_copied_numbers(paper: PaperInput, draft) -> None:
    source_numbers = set(DIGITS.findall(paper.source_text))
    for text in _outputs(draft):
        for number in DIGITS.findall(text):
            assert number in source_numbers, (number, text)


def _assert_sound(paper: PaperInput, draft) -> None:
    en = draft.languages["en"]
    assert en.takeaway == ""  # a principle: the editor's to write
    assert 0 < len(en.headline) <= offline.HEADLINE_TARGET_CHARS
    assert len(en.takeaway) <= offline.TAKEAWAY_MAX_CHARS
    assert len(en.summary.split()) <= offline.SUMMARY_MAX_WORDS
    assert all(len(n) <= offline.NUMBER_MAX_CHARS for n in en.numbers)
    assert len(en.numbers) <= offline.NUMBERS_MAX
    assert not any(CJK.search(text) for text in _outputs(draft))
    _assert_copied_numbers(paper, draft)
    _assert_stands_alone(draft)


# Openers that need the sentence before them ("However,", "This view", "Such queries").
DANGLING = re.compile(
    r"^(?:however|moreover|furthermore|additionally|thus|therefore|hence|in contrast|instead,|"
    r"this|these|those|such|it|its|they|their|both|the former|the latter|we|our)\b",
    re.I,
)


def _assert_stands_alone(draft) -> None:
    en = draft.languages["en"]
    for sentence in split_sentences(en.summary):
        assert not DANGLING.match(sentence), sentence
        assert not re.search(r"\b(?:we|our|us)\b", sentence, re.I), sentence
    for number in en.numbers:
        assert not DANGLING.match(number), number


@pytest.mark.parametrize("path", DEMO_PAPERS, ids=lambda p: p.stem)
def test_it_drafts_each_demo_abstract_in_english_within_bounds(path):
    paper = _demo(path)
    draft = OfflineDrafter().draft_paper(paper)

    assert set(draft.languages) == {"en", "zh"}
    _assert_sound(paper, draft)
    assert draft.languages["en"].headline != clean_text(paper.title) or ":" not in paper.title
    # A card keeps only sentences that stand alone: it may be under the prose target.
    words = len(draft.languages["en"].summary.split())
    assert 25 <= words <= offline.SUMMARY_MAX_WORDS
    assert draft.drafter == "offline-extractive" and draft.drafter_version == offline.VERSION


def test_it_covers_all_sixteen_demo_items():
    assert len(DEMO_PAPERS) == 16


def test_it_writes_a_chinese_card_of_the_entrys_facts_marked_as_such():
    paper = PaperInput(
        canonical_id="x",
        title="PrefixRoute: Cache-Affinity Routing for LLM Serving",
        abstract="We propose PrefixRoute, a router that sends each request to the instance "
        "holding its prefix cache. On 64 GPUs it serves 40 million requests a day and cuts "
        "time to first token by 37% at 8K context, with 2.4x higher throughput. "
        "Training 3D-parallel models is out of scope.",
        organizations=("Alibaba",),
        venue="NSDI 2027",
        glossary=(GlossaryEntry(en="prefix cache", zh=("前缀缓存",)),),
    )
    draft = OfflineDrafter().draft_paper(paper)
    assert draft.missing == {}
    card = draft.languages["zh"]
    assert card.summary.startswith(offline.CARD_NOTE_ZH)  # says what it is
    assert draft.written_by["zh"][0] == offline.CARD_NAME  # and its provenance says who
    for fact in ("PrefixRoute", "Alibaba", "NSDI 2027", "前缀缓存（prefix cache）", "37%", "8K"):
        assert fact in card.summary, fact
    assert "4000 万" in card.summary and "2.4x" in card.summary
    assert "3D" not in card.summary and card.takeaway == ""
    assert card.headline == "PrefixRoute：论文资料卡（Alibaba · NSDI 2027）"
    # No English sentence of the abstract is carried into the Chinese card.
    assert not re.search(r"[A-Za-z]+ [a-z]+ [a-z]+", card.summary.replace("prefix cache", ""))


def test_it_counts_no_name_or_version_as_a_number():
    assert offline.numbers_in("3D-parallel training on H100 and RTX 4090 with FP8") == []
    assert offline.numbers_in("47B-parameter model, 8-bit weights") == []
    assert offline.numbers_in("2.5x faster, 30% less, at 8K, 1.5 times, 40 million") == [
        "2.5x",
        "30%",
        "8K",
        "1.5 times",
        "40 million",
    ]


def test_it_drops_connectives_and_never_takes_a_sentence_that_points_back():
    abstract = (
        "Serving long prompts wastes GPU memory on duplicated prefixes. However, existing "
        "routers ignore where a prefix is cached. This view leads to cache misses. We propose "
        "PrefixRoute, a router that sends each request to the instance holding its prefix. "
        "Such queries dominate chat traffic. Our evaluation on 64 GPUs shows PrefixRoute cuts "
        "time to first token by 37%. It also raises throughput by 2.4x."
    )
    paper = PaperInput(
        canonical_id="x",
        title="Cache-Affinity Routing",
        abstract=abstract,
        short_name="PrefixRoute",
    )
    draft = OfflineDrafter().draft_paper(paper)
    en = draft.languages["en"]
    _assert_stands_alone(draft)
    assert "Existing routers ignore where a prefix is cached." in en.summary
    assert "This view" not in en.summary and "Such queries" not in en.summary
    assert "It also" not in en.summary
    assert "The authors propose PrefixRoute" in en.summary
    assert (
        "The evaluation on 64 GPUs shows PrefixRoute cuts time to first token by 37%" in en.summary
    )
    assert (
        en.headline
        == "PrefixRoute: A router that sends each request to the instance holding its prefix"
    )


def test_it_is_deterministic():
    for path in DEMO_PAPERS:
        paper = _demo(path)
        assert OfflineDrafter().draft_paper(paper) == OfflineDrafter().draft_paper(paper)


def test_it_gives_the_headline_numbers_with_their_conditions():
    paper = next(_demo(p) for p in DEMO_PAPERS if p.stem == "hilo")
    numbers = OfflineDrafter().draft_paper(paper).languages["en"].numbers
    assert "In production it handled nine real traffic surges, up to 2.38× baseline peak" in numbers
    assert any("0.425 points against a 0.5-point limit" in n for n in numbers)


def test_it_leaves_the_takeaway_to_the_editor_and_heads_with_the_approach_not_the_title():
    paper = next(_demo(p) for p in DEMO_PAPERS if p.stem == "wakman")
    draft = OfflineDrafter().draft_paper(paper)
    en = draft.languages["en"]
    assert en.takeaway == "" and "en: the takeaway is left for the editor" in draft.notes
    assert en.headline == "WAKMan: A workload-aware manager for vLLM's prefix KV cache"
    assert en.summary.startswith("WAKMan is a workload-aware manager")


@pytest.mark.parametrize(
    ("title", "abstract", "expected"),
    [
        ("HiLO: Towards Product-Level Graceful Degradation", "It degrades.", "HiLO"),
        ("Minerva", "Minerva is NVIDIA's system for gray failures.", "Minerva"),
        (
            "Let the Gate Decide: Per-Lookup Precision",
            "GateRQ quantizes tables. The gate matters. GateRQ stores rows as codes.",
            "GateRQ",
        ),
        ("Failure-Resilient Retrieval", "TrustANN makes retrieval verifiable.", "TrustANN"),
        ("Where Rounding Happens Matters: Alignment", "Reinforcement learning collapses.", None),
        ("Serving Models", "The LLM serving stack is slow. LLM requests queue.", None),
    ],
)
def test_it_finds_the_short_name_when_there_is_one(title, abstract, expected):
    paper = PaperInput(canonical_id="x", title=title, abstract=abstract)
    assert offline.find_short_name(paper) == expected


def test_it_compresses_the_idea_when_the_title_is_only_a_name():
    paper = next(_demo(p) for p in DEMO_PAPERS if p.stem == "cosmos-llm-gateway")
    headline = OfflineDrafter().draft_paper(paper).languages["en"].headline
    assert headline == "Cosmos: PayPal's LLM gateway"


LONG_SENTENCE = " ".join(f"word{i}" for i in range(200)) + "."
JUNK = {
    "empty": "",
    "whitespace": "   \n\t  ",
    "one_sentence": "We propose FastKV, which speeds decoding by 2.5x on an H100 GPU.",
    "no_punctuation": "a system for caching keys and values across many layers of a model "
    "that runs on many gpus with 40 percent less memory and no loss " * 4,
    "very_long_sentence": LONG_SENTENCE,
    "latex": "We present $\\mathrm{FlashX}$, which is $2.5\\times$ faster and saves "
    "$30\\%$ of memory at $N=8192$ tokens. However, prior kernels stall on long inputs. "
    "The design keeps tiles in $\\textbf{SRAM}$ and fuses the softmax.",
    "line_breaks": "Serving\nlong contexts\n\nis costly.  However, caches\ngrow with "
    "length.\nWe introduce\nTinyKV, cutting memory by 4.1x\nat 32K context.",
    "abbreviations": "Prior systems (e.g. vLLM, SGLang, etc.) cache prefixes. We propose "
    "PrefixHub, which shares them across 12 nodes vs. one node in prior work, "
    "raising hit ratio by 18.5% et al. reported before.",
    "numbers_only": "1 2 3 4 5 6 7 8 9 10 11 12.",
    "chinese": "我们提出一种新的缓存系统，在八个节点上将吞吐提高了百分之三十，同时保持准确率不变。",
}


@pytest.mark.parametrize("name", sorted(JUNK))
def test_it_survives_a_junk_abstract(name):
    paper = PaperInput(canonical_id=name, title="A Title About Caching Things", abstract=JUNK[name])
    draft = OfflineDrafter().draft_paper(paper)

    assert draft.languages["zh"].summary.startswith(offline.CARD_NOTE_ZH)
    if "en" in draft.missing:
        assert draft.missing["en"] and "en" not in draft.languages
    else:
        en = draft.languages["en"]
        assert en.takeaway == ""
        assert len(en.headline) <= offline.HEADLINE_TARGET_CHARS
        assert len(en.takeaway) <= offline.TAKEAWAY_MAX_CHARS
        assert len(en.summary.split()) <= offline.SUMMARY_MAX_WORDS
        _assert_copied_numbers(paper, draft)


def test_it_stays_missing_with_the_reason_for_an_empty_abstract():
    draft = OfflineDrafter().draft_paper(PaperInput(canonical_id="x", title="T", abstract=""))
    assert draft.missing["en"] == "the paper has no abstract to draft from"


def test_it_drafts_from_an_abstract_at_the_minimum_length_and_not_below():
    words = [f"w{i}" for i in range(offline.ABSTRACT_MIN_WORDS)]
    at = PaperInput(canonical_id="a", title="Title words here", abstract=" ".join(words) + ".")
    below = PaperInput(canonical_id="b", title="Title", abstract=" ".join(words[:-1]) + ".")
    assert "en" in OfflineDrafter().draft_paper(at).languages
    assert "too short" in OfflineDrafter().draft_paper(below).missing["en"]


def test_it_notes_a_summary_shorter_than_the_bound():
    draft = OfflineDrafter().draft_paper(
        PaperInput(canonical_id="x", title="T", abstract=JUNK["one_sentence"])
    )
    assert draft.languages["en"].summary == JUNK["one_sentence"].replace("We", "The authors")
    assert any("under 80" in note for note in draft.notes)


def test_it_reads_latex_as_plain_text_keeping_the_digits():
    text = clean_text(JUNK["latex"])
    assert "$" not in text and "\\" not in text
    assert "2.5× faster" in text and "30%" in text and "FlashX" in text


def test_it_cuts_a_run_on_sentence_at_the_word_bound():
    at = " ".join(f"w{i}" for i in range(offline.SENTENCE_MAX_WORDS)) + "."
    over = " ".join(f"w{i}" for i in range(offline.SENTENCE_MAX_WORDS + 1)) + "."
    assert split_sentences(at) == [at]
    (cut,) = split_sentences(over)
    assert cut.endswith("…") and len(cut.split()) == offline.SENTENCE_MAX_WORDS


def test_it_keeps_sentences_whole_across_abbreviations_and_decimals():
    sentences = split_sentences(clean_text(JUNK["abbreviations"]))
    assert len(sentences) == 2
    assert sentences[1].startswith("We propose PrefixHub") and "18.5%" in sentences[1]


def _evidence_abstract(sentence_words: list[int]) -> str:
    """Sentences of the given word counts, each stating a result (all are wanted)."""
    sentences = []
    for i, n in enumerate(sentence_words):
        words = [f"x{i}w{j}" for j in range(n - 5)]
        sentences.append(f"Sentence{i} is faster by {i + 1}.5% " + " ".join(words) + ".")
    return " ".join(sentences)


def test_it_keeps_the_summary_at_the_word_bound_and_not_over():
    at = _evidence_abstract([26, 26, 26, 26, 26])  # 130 words: all of it fits
    over = _evidence_abstract([26, 26, 26, 26, 27])  # 131 words: one sentence goes
    draft_at = OfflineDrafter().draft_paper(PaperInput(canonical_id="a", title="T", abstract=at))
    draft_over = OfflineDrafter().draft_paper(
        PaperInput(canonical_id="b", title="T", abstract=over)
    )
    assert len(draft_at.languages["en"].summary.split()) == offline.SUMMARY_MAX_WORDS
    words_over = len(draft_over.languages["en"].summary.split())
    assert offline.SUMMARY_MIN_WORDS <= words_over < offline.SUMMARY_MAX_WORDS


def test_it_keeps_a_number_sentence_at_the_length_bound_whole_and_splits_a_longer_one():
    def sentence(length: int) -> str:
        head = "Throughput rose by 2.5× at 8K context"
        filler = ", with the same accuracy on every benchmark and model we measured"
        text = (head + filler * 3)[: length - 1].rstrip(" ,")
        text = text + "z" * (length - len(text))
        return text + "."

    at, over = sentence(offline.NUMBER_MAX_CHARS), sentence(offline.NUMBER_MAX_CHARS + 1)
    assert len(at) == offline.NUMBER_MAX_CHARS + 1 and len(over) == offline.NUMBER_MAX_CHARS + 2
    assert offline._number_clauses(at) == [at[:-1]]
    split = offline._number_clauses(over)
    assert split and split[0].startswith("Throughput rose by 2.5× at 8K context")
    assert all(len(n) <= offline.NUMBER_MAX_CHARS for n in split)


def test_it_trims_a_title_over_the_headline_target_at_a_word_boundary():
    at = "A" * 10 + " " + " ".join(["Bbbbbbbbb"] * 8) + " " + "C" * 9  # 100 chars
    assert len(at) == offline.HEADLINE_TARGET_CHARS
    over = at + "D"
    abstract = "Caching keys and values saves memory in long context serving systems."
    for title, expected in ((at, at), (over, None)):
        paper = PaperInput(canonical_id="t", title=title, abstract=abstract)
        headline = OfflineDrafter().draft_paper(paper).languages["en"].headline
        if expected:
            assert headline == expected
        else:
            assert headline.endswith("…") and len(headline) <= offline.HEADLINE_TARGET_CHARS
            assert headline[:-1] in over


def _intro(n: int = 10, dives: int = 2) -> IntroInput:
    entries = tuple(
        IntroEntry(
            title=f"Title {i}",
            takeaway=f"Takeaway number {i}.",
            short_name=f"Sys{i}",
            is_lead=(i == 3),
            has_deep_dive=(i in (3, 5)),
            organizations=(f"Org{i}",),
        )
        for i in range(n)
    )
    return IntroInput(
        track_name_en="Infra",
        track_name_zh="基础设施",
        date="2026-10-28",
        entries=entries,
        deep_dives=dives,
    )


def test_it_drafts_an_english_intro_naming_the_lead_and_the_standouts():
    draft = OfflineDrafter().draft_intro(_intro())
    text = draft.texts["en"]
    assert text == (
        "Today's Infra daily has 10 papers and 2 deep dives. The lead story is Sys3 from Org3. "
        "Also in it: Sys5 (Org5), Sys0 (Org0) and 7 more. Start with Sys3 and its deep dive."
    )
    assert "Takeaway" not in text  # names and organisations, not stitched takeaways
    assert draft.missing == {}
    assert not CJK.search(text)
    assert draft.texts["zh"] == (
        "今天的基础设施日报收录 10 篇论文、2 篇深度解读。头条是 Sys3（Org3）。"
        "另有 Sys5（Org5）、Sys0（Org0） 等 7 篇。建议先读 Sys3 及其深度解读。"
    )


def test_it_counts_a_single_paper_without_deep_dives():
    text = OfflineDrafter().draft_intro(_intro(n=1, dives=0)).texts["en"]
    assert text.startswith("Today's Infra daily has 1 paper.")


def test_it_leaves_the_intro_missing_for_a_daily_without_entries():
    draft = OfflineDrafter().draft_intro(_intro(n=0))
    assert draft.texts == {} and draft.missing["en"] == "the daily has no entries to introduce"
    assert draft.missing["zh"] == draft.missing["en"]


def test_a_limitation_after_the_approach_is_not_put_first_as_the_problem():
    abstract = (
        "We present TideServe, a serving engine that batches requests per iteration. "
        "TideServe reserves memory for long requests and packs short ones around them. "
        "On 1,200 GPUs it raised throughput by 1.8x. "
        "We describe the failure modes we encountered during rollout."
    )
    paper = PaperInput(canonical_id="x", title="TideServe: Scheduling", abstract=abstract)
    summary = OfflineDrafter().draft_paper(paper).languages["en"].summary
    assert summary.startswith("The authors present TideServe")


def test_an_intro_naming_a_trimmed_title_ends_each_sentence_once():
    long_title = "Prefetching Experts Across the PCIe Boundary for Memory-Constrained Inference"
    intro = IntroInput(
        track_name_en="Infra",
        track_name_zh="基础设施",
        date="2026-12-04",
        entries=(IntroEntry(title=long_title, takeaway="", is_lead=True),),
    )
    text = OfflineDrafter().draft_intro(intro).texts["en"]
    assert "…." not in text and text.count("Prefetching Experts") == 2


def test_context_from_before_the_approach_stays_before_it():
    abstract = (
        "Reinforcement learning for reasoning models alternates between long rollouts and "
        "updates on the same accelerators. "
        "We present RolloutPool, a system that runs rollout workers on a separate pool. "
        "A length-aware scheduler overlaps stragglers with the next batch."
    )
    paper = PaperInput(canonical_id="x", title="RolloutPool: Disaggregated RL", abstract=abstract)
    summary = OfflineDrafter().draft_paper(paper).languages["en"].summary
    assert summary.startswith("Reinforcement learning for reasoning models alternates")
