"""The search app takes the index's models over from dailies without touching their data.

A database at the schema before the move (dailies at 0007, no search migration), filled
through the historical models (papers, topics, a published and a draft daily) and indexed
by the index build, migrates to the new head with every row of every table kept (the same
ids), the PostgreSQL and SQLite index structures still in place, the content types (and so
the permissions) moved to the search app under their ids, and search answering the same.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from search.backends import Filters
from search.backends.sqlite import FTS_TABLE
from search.index import search_index_rebuild
from search.service import search

BEFORE = [("dailies", "0007_search_gin_without_pending_list"), ("search", None)]
MOVED = [("dailies", "0008_search_moves_to_the_search_app"), ("search", "0001_initial")]
INDEX_MODELS = ("SearchDocument", "SearchTerm", "SearchWord")
CONTENT_MODELS = [
    ("papers", "Track"),
    ("papers", "Topic"),
    ("papers", "Organization"),
    ("papers", "Paper"),
    ("papers", "Summary"),
    ("dailies", "Daily"),
    ("dailies", "DailyEntry"),
]
QUERIES = [
    ("quasar", Filters()),
    ("pulsar timing", Filters()),
    ("类星体", Filters()),
    ("quasr", Filters()),  # corrected to "quasar"
    ("array", Filters(topic="radio")),
    ("observatory", Filters(track="sky", date_from=dt.date(2026, 10, 28))),
]
GIN_INDEXES = {
    "dailies_search_vector_gin",
    "dailies_search_head_gin",
    "dailies_searchword_word_trgm",
}


def _migrate(targets):
    """Migrate to ``targets`` and return the historical apps there."""
    executor = MigrationExecutor(connection)
    return executor.migrate(targets).apps


def _head() -> list[tuple[str, str]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def _fill(apps) -> None:
    Track = apps.get_model("papers", "Track")
    Topic = apps.get_model("papers", "Topic")
    Organization = apps.get_model("papers", "Organization")
    Paper = apps.get_model("papers", "Paper")
    Summary = apps.get_model("papers", "Summary")
    Daily = apps.get_model("dailies", "Daily")
    DailyEntry = apps.get_model("dailies", "DailyEntry")

    track = Track.objects.create(slug="sky", name_en="Sky", name_zh="天空")
    radio = Topic.objects.create(slug="radio", name_en="Radio astronomy", name_zh="射电天文")
    timing = Topic.objects.create(slug="timing", name_en="Pulsar timing", name_zh="脉冲星计时")
    observatory = Organization.objects.create(slug="obs", label="Sky Observatory")
    texts = [
        ("quasar-survey", "A quasar survey with a radio array", "类星体巡天", [radio]),
        ("pulsar-timing", "Pulsar timing at the observatory", "脉冲星计时", [timing]),
        ("radio-array", "Calibrating a large radio array", "射电阵列校准", [radio, timing]),
        ("draft-quasar", "A quasar nobody may read yet", "未发布的类星体", [radio]),
    ]
    papers = []
    for slug, title, zh, topics in texts:
        paper = Paper.objects.create(
            slug=slug,
            title=title,
            short_name=slug.title(),
            canonical_id=f"title:{slug}",
            abstract=f"{title}. We observe the sky with the observatory's array.",
        )
        paper.topics.set(topics)
        paper.organizations.add(observatory)
        Summary.objects.create(
            paper=paper,
            language="en",
            headline=title,
            body=f"{title}, summarised.",
            takeaway="A takeaway.",
        )
        Summary.objects.create(paper=paper, language="zh", body=f"{zh}的摘要。", takeaway="要点。")
        papers.append(paper)
    now = timezone.now()
    for date, status, chosen in [
        (dt.date(2026, 10, 27), "published", papers[:2]),
        (dt.date(2026, 10, 28), "published", papers[1:3]),
        (dt.date(2026, 10, 29), "draft", papers[3:]),
    ]:
        daily = Daily.objects.create(
            track=track,
            date=date,
            status=status,
            published_at=now if status == "published" else None,
            intro_en="Intro.",
            intro_zh="导语。",
        )
        for position, paper in enumerate(chosen, start=1):
            DailyEntry.objects.create(
                daily=daily,
                paper=paper,
                position=position,
                is_lead=position == 1,
                score=Decimal("4.00"),
            )


def _rows(apps, models, fields_of=None) -> dict[str, list]:
    """Every row of each model's table, by primary key, as plain values: the columns the
    models have in ``fields_of`` (another state's apps: later migrations add columns)."""
    rows = {}
    for app_label, name in models:
        model = apps.get_model(app_label, name)
        shape = (fields_of or apps).get_model(app_label, name)
        fields = [f.attname for f in shape._meta.concrete_fields]
        rows[model._meta.db_table] = list(model.objects.order_by("pk").values_list(*fields))
    return rows


def _index_structures() -> dict[str, list]:
    """What the ORM does not see: the vectors and GIN indexes, or the FTS5 table's rows."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT paper_id, vector::text, head_vector::text FROM dailies_searchdocument"
                " ORDER BY paper_id"
            )
            vectors = cursor.fetchall()
            cursor.execute(
                "SELECT c.relname, c.reloptions FROM pg_class c WHERE c.relname = ANY(%s)"
                " ORDER BY c.relname",
                [sorted(GIN_INDEXES)],
            )
            return {"vectors": vectors, "gin": cursor.fetchall()}
        cursor.execute(f"SELECT rowid, head, body, extra FROM {FTS_TABLE} ORDER BY rowid")
        return {"fts": cursor.fetchall()}


def _answers() -> list[tuple]:
    """Per query: the count, the correction and the ranked hits with their scores."""
    answers = []
    for query, filters in QUERIES:
        results = search(query, filters)
        hits = [(hit.paper_id, round(hit.score, 6)) for hit in results[:20]]
        answers.append((results.count(), results.corrected, hits))
    return answers


def _old_content_types(apps) -> dict[str, int]:
    """The index models' content types as an existing database has them (dailies'), with a
    group holding one of their permissions."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    ids = {}
    for name in INDEX_MODELS:
        model = name.lower()
        ContentType.objects.filter(app_label="search", model=model).delete()
        ids[model] = ContentType.objects.get_or_create(app_label="dailies", model=model)[0].pk
    permission, _ = Permission.objects.get_or_create(
        content_type_id=ids["searchdocument"],
        codename="view_searchdocument",
        defaults={"name": "Can view search document"},
    )
    Group.objects.create(name="Index readers").permissions.add(permission)
    return ids


@pytest.mark.django_db(transaction=True)
def test_an_existing_database_keeps_every_row_and_answers_the_same(settings):
    settings.PAGE_CACHE_ENABLED = False
    head = _head()
    try:
        old = _migrate(BEFORE)
        for name in INDEX_MODELS:
            assert old.get_model("dailies", name)._meta.db_table == f"dailies_{name.lower()}"
        _fill(old)
        content_types = _old_content_types(old)
        assert search_index_rebuild() == {"indexed": 3, "removed": 0}
        before_content = _rows(old, CONTENT_MODELS)
        before_index = _rows(old, [("dailies", name) for name in INDEX_MODELS])
        before_structures = _index_structures()
        before_answers = _answers()
        assert len(before_index["dailies_searchdocument"]) == 3
        assert before_index["dailies_searchterm"] and before_index["dailies_searchword"]
        assert [count for count, _, _ in before_answers] == [1, 2, 1, 1, 2, 2]
        assert before_answers[3][1] == "quasar"

        new = _migrate(head)

        for name in INDEX_MODELS:
            with pytest.raises(LookupError):
                new.get_model("dailies", name)
        assert _rows(new, CONTENT_MODELS, fields_of=old) == before_content
        assert _rows(new, [("search", name) for name in INDEX_MODELS]) == before_index
        assert _index_structures() == before_structures
        assert _answers() == before_answers
        ContentType = new.get_model("contenttypes", "ContentType")
        moved = dict(ContentType.objects.filter(model__in=content_types).values_list("model", "pk"))
        assert moved == content_types
        assert set(
            ContentType.objects.filter(pk__in=content_types.values()).values_list(
                "app_label", flat=True
            )
        ) == {"search"}
        group = new.get_model("auth", "Group").objects.get(name="Index readers")
        assert [(p.content_type.app_label, p.codename) for p in group.permissions.all()] == [
            ("search", "view_searchdocument")
        ]
    finally:
        _migrate(head)
    if connection.vendor == "postgresql":
        assert {name for name, _ in _index_structures()["gin"]} == GIN_INDEXES


@pytest.mark.django_db(transaction=True)
def test_the_move_creates_and_drops_nothing():
    """Rolled back past the move and forward again, the schema is the same: the move's
    operations change the migration state only. The test database itself was migrated
    fresh, so dailies' 0004 and 0007 made the index's tables and vendor structures."""
    head = _head()
    tables_before = set(connection.introspection.table_names())
    try:
        # Right after the move: later migrations may add tables of their own.
        _migrate(MOVED)
        tables_moved = set(connection.introspection.table_names())
        _migrate(BEFORE)
        assert set(connection.introspection.table_names()) == tables_moved
    finally:
        _migrate(head)
    assert set(connection.introspection.table_names()) == tables_before
    assert {"dailies_searchdocument", "dailies_searchterm", "dailies_searchword"} <= tables_before
    if connection.vendor == "sqlite":
        assert FTS_TABLE in tables_before
    else:
        gin = dict(_index_structures()["gin"])
        assert set(gin) == GIN_INDEXES
        assert all(options == ["fastupdate=off"] for options in gin.values())
