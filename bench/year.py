"""A year of five tracks on PostgreSQL: do the public pages cost what they cost on the demo?

In one scratch database (created, migrated and dropped here) it loads the demo
(``load_demo``) and generates on top of it a year of five tracks — ``DAYS`` days ×
``TRACKS`` tracks ≈ 2,000 published dailies, 10 entries each (20,000 entries) and
``CANDIDATES`` ingested candidates per daily (≈300,000 papers, each with a score for its
track and summaries in both languages), ingested inside their daily's window so the
selection chart and the near misses read real candidates — with COPY, indexes the
published papers for search through the real rebuild path, and measures the same pages
at that scale against the same pages of the demo alone (a second scratch database,
``<name>_demo``, dropped after). The two are measured in ``BENCH_YEAR_ROUNDS`` (default 6)
alternating rounds, each database on a connection of its own, so that both see the same
machine: measured one after the other, a shared machine's drift of a third within minutes
went into the ratios.

daily page, home, track archive (first and last page), the daily's week and the feed of
weeks, index (first, middle and last page,
as its pager links them), paper page, topic page and search (of every track, and within the
demo's track: the same results on both sides) — render time through Django's
test client with the page cache off, and the number of queries of each page. It prints each
page's ratio to its demo figure (target ≤ ``TARGET_RATIO``) and whether its query count stayed
the same (fewer is fine: the paper page's related papers need a second ranked read only when
the newest matches do not fill the list, as on the demo).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/year.py

``BENCH_YEAR_DAYS`` (default 400), ``BENCH_YEAR_CANDIDATES`` (per daily, default 150),
``BENCH_YEAR_RUNS`` (measured renders per page, default 30), ``BENCH_DB_NAME`` (the scratch
database, default bench_year), ``BENCH_KEEP_DB=1`` keeps it. ``BENCH_REUSE_DB=1`` measures a
kept one again without generating the year: it is migrated, its search index rebuilt when
``BENCH_REINDEX=1``, then measured against a fresh demo database, and kept.

Each page is rendered as a worker renders it after a bump of the content version: every
piece of it rendered each time.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import math
import os
import random
import re
import statistics
import sys
import time
import zoneinfo
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "digest_site.settings")
os.environ.setdefault("DEBUG", "0")  # no query log eating memory

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction  # noqa: E402
from django.db.models import Count  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from dailies.models import Daily, DailyEntry, iso_week_label  # noqa: E402
from dailies.paging import Key  # noqa: E402
from dailies.record import daily_pin  # noqa: E402
from dailies.selectors import index_papers, topics_with_papers  # noqa: E402
from dailies.weekly import week_monday  # noqa: E402
from digest_site.cache_tags import retire_everything  # noqa: E402
from papers.authors import paper_authors_sync  # noqa: E402
from papers.models import (  # noqa: E402
    Author,
    Organization,
    Paper,
    PaperAuthor,
    Score,
    Summary,
    Topic,
    Track,
)
from search.index import search_index_rebuild  # noqa: E402

TRACKS = 5
DAYS = int(os.environ.get("BENCH_YEAR_DAYS", "400"))
AUTHOR_POOL = 3000  # authors of the year's papers
PER_DAILY = 10
CANDIDATES = int(os.environ.get("BENCH_YEAR_CANDIDATES", "150"))
RUNS = int(os.environ.get("BENCH_YEAR_RUNS", "30"))
ROUNDS = int(os.environ.get("BENCH_YEAR_ROUNDS", "6"))
TARGET_RATIO = 2.0
LAST_DAY = dt.date(2026, 10, 27)  # the demo's newest daily is 10-28: the demo stays on top
TEXTS = 2000  # distinct abstracts and summaries, shared round-robin by the candidates
SEED = 20261028
HOST = {"HTTP_HOST": "127.0.0.1"}
SQL_SHOWN = 400  # characters of the slowest query printed per page

_WORD_TEXT = (
    "cache memory attention kernel quantization expert mixture scheduling storage vector "
    "index retrieval gateway budget reliability failure cluster training rollout precision "
    "model inference token batch prefix eviction replica shard router latency throughput "
    "layer request tenant queue context decoding prefill bandwidth placement offload "
    "compression graceful degradation serving GPU KV"
)
WORDS = _WORD_TEXT.split(" ")
_ZH_TEXT = (
    "缓存 内存 注意力 量化 专家 调度 存储 向量 检索 网关 预算 可靠性 故障 集群 训练 精度 "
    "模型 推理 批处理 前缀 淘汰 副本 分片 路由 延迟 吞吐 请求 队列 上下文 解码 带宽 压缩 降级"
)
ZH_WORDS = _ZH_TEXT.split(" ")


# --- generating ------------------------------------------------------------------------------


def _copy(model, rows, columns: list[str]) -> int:
    """COPY ``rows`` (tuples in ``columns``' order) into ``model``'s table."""
    table = model._meta.db_table
    # The primary key may be left to its sequence (the many-to-many tables).
    missing = {f.column for f in model._meta.concrete_fields} - {*columns, model._meta.pk.column}
    if missing:
        raise SystemExit(f"bench/year.py does not fill {table}'s {sorted(missing)}: update it")
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    count = 0
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row(row)
            count += 1
    return count


def _next_id(model) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {model._meta.db_table}")
        return cursor.fetchone()[0]


def _reset_sequences(*models) -> None:
    with connection.cursor() as cursor:
        for sql in connection.ops.sequence_reset_sql(_NoStyle(), list(models)):
            cursor.execute(sql)


class _NoStyle:
    def __getattr__(self, name):
        return lambda text: text


def _sentence(rng: random.Random, words: list[str], n: int, sep: str = " ") -> str:
    return sep.join(rng.choice(words) for _ in range(n))


def generate_year(rng: random.Random) -> dict[str, int]:
    """The year's tracks, topics, papers, summaries, scores, dailies and entries (COPY)."""
    vocab = WORDS + [
        "".join(rng.choice("bcdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3))
        for _ in range(3000)
    ]
    abstracts = [_sentence(rng, vocab, rng.randint(110, 180)) + "." for _ in range(TEXTS)]
    bodies_en = [_sentence(rng, vocab, rng.randint(70, 120)) + "." for _ in range(TEXTS)]
    bodies_zh = [_sentence(rng, ZH_WORDS, rng.randint(40, 80), "") + "。" for _ in range(TEXTS)]
    takeaways_en = [_sentence(rng, vocab, rng.randint(8, 15)).capitalize() for _ in range(TEXTS)]
    takeaways_zh = [_sentence(rng, ZH_WORDS, rng.randint(6, 10), "") for _ in range(TEXTS)]

    tracks = [
        Track.objects.create(
            slug=f"year{t}",
            name_en=f"Year {t}",
            name_zh=f"年度{t}",
            position=10 + t,
            keywords=WORDS[t * 5 : t * 5 + 5],
        )
        for t in range(TRACKS)
    ]
    topics = Topic.objects.bulk_create(
        Topic(slug=f"year-topic-{i}", name_en=f"{WORDS[i]} systems", name_zh=f"{ZH_WORDS[i]}系统")
        for i in range(30)
    )
    orgs = Organization.objects.bulk_create(
        Organization(slug=f"year-org-{i}", label=f"Org{i}", name_zh=f"机构{i}") for i in range(20)
    )
    # Three authors a paper from a pool, so an author has a few hundred papers over a year.
    names = [f"Author{i} Yearson" for i in range(AUTHOR_POOL)]
    authors = Author.objects.bulk_create(
        Author(key=f"author{i} yearson", slug=f"author{i}-yearson", name=names[i])
        for i in range(AUTHOR_POOL)
    )
    paper_authors = []
    tz = zoneinfo.ZoneInfo(settings.EDITORIAL_TIME_ZONE)
    first_day = LAST_DAY - dt.timedelta(days=DAYS - 1)
    now = timezone.now()
    paper_id = _next_id(Paper)
    first_paper = paper_id
    summary_id = _next_id(Summary)
    score_id = _next_id(Score)
    daily_id = _next_id(Daily)
    entry_id = _next_id(DailyEntry)

    papers, summaries, scores, paper_tracks, paper_topics, paper_orgs = [], [], [], [], [], []
    dailies, entries = [], []
    for d in range(DAYS):
        day = first_day + dt.timedelta(days=d)
        for track in tracks:
            cut = dt.datetime.combine(day, track.assemble_at, tzinfo=tz)
            assembled = cut + dt.timedelta(minutes=5)
            day_papers = []
            for c in range(CANDIDATES):
                pk = paper_id
                paper_id += 1
                k = pk % TEXTS
                created = cut - dt.timedelta(minutes=10 + c * 5)  # inside the daily's window
                title = f"{_sentence(rng, vocab, rng.randint(6, 12)).capitalize()} {pk}"
                byline = [(pk * 7) % AUTHOR_POOL, (pk * 13 + 1) % AUTHOR_POOL]
                byline.append(
                    next(
                        i for i in range(pk * 31 + 2, pk * 31 + 5) if i % AUTHOR_POOL not in byline
                    )
                    % AUTHOR_POOL
                )
                for position, i in enumerate(byline, start=1):
                    paper_authors.append((pk, authors[i].pk, position))
                papers.append(
                    (pk, f"bench:year:{pk}", f"year-paper-{pk}", "paper", title[:500], "",
                     json.dumps([names[i] for i in byline]), abstracts[k],
                     f"https://arxiv.org/abs/2610.{pk:05d}", "", "", "", None, day, None, "",
                     "cs.DC", '["cs.DC"]', "[]", "", "", None, None, None, "", "[]", False,
                     created, created)
                )  # fmt: skip
                total = Decimal(rng.randint(20, 100)) / 20
                scores.append(
                    (score_id, pk, track.pk, total, '{"relevance": 4, "novelty": 3}', "{}",
                     "Fits the track.", "符合方向。", "bench", "1", "", None, None, assembled
                     - dt.timedelta(minutes=1))
                )  # fmt: skip
                score_id += 1
                for lang, body, take in (
                    ("en", bodies_en[k], takeaways_en[k]),
                    ("zh", bodies_zh[k], takeaways_zh[k]),
                ):
                    summaries.append(
                        (summary_id, pk, lang, "", f"{body} {take}", take[:300], "[]", "machine",
                         "bench", "1", "", "", "", None, None, None, None, None, created)
                    )  # fmt: skip
                    summary_id += 1
                paper_tracks.append((pk, track.pk))
                for topic in {rng.randrange(len(topics)), rng.randrange(len(topics))}:
                    paper_topics.append((pk, topics[topic].pk))
                paper_orgs.append((pk, orgs[pk % len(orgs)].pk))
                day_papers.append((pk, total))
            dailies.append(
                (daily_id, track.pk, day, "published", None, now, f"Intro of {day}.",
                 f"{day} 导语。", "editor", "editor", "", None, "[]", CANDIDATES, assembled,
                 False, None, None, None, None, now, now)
            )  # fmt: skip
            best = sorted(day_papers, key=lambda p: (-p[1], p[0]))[:PER_DAILY]
            for position, (pk, total) in enumerate(best, start=1):
                entries.append(
                    (entry_id, daily_id, pk, position, position == 1, total, total, "[]")
                )
                entry_id += 1
            daily_id += 1

    paper_cols = [
        "id", "canonical_id", "slug", "kind", "title", "short_name", "authors", "abstract",
        "abs_url", "pdf_url", "doi", "arxiv_id", "version", "published_on", "venue_id",
        "venue_status", "primary_category", "categories", "affiliations", "comment",
        "journal_ref", "source_updated_at", "source_id", "first_run_id", "source_hash",
        "edited_fields", "needs_scoring", "created_at", "updated_at",
    ]  # fmt: skip
    _copy(Paper, papers, paper_cols)
    _copy(
        Score,
        scores,
        ["id", "paper_id", "track_id", "total", "criteria", "features", "rationale_en",
         "rationale_zh", "scorer", "scorer_version", "notes", "prompt_tokens",
         "completion_tokens", "created_at"],
    )  # fmt: skip
    _copy(
        Summary,
        summaries,
        ["id", "paper_id", "language", "headline", "body", "takeaway", "highlights",
         "provenance", "drafter", "drafter_version", "model_name", "prompt_version",
         "source_digest", "drafted_at", "reviewed_by_id", "reviewed_at", "edited_by_id",
         "edited_at", "updated_at"],
    )  # fmt: skip
    _copy(Paper.tracks.through, paper_tracks, ["paper_id", "track_id"])
    _copy(Paper.topics.through, paper_topics, ["paper_id", "topic_id"])
    _copy(Paper.organizations.through, paper_orgs, ["paper_id", "organization_id"])
    _copy(PaperAuthor, paper_authors, ["paper_id", "author_id", "position"])
    _copy(
        Daily,
        dailies,
        ["id", "track_id", "date", "status", "publish_at", "published_at", "intro_en",
         "intro_zh", "intro_en_provenance", "intro_zh_provenance", "intro_drafter",
         "intro_drafted_at", "intro_flags", "candidates_scored", "assembled_at",
         "edited_by_editor", "english_only_by_id", "english_only_at", "pinned_min_score",
         "pinned_at", "created_at", "updated_at"],
    )  # fmt: skip
    _copy(
        DailyEntry,
        entries,
        ["id", "daily_id", "paper_id", "position", "is_lead", "score", "score_computed",
         "accepted_untranslated"],
    )  # fmt: skip
    _reset_sequences(Paper, Score, Summary, Daily, DailyEntry)
    # Published, so pinned as publishing pins them (dailies.record): their pages read the pins.
    generated = [row[0] for row in dailies]
    for daily in Daily.objects.filter(pk__in=generated).select_related("track"):
        daily_pin(daily=daily, now=now)
    return {
        "dailies": len(dailies),
        "entries": len(entries),
        "papers": len(papers),
        "summaries": len(summaries),
        "scores": len(scores),
        "first_paper": first_paper,
    }


# --- measuring -------------------------------------------------------------------------------


def _last_page(count: int) -> int:
    return max(1, math.ceil(count / settings.PAGE_SIZE))


def _index_page_by_key(number: int) -> str:
    """Page ``number`` of the index as its pager links it: after the key of the paper that
    ends the page before (found here by offset, once); the first page on the demo's one."""
    if number < 2:
        return "/en/papers/"
    before = index_papers()[(number - 1) * settings.PAGE_SIZE - 1]
    return f"/en/papers/?page={number}&after={Key.of(before)}"


def pages_of(track: Track, query: str) -> dict[str, str]:
    """The pages to measure on ``track``'s content, by label (a few queries). The daily is
    the newest of the track's fullest dailies: a year's hold ten entries each, as the demo's
    10-28 does (its newest, 10-29, holds three)."""
    daily = (
        Daily.objects.published()
        .filter(track=track)
        .annotate(entry_count=Count("entries"))
        .order_by("-entry_count", "-date")
        .first()
    )
    archive = Daily.objects.published().filter(track=track).count()
    published = DailyEntry.objects.published().values("paper_id").distinct().count()
    entry = DailyEntry.objects.filter(daily=daily, is_lead=True).select_related("paper").get()
    topic = (
        Topic.objects.filter(papers__daily_entries__daily__track=track)
        .annotate(n=Count("papers"))
        .order_by("-n", "pk")
        .first()
    )
    lab = (
        Organization.objects.filter(papers__daily_entries__daily__track=track)
        .annotate(n=Count("papers"))
        .order_by("-n", "pk")
        .first()
    )
    author = (
        Author.objects.filter(paper_links__paper__daily_entries__daily__track=track)
        .annotate(n=Count("paper_links"))
        .order_by("-n", "pk")
        .first()
    )
    base = f"/en/{track.slug}/"
    return {
        "daily": f"{base}{daily.date.isoformat()}/",
        "home": "/en/",
        "archive, first page": base,
        "archive, last page": f"{base}?page={_last_page(archive)}",
        "index, first page": "/en/papers/",
        # The pager's links: "Oldest" (read from the end) and "Older" from the middle.
        "index, last page": f"/en/papers/?page={_last_page(published)}&before=end",
        "index, middle page": _index_page_by_key(_last_page(published) // 2),
        "paper": f"/en/papers/{entry.paper.slug}/",
        "topic": f"/en/topics/{topic.slug}/",
        "lab": f"/en/labs/{lab.slug}/",
        "lab feed": f"/en/feeds/labs/{lab.slug}.atom",
        "author": f"/en/authors/{author.slug}/",
        "author feed": f"/en/feeds/authors/{author.slug}.atom",
        "search": f"/en/papers/?q={query}",
        # The same query within the demo's track: the demo's eight results on both, ranked
        # at the year's scale, where the page of every track lists a full page of thirty.
        "search, the demo's track": f"/en/papers/?q={query}&track=infra",
        # The week of that daily: its roundup (a year's week holds seven full dailies) and
        # the track's feed of weeks.
        "week": f"{base}week/{iso_week_label(week_monday(daily.date))}/",
        "weeks feed": f"/en/feeds/{track.slug}/weeks.atom",
    }


def _shorter(sql: str) -> str:
    """The query without its column list, on one line."""
    return re.sub(r"^SELECT .*? FROM ", "SELECT … FROM ", " ".join(sql.split()), count=1)


def renders(client: Client, path: str, runs: int) -> list[float]:
    """``runs`` renders of ``path`` after three unmeasured ones (ms each)."""
    for _ in range(3):
        response = client.get(path, **HOST)
    if response.status_code != 200:
        raise SystemExit(f"{path} answered {response.status_code}")
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        client.get(path, **HOST)
        times.append((time.perf_counter() - started) * 1000)
    return times


def figures(client: Client, path: str, times: list[float]) -> dict:
    """The page's figures from its render ``times``, with one more render's queries."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path, **HOST)
    ordered = sorted(times)
    slowest = max(queries.captured_queries, key=lambda q: float(q["time"]))
    return {
        "slowest": (float(slowest["time"]) * 1000, _shorter(slowest["sql"])),
        "path": path,
        "median": statistics.median(ordered),
        "p95": ordered[min(len(ordered) - 1, int(round(0.95 * len(ordered))) - 1)],
        "queries": len(queries),
        "db": sum(float(q["time"]) for q in queries.captured_queries) * 1000,
        "bytes": len(response.content),
    }


_connections: dict[str, object] = {}


def use_database(name: str) -> None:
    """Point the default connection at database ``name``: a connection of its own, kept
    open (a new server process per switch would start with cold catalog and plan caches,
    and the statements unprepared). Both databases share the cache: what the other one's
    tag versions kept (the topics' and the index's counts) is dropped, as after any
    write made outside the services."""
    if name not in _connections:
        current = connections[DEFAULT_DB_ALIAS]
        settings_dict = {**current.settings_dict, "NAME": name}
        _connections[name] = type(current)(settings_dict, DEFAULT_DB_ALIAS)
    connections[DEFAULT_DB_ALIAS] = _connections[name]
    retire_everything()


def measure_both(demo_db: str, year_db: str) -> tuple[dict[str, dict], dict[str, dict]]:
    """The demo's pages (in ``demo_db``) and the year's (in ``year_db``), measured in
    ``ROUNDS`` alternating rounds of ``RUNS / ROUNDS`` renders per page, so that both see
    the same machine: on a shared one the speed drifts by a third within minutes, and a
    page measured on the demo and then on the year took that drift for its ratio."""
    # As a worker runs (digest_site/wsgi.py): what this process made so far (the demo, a
    # year) kept out of the collector's full passes, which otherwise land in a few renders
    # at a quarter second each and move the medians (a demo home page measured 155 ms).
    sides = {"demo": (demo_db, "infra"), "year": (year_db, "year0")}
    pages, times = {}, {}
    for side, (db, track) in sides.items():
        use_database(db)
        pages[side] = pages_of(Track.objects.get(slug=track), "cache")
        times[side] = {label: [] for label in pages[side]}
    client = Client()
    per_round = max(1, RUNS // ROUNDS)
    for number in range(ROUNDS):
        for side in ("demo", "year") if number % 2 == 0 else ("year", "demo"):
            use_database(sides[side][0])
            gc.collect()
            gc.freeze()
            for label, path in pages[side].items():
                times[side][label] += renders(client, path, per_round)
    found = {}
    for side, (db, _track) in sides.items():
        use_database(db)
        found[side] = {}
        for label, path in pages[side].items():
            renders(client, path, 0)  # warm after the switch: its queries, not a recount
            found[side][label] = figures(client, path, times[side][label])
    print(
        f"measured in {ROUNDS} rounds alternating the demo and the year, {per_round * ROUNDS}"
        " renders per page each (page cache off)"
    )
    return found["demo"], found["year"]


def report(demo: dict[str, dict], year: dict[str, dict]) -> bool:
    print(
        f"\n{'page':24s} {'demo ms':>8s} {'year ms':>8s} {'year p95':>8s} {'ratio':>6s}"
        f" {'queries demo→year':>18s} {'KB demo→year':>14s} {'per KB':>6s} {'db ms':>6s}  verdict"
    )
    ok = True
    for label, d in demo.items():
        y = year[label]
        ratio = y["median"] / d["median"]
        # A page may make fewer queries at the year's scale, never more: the related papers'
        # search (the paper page) ranks the rest of its matches only when the pool of the
        # newest ones did not fill its list, as the demo's sixteen papers never do.
        grew = y["queries"] > d["queries"]
        good = ratio <= TARGET_RATIO and not grew
        ok &= good
        verdict = (
            ("SLOW" if ratio > TARGET_RATIO else "ok")
            + (" QUERIES GREW" if grew else "")
            + (" (fewer queries)" if y["queries"] < d["queries"] else "")
        )
        print(
            f"{label:24s} {d['median']:8.2f} {y['median']:8.2f} {y['p95']:8.2f} {ratio:5.2f}×"
            f" {d['queries']:>8d} → {y['queries']:<8d}"
            f" {d['bytes'] / 1024:6.0f} → {y['bytes'] / 1024:<6.0f}"
            f" {ratio * d['bytes'] / y['bytes']:5.2f}× {y['db']:6.1f}  {verdict.strip()}"
        )
    print(
        "(per KB: the ratio of the render time per kilobyte of page, year over demo — a year's"
        " pages hold more and longer items than the demo's; db ms: the year page's time in its"
        " queries)"
    )
    print("\nthe slowest query of each page at the year's scale (where the time goes):")
    for label, y in year.items():
        ms, sql = y["slowest"]
        print(f"  {label:24s} {ms:8.2f} ms  {sql[:SQL_SHOWN]}")
    started = time.perf_counter()
    counted = len(topics_with_papers())
    print(
        f"the topics' paper counts (dailies.selectors.topics_with_papers), counted once per "
        f"retirement of the topics or index tag: {(time.perf_counter() - started) * 1000:.1f} ms"
        f" ({counted} topics)"
    )
    for kind in ("archive", "index"):
        first, last = year[f"{kind}, first page"], year[f"{kind}, last page"]
        depth = last["median"] / first["median"]
        note = " (OFFSET paging grows with depth: keyset pagination needed)" if depth > 1.5 else ""
        print(f"{kind}: last page ({last['path']}) {depth:.2f}× the first{note}")
    return ok


def load_demo_into(name: str) -> None:
    """A database ``name`` (made afresh) with the demo in it, analysed."""
    with connection._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {connection.ops.quote_name(name)}")
        cursor.execute(f"CREATE DATABASE {connection.ops.quote_name(name)}")
    use_database(name)
    call_command("migrate", verbosity=0)
    call_command("load_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    # The demo's papers name no authors: three each from a pool of eight, as a baseline for
    # the author pages (an author with a few of its papers).
    pool = [f"Demo Author{i}" for i in range(8)]
    paper_authors_sync(
        {pk: [pool[pk % 8], pool[(pk * 3 + 1) % 8], pool[(pk * 5 + 2) % 8]] for pk in
         Paper.objects.values_list("pk", flat=True)}
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def drop_database(name: str, *, back_to: str) -> None:
    use_database(back_to)
    if name in _connections:
        _connections.pop(name).close()
    with connection._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {connection.ops.quote_name(name)}")


def index_for_search() -> None:
    started = time.perf_counter()
    indexed = search_index_rebuild(batch_size=1000)["indexed"]
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    print(f"indexed {indexed:,} published papers in {time.perf_counter() - started:.0f} s")


def generate_into(name: str) -> None:
    """A database ``name`` (made afresh) with the demo and a year on top of it, indexed."""
    load_demo_into(name)
    started = time.perf_counter()
    with transaction.atomic():
        counts = generate_year(random.Random(SEED))
    retire_everything()  # written by COPY, not through the services
    print(
        f"generated a year in {time.perf_counter() - started:.0f} s: "
        f"{counts['dailies']:,} published dailies, {counts['entries']:,} entries, "
        f"{counts['papers']:,} candidates with {counts['scores']:,} scores and "
        f"{counts['summaries']:,} summaries"
    )
    index_for_search()


def main() -> int:
    if connection.vendor != "postgresql":
        print("bench/year.py needs PostgreSQL: set DATABASE_URL (skipped).")
        return 0
    name = os.environ.get("BENCH_DB_NAME", "bench_year")
    demo_name = f"{name}_demo"
    home = connection.settings_dict["NAME"]
    began = time.perf_counter()
    reusing = bool(os.environ.get("BENCH_REUSE_DB"))
    try:
        with override_settings(PAGE_CACHE_ENABLED=False):
            if reusing:
                use_database(name)
                call_command("migrate", verbosity=0)
                print(f"reusing the year in {name} (BENCH_REUSE_DB)")
                if os.environ.get("BENCH_REINDEX"):
                    index_for_search()
            else:
                generate_into(name)
            load_demo_into(demo_name)
            ok = report(*measure_both(demo_name, name))
        print(f"\nwhole run {time.perf_counter() - began:.0f} s; target ≤ {TARGET_RATIO}× and no")
        print(f"more queries per page: {'met' if ok else 'NOT met'}")
    finally:
        drop_database(demo_name, back_to=home)
        if reusing or os.environ.get("BENCH_KEEP_DB"):
            print(f"kept the scratch database {name}")
        else:
            drop_database(name, back_to=home)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
