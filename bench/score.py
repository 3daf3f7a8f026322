"""Scoring throughput of the default rubric scorer: 10,000 generated candidates.

Scores in memory (no database writes) against the Infra track's profile loaded from the demo
content, in a scratch database, with the track's terms (glossary, selected papers' topics:
scorer 3) and without them (scorer 2's profile, the same words otherwise), alternating
BENCH_SCORE_ROUNDS (2) times. Prints papers per second and the ratio.

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

from django.db import connection, transaction  # noqa: E402

from dailies.demo import demo_load  # noqa: E402
from papers.models import GlossaryTerm, Paper, Track, TrackProfileItem  # noqa: E402
from papers.scoring.rubric import RubricScorer  # noqa: E402

N = int(os.environ.get("BENCH_SCORE_N", "10000"))
ROUNDS = int(os.environ.get("BENCH_SCORE_ROUNDS", "2"))
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


def timed(scorer: RubricScorer, papers: list[Paper], track: Track) -> tuple[float, list]:
    started = time.perf_counter()
    results = scorer.score(papers, track)
    return time.perf_counter() - started, results


def main() -> int:
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        demo_load()
        track = Track.objects.get(slug="infra")
        papers = candidates(N)
        scorer = RubricScorer()
        scorer.score(papers[:10], track)  # scikit-learn imported
        selected = TrackProfileItem.objects.filter(track=track, weight__gt=0)
        with_terms = without = 0.0
        for _ in range(ROUNDS):
            elapsed, results = timed(scorer, papers, track)
            with_terms += elapsed
            with transaction.atomic():  # the track without its terms, rolled back after
                GlossaryTerm.objects.filter(track=track).delete()
                for item in selected.select_related("paper"):
                    item.paper.topics.clear()
                elapsed, before = timed(scorer, papers, track)
                without += elapsed
                transaction.set_rollback(True)
        terms = sum(1 for r in results if r.features["track_terms"])
        print(f"database: {connection.vendor}; profile: {track.profile.count()} papers")
        for label, elapsed, scored in (
            ("without the track's terms (scorer 2's profile)", without, before),
            ("with the track's terms (scorer 3)", with_terms, results),
        ):
            totals = sorted(float(r.total) for r in scored)
            print(
                f"{label}: {ROUNDS} x {N} candidates in {elapsed:.2f} s: "
                f"{ROUNDS * N / elapsed:,.0f} papers/s (totals {totals[0]:.2f}–{totals[-1]:.2f}, "
                f"median {totals[N // 2]:.2f})"
            )
        print(
            f"scorer 3 / scorer 2 throughput: {without / with_terms:.2f}; "
            f"{terms} of {N} candidates use a track term"
        )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
