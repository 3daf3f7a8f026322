"""Drafting throughput.

Offline: papers per second of the offline extractive drafter over 1,000 generated abstracts
(seeded, realistic lengths: 4–14 sentences of 8–40 words, pain/idea/evidence sentences,
numbers with units, occasional LaTeX and line breaks). Drafting only — no database — so the
figure is the drafter's own cost (target ≥ 200 papers/s).

    .venv/bin/python bench/draft.py

``main()`` runs each section in ``SECTIONS`` in turn; a further section (e.g. the LLM path
against the recorded chat-completions server) is added there as its own function.
"""

from __future__ import annotations

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

from papers.drafting.base import PaperInput  # noqa: E402
from papers.drafting.offline import OfflineDrafter  # noqa: E402

N = int(os.environ.get("BENCH_DRAFT_N", "1000"))
TARGET_PER_S = 200

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
    return {"papers_per_s": rate, "ok": rate >= TARGET_PER_S}


SECTIONS = [bench_offline]


def main() -> int:
    results = [section() for section in SECTIONS]
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
