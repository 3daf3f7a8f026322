"""Search latency at a year's scale: 100,000 published papers on PostgreSQL (and SQLite).

Generates papers whose text follows a Zipf-like word distribution (so the most common
query words, "model" and "模型", match about half of the corpus), with summaries in both
languages, topics and organisations, all in published dailies; indexes them; then runs a
fixed mix of 200 queries in both languages and prints p50/p95 latency of

- the search service (``search()`` + ``count()`` + the first page of ranked hits),
- the API endpoint (``GET /api/v1/search?q=…``, through Django's test client),
- a plain full-text query that ranks every match with ``ts_rank`` (the baseline).

It runs in a scratch database that it creates, migrates and drops. Bulk rows go in with
``bulk_create``; the 100,000 index rows go in with COPY, built with the index's own literal
builders from the generated words (Chinese words are segmented one by one, as jieba would
segment them in context); 500 papers are also indexed through the real refresh path, whose
throughput is printed.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/search.py

Without ``DATABASE_URL`` it measures the SQLite backend (FTS5) on the same corpus and mix, in a
scratch file ``bench_search.sqlite3`` (the plain ts_rank baseline is PostgreSQL's only).

``BENCH_SEARCH_N`` changes the number of papers (default 100000); ``BENCH_KEEP_DB=1`` keeps
the scratch database for a closer look (drop ``bench_search`` by hand afterwards), and
``BENCH_REUSE_DB=1`` measures a kept one again without building it (it is migrated first,
then kept; ``BENCH_DB_NAME`` names it). Each figure is the second of two passes over the mix
(the first warms the caches); ``BENCH_COLD=1`` measures the first pass instead. The service's
slowest queries are named after its figures. ``BENCH_SERVICE_ONLY=1`` leaves out the API and
the plain ranking.

Semantic search (issue 36) is measured in the same run: the embedding model's throughput on
a small sample of the corpus's papers through the real path (``embeddings_refresh``; the
whole corpus would take the model about half a second a paper), then synthetic unit vectors
for every paper (stored as the indexing task stores them, 30% of them Chinese-script), the
in-process index's build (a process's first load) and an incremental reload, its memory,
and the service with vectors on: each query's first run (its vector made by the model) and
its repeat (the vector cached), against the lexical service measured before the vectors
were loaded and again after (``BENCH_VECTORS=0`` skips all this). The vectors being random,
the figures are of cost, not of quality (tests/test_semantic_crosslingual.py measures that).
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "digest_site.settings")
os.environ.setdefault("DEBUG", "0")  # no query log eating memory

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from dailies.models import Daily, DailyEntry  # noqa: E402
from papers.models import Organization, Paper, Summary, Topic, Track  # noqa: E402
from search import backends, embedding, service, text, vectors  # noqa: E402
from search.backends import postgres, sqlite  # noqa: E402
from search.backends.ranking import FIELD_CLASSES  # noqa: E402
from search.index import HEAD, search_index_refresh  # noqa: E402
from search.models import PaperEmbedding, SearchDocument, SearchTerm  # noqa: E402
from search.service import search  # noqa: E402

N = int(os.environ.get("BENCH_SEARCH_N", "100000"))
PER_DAILY = 10
TRACKS = 5
REAL_PATH_SAMPLE = 500
EMBED_SAMPLE = 16  # bench papers embedded by the model through the real path (a batch)
# Real titles and abstracts (the cross-lingual test's English papers) embedded as passages:
# the bench's text is random words, which cut into far more tokens than prose does.
REAL_TEXTS = ROOT / "tests" / "data" / "infra_cut_labelled.toml"
REAL_SAMPLE = 48
CROSSLINGUAL = ROOT / "tests" / "data" / "crosslingual_search.toml"
HAN_SHARE = 0.3  # synthetic vectors marked Chinese-script
# The synthetic vectors are made from real embeddings (``seed_vectors``): every title and
# abstract sentence of the test sets' 182 English papers and of the cross-lingual set's 32
# Chinese ones, embedded by the model as passages (kept in SEEDS_FILE, made again when the
# texts or the model change). A paper's vector is a mix of two of them (w of a first one of
# its script, 1 - w of any, w uniform in MIX) plus SIGMA times a Gaussian with their
# covariance, made a unit vector: its nearest neighbours are as near as the real texts' are
# (median cosine 0.96; 0.94 between the real sentences) and unrelated papers as far (0.84;
# 0.81), so the index's lists see the clusters real papers make, which random vectors lack.
SEED_PAPERS = ["infra_cut_labelled", "infra_cut_heldout", "scoring_labelled"]
SEEDS_FILE = ROOT / "bench" / "out" / "search_seed_vectors.npz"
MIX = (0.55, 0.9)
SIGMA = 0.5
SYNTHETIC = "synthetic-seeded"  # the stored rows' digest
SEED = 20261028

EN_STOP = ["the", "of", "and", "a", "to", "in", "is", "for", "that", "we", "on"]
EN_STOP += ["with", "as", "by", "this", "are", "from", "be", "an", "which", "at"]
# Words readers search for, placed where a Zipf law puts common and rarer words.
EN_RANKED = {
    30: "model",
    34: "data",
    38: "system",
    45: "performance",
    52: "training",
    60: "memory",
    75: "inference",
    90: "cache",
    120: "latency",
    160: "GPU",
    200: "serving",
    260: "KV",
    330: "vector",
    420: "retrieval",
    520: "attention",
    650: "quantization",
    800: "compression",
    1000: "graceful",
    1100: "degradation",
    1300: "MoE",
    1500: "offloading",
    2000: "eviction",
    3000: "replica",
    5000: "gateway",
    9000: "verifiable",
}
ZH_RANKED = {
    10: "模型",
    14: "数据",
    18: "系统",
    25: "性能",
    30: "训练",
    40: "内存",
    55: "推理",
    70: "缓存",
    100: "延迟",
    140: "向量",
    190: "检索",
    260: "注意力",
    350: "量化",
    460: "压缩",
    600: "优雅",
    700: "降级",
    900: "专家",
    1200: "淘汰",
    1700: "副本",
    2500: "网关",
}
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "shen", "pra", "tor", "lex"]
SYLLABLES += ["bin", "dal", "fer", "gul", "hop", "qui", "sar", "wen"]


def english_vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    words = list(EN_STOP)
    seen = set(words) | set(EN_RANKED.values())
    while len(words) < size:
        word = "".join(rng.choice(SYLLABLES, size=int(rng.integers(2, 5))))
        if word not in seen:
            seen.add(word)
            words.append(word)
    for rank, word in sorted(EN_RANKED.items()):
        words.insert(rank - 1, word)
    return words[:size]


def chinese_vocabulary(size: int) -> list[str]:
    """jieba's own dictionary, most frequent first: real Chinese words, real ranks."""
    import jieba

    path = Path(jieba.__file__).parent / "dict.txt"
    entries = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            word, freq, *_ = line.split()
            run = text.RUN_RE.fullmatch(word)
            if 2 <= len(word) <= 4 and run and run["han"]:
                entries.append((-int(freq), word))
    words = [w for _, w in sorted(entries)]
    placed = set(ZH_RANKED.values())
    words = [w for w in words if w not in placed][: size - len(placed)]
    for rank, word in sorted(ZH_RANKED.items()):
        words.insert(rank - 1, word)
    return words


class Corpus:
    """Papers as word ids, drawn from Zipf laws (exponent 1) over both vocabularies."""

    def __init__(self, n: int, rng: np.random.Generator) -> None:
        self.en = english_vocabulary(30_000, rng)
        self.zh = chinese_vocabulary(20_000)
        self.rng = rng
        self.p_en = self._zipf(len(self.en))
        self.p_zh = self._zipf(len(self.zh))
        self.n = n

    @staticmethod
    def _zipf(size: int) -> np.ndarray:
        p = 1.0 / np.arange(1, size + 1)
        return p / p.sum()

    def draw(self, lang: str, lengths: np.ndarray) -> list[np.ndarray]:
        vocab_p = self.p_en if lang == "en" else self.p_zh
        flat = self.rng.choice(len(vocab_p), size=int(lengths.sum()), p=vocab_p)
        return np.split(flat, np.cumsum(lengths)[:-1])

    def fields(self) -> dict[str, list[np.ndarray]]:
        r, n = self.rng, self.n
        return {
            "title": self.draw("en", r.integers(6, 13, n)),
            "takeaway_en": self.draw("en", r.integers(8, 16, n)),
            "summary_en": self.draw("en", r.integers(70, 121, n)),
            "abstract": self.draw("en", r.integers(110, 181, n)),
            "takeaway_zh": self.draw("zh", r.integers(6, 11, n)),
            "summary_zh": self.draw("zh", r.integers(50, 91, n)),
        }


def en_text(words: list[str], ids: np.ndarray) -> str:
    return " ".join(words[i] for i in ids).capitalize() + "."


def zh_text(words: list[str], ids: np.ndarray) -> str:
    # A comma every few words, as in real prose, so runs stay a realistic length.
    return "".join(words[i] + ("，" if k % 6 == 5 else "") for k, i in enumerate(ids)) + "。"


def load_rows(corpus: Corpus, data: dict[str, list[np.ndarray]]) -> list[int]:
    """Tracks, topics, organisations, papers, summaries and published dailies (bulk)."""
    en, zh, rng, n = corpus.en, corpus.zh, corpus.rng, corpus.n
    tracks = [
        Track.objects.create(slug=f"track-{t}", name_en=f"Track {t}", name_zh=f"赛道{t}")
        for t in range(TRACKS)
    ]
    topics = Topic.objects.bulk_create(
        Topic(slug=f"topic-{i}", name_en=f"{en[40 + i]} {en[400 + i]}", name_zh=zh[30 + i])
        for i in range(40)
    )
    orgs = Organization.objects.bulk_create(
        Organization(slug=f"org-{i}", label=en[2000 + i].title(), name_zh=zh[3000 + i])
        for i in range(30)
    )
    papers = [
        Paper(
            canonical_id=f"bench:{i}",
            slug=f"bench-{i}",
            title=en_text(en, data["title"][i])[:500],
            abstract=en_text(en, data["abstract"][i]),
            source_hash="",
        )
        for i in range(n)
    ]
    Paper.objects.bulk_create(papers, batch_size=2000)
    ids = [p.pk for p in papers]
    summaries = []
    for i, pk in enumerate(ids):
        take_en = en_text(en, data["takeaway_en"][i])
        take_zh = zh_text(zh, data["takeaway_zh"][i])
        summaries.append(
            Summary(
                paper_id=pk,
                language="en",
                body=f"{en_text(en, data['summary_en'][i])} {take_en}",
                takeaway=take_en[:300],
            )
        )
        summaries.append(
            Summary(
                paper_id=pk,
                language="zh",
                body=zh_text(zh, data["summary_zh"][i]) + take_zh,
                takeaway=take_zh[:300],
            )
        )
    Summary.objects.bulk_create(summaries, batch_size=4000)
    paper_topics = Paper.topics.through
    topic_pick = rng.integers(0, len(topics), size=(n, 2))
    paper_topics.objects.bulk_create(
        (
            paper_topics(paper_id=pk, topic_id=topics[t].pk)
            for pk, pair in zip(ids, topic_pick, strict=True)
            for t in set(pair.tolist())
        ),
        batch_size=5000,
    )
    paper_orgs = Paper.organizations.through
    paper_orgs.objects.bulk_create(
        (
            paper_orgs(paper_id=pk, organization_id=orgs[int(o)].pk)
            for pk, o in zip(ids, rng.integers(0, len(orgs), size=n), strict=True)
        ),
        batch_size=5000,
    )
    now = timezone.now()
    days = -(-n // (PER_DAILY * TRACKS))
    start = dt.date(2026, 10, 28) - dt.timedelta(days=days)
    dailies = Daily.objects.bulk_create(
        Daily(
            track=tracks[t],
            date=start + dt.timedelta(days=d),
            status=Daily.Status.PUBLISHED,
            published_at=now,
            intro_en="Intro.",
            intro_zh="导语。",
        )
        for d in range(days)
        for t in range(TRACKS)
    )
    DailyEntry.objects.bulk_create(
        (
            DailyEntry(
                daily=dailies[i // PER_DAILY],
                paper_id=pk,
                position=i % PER_DAILY + 1,
                is_lead=i % PER_DAILY == 0,
            )
            for i, pk in enumerate(ids)
        ),
        batch_size=5000,
    )
    return ids


def index_rows(corpus: Corpus, data: dict[str, list[np.ndarray]], ids: list[int]) -> None:
    """The index, COPYed: each paper's terms per weight class, made from the generated words
    by the index's own tokenizer, in ``document_for``'s order, turned into rows by the
    index's own literal builders."""
    en_terms = [[t.term for t in text.latin_tokens(w)] for w in corpus.en]
    zh_terms = [[t.term for t in text.tokens(w)] for w in corpus.zh]
    topic_terms = {t.pk: text.terms(f"{t.name_en} {t.name_zh}") for t in Topic.objects.all()}
    org_terms = {o.pk: text.terms(f"{o.label} {o.name_zh}") for o in Organization.objects.all()}
    topics_of: dict[int, list[int]] = {}
    for pid, tid in Paper.topics.through.objects.values_list("paper_id", "topic_id"):
        topics_of.setdefault(pid, []).append(tid)
    orgs_of = dict(Paper.organizations.through.objects.values_list("paper_id", "organization_id"))
    last = dict(DailyEntry.objects.values_list("paper_id", "daily__date"))
    df: Counter[str] = Counter()
    now = timezone.now()

    def expand(word_ids: np.ndarray, table: list[list[str]]) -> list[str]:
        return [term for i in word_ids.tolist() for term in table[i]]

    def documents():
        for i, pk in enumerate(ids):
            take_en = expand(data["takeaway_en"][i], en_terms)
            take_zh = expand(data["takeaway_zh"][i], zh_terms)
            fields = {
                HEAD: expand(data["title"][i], en_terms)
                + take_en
                + take_zh
                + [t for tid in topics_of[pk] for t in topic_terms[tid]],
                "B": expand(data["summary_en"][i], en_terms)
                + take_en
                + expand(data["summary_zh"][i], zh_terms)
                + take_zh,
                "C": expand(data["abstract"][i], en_terms) + org_terms[orgs_of[pk]],
            }
            df.update({t for terms in fields.values() for t in terms})
            yield pk, fields

    if connection.vendor == "sqlite":
        _write_sqlite_index(documents(), last, now)
        SearchTerm.objects.bulk_create(
            (SearchTerm(term=t, documents=n) for t, n in df.items() if len(t) <= 64),
            batch_size=5000,
        )
    else:
        _copy_postgres_index(documents(), last, now)
        with (
            connection.cursor() as cursor,
            cursor.cursor.copy("COPY dailies_searchterm (term, documents) FROM STDIN") as copy,
        ):
            for term, count in df.items():
                if len(term) <= 64:
                    copy.write_row((term, count))
    spellings = {(w.lower(), ts[0]) for w, ts in zip(corpus.en, en_terms, strict=True) if ts}
    backends.learn_spellings((w, t) for w, t in spellings if len(w) >= 4 and w.isalpha())


def _copy_postgres_index(documents, last: dict, now) -> None:
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX dailies_search_vector_gin, dailies_search_head_gin")
        with cursor.cursor.copy(
            "COPY dailies_searchdocument (paper_id, last_appeared, vector, head_vector, indexed_at)"
            " FROM STDIN"
        ) as copy:
            for pk, fields in documents:
                copy.write_row((pk, last[pk], *postgres.vector_literals(fields), now))


def _write_sqlite_index(documents, last: dict, now, batch: int = 5000) -> None:
    """The FTS5 rows and the index rows, as ``SqliteBackend.write`` stores them."""
    fts, docs = [], []

    def flush() -> None:
        with connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {sqlite.FTS_TABLE} (rowid, head, body, extra)"
                " VALUES (%s, %s, %s, %s)",
                fts,
            )
        SearchDocument.objects.bulk_create(docs, batch_size=batch)
        fts.clear()
        docs.clear()

    for pk, fields in documents:
        fts.append((pk, *(" ".join(fields[w]) for w in FIELD_CLASSES)))
        docs.append(SearchDocument(paper_id=pk, last_appeared=last[pk], indexed_at=now))
        if len(fts) >= batch:
            flush()
    flush()


def create_gin_indexes() -> None:
    """Built once after the COPY: faster than keeping them up to date row by row. Defined
    as migrations 0004 and 0007 define them (no pending list)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE INDEX dailies_search_vector_gin ON dailies_searchdocument"
            " USING gin (vector) WITH (fastupdate = off)"
        )
        cursor.execute(
            "CREATE INDEX dailies_search_head_gin ON dailies_searchdocument"
            " USING gin (head_vector) WITH (fastupdate = off)"
        )


def queries(corpus: Corpus, rng: np.random.Generator) -> list[str]:
    """200 fixed queries: very common words, reader phrases, mid and rare words, pairs of
    common words, misspellings and fragments, in both languages."""
    en, zh = corpus.en, corpus.zh
    mix = [
        "model", "模型", "data", "数据", "system", "系统", "performance", "性能", "training",
        "训练", "memory", "推理", "cache", "缓存", "model training", "模型 训练", "model 模型",
        "data system", "数据 系统", "GPU memory", "KV cache", "KV 缓存", "graceful degradation",
        "优雅 降级", "MoE offloading", "向量检索", "向量 检索", "vector retrieval",
        "attention 注意力", "quantization", "量化", "compression 压缩", "eviction", "淘汰",
        "replica", "副本", "gateway", "网关", "verifiable", "degredation", "quantisation",
        "compresion", "retreival", "infer", "serv", "latenc",
    ]  # fmt: skip
    out = list(mix)
    while len(out) < 200:
        kind = len(out) % 6
        if kind == 0:
            out.append(en[int(rng.integers(25, 200))])  # common
        elif kind == 1:
            out.append(zh[int(rng.integers(5, 200))])
        elif kind == 2:
            out.append(en[int(rng.integers(200, 5000))])  # mid
        elif kind == 3:
            out.append(zh[int(rng.integers(200, 5000))])
        elif kind == 4:
            a, b = rng.integers(25, 3000, size=2)
            out.append(f"{en[int(a)]} {en[int(b)]}")  # two words
        else:
            out.append(f"{en[int(rng.integers(25, 500))]} {zh[int(rng.integers(5, 500))]}")
    return out[:200]


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * len(ordered))) - 1)]
    return f"p50 {p50:7.2f} ms   p95 {p95:7.2f} ms   max {ordered[-1]:7.2f} ms"


def slowest(runs: list[str], samples: list[float], n: int = 5) -> str:
    worst = sorted(zip(samples, runs, strict=True), reverse=True)[:n]
    return ", ".join(f"{q!r} {ms:.0f} ms" for ms, q in worst)


def timed(fn, runs: list[str]) -> list[float]:
    samples = []
    for q in runs:
        started = time.perf_counter()
        fn(q)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def run_service(q: str) -> list[int]:
    results = search(q)
    results.count()
    return [h.paper_id for h in results[0 : settings.PAGE_SIZE]]


def run_plain(q: str) -> None:
    terms = [t.term for t in text.parse_query(q)]
    if not terms:
        return
    literal = " & ".join(postgres.ts_quote(t) for t in terms)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT paper_id, ts_rank(vector, query) AS r"
            " FROM dailies_searchdocument, CAST(%s AS tsquery) query"
            " WHERE vector @@ query ORDER BY r DESC LIMIT %s",
            [literal, settings.PAGE_SIZE],
        )
        cursor.fetchall()


def build(corpus: Corpus, postgres: bool) -> None:
    """Store, index and analyse the corpus, then index a sample through the real path."""
    started = time.perf_counter()
    data = corpus.fields()
    print(f"generated {N:,} papers' words in {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    with transaction.atomic():
        ids = load_rows(corpus, data)
    print(f"stored papers, summaries and dailies in {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    with transaction.atomic():
        index_rows(corpus, data, ids)
    if postgres:
        create_gin_indexes()
    with connection.cursor() as cursor:
        # What autovacuum would have done by the time readers arrive.
        cursor.execute("VACUUM ANALYZE" if postgres else "ANALYZE")
        if postgres:
            cursor.execute(
                "SELECT pg_size_pretty(pg_total_relation_size('dailies_searchdocument'))"
            )
            size = cursor.fetchone()[0]
        else:
            cursor.execute("SELECT page_count * page_size FROM pragma_page_count, pragma_page_size")
            size = f"{cursor.fetchone()[0] / 2**20:.0f} MB (whole file)"
    how = "COPY" if postgres else "executemany"
    print(f"indexed {N:,} papers ({how}) in {time.perf_counter() - started:.1f} s; {size}")
    sample = ids[:REAL_PATH_SAMPLE]
    started = time.perf_counter()
    search_index_refresh(paper_ids=sample)
    elapsed = time.perf_counter() - started
    print(f"real refresh path: {len(sample) / elapsed:,.0f} papers/s ({len(sample)} papers)")


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(0.95 * len(ordered))) - 1)]


def measure_lexical(runs: list[str]) -> list[float]:
    """The lexical service (vectors off), a warm pass then the measured one."""
    settings.SEARCH_VECTORS = False
    timed(run_service, runs)
    return timed(run_service, runs)


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def seed_texts() -> tuple[list[str], list[bool]]:
    """The real texts the synthetic vectors are made from, and which are Chinese."""
    import re
    import tomllib

    texts = []
    for name in SEED_PAPERS:
        with (ROOT / "tests" / "data" / f"{name}.toml").open("rb") as f:
            for paper in tomllib.load(f)["paper"]:
                texts.append(paper["title"])
                sentences = re.split(r"(?<=[.!?])\s+", paper["abstract"].strip())
                texts += [s for s in sentences if len(s) > 30]
    english = len(texts)
    with CROSSLINGUAL.open("rb") as f:
        for paper in tomllib.load(f)["zh_paper"]:
            texts.append(paper["title"])
            sentences = re.split(r"(?<=[。！？])", paper["abstract"].strip())
            texts += [s for s in sentences if len(s) > 10]
    return texts, [i >= english for i in range(len(texts))]


def seed_vectors() -> tuple[np.ndarray, np.ndarray]:
    """The seed texts' embeddings (passages) and their is-Chinese flags, from SEEDS_FILE when
    it holds them for these texts and this model (about ten minutes of the model)."""
    import hashlib

    texts, han = seed_texts()
    digest = hashlib.sha256("\n".join([embedding.model_id(), *texts]).encode()).hexdigest()
    if SEEDS_FILE.exists():
        kept = np.load(SEEDS_FILE)
        if str(kept["digest"]) == digest:
            return kept["vectors"], kept["han"]
    started = time.perf_counter()
    matrix = embedding.embed_passages(texts)
    print(f"embedded {len(texts)} seed texts in {time.perf_counter() - started:.0f} s")
    SEEDS_FILE.parent.mkdir(exist_ok=True)
    np.savez(SEEDS_FILE, vectors=matrix, han=np.asarray(han), digest=np.asarray(digest))
    return matrix, np.asarray(han)


def store_synthetic_vectors(rng: np.random.Generator) -> float:
    """A synthetic unit vector (see SIGMA) for every paper without one of the current model
    and recipe, stored as the indexing task stores them; returns the seconds it took."""
    seeds, seed_han = seed_vectors()
    started = time.perf_counter()
    # Rows of an older recipe (random vectors) in a kept database are made again.
    PaperEmbedding.objects.filter(digest__startswith="synthetic").exclude(digest=SYNTHETIC).delete()
    have = set(PaperEmbedding.objects.values_list("paper_id", flat=True))
    ids = [pk for pk in Paper.objects.order_by("pk").values_list("pk", flat=True) if pk not in have]
    # Embedded an hour ago, as most of an index is: a reload reads again only what is newer.
    model, now = embedding.model_id(), timezone.now() - dt.timedelta(hours=1)
    deviations = ((seeds - seeds.mean(axis=0)) / np.sqrt(len(seeds))).astype(np.float32)
    english, chinese = np.flatnonzero(~seed_han), np.flatnonzero(seed_han)
    for start in range(0, len(ids), 5000):
        chunk = ids[start : start + 5000]
        han = rng.random(len(chunk)) < HAN_SHARE
        first = np.where(han, rng.choice(chinese, len(chunk)), rng.choice(english, len(chunk)))
        second = rng.integers(0, len(seeds), len(chunk))
        w = rng.uniform(*MIX, len(chunk))[:, None].astype(np.float32)
        noise = rng.standard_normal((len(chunk), len(seeds))).astype(np.float32) @ deviations
        matrix = w * seeds[first] + (1 - w) * seeds[second] + SIGMA * noise
        matrix = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
        with transaction.atomic():
            PaperEmbedding.objects.bulk_create(
                PaperEmbedding(
                    paper_id=pk, model=model, digest=SYNTHETIC,
                    script="hani" if han[i] else "latn", vector=matrix[i].tobytes(),
                    embedded_at=now,
                )
                for i, pk in enumerate(chunk)
            )  # fmt: skip
    return time.perf_counter() - started


def measure_semantic(runs: list[str], lexical_before: list[float]) -> None:
    """Embedding throughput, the index's build, reload and memory, and hybrid latency."""
    settings.SEARCH_VECTORS = True
    problem = embedding.model_problem()
    if problem:
        print(f"semantic search not measured: {problem}")
        return
    started = time.perf_counter()
    embedding.MODEL.get()
    print(f"embedding model loaded in {time.perf_counter() - started:.2f} s")
    sample = list(
        Paper.objects.exclude(embedding__isnull=False)
        .order_by("pk")
        .values_list("pk", flat=True)[:EMBED_SAMPLE]
    )
    started = time.perf_counter()
    done = vectors.embeddings_refresh(paper_ids=sample)["embedded"]
    elapsed = time.perf_counter() - started
    if done:  # none when a kept database is measured again (BENCH_REUSE_DB)
        print(
            f"embedding (real path, {done} bench papers, batches of {embedding.EMBED_BATCH},"
            f" one thread): {done / elapsed:.2f} papers/s;"
            f" {N:,} would take {N * elapsed / done / 3600:.1f} h"
        )
    import tomllib

    with REAL_TEXTS.open("rb") as f:
        texts = [f"{p['title']}\n{p['abstract']}" for p in tomllib.load(f)["paper"]]
    texts = texts[:REAL_SAMPLE]
    started = time.perf_counter()
    embedding.embed_passages(texts)
    elapsed = time.perf_counter() - started
    chars = sum(min(len(t), embedding.MAX_PASSAGE_CHARS) for t in texts) / len(texts)
    print(
        f"embedding ({len(texts)} real titles and abstracts, {chars:.0f} characters on average):"
        f" {len(texts) / elapsed:.2f} papers/s;"
        f" {N:,} would take {N * elapsed / len(texts) / 3600:.1f} h"
    )
    stored = store_synthetic_vectors(np.random.default_rng(SEED + 2))
    print(f"stored {N - done:,} synthetic vectors in {stored:.1f} s (the rest of the corpus)")

    # The IVF index (this change), then its incremental reload, then the exact one (before
    # it: IVF_MIN_ROWS out of reach), both kept in this process to be measured side by side.
    approx = vectors.current()
    approx.clear()
    vectors.generation_bump()
    ivf_index = load_index(approx, "IVF")
    lists = {k: len(v.lists.centroids) for k, v in ivf_index.scripts.items() if v.lists}
    print(f"{'':14s} lists: {lists}, {vectors.IVF_PROBE} probed a script")
    ids = ivf_index.ids
    changed = ids[:: max(1, len(ids) // 100)][:100].tolist()
    PaperEmbedding.objects.filter(paper_id__in=changed).update(embedded_at=timezone.now())
    vectors.generation_bump()
    started = time.perf_counter()
    approx.index()
    reload = time.perf_counter() - started
    print(
        f"incremental reload of the IVF index ({len(changed)} embeddings changed): {reload:.2f} s"
    )
    exact = vectors.InProcessVectors()
    vectors.IVF_MIN_ROWS, ivf_min_rows = 10**12, vectors.IVF_MIN_ROWS
    load_index(exact, "exact")
    vectors.IVF_MIN_ROWS = ivf_min_rows

    query = embedding.embed_query("KV cache offloading for long-context inference")
    for label, backend in (("exact", exact), ("IVF", approx)):
        scan = timed(lambda q: backend.nearest_by_script(query, limit=15), ["scan"] * 50)  # noqa: B023
        print(f"vector search alone, {label:5s} (nearest 15 of each script): {percentiles(scan)}")
    model = embedding.MODEL.get()
    cut = [embedding._cut_to_tokens(model, q[: embedding.MAX_QUERY_CHARS]) for q in runs]
    alone = timed(model.query, cut)
    print(f"query embedding alone (the model, one thread):      {percentiles(alone)}")

    # First runs (each query's vector made by the model) and repeats, before and after this
    # change, query by query, in turns (which goes first alternates), so that the machine's
    # load weighs on both alike.
    configs = {"before": (exact, False), "after": (approx, True)}
    first = {name: [] for name in configs}
    repeat = {name: [] for name in configs}
    pages = {name: [] for name in configs}
    for i, q in enumerate(runs):
        for name in sorted(configs, reverse=i % 2 == 1):
            with configured(*configs[name]):
                forget(q)
                first[name] += timed(run_service, [q])
    for name in configs:  # the exact config's kept hits were emptied by each forget()
        with configured(*configs[name]):
            for q in runs:
                pages[name].append(run_service(q))
    for i, q in enumerate(runs):
        for name in sorted(configs, reverse=i % 2 == 1):
            with configured(*configs[name]):
                repeat[name] += timed(run_service, [q])
    lexical_after = measure_lexical(runs)
    lb, la = p95(lexical_before), p95(lexical_after)
    print(f"lexical (vectors off), before the index was loaded: {percentiles(lexical_before)}")
    print(f"lexical (vectors off), after:                       {percentiles(lexical_after)}")
    for name, how in (
        ("before", "exact scan, embedding then lexical, hits kept per process"),
        ("after", "IVF, embedding beside lexical, results kept in the shared cache"),
    ):
        print(f"{name}: {how}")
        print(f"  hybrid, a query's first run (model embeds it):    {percentiles(first[name])}")
        print(f"  hybrid, the same query again:                     {percentiles(repeat[name])}")
    fb, fa = p95(first["before"]), p95(first["after"])
    rb, ra = p95(repeat["before"]), p95(repeat["after"])
    print(
        f"ratios: lexical p95 after/before {la / lb:.2f}; hybrid first p95 after/before"
        f" {fa / fb:.2f} ({fb:.1f} -> {fa:.1f} ms, target 60); repeated p95 after/before"
        f" {ra / rb:.2f} ({rb:.1f} -> {ra:.1f} ms, target 12)"
    )
    same = [
        len(set(a) & set(b)) / max(1, len(b))
        for a, b in zip(pages["after"], pages["before"], strict=True)
    ]
    print(f"hybrid first page (10), after vs before: {np.mean(same):.3f} of the papers the same")
    print(f"{'':14s} slowest first runs after: {slowest(runs, first['after'])}")
    measure_recall(runs, exact, approx)


def load_index(backend: vectors.InProcessVectors, label: str) -> vectors._Index:
    """A process's first load of ``backend``, its time and memory, printed."""
    before = rss_mb()
    started = time.perf_counter()
    index = backend.index()
    build = time.perf_counter() - started
    grown = rss_mb() - before
    print(
        f"vector index build, {label} (a process's first load of {len(index.ids):,} vectors):"
        f" {build:.2f} s; memory per worker {index.nbytes / 2**20:.0f} MB of arrays (resident"
        f" set grew {grown:.0f} MB)"
    )
    return index


class configured:
    """The search service as before this change (``vectors``: the exact index; the query
    embedded, then the lexical search; only the vector hits kept, per process) or after it
    (the IVF index; the embedding beside the lexical search; the results kept)."""

    def __init__(self, backend: vectors.InProcessVectors, after: bool) -> None:
        self.backend, self.after = backend, after

    def __enter__(self) -> None:
        self.saved = vectors._IN_PROCESS, service._results_key, service._embed_ahead
        vectors._IN_PROCESS = self.backend
        if not self.after:
            service._results_key = lambda query, filters: None
            service._embed_ahead = lambda query: None

    def __exit__(self, *exc) -> None:
        vectors._IN_PROCESS, service._results_key, service._embed_ahead = self.saved


def forget(q: str) -> None:
    """What any earlier run kept of query ``q``: its vector, its hits, its results."""
    key = embedding.query_key(q[: embedding.MAX_QUERY_CHARS])
    with embedding._kept_lock:
        embedding._kept.pop(key, None)
    cache.delete(key)
    service._kept_hits.cache_clear()
    results = service._results_key(q, service.NO_FILTERS)
    if results:
        cache.delete(results)


def measure_recall(runs: list[str], exact, approx) -> None:
    """Recall@10 of the IVF index against the exact one: the share of each script's 10
    nearest papers it finds, for the mix's queries, the cross-lingual set's queries (real
    reader phrasings) and papers' own vectors ("more like this")."""
    import tomllib

    with CROSSLINGUAL.open("rb") as f:
        data = tomllib.load(f)
    phrased = [q["query"] for q in data["query_for_english_paper"]]
    phrased += [p["en_query"] for p in data["zh_paper"]]
    ids = exact.index().ids
    papers = np.random.default_rng(SEED + 3).choice(ids, 200, replace=False).tolist()
    stored = exact.vectors_of(papers)
    sets = {
        f"the mix's {len(runs)} queries": [(embedding.embed_query(q), ()) for q in runs],
        f"{len(phrased)} cross-lingual queries": [(embedding.embed_query(q), ()) for q in phrased],
        f"{len(papers)} papers' own vectors": [(stored[pk], (pk,)) for pk in papers],
    }
    for label, queries in sets.items():
        shares = []
        for vector, exclude in queries:
            want = exact.nearest_by_script(vector, limit=10, exclude=exclude)
            got = approx.nearest_by_script(vector, limit=10, exclude=exclude)
            for script, hits in want.items():
                found = {h.paper_id for h in got[script]}
                shares.append(len(found & {h.paper_id for h in hits}) / max(1, len(hits)))
        print(
            f"IVF recall@10 against the exact scan, {label}: {np.mean(shares):.3f}"
            f" (each script apart; lowest {min(shares):.1f})"
        )


def reuse(name: str) -> str:
    """Point the connection at the kept scratch database ``name`` and migrate it."""
    old_name = connection.settings_dict["NAME"]
    connection.close()
    settings.DATABASES["default"]["NAME"] = name
    connection.settings_dict["NAME"] = name
    call_command("migrate", verbosity=0)
    print(f"reusing the scratch database {name} (BENCH_REUSE_DB)")
    return old_name


def main() -> int:
    postgres = connection.vendor == "postgresql"
    # On SQLite the scratch database is a file (an in-memory one would flatter it).
    default_name = "bench_search" if postgres else str(ROOT / "bench_search.sqlite3")
    name = os.environ.get("BENCH_DB_NAME", default_name)
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = name
    reusing = bool(os.environ.get("BENCH_REUSE_DB"))
    if reusing:
        old_name = reuse(name)
    else:
        old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    began = time.perf_counter()
    try:
        rng = np.random.default_rng(SEED)
        corpus = Corpus(N, rng)
        if not reusing:
            build(corpus, postgres)
        assert SearchDocument.objects.count() == N
        for word in ("model", "模型", "cache", "缓存"):
            share = search(word).match.exact_count / N
            print(f"  {word!r} is in {share:.0%} of the papers")

        runs = queries(corpus, np.random.default_rng(SEED + 1))
        settings.API_ANON_RATE = "1000000/minute"  # the bench is one client asking fast
        settings.PAGE_CACHE_ENABLED = False  # measure the search, not the page cache
        client = Client()
        api = lambda q: client.get("/api/v1/search", {"q": q})  # noqa: E731
        runners = [("service", run_service), ("API", api)]
        if postgres:
            runners.append(("plain ts_rank", run_plain))
        if os.environ.get("BENCH_SERVICE_ONLY"):  # the semantic figures compare with it alone
            runners = runners[:1]
        print(f"on {connection.vendor}:")
        semantic = os.environ.get("BENCH_VECTORS", "1") != "0"
        if semantic:
            lexical_before = measure_lexical(runs)
        for label, fn in runners:
            if not os.environ.get("BENCH_COLD"):
                timed(fn, runs)  # a first pass warms the caches; the second is measured
            samples = timed(fn, runs)
            print(f"{label:14s} {len(runs)} queries: {percentiles(samples)}")
            if label == "service":
                print(f"{'':14s} slowest: {slowest(runs, samples)}")
        if semantic:
            measure_semantic(runs, lexical_before)
        print(f"whole run {time.perf_counter() - began:.0f} s")
    finally:
        if reusing or os.environ.get("BENCH_KEEP_DB"):
            print(f"kept the scratch database {connection.settings_dict['NAME']}")
        else:
            connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
