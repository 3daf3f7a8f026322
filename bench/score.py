"""Scoring throughput of the default rubric scorer: 10,000 generated candidates.

Scores in memory (no database writes) against the Infra track's profile loaded from the demo
content, in a scratch database. Prints papers per second.

    .venv/bin/python bench/score.py
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "digest_site.settings")
os.environ.setdefault("DEBUG", "0")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from dailies.demo import demo_load  # noqa: E402
from papers.models import Paper, Track  # noqa: E402
from papers.scoring.rubric import RubricScorer  # noqa: E402

N = int(os.environ.get("BENCH_SCORE_N", "10000"))
WORDS = [
    "cache",
    "kv",
    "serving",
    "latency",
    "throughput",
    "gpu",
    "memory",
    "attention",
    "kernel",
    "quantization",
    "expert",
    "mixture",
    "scheduling",
    "storage",
    "vector",
    "index",
    "retrieval",
    "gateway",
    "budget",
    "reliability",
    "failure",
    "cluster",
    "training",
    "rollout",
    "rounding",
    "precision",
    "model",
    "inference",
    "token",
    "batch",
    "prefix",
    "eviction",
    "protein",
    "genome",
    "galaxy",
    "theorem",
    "graph",
    "language",
    "music",
    "robot",
    "economy",
    "climate",
]


def candidates(n: int) -> list[Paper]:
    rng = random.Random(0)
    papers = []
    for i in range(n):
        words = rng.choices(WORDS, k=110)
        numbers = f" We measure {rng.randint(2, 90)}% lower latency and {rng.randint(2, 9)}x."
        papers.append(
            Paper(
                title=" ".join(rng.choices(WORDS, k=8)).capitalize() + f" {i}",
                abstract=" ".join(words) + numbers,
            )
        )
    return papers


def main() -> int:
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        demo_load()
        track = Track.objects.get(slug="infra")
        papers = candidates(N)
        scorer = RubricScorer()
        started = time.perf_counter()
        results = scorer.score(papers, track)
        elapsed = time.perf_counter() - started
        totals = sorted(float(r.total) for r in results)
        print(f"database: {connection.vendor}; profile: {track.profile.count()} papers")
        print(
            f"scored {N} candidates in {elapsed:.2f} s: {N / elapsed:,.0f} papers/s "
            f"(totals {totals[0]:.2f}–{totals[-1]:.2f}, median {totals[N // 2]:.2f})"
        )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
