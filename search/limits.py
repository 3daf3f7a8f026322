"""Every bound of search in one place: what a query may be, how much is embedded at a time,
how large the in-process vector index may grow, and how hybrid results are fused.

Each is tested at its edge in tests/test_semantic_search.py (the query, a batch, a run, the
index).
"""

from __future__ import annotations

# Queries longer than this are cut: nobody types more, and the work stays bounded (the
# lexical parse and the query embedding both read at most this much).
MAX_QUERY_CHARS = 200
MAX_QUERY_TERMS = 12
# The model reads a query up to this many tokens (its specials included): its time grows
# with each, about 2.5 ms a token on one quiet core. A Chinese character is about a token,
# so 200 of them would cost half a second; typed queries are shorter (the cross-lingual
# test set's longest is 32 tokens).
MAX_QUERY_TOKENS = 64

# A paper's text for its embedding (title, summaries, abstract) is cut to this many
# characters: the model reads at most 512 tokens, and its time grows with the length.
MAX_PASSAGE_CHARS = 1200
# Passages handed to the model in one call.
EMBED_BATCH = 16
# Papers one run of the indexing task embeds at most (about 2-3 papers/s on one thread: the
# run stays well inside the task's five-minute soft limit); the periodic sweep does the rest.
EMBED_PER_RUN = 300
# Papers the in-process vector index holds at most (384 float32 each: 1.5 KB; 100,000 papers
# are 154 MB a worker). Past it the newest embeddings are left out and a line is logged.
MAX_VECTOR_INDEX = 200_000
# A script with at least this many papers is searched through an inverted file (IVF): its
# rows are grouped into lists around k-means centroids, and an unfiltered query reads only
# the lists of its IVF_PROBE nearest centroids, then ranks their rows exactly. Below it (the
# demo, the tests, a young site) every row is compared: the scan costs a few ms there, and
# the results are exact. At 100,000 papers a query reads about a fifth of the rows instead
# of all 146 MB; bench/search.py measures the time and the recall against the exact scan.
IVF_MIN_ROWS = 20_000
# Lists a script is split into: IVF_LISTS_PER_SQRT times the square root of its rows (about
# 260 for 70,000 papers), so that lists stay a few hundred rows each as the index grows.
IVF_LISTS_PER_SQRT = 1.0
# Lists probed a script: a query's nearest papers in its own script are near it and in its
# nearest lists (recall@10 0.997 at 24), but the other script's, which the cross-lingual
# half of search needs, are farther and spread wider (0.89 at 24, 0.95 at 48, 0.98 at 96;
# bench/search.py).
IVF_PROBE = 48
# k-means is trained on at most this many rows a list (a sample, fixed seed: every worker
# that loads the same rows gets the same lists), for this many rounds; a process trains
# again when a script has grown this many times past the rows it was trained on, and places
# newer rows in the nearest list until then.
IVF_TRAIN_PER_LIST = 32
IVF_TRAIN_ROUNDS = 8
IVF_RETRAIN_GROWTH = 1.5

# Hybrid search: each script's papers (Latin, Han) fused apart by reciprocal rank fusion of
# the first FUSE_DEPTH lexical hits with the VECTOR_HITS nearest papers of that script whose
# cosine similarity to the query is at least MIN_SIMILARITY (multilingual-e5 scores
# unrelated texts 0.7-0.8 and a paper in the other language about 0.8: the floor only drops
# what is plainly unrelated), then taken in turn by rank.
# A deeper lexical ranking ranks more rows and moves the first page little (the
# cross-lingual set's hits@10 is the same fusing 20 or 100).
FUSE_DEPTH = 30
VECTOR_HITS = 15
MIN_SIMILARITY = 0.7
RRF_K = 60
# A lexical ranking that matched only some of the query's words, or a corrected spelling,
# weighs this much in the fusion (the meaning decides).
RELAXED_WEIGHT = 0.25

# Query embeddings kept: per process (an LRU of this many) and in the shared cache (timeout).
QUERY_VECTORS_KEPT = 2048
QUERY_VECTOR_TIMEOUT = 7 * 24 * 3600
# A query's nearest papers (unfiltered) kept per process, an LRU of this many, until the
# vector index changes.
QUERY_HITS_KEPT = 2048
# A hybrid search's results kept in the shared cache (search.service): retired with the
# ``index`` tag and the vector index's generation, and gone after this many seconds anyway.
RESULTS_TIMEOUT = 24 * 3600

# "More like this" and the related papers of a paper page; the nearest published papers a
# desk candidate shows.
LIKE_RESULTS = 30
NEAREST_COVERED = 2
