"""The search index: one row per published paper, plus the vocabulary it uses.

Written only by ``search.index``; read only by ``search.backends``. On PostgreSQL the
weighted tsvectors live in ``SearchDocument`` with GIN indexes; on SQLite the same terms live
in the FTS5 table ``dailies_search_fts`` (rowid = paper id), and the vector columns stay NULL.

The tables, their indexes and the FTS5 table keep the names dailies' migration 0004 gave them
when the index lived in dailies: this app took the models over by state-only migrations
(dailies 0008, search 0001), so a database keeps its rows and nothing is rebuilt.
"""

from __future__ import annotations

from django.contrib.postgres.search import SearchVectorField
from django.db import models

from papers.models import Paper


class SearchDocument(models.Model):
    paper = models.OneToOneField(
        Paper, primary_key=True, on_delete=models.CASCADE, related_name="search_document"
    )
    last_appeared = models.DateField(help_text="The newest published daily it appeared in.")
    # PostgreSQL only. Title, takeaways, headlines and topic names weigh A, summaries B,
    # abstract and organisations C. GIN-indexed by dailies migration 0004 (PostgreSQL only).
    vector = SearchVectorField(null=True, editable=False)
    # PostgreSQL only: the A fields' terms alone, each with every position it has in
    # ``vector``, small enough to stay inline; it picks the candidates worth ranking when a
    # query word is in a large part of the corpus, and ranks those that hold every query term
    # with the same score as ``vector`` (search.backends.postgres.vector_literals).
    head_vector = SearchVectorField(null=True, editable=False)
    indexed_at = models.DateTimeField()

    class Meta:
        db_table = "dailies_searchdocument"
        indexes = [
            # "newest first" among the matches of a very common query (PostgreSQL pool)
            models.Index(fields=["-last_appeared", "-paper"], name="dailies_search_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"search document of paper {self.paper_id}"


class SearchTerm(models.Model):
    """An index term and how many indexed papers contain it.

    The PostgreSQL backend reads the counts to know how common a query word is before it
    runs the query; with one word and no filter, the count is the number of results.
    """

    term = models.CharField(max_length=64, primary_key=True)
    documents = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "dailies_searchterm"

    def __str__(self) -> str:
        return f"{self.term} ({self.documents})"


class SearchWord(models.Model):
    """A Latin-script word as written in an indexed paper, and the term it indexes as.

    What an unknown query word is compared with to find its spelling (trigram similarity;
    GIN trigram index on PostgreSQL). Only grows: a word whose term no longer has papers is
    never suggested.
    """

    word = models.CharField(max_length=64, primary_key=True)
    term = models.CharField(max_length=64)

    class Meta:
        db_table = "dailies_searchword"

    def __str__(self) -> str:
        return f"{self.word} → {self.term}"


class PaperEmbedding(models.Model):
    """A paper's embedding: the source of truth the vector index is built from.

    Written only by ``search.vectors`` (the indexing task), for the papers in the index and
    recent papers in a track (the desk's candidates). ``model`` names the model that made
    it (``search.embedding.model_id``): another model's vector is stale and made again, as is
    one whose text (``digest``) changed.
    """

    paper = models.OneToOneField(
        Paper, primary_key=True, on_delete=models.CASCADE, related_name="embedding"
    )
    model = models.CharField(max_length=100)
    digest = models.CharField(max_length=64, help_text="SHA-256 of the text embedded.")
    # The script most of the text embedded is in: the model scores texts of the query's own
    # language higher, so the index ranks each script's papers apart and interleaves them.
    script = models.CharField(max_length=4, choices=[("latn", "Latin"), ("hani", "Han")])
    # 384 little-endian float32 (search.embedding.DIMENSIONS), unit length.
    vector = models.BinaryField()
    embedded_at = models.DateTimeField()

    class Meta:
        indexes = [
            # what the vector index reloads when it changed: rows embedded since its last load
            models.Index(fields=["embedded_at"], name="search_embedding_at_idx"),
        ]

    def __str__(self) -> str:
        return f"embedding of paper {self.paper_id} ({self.model})"
