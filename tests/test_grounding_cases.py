"""Grounding cases that hurt a reader: a true number on the wrong metric, swapped numbers,
TeX abstracts, Chinese fractions and 一倍, organisations outside the site's table, and an
intro crediting one entry's system to another organisation."""

from __future__ import annotations

import pytest

from papers.drafting.base import PaperInput
from papers.drafting.grounding import check_draft, check_intro, check_numbers


def _texts(flags) -> list[str]:
    return [f.text for f in flags]


# --- numbers on their metric ---------------------------------------------------------------
SOURCE = (
    "PrefixRoute routes each request to the replica that holds its prefix. On a 64-GPU "
    "cluster it reduces p99 latency by 35% and raises throughput by 20% over round-robin, "
    "and cuts memory by 1.8x."
)


@pytest.mark.parametrize(
    "language, draft, flagged",
    [
        ("en", "It cuts p99 latency by 35% and raises throughput by 20%.", []),
        ("en", "It cuts p99 latency by 20% and raises throughput by 35%.", ["20%", "35%"]),
        ("en", "Throughput rises by 35%.", ["35%"]),
        ("en", "Memory drops 1.8×, latency 35%.", []),
        ("en", "It is 1.8× faster.", ["1.8×"]),
        ("zh", "p99 延迟降低 35%，吞吐提高 20%。", []),
        ("zh", "p99 延迟降低 20%，吞吐提高 35%。", ["20%", "35%"]),
        ("zh", "吞吐提高 1.8 倍。", ["1.8 倍"]),
        # no metric beside the number in the draft: the number alone is checked, as before
        ("en", "The numbers that stand out: 35% and 20%.", []),
    ],
)
def test_a_number_is_grounded_only_on_its_metric(language, draft, flagged):
    flags = check_numbers(draft, SOURCE, language=language)
    assert _texts(flags) == flagged
    for flag in flags:
        assert "metric" in flag.detail


def test_the_detail_names_the_metric_the_source_gives():
    [flag] = check_numbers("Throughput rises by 35%.", SOURCE, language="en")
    assert flag.detail == (
        "“35%” is given for throughput here, but the source gives it for latency (another metric)."
    )


def test_a_number_the_source_gives_without_a_metric_grounds_any():
    source = "We report gains of 35% on three workloads."
    assert check_numbers("Latency drops by 35%.", source, language="en") == []


# --- TeX -----------------------------------------------------------------------------------
TEX_SOURCE = (
    r"KVStream cuts tail latency by 30\% and is $3.2\times$ faster than vLLM, with "
    r"2.4--9.6x speedups across models and 1.8$\times$ higher throughput at 12.5\% "
    r"of the memory."
)


@pytest.mark.parametrize(
    "language, draft",
    [
        ("en", "Tail latency falls by 30%."),
        ("en", "It is 3.2× faster than vLLM."),
        ("en", "Speedups range from 2.4× to 9.6× across models."),
        ("en", "Speedups of 2.4–9.6× across models."),
        ("en", "Throughput is 1.8× higher."),
        ("en", "It needs 12.5% of the memory."),
        ("zh", "尾延迟降低 30%，比 vLLM 快 3.2 倍，吞吐提高 1.8 倍。"),
    ],
)
def test_it_reads_numbers_written_in_tex(language, draft):
    assert check_numbers(draft, TEX_SOURCE, language=language) == []


def test_a_tex_number_still_grounds_only_its_own_value():
    flags = check_numbers("It is 3.5× faster than vLLM.", TEX_SOURCE, language="en")
    assert _texts(flags) == ["3.5×"]


def test_a_draft_written_in_tex_keeps_its_spans():
    draft = r"It is $3.5\times$ faster and cuts tail latency by 31\%."
    flags = check_numbers(draft, TEX_SOURCE, language="en")
    assert [draft[f.start : f.end] for f in flags] == _texts(flags)
    assert len(flags) == 2


# --- Chinese fractions and 一倍 -------------------------------------------------------------
@pytest.mark.parametrize(
    "draft, source, flagged",
    [
        ("三分之二的请求命中缓存。", "Two-thirds of requests hit the cache.", []),
        ("三分之二的请求命中缓存。", "2/3 of requests hit the cache.", []),
        ("三分之二的请求命中缓存。", "40% of requests hit the cache.", ["三分之二"]),
        ("四分之一的显存", "It needs a quarter of the memory.", []),
        ("四分之一的显存", "It needs a third of the memory.", ["四分之一"]),
        ("Two-thirds of requests hit the cache.", "三分之二的请求命中缓存。", []),
        (
            "Two-thirds of requests hit the cache.",
            "Half of requests hit the cache.",
            ["Two-thirds"],
        ),
    ],
)
def test_it_checks_fractions(draft, source, flagged):
    language = "zh" if "的" in draft else "en"
    assert _texts(check_numbers(draft, source, language=language)) == flagged


@pytest.mark.parametrize(
    "source, flagged",
    [
        ("It doubles decode throughput.", []),
        ("It raises decode throughput by 2x.", []),
        ("It raises decode throughput by 100%.", []),
        ("It raises decode throughput by 1.5x.", ["一倍"]),
    ],
)
def test_yi_bei_is_a_doubling(source, flagged):
    draft = "解码吞吐提升一倍。"
    assert _texts(check_numbers(draft, source, language="zh")) == flagged


# --- organisations ---------------------------------------------------------------------------
def _paper(**fields) -> PaperInput:
    values = {
        "canonical_id": "arxiv:2601.00001",
        "title": "PrefixRoute: Cache-Affinity Routing for Prefix-Heavy LLM Serving",
        "abstract": "PrefixRoute routes requests to replicas holding their prefix.",
        "short_name": "PrefixRoute",
        "organizations": ("Alibaba",),
    }
    return PaperInput(**(values | fields))


@pytest.mark.parametrize(
    "language, draft, flagged",
    [
        ("zh", "谷歌提出的 PrefixRoute 按前缀路由请求。", ["谷歌"]),
        ("en", "Google's PrefixRoute routes by prefix.", ["Google"]),
        ("en", "ByteDance engineers built PrefixRoute.", ["ByteDance"]),
        ("zh", "阿里巴巴的 PrefixRoute 按前缀路由请求。", []),
        ("en", "Alibaba's PrefixRoute routes by prefix.", []),
        ("zh", "阿里的 PrefixRoute 按前缀路由请求。", []),
    ],
)
def test_an_organisation_outside_the_sites_table_is_checked(language, draft, flagged):
    # no known organisations passed: the site's table is empty
    flags = check_draft(draft, language=language, paper=_paper())
    assert [(f.kind, f.text) for f in flags] == [("organization", t) for t in flagged]


def test_an_organisation_the_abstract_names_is_fine():
    paper = _paper(abstract="Deployed at Google, PrefixRoute routes by prefix.", organizations=())
    assert check_draft("谷歌部署了 PrefixRoute。", language="zh", paper=paper) == []


ENTRIES = (
    _paper(),
    _paper(
        canonical_id="arxiv:2601.00002",
        title="KVStream: Streaming KV Caches",
        abstract="KVStream streams KV caches between nodes.",
        short_name="KVStream",
        organizations=("Google",),
    ),
)


@pytest.mark.parametrize(
    "language, intro, flagged",
    [
        ("zh", "今天两篇。谷歌的 PrefixRoute 按前缀路由请求。", ["谷歌"]),
        ("en", "Two papers today. Google's PrefixRoute routes by prefix.", ["Google"]),
        ("en", "Two papers today. PrefixRoute, from Google, routes by prefix.", ["Google"]),
        ("zh", "今天两篇：阿里巴巴的 PrefixRoute 与谷歌的 KVStream。", []),
        ("en", "Alibaba's PrefixRoute and Google's KVStream lead today.", []),
        ("zh", "今天两篇，微软和谷歌各有一篇。", ["微软"]),
        ("en", "Two papers, from Alibaba and Google.", []),
    ],
)
def test_an_intro_credits_each_system_to_its_own_organisation(language, intro, flagged):
    flags = check_intro(intro, language=language, entries=ENTRIES)
    assert [(f.kind, f.text) for f in flags] == [("organization", t) for t in flagged]
    for flag in flags:
        assert intro[flag.start : flag.end] == flag.text


def test_the_numbers_of_a_source_fraction_still_ground_a_count():
    assert check_numbers("4 of 8 GPUs stay busy.", "4/8 GPUs stay busy.", language="en") == []
