"""Drafting throughput, in three sections.

1. Offline drafter alone: papers per second of the offline extractive drafter over 1,000
   generated abstracts (seeded, realistic lengths: 4–14 sentences of 8–40 words,
   pain/idea/evidence sentences, numbers with units, occasional LaTeX and line breaks). No
   database: the drafter's own cost (target ≥ 200 papers/s).
2. Offline drafter through ``paper_draft``: the same with storage, provenance and the grounding
   checks, 200 papers in a scratch database.
3. LLM path against the local recorded chat-completions server (``tests.llm_server``, started
   in-process on 127.0.0.1; it answers each request with a valid bilingual answer built from
   the request's own title and abstract, so the model's time is ~0 and what is measured is
   ours: the openai client, HTTP, answer checks, LLMRequest rows), alone and through
   ``paper_draft``, one language request at a time and both at once (``LLM_CONCURRENCY``).
4. The same through ``paper_draft`` with a model that takes ``BENCH_LLM_LATENCY_MS`` (200 ms)
   to answer each request, as a hosted model does at least: where the languages' requests
   sent at once pay off (on the ~0 ms server there is nothing to overlap).

    .venv/bin/python bench/draft.py
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/draft.py

The scratch database is a test database created, migrated and dropped here.
"""

from __future__ import annotations

import dataclasses
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "digest_site.settings")
os.environ.setdefault("DEBUG", "0")

import django  # noqa: E402

django.setup()

import logging  # noqa: E402
import re  # noqa: E402

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402

from papers.drafting.base import PaperInput  # noqa: E402
from papers.drafting.llm import LLMDrafter  # noqa: E402
from papers.drafting.offline import OfflineDrafter  # noqa: E402
from papers.drafting.service import (  # noqa: E402
    glossary_seed,
    known_names,
    paper_draft,
    paper_input,
    track_glossary,
)
from papers.identity import canonical_id  # noqa: E402
from papers.llm_client import make_client  # noqa: E402
from papers.models import LLMRequest, Paper, Summary, SummaryFlag, Track  # noqa: E402
from tests.llm_server import LLMServer, completion, user_message  # noqa: E402

N = int(os.environ.get("BENCH_DRAFT_N", "1000"))
TARGET_PER_S = 200
N_DB = int(os.environ.get("BENCH_DRAFT_DB_N", "200"))  # papers of the database sections
LATENCY_MS = int(os.environ.get("BENCH_LLM_LATENCY_MS", "200"))
N_LATENCY = int(os.environ.get("BENCH_DRAFT_LATENCY_N", "20"))  # papers at that latency

_WORD_TEXT = (
    "cache memory attention kernel quantization expert mixture scheduling storage vector "
    "index retrieval gateway budget reliability failure cluster training rollout precision "
    "model inference token batch prefix eviction replica shard router latency throughput "
    "layer request tenant queue context decoding prefill bandwidth placement offload "
    "compression"
)
WORDS = tuple(_WORD_TEXT.split(" "))
PAIN = [
    "However, existing systems suffer from {w} stalls under load.",
    "The main bottleneck is the {w} path, which is expensive to scale.",
    "Prior work struggles when {w} and {w2} grow together.",
]
IDEA = [
    "We propose {name}, which {w}s the {w2} across nodes.",
    "We present {name}, a {w} manager for {w2} serving.",
    "This paper introduces {name} to co-locate {w} and {w2}.",
]
EVIDENCE = [
    "On {n} GPUs, {name} improves throughput by {x}x at {k}K context.",
    "It reduces p99 latency by {p}% with recall unchanged.",
    "Across {n} workloads, {name} cuts {w} cost by {p}% versus the baseline.",
    "With $\\mathrm{{batch}}={n}$, it is ${x}\\times$ faster than the best prior kernel.",
]


def _filler(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(8, 40))
    return " ".join(words).capitalize() + "."


def abstracts(n: int, seed: int = 0) -> list[PaperInput]:
    rng = random.Random(seed)
    papers = []
    for i in range(n):
        name = rng.choice(["Flash", "Kv", "Tier", "Spill", "Route"]) + rng.choice(
            ["KV", "Cache", "Serve", "Mesh", "Gate"]
        )

        def fill(template: str, name: str = name) -> str:
            return template.format(
                name=name,
                w=rng.choice(WORDS),
                w2=rng.choice(WORDS),
                n=rng.randint(2, 64),
                x=f"{rng.randint(1, 9)}.{rng.randint(0, 99):02d}",
                k=rng.choice([4, 8, 32, 128]),
                p=f"{rng.randint(2, 80)}.{rng.randint(0, 9)}",
            )

        sentences = [_filler(rng) for _ in range(rng.randint(1, 6))]
        sentences += [fill(rng.choice(PAIN)) for _ in range(rng.randint(0, 2))]
        sentences.append(fill(rng.choice(IDEA)))
        sentences += [_filler(rng) for _ in range(rng.randint(0, 4))]
        sentences += [fill(rng.choice(EVIDENCE)) for _ in range(rng.randint(0, 3))]
        joiner = "\n" if rng.random() < 0.2 else " "
        title = f"{name}: " + " ".join(rng.choices(WORDS, k=rng.randint(4, 10))).title()
        papers.append(
            PaperInput(canonical_id=f"bench:{i}", title=title, abstract=joiner.join(sentences))
        )
    return papers


def bench_offline() -> dict:
    papers = abstracts(N)
    drafter = OfflineDrafter()
    words = [len(p.abstract.split()) for p in papers]
    drafter.draft_paper(papers[0])  # warm the regular expressions
    start = time.perf_counter()
    drafts = [drafter.draft_paper(p) for p in papers]
    elapsed = time.perf_counter() - start
    written = sum(1 for d in drafts if "en" in d.languages)
    rate = len(papers) / elapsed
    print(
        f"offline drafter: {len(papers)} abstracts "
        f"(median {statistics.median(words):.0f} words, {min(words)}–{max(words)}) "
        f"in {elapsed:.3f} s = {rate:,.0f} papers/s "
        f"(target ≥ {TARGET_PER_S}); English written for {written}"
    )
    demo = [_demo_input(path) for path in sorted(DEMO.glob("*.toml"))]
    dangling = [dangling_share(ps, [drafter.draft_paper(p) for p in ps]) for ps in (papers, demo)]
    print(
        f"offline entries with a sentence verbatim from the abstract that opens dangling "
        f"(target 0): generated {dangling[0]:.1%}, demo abstracts {dangling[1]:.1%}"
    )
    return {"papers_per_s": rate, "ok": rate >= TARGET_PER_S and not any(dangling)}


DEMO = ROOT / "dailies/demo/papers"
# Openers that need the sentence before them: a connective or a word pointing back.
DANGLING = re.compile(
    r"^(?:however|moreover|furthermore|additionally|in addition|thus|therefore|hence|"
    r"consequently|as a result|in contrast|instead(?=,)|meanwhile|similarly|yet|but|and|also|"
    r"to (?:address|tackle|solve|overcome|mitigate|fill|bridge) (?:this|these|such|it|them)|"
    r"this|these|those|that|such|it|its|they|their|them|both|the former|the latter)\b",
    re.I,
)


def _demo_input(path: Path) -> PaperInput:
    import tomllib

    with path.open("rb") as f:
        data = tomllib.load(f)
    return PaperInput(canonical_id=data["slug"], title=data["title"], abstract=data["abstract"])


def dangling_share(papers: list[PaperInput], drafts: list) -> float:
    """The share of drafts whose English summary has a sentence copied verbatim from the
    abstract that opens with a dangling opener ("However,", "This view", "Such queries")."""
    from papers.drafting.offline import clean_text, split_sentences

    bad = 0
    for paper, draft in zip(papers, drafts, strict=True):
        if "en" not in draft.languages:
            continue
        source = set(split_sentences(clean_text(paper.abstract)))
        sentences = split_sentences(draft.languages["en"].summary)
        bad += any(s in source and DANGLING.match(s) for s in sentences)
    return bad / max(1, len(drafts))


SYSTEMS = ["KVPipe", "ShardLens", "TierMix", "GateCast", "SpecFold"]


def abstract(i: int) -> str:
    speedup = f"{1 + (i % 40) / 10:.1f}×"
    share = f"{20 + i % 70}%"
    return (
        f"{SYSTEMS[i % len(SYSTEMS)]}-{i} targets KV cache placement in long-context LLM "
        "serving. Prefix caches outgrow GPU memory and spill to host memory and disk, and "
        "reading them back stalls decoding. It keeps hot blocks on the GPU, stages warm "
        "blocks in host memory and prefetches cold blocks one layer ahead, choosing the tier "
        f"of each block from its reuse distance. On an H100 it raises decode throughput by "
        f"{speedup} at 8K context and cuts time to first token for {share} of requests, "
        "with outputs unchanged."
    )


def papers(track: Track, prefix: str) -> list[Paper]:
    rows = []
    for i in range(N_DB):
        title = f"{SYSTEMS[i % len(SYSTEMS)]}-{i}: Tiered KV Cache Placement ({prefix})"
        rows.append(
            Paper(
                slug=f"{prefix}-{i}",
                title=title,
                abstract=abstract(i),
                canonical_id=canonical_id(title=title),
            )
        )
    created = Paper.objects.bulk_create(rows)
    for paper in created:
        paper.tracks.add(track)
    return created


_NUMBERS = re.compile(r"(\d+(?:\.\d+)?×) at 8K context and cuts time to first token for (\d+%)")


def answer(body: dict):
    """A valid bilingual answer whose numbers come from the request's abstract."""
    user = user_message(body)
    name = re.search(r"^Title: ([^:]+):", user, re.M).group(1)
    speedup, share = _NUMBERS.search(user).groups()
    en_takeaway = "Place each block by how soon it will be read again."
    zh_takeaway = "每个缓存块放在哪一层，要看它多久之后会被再次读取。"
    en = (
        "Long-context serving keeps prefix caches that no longer fit in GPU memory, so they "
        "spill to host memory and disk, and reading them back stalls decoding on the critical "
        f"path. {name} treats the tiers as one hierarchy: hot blocks stay on the GPU, warm "
        "blocks wait in host memory and cold blocks are prefetched one layer ahead of use, "
        f"each placed by its reuse distance. {en_takeaway} On an H100 at 8K context it raises "
        f"decode throughput by {speedup} and cuts time to first token for {share} of "
        "requests, with outputs unchanged."
    )
    zh = (
        "长上下文推理里，前缀缓存早已放不进显存，只能溢出到主机内存和磁盘，而把它们读回来这一步"
        f"正卡在解码的关键路径上。{name} 把各层存储当成同一个层级来管理：热的缓存块留在 GPU 上，"
        "温的放在主机内存里等候，冷的则提前一层预取，每个块放在哪里由它的复用距离决定。"
        f"{zh_takeaway}在 H100 上、8K 上下文时，它把解码吞吐提高了 {speedup}，"
        f"并让 {share} 的请求首个 token 来得更快，输出结果不变。"
    )
    return completion(
        {
            "short_name": name,
            "en": {
                "headline": "Tiering KV cache blocks by their reuse distance",
                "summary": en,
                "takeaway": en_takeaway,
                "numbers": [f"{speedup} decode throughput at 8K context on an H100"],
            },
            "zh": {
                "headline": "按复用距离为 KV cache 分层",
                "summary": zh,
                "takeaway": zh_takeaway,
                "numbers": [f"H100、8K 上下文下解码吞吐提升 {speedup}"],
            },
        }
    )


def _track() -> Track:
    track, _ = Track.objects.get_or_create(
        slug="infra", defaults={"name_en": "Infra", "name_zh": "基础设施"}
    )
    glossary_seed(track=track)
    return track


def bench_offline_service() -> dict:
    track = _track()
    rows = papers(track, "offline")
    drafter = OfflineDrafter()
    # As daily_draft does: the known names and the glossary loaded once for the batch.
    batch = {"names": known_names(), "glossary": track_glossary(track)}
    started = time.perf_counter()
    outcomes = [paper_draft(paper=paper, track=track, drafter=drafter, **batch) for paper in rows]
    elapsed = time.perf_counter() - started
    assert all(o.languages == ["en", "zh"] for o in outcomes), outcomes[0]
    print(
        f"offline through paper_draft {N_DB / elapsed:8.0f} papers/s  ({elapsed:.2f} s for "
        f"{N_DB}; + storage, provenance and grounding checks on {connection.vendor})"
    )
    return {"papers_per_s": N_DB / elapsed, "ok": True}


def bench_llm() -> dict:
    with LLMServer() as server:
        server.answer_with(answer)
        track = _track()
        drafter = LLMDrafter(
            model="bench-model",
            client=make_client(
                base_url=server.base_url, api_key="bench", timeout_s=10, max_retries=0
            ),
        )
        rows = papers(track, "llm")
        batch = {"names": known_names(), "glossary": track_glossary(track)}
        inputs = [paper_input(paper=paper, track=track) for paper in rows]

        rates = {}
        # One language at a time (as before LLM_CONCURRENCY) and both at once, alternating.
        for concurrency in (1, 2, 1, 2):
            settings.LLM_CONCURRENCY = concurrency
            started = time.perf_counter()
            drafts = [drafter.draft_paper(source) for source in inputs]
            alone = time.perf_counter() - started
            assert all(set(d.languages) == {"en", "zh"} for d in drafts), drafts[0]

            started = time.perf_counter()
            outcomes = [
                paper_draft(paper=paper, track=track, drafter=drafter, redraft=True, **batch)
                for paper in rows
            ]
            through = time.perf_counter() - started
            assert all(o.languages == ["en", "zh"] for o in outcomes), outcomes[0]
            rates.setdefault(concurrency, []).append(N_DB / through)
            print(
                f"LLM drafter alone      c={concurrency} {N_DB / alone:8.0f} papers/s  "
                f"({alone:.2f} s for {N_DB}; openai client + HTTP + answer checks + rows)"
            )
            print(
                f"LLM through paper_draft c={concurrency} {N_DB / through:8.0f} papers/s  "
                f"({through:.2f} s for {N_DB}; + storage, versions and grounding checks)"
            )
        print(
            f"  LLM_CONCURRENCY 2 / 1 through paper_draft: "
            f"{max(rates[2]) / max(rates[1]):.2f}x (best of two runs each)"
        )
        print(
            f"  requests: {LLMRequest.objects.count()} ({len(server.bodies())} served), "
            f"summaries: {Summary.objects.count()}, flags: {SummaryFlag.objects.count()}"
        )
    return {"papers_per_s": N_DB / through, "ok": True}


def bench_llm_latency() -> dict:
    def slow(body: dict):
        # The reply's own delay: the server chooses replies under a lock, then waits unlocked.
        return dataclasses.replace(answer(body), delay=LATENCY_MS / 1000)

    with LLMServer() as server:
        server.answer_with(slow)
        track = _track()
        drafter = LLMDrafter(
            model="bench-model",
            client=make_client(
                base_url=server.base_url, api_key="bench", timeout_s=10, max_retries=0
            ),
        )
        rows = papers(track, "latency")[:N_LATENCY]
        batch = {"names": known_names(), "glossary": track_glossary(track)}
        rates = {}
        for concurrency in (1, 2):
            settings.LLM_CONCURRENCY = concurrency
            started = time.perf_counter()
            outcomes = [
                paper_draft(paper=paper, track=track, drafter=drafter, redraft=True, **batch)
                for paper in rows
            ]
            elapsed = time.perf_counter() - started
            assert all(o.languages == ["en", "zh"] for o in outcomes), outcomes[0]
            rates[concurrency] = len(rows) / elapsed
            print(
                f"LLM at {LATENCY_MS} ms a request, c={concurrency} {rates[concurrency]:6.2f} "
                f"papers/s  ({elapsed:.2f} s for {len(rows)} through paper_draft)"
            )
        print(f"  LLM_CONCURRENCY 2 / 1 at {LATENCY_MS} ms: {rates[2] / rates[1]:.2f}x")
    return {"papers_per_s": rates[2], "ok": True}


SECTIONS = [bench_offline]
DATABASE_SECTIONS = [bench_offline_service, bench_llm, bench_llm_latency]


def main() -> int:
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # one INFO line per request
    results = [section() for section in SECTIONS]
    vendor = connection.vendor
    hint = "" if vendor == "postgresql" else " (set DATABASE_URL for PostgreSQL)"
    print(f"database sections on {vendor}{hint}")
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        results += [section() for section in DATABASE_SECTIONS]
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
