"""Rendering the worst Markdown inputs known at the bounds of deepdives.text, against plain
prose of the bound's size rendered in the same run (tests/markdown_inputs.py builds them;
tests/test_markdown_bounds.py checks each is accepted there and refused past it).

Prints each input's processor time and its ratio to the prose; the worst ratio last.

    .venv/bin/python bench/markdown_bounds.py
"""

from __future__ import annotations

import os
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

from deepdives.text import MARKDOWN_MAX_CHARS, markdown_problem, render_markdown  # noqa: E402
from tests.markdown_inputs import blocks, worst_inputs  # noqa: E402

RUNS = int(os.environ.get("BENCH_MARKDOWN_RUNS", "3"))


def seconds(text: str) -> float:
    """The median processor time of rendering ``text`` (other work on the machine aside)."""
    times = []
    for _ in range(RUNS):
        started = time.process_time()
        render_markdown(text)
        times.append(time.process_time() - started)
    return statistics.median(times)


def main() -> int:
    prose = blocks("word ")
    base = seconds(prose)
    print(f"prose, {len(prose)} of {MARKDOWN_MAX_CHARS} characters: {base * 1000:.1f} ms (1.0x)")
    worst = ("", 0.0)
    for name, text in worst_inputs().items():
        assert markdown_problem(text) is None, name
        took = seconds(text)
        print(f"{name:34} {len(text):6} chars {took * 1000:8.1f} ms {took / base:6.1f}x")
        worst = max(worst, (name, took / base), key=lambda pair: pair[1])
    print(f"worst: {worst[0]} at {worst[1]:.1f}x the prose")
    return 0


if __name__ == "__main__":
    sys.exit(main())
