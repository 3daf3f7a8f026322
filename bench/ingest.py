"""Ingest throughput: a generated 10,000-entry arXiv API file, ingested twice.

Runs against DATABASE_URL (PostgreSQL in CI and production; SQLite when unset, which it says)
in a scratch test database that is created, migrated and dropped here. Prints papers per
second for the first pass (all new) and the second (nothing changed), and peak memory.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/ingest.py
"""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "digest_site.settings")
os.environ.setdefault("DEBUG", "0")  # no query log eating memory

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from papers.ingest.service import ingest_document  # noqa: E402
from papers.models import IngestRun, Paper, Source, Track  # noqa: E402
from tests.arxiv_docs import Entry, api_page  # noqa: E402

N = int(os.environ.get("BENCH_INGEST_N", "10000"))
AFFILIATIONS = [
    "Microsoft Research",
    "Peking University",
    "NVIDIA",
    "Tsinghua University",
    "Independent researcher",
]
COMMENTS = ["12 pages, 8 figures", "Accepted to NSDI 2027", "To appear in OSDI '27", ""]


def entries(n: int) -> list[Entry]:
    return [
        Entry(
            arxiv_id=f"2610.{i:05d}",
            version=1 + i % 3,
            title=f"Scheduling and caching study number {i} for large model serving",
            summary=(
                "We study KV cache placement, batching and scheduling for serving. " * 6
                + f"Item {i}."
            ),
            authors=[
                (f"Author {i}-{k}", AFFILIATIONS[(i + k) % len(AFFILIATIONS)]) for k in range(4)
            ],
            comment=COMMENTS[i % len(COMMENTS)],
        )
        for i in range(1, n + 1)
    ]


def _rss_mb() -> float:
    """Current resident set size (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    vendor = connection.vendor
    hint = "" if vendor == "postgresql" else " (set DATABASE_URL for PostgreSQL)"
    print(f"database: {vendor}{hint}")
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        track, _ = Track.objects.get_or_create(
            slug="infra", defaults={"name_en": "Infra", "name_zh": "基础设施"}
        )
        document = api_page(entries(N))
        print(f"document: {N} entries, {len(document) / 1e6:.1f} MB")
        baseline_mb = _rss_mb()
        results = []
        for label in ("first pass (all new)", "second pass (unchanged)"):
            started = time.perf_counter()
            run = ingest_document(
                data=document, fmt=Source.Kind.ARXIV_API, tracks=[track], label=label
            )
            elapsed = time.perf_counter() - started
            assert run.status == IngestRun.Status.SUCCEEDED, run.message
            results.append((label, elapsed, run))
        for label, elapsed, run in results:
            print(
                f"{label:26s} {N / elapsed:8.0f} papers/s  ({elapsed:.2f} s; new {run.new}, "
                f"updated {run.updated}, unchanged {run.unchanged}, "
                f"rejected {len(run.rejected)})"
            )
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        # tracemalloc would slow allocation-heavy code several times over, so only the
        # process's peak resident set is reported (it includes Django and the XML tree).
        print(
            f"peak memory: {rss_mb:.0f} MB resident (whole process; {baseline_mb:.0f} MB before "
            f"the first pass, with Django loaded and the document generated)"
        )
        print(f"papers stored: {Paper.objects.count()}")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
