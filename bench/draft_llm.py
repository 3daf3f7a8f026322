"""Drafting throughput of the LLM path against the local recorded chat-completions server.

Starts ``tests.llm_server.LLMServer`` in-process on 127.0.0.1; it answers each request with a
valid bilingual answer built from the request's own title and abstract (so the model's time
is ~0 and what is measured is ours: the openai client, HTTP, answer checks, LLMRequest rows,
and, through the service, storage and grounding). 200 generated papers, drafted one after
another, in a scratch database created, migrated and dropped here. Prints papers per second
for the drafter alone and through ``papers.drafting.service.paper_draft``.

    .venv/bin/python bench/draft_llm.py
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/draft_llm.py
"""

from __future__ import annotations

import logging
import os
import re
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

from papers.drafting.llm import LLMDrafter  # noqa: E402
from papers.drafting.service import glossary_seed, paper_draft, paper_input  # noqa: E402
from papers.identity import canonical_id  # noqa: E402
from papers.llm_client import make_client  # noqa: E402
from papers.models import LLMRequest, Paper, Summary, SummaryFlag, Track  # noqa: E402
from tests.llm_server import LLMServer, completion, user_message  # noqa: E402

N = int(os.environ.get("BENCH_DRAFT_LLM_N", "200"))
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


def papers(track: Track) -> list[Paper]:
    rows = []
    for i in range(N):
        title = f"{SYSTEMS[i % len(SYSTEMS)]}-{i}: Tiered KV Cache Placement for Serving"
        rows.append(
            Paper(
                slug=f"bench-{i}",
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


def main() -> int:
    vendor = connection.vendor
    hint = "" if vendor == "postgresql" else " (set DATABASE_URL for PostgreSQL)"
    print(f"database: {vendor}{hint}")
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # one INFO line per request
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        with LLMServer() as server:
            server.answer_with(answer)
            track, _ = Track.objects.get_or_create(
                slug="infra", defaults={"name_en": "Infra", "name_zh": "基础设施"}
            )
            glossary_seed(track=track)
            drafter = LLMDrafter(
                model="bench-model",
                client=make_client(
                    base_url=server.base_url, api_key="bench", timeout_s=10, max_retries=0
                ),
            )
            rows = papers(track)
            inputs = [paper_input(paper=paper, track=track) for paper in rows]

            started = time.perf_counter()
            drafts = [drafter.draft_paper(source) for source in inputs]
            alone = time.perf_counter() - started
            assert all(set(d.languages) == {"en", "zh"} for d in drafts), drafts[0]

            started = time.perf_counter()
            outcomes = [
                paper_draft(paper=paper, track=track, drafter=drafter, redraft=True)
                for paper in rows
            ]
            through = time.perf_counter() - started
            assert all(o.languages == ["en", "zh"] for o in outcomes), outcomes[0]

            print(
                f"LLM drafter alone          {N / alone:8.0f} papers/s  ({alone:.2f} s for {N}; "
                "openai client + HTTP + answer checks + LLMRequest rows)"
            )
            print(
                f"through paper_draft        {N / through:8.0f} papers/s  ({through:.2f} s for "
                f"{N}; + storage, versions and grounding checks)"
            )
            print(
                f"requests: {LLMRequest.objects.count()} ({len(server.bodies())} served), "
                f"summaries: {Summary.objects.count()}, "
                f"flags: {SummaryFlag.objects.count()}"
            )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
