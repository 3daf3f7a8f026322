"""The public pages' reads by hand-written SQL (``digest_site.rows``) give what the ORM gives:
the same dailies and papers to the same readers, the same pager, and the same entries,
papers, venues, organizations, summaries, topics, deep dives, code, appearances and scores,
converted as the ORM converts them on either backend."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.db.models import Prefetch
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from dailies import extensions, selectors
from dailies.models import Daily, DailyEntry
from deepdives.models import ReferenceCode
from digest_site.rows import Columns, Read, adapt, fetch, one_of, run, table
from papers.languages import pick_language
from papers.models import Organization, Paper, Score, Summary, Topic, Venue
from tests.factories import make_daily, make_deep_dive, make_paper, make_track


def _concrete(obj) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}


def _same_loaded(ours, theirs) -> bool:
    """The fields ``ours`` loaded hold what the ORM's instance holds (it has one deferred)."""
    loaded, _ = _loaded(ours)
    return bool(loaded) and loaded == {name: getattr(theirs, name) for name in loaded}


def _loaded(obj) -> tuple[dict, set]:
    """The fields an instance holds, and those it left deferred (reading one is a query)."""
    deferred = obj.get_deferred_fields()
    fields = type(obj)._meta.concrete_fields
    return {
        f.attname: getattr(obj, f.attname) for f in fields if f.attname not in deferred
    }, deferred


@pytest.fixture
def mixed_dailies(db):
    other = make_track("other")
    return [
        make_daily(date=dt.date(2026, 10, 25), status="draft"),
        make_daily(date=dt.date(2026, 10, 26)),
        make_daily(date=dt.date(2026, 10, 27), status="draft"),
        make_daily(date=dt.date(2026, 10, 28)),
        make_daily(date=dt.date(2026, 10, 29), status="scheduled"),
        make_daily(date=dt.date(2026, 10, 30)),
        make_daily(date=dt.date(2026, 10, 28), track=other),
        make_daily(date=dt.date(2026, 10, 31), track=other, status="draft"),
    ]


@pytest.mark.parametrize("reader", ["anonymous", "editor"])
def test_it_finds_exactly_the_dailies_the_reader_may_see_with_their_pager(
    mixed_dailies, editor, reader
):
    user = editor if reader == "editor" else AnonymousUser()
    visible = set(Daily.objects.visible_to(user).values_list("pk", flat=True))
    assert len(visible) == (len(mixed_dailies) if reader == "editor" else 4)
    for daily in mixed_dailies:
        found = selectors.daily_page(daily.track.slug, daily.date, user=user)
        if daily.pk not in visible:
            assert found is None, daily
            continue
        assert _concrete(found) == _concrete(Daily.objects.get(pk=daily.pk))
        assert _concrete(found.track) == _concrete(daily.track)
        previous, following = selectors.daily_neighbours(daily, user=user)
        assert (found.previous_date, found.next_date) == (
            previous and previous.date,
            following and following.date,
        )


def test_it_finds_no_daily_of_a_track_or_date_that_has_none(mixed_dailies):
    assert selectors.daily_page("infra", dt.date(2026, 11, 1), user=AnonymousUser()) is None
    assert selectors.daily_page("nope", dt.date(2026, 10, 28), user=AnonymousUser()) is None


def test_its_entries_are_the_orms_with_everything_the_page_prints(db):
    venue = Venue.objects.create(slug="osdi-26", short_name="OSDI", year=2026)
    papers = [
        make_paper("first", orgs=("Zeta Lab", "Alpha Lab"), topics=("kv", "moe")),
        make_paper("second", venue=venue, orgs=(), topics=(), zh=None),
        make_paper("third", orgs=("Alpha Lab",), topics=("kv",)),
    ]
    Summary.objects.filter(paper=papers[2]).delete()
    make_deep_dive(papers[0])
    make_deep_dive(papers[1], status="draft")
    ReferenceCode.objects.create(slug="kv", name="KV sim", module="kvsim", paper=papers[0])
    ReferenceCode.objects.create(slug="an", name="An sim", module="ansim", paper=papers[0])
    daily = make_daily(papers=papers)
    Daily.objects.filter(pk=daily.pk).update(candidates_scored=7)
    daily.refresh_from_db()

    mine = selectors.daily_page_entries(daily, language="zh")
    orm = selectors.daily_entries(daily)
    assert [e.pk for e in mine] == [e.pk for e in orm] and len(mine) == 3
    for ours, theirs in zip(mine, orm, strict=True):
        assert _concrete(ours) == _concrete(theirs)
        assert ours.daily is daily
        # What the daily prints of a paper is loaded, and no more: its abstract and the
        # ingest's bookkeeping are left deferred.
        loaded, deferred = _loaded(ours.paper)
        assert {"abstract", "source_hash", "edited_fields"} <= deferred
        assert loaded == {name: getattr(theirs.paper, name) for name in loaded}
        assert {"slug", "title", "authors", "venue_id", "published_on", "doi"} <= set(loaded)
        assert (ours.paper.venue and _concrete(ours.paper.venue)) == (
            theirs.paper.venue and _concrete(theirs.paper.venue)
        )
        # Of the summaries, only the one the entry prints: the Chinese one, else the English.
        picked = pick_language(list(theirs.paper.summaries.all()), "zh")
        for mine_list, orm_list in (
            (ours.paper.organization_list, theirs.paper.organizations.all()),
            (ours.paper.summary_list, [picked] if picked else []),
            (ours.paper.topic_list, theirs.paper.topics.all()),
        ):
            assert len(mine_list) == len(orm_list)
            assert all(_same_loaded(o, t) for o, t in zip(mine_list, orm_list, strict=True))
        # The lists hold what an entry prints of them (it is kept under what was read).
        for listed, unread in (
            (ours.paper.summary_list, {"drafter", "model_name", "drafted_at", "updated_at"}),
            (ours.paper.topic_list, {"keywords"}),
            (ours.paper.organization_list, {"name", "name_zh"}),
        ):
            assert all(unread <= item.get_deferred_fields() for item in listed)
        for summary in ours.paper.summary_list:
            printed = {"body", "takeaway", "highlights", "provenance", "reviewed_at", "edited_at"}
            assert not printed & summary.get_deferred_fields()
        for attribute in ("deep_dive_list", "reference_code_list"):
            assert [_loaded(o) for o in getattr(ours.paper, attribute)] == [
                _loaded(o) for o in getattr(theirs.paper, attribute)
            ]
    first = mine[0].paper
    assert [o.label for o in first.organization_list] == ["Alpha Lab", "Zeta Lab"]
    assert [d.slug for d in first.deep_dive_list] == ["first-dive"]
    assert mine[1].paper.deep_dive_list == [] and mine[2].paper.reference_code_list == []
    assert [c.name for c in first.reference_code_list] == ["An sim", "KV sim"]
    assert _loaded(first.deep_dive_list[0])[1] == {"body_en", "body_zh"}
    assert mine[1].paper.venue == venue and mine[0].paper.venue is None
    assert [s.language for s in mine[0].paper.summary_list] == ["zh"]
    assert [s.language for s in mine[1].paper.summary_list] == ["en"]  # no Chinese one
    assert mine[2].paper.summary_list == []


def test_a_prefetch_registered_without_a_reader_is_applied_as_a_prefetch(db, monkeypatch):
    paper = make_paper("plain", orgs=("Org",))
    daily = make_daily(papers=[paper])
    monkeypatch.setattr(extensions, "_paper_prefetches", list(extensions._paper_prefetches))
    extensions.register_paper_prefetch(
        lambda prefix: Prefetch(f"{prefix}organizations", to_attr="orgs_by_prefetch")
    )
    (entry,) = selectors.daily_page_entries(daily, language="en")
    assert [o.label for o in entry.paper.orgs_by_prefetch] == ["Org"]
    assert entry.paper.deep_dive_list == []  # the registered readers still ran


def test_a_daily_without_entries_reads_none(db):
    daily = make_daily(papers=[])
    assert selectors.daily_page_entries(daily, language="en") == []


def test_columns_convert_each_value_as_the_orm_does(db):
    paper = make_paper("typed", orgs=("Org",))
    Paper.objects.filter(pk=paper.pk).update(
        categories=["cs.DC", "cs.LG"], published_on=dt.date(2026, 10, 27)
    )
    paper.refresh_from_db()
    columns = Columns(Paper, "p")
    (row,) = fetch(f"SELECT {columns.sql} FROM {table(Paper)} p WHERE p.id = %s", [paper.pk])
    built = columns.build(row)
    assert _concrete(built) == _concrete(paper)
    assert built.categories == ["cs.DC", "cs.LG"] and built.published_on == dt.date(2026, 10, 27)
    assert timezone.is_aware(built.created_at)
    assert not built._state.adding and built._state.db == "default"


def test_columns_of_some_fields_read_those_in_their_order(db):
    topic = Topic.objects.create(slug="kv", name_en="KV cache", name_zh="KV 缓存")
    columns = Columns(Topic, "t", ["name_zh", "slug"])
    assert columns.names == ["name_zh", "slug"] and len(columns) == 2
    (row,) = fetch(f"SELECT 1, {columns.sql} FROM {table(Topic)} t WHERE t.id = %s", [topic.pk])
    assert columns.values(row, 1) == ["KV 缓存", "kv"]


def test_an_aware_datetime_parameter_compares_as_the_orm_compares_it(db):
    paper = make_paper("timed")
    created = Paper.objects.get(pk=paper.pk).created_at
    # The same instant in another zone: SQLite compares text, so it must be stored as UTC.
    elsewhere = created.astimezone(dt.timezone(dt.timedelta(hours=8)))
    sql = f"SELECT p.id FROM {table(Paper)} p WHERE p.created_at <= %s AND p.id = %s"
    assert fetch(sql, [elsewhere, paper.pk]) == [(paper.pk,)]
    assert fetch(sql, [elsewhere - dt.timedelta(microseconds=1), paper.pk]) == []
    assert adapt(Decimal("1.5")) == Decimal("1.5") and adapt("x") == "x"


def _one_of_rows(values: list) -> list[tuple]:
    test, params = one_of(values)
    return fetch(f"SELECT id FROM {table(Organization)} WHERE id {test} ORDER BY id", params)


def test_one_of_matches_the_values_given_and_none_for_none(db):
    orgs = [Organization.objects.create(slug=f"o{i}", label=f"O{i}", name="O") for i in range(3)]
    assert _one_of_rows([]) == []
    assert _one_of_rows([orgs[2].pk, orgs[0].pk]) == [(orgs[0].pk,), (orgs[2].pk,)]
    assert _one_of_rows([o.pk for o in orgs]) == [(o.pk,) for o in orgs]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL prepares statements")
def test_on_postgresql_one_statement_serves_every_length_of_list_and_is_prepared(db):
    orgs = [Organization.objects.create(slug=f"o{i}", label=f"O{i}", name="O") for i in range(3)]
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    for count in (1, 2, 3, 1):
        assert len(_one_of_rows([o.pk for o in orgs[:count]])) == count
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert len([s for s in prepared if "= ANY($1)" in s]) == 1, prepared
    # The ORM's statements are bound on the client, as Django's default is: none prepared.
    list(Organization.objects.filter(pk__in=[o.pk for o in orgs]))
    list(Organization.objects.filter(pk__in=[o.pk for o in orgs]))
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        assert cursor.fetchone()[0] == len(prepared)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL prepares statements")
def test_with_db_prepare_off_the_statements_are_sent_plain(db):
    org = Organization.objects.create(slug="o", label="O", name="O")
    connection.ensure_connection()
    raw = connection.connection
    kept, raw.prepare_threshold = raw.prepare_threshold, None  # as DB_PREPARE=0 sets it
    try:
        with connection.cursor() as cursor:
            cursor.execute("DEALLOCATE ALL")
        for _ in range(3):
            assert _one_of_rows([org.pk]) == [(org.pk,)]
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_prepared_statements")
            assert cursor.fetchone()[0] == 0
    finally:
        raw.prepare_threshold = kept


def test_reads_run_together_each_apply_getting_its_own_rows_in_order(db):
    orgs = [Organization.objects.create(slug=f"o{i}", label=f"O{i}", name="O") for i in range(3)]
    got = []
    sql = f"SELECT label FROM {table(Organization)} WHERE id = %s"
    with CaptureQueriesContext(connection) as queries:
        run([Read(sql, [o.pk], got.append) for o in reversed(orgs)] + [None])
    assert got == [[("O2",)], [("O1",)], [("O0",)]]
    assert len(queries) == 3  # each statement is counted, as the ORM's are


def test_a_failing_read_raises_as_django_does_and_the_connection_goes_on(db):
    from django.db import DatabaseError, transaction

    org = Organization.objects.create(slug="o", label="O", name="O")
    sql = f"SELECT label FROM {table(Organization)} WHERE id = %s"
    good = Read(sql, [org.pk], lambda rows: None)
    bad = Read("SELECT no_such_column FROM nowhere", [], lambda rows: None)
    with pytest.raises(DatabaseError), transaction.atomic():
        run([good, bad])
    assert fetch(sql, [org.pk]) == [("O",)]


def test_the_index_lists_are_the_prefetches_of_index_papers(db):
    make_track("infra", position=1)
    other = make_track("other", position=2)
    shared = make_paper("shared", orgs=("Zeta", "Alpha"), topics=("kv", "moe"))
    single = make_paper("single", topics=("kv",), en=None)
    draft_only = make_paper("draft-only")
    make_daily(date=dt.date(2026, 10, 27), papers=[shared])
    make_daily(date=dt.date(2026, 10, 28), papers=[single, shared])
    make_daily(date=dt.date(2026, 10, 28), track=other, papers=[shared])
    make_daily(date=dt.date(2026, 10, 29), papers=[shared, draft_only], status="draft")

    orm = list(selectors.index_papers())
    mine = list(selectors.index_papers().prefetch_related(None))
    selectors.read_index_lists(mine)
    assert [p.slug for p in mine] == [p.slug for p in orm]
    assert sorted(p.slug for p in mine) == ["shared", "single"]
    for ours, theirs in zip(mine, orm, strict=True):
        for mine_list, orm_list in (
            (ours.organization_list, theirs.organizations.all()),
            (ours.summary_list, theirs.summaries.all()),
            (ours.topic_list, theirs.topics.all()),
        ):
            assert len(mine_list) == len(orm_list)
            assert all(_same_loaded(o, t) for o, t in zip(mine_list, orm_list, strict=True))
        assert [e.pk for e in ours.published_entries] == [e.pk for e in theirs.published_entries]
        for entry, orm_entry in zip(ours.published_entries, theirs.published_entries, strict=True):
            assert _concrete(entry) == _concrete(orm_entry) and entry.paper is ours
            assert _same_loaded(entry.daily, orm_entry.daily)
            assert _concrete(entry.daily.track) == _concrete(orm_entry.daily.track)
        # What the pages print of the lists is read, and nothing else (a paper's kept item
        # is keyed by all that was read onto it: digest_site/fragment_cache.py).
        for listed, unread in (
            (ours.summary_list, {"takeaway", "highlights", "drafted_at", "edited_at"}),
            (ours.topic_list, {"keywords"}),
            (ours.organization_list, {"name", "name_zh"}),
            ([e.daily for e in ours.published_entries], {"intro_en", "intro_flags"}),
        ):
            assert all(unread <= item.get_deferred_fields() for item in listed)
        assert ours.deep_dive_list == [] and ours.reference_code_list == []
    # The index and topic pages print one summary per paper, and read only that one (a
    # search's excerpt may come from either, so it reads both: above).
    picked = list(selectors.index_papers().prefetch_related(None))
    selectors.read_index_lists(picked, language="en")
    assert [[s.language for s in p.summary_list] for p in picked] == [
        [s.language for s in [pick_language(list(t.summaries.all()), "en")] if s] for t in orm
    ]
    assert {p.slug: [s.language for s in p.summary_list] for p in picked} == {
        "shared": ["en"],
        "single": ["zh"],  # no English one
    }
    shared_entries = next(p for p in mine if p.slug == "shared").published_entries
    # Newest first, then by the tracks' order; the draft daily's entry is not among them.
    assert [(e.daily.date, e.daily.track.slug) for e in shared_entries] == [
        (dt.date(2026, 10, 28), "infra"),
        (dt.date(2026, 10, 28), "other"),
        (dt.date(2026, 10, 27), "infra"),
    ]


def test_no_papers_cost_no_query(db, django_assert_num_queries):
    with django_assert_num_queries(0):
        selectors.read_index_lists([])


@pytest.mark.parametrize("reader", ["anonymous", "editor"])
def test_the_paper_page_reads_what_the_reader_may_see(db, editor, reader):
    user = editor if reader == "editor" else AnonymousUser()
    out = make_paper("out", orgs=("Org",), topics=("kv",))
    drafted = make_paper("drafted")
    never = make_paper("never")
    make_daily(date=dt.date(2026, 10, 27), papers=[out])
    make_daily(date=dt.date(2026, 10, 28), papers=[drafted, out], status="draft")
    other = make_track("other", position=9)
    for paper, track, total in ((out, other, "3.10"), (out, make_track(), "4.20")):
        Score.objects.create(paper=paper, track=track, total=Decimal(total), scorer="t")
    visible = set(selectors.visible_papers(user).values_list("slug", flat=True))
    assert visible == ({"out", "drafted", "never"} if reader == "editor" else {"out"})
    for paper in (out, drafted, never):
        found = selectors.paper_page(paper.slug, user=user)
        if paper.slug not in visible:
            assert found is None
            continue
        assert _concrete(found) == _concrete(paper)
        assert [o.label for o in found.organization_list] == [
            o.label for o in paper.organizations.all()
        ]
        assert [s.pk for s in found.summary_list] == [s.pk for s in paper.summaries.all()]
        assert found.topic_list == list(paper.topics.all())
        entries = DailyEntry.objects.visible_to(user).filter(paper=paper)
        assert [(e.pk, e.daily.date, e.daily.track.slug) for e in found.published_entries] == [
            (e.pk, e.daily.date, e.daily.track.slug)
            for e in entries.select_related("daily__track").order_by("-daily__date")
        ]
        scores = sorted(paper.scores.all(), key=lambda s: (s.created_at, s.pk), reverse=True)
        assert [_concrete(s) for s in found.score_list] == [_concrete(s) for s in scores]
        assert [s.track.slug for s in found.score_list] == [s.track.slug for s in scores]
    assert selectors.paper_page("no-such-paper", user=user) is None


def test_a_model_with_init_listeners_is_built_through_its_init(db):
    from django.db.models.signals import post_init

    topic = Topic.objects.create(slug="kv", name_en="KV cache", name_zh="KV 缓存")
    seen = []

    def receiver(sender, instance, **kwargs):
        seen.append(instance.slug)

    post_init.connect(receiver, sender=Topic)
    try:
        columns = Columns(Topic, "t")
        (row,) = fetch(f"SELECT {columns.sql} FROM {table(Topic)} t WHERE t.id = %s", [topic.pk])
        built = columns.build(row)
    finally:
        post_init.disconnect(receiver, sender=Topic)
    assert seen == ["kv"] and _concrete(built) == _concrete(topic)
    plain = Columns(Topic, "t").build(row)  # no listener: straight into its __dict__
    assert seen == ["kv"] and _concrete(plain) == _concrete(topic)
    assert not plain._state.adding and plain._state.db == "default"


def test_the_daily_cards_are_the_orms_leads_counts_and_entries(db, django_assert_num_queries):
    """Track archive (selectors.daily_cards) and home (selectors.home_tracks): each daily's
    lead and entry count, and on the home page the newest daily's entries in order, with
    the heading fields and the lists the ORM's querysets gave them, the other fields
    deferred."""
    shared = make_paper("shared", orgs=("Zeta Lab", "Alpha Lab"))
    other = make_paper("other", zh=None)
    plain = make_paper("plain", en=None, zh=None, orgs=("Alpha Lab",))
    old = make_daily(date=dt.date(2026, 10, 27), papers=[other, plain])
    new = make_daily(date=dt.date(2026, 10, 28), papers=[shared, plain, other])
    empty = make_daily(date=dt.date(2026, 10, 26), papers=[])

    with django_assert_num_queries(3):  # leads, counts, summaries
        leads, counts = selectors.daily_cards([new, old, empty], language="zh")
    with django_assert_num_queries(7):  # the home page's reads, as rows
        (section,) = selectors.home_tracks(language="zh")
    with django_assert_num_queries(0):  # and built from them
        home = section.values()
    assert [d.pk for d in home["dailies"]] == [new.pk, old.pk, empty.pk]
    assert home["counts"] == counts

    orm_leads = {
        e.daily_id: e
        for e in DailyEntry.objects.filter(daily__in=[new, old, empty], is_lead=True)
        .select_related("paper")
        .prefetch_related("paper__summaries")
    }
    assert set(leads) == set(home["leads"]) == set(orm_leads) == {new.pk, old.pk}
    for daily_id, theirs in orm_leads.items():
        for lead in (leads[daily_id], home["leads"][daily_id]):
            assert lead.pk == theirs.pk and lead.paper_id == theirs.paper_id
            loaded, deferred = _loaded(lead.paper)
            assert loaded == {
                k: _concrete(theirs.paper)[k] for k in ("id", "slug", "title", "short_name")
            }
            assert "abstract" in deferred and "authors" in deferred
            brief = ("id", "paper_id", "language", "headline", "body", "takeaway", "provenance")
            brief += ("reviewed_at",)
            # Only the summary the page prints: the Chinese one, else the English one.
            picked = pick_language(list(theirs.paper.summaries.all()), "zh")
            assert [_loaded(s)[0] for s in lead.paper.summary_list] == (
                [{k: _concrete(picked)[k] for k in brief}] if picked else []
            )
    assert counts == {new.pk: 3, old.pk: 2}  # none for a daily without entries
    entries = home["entries"]
    orm_entries = list(new.entries.order_by("position").prefetch_related("paper__organizations"))
    assert [e.pk for e in entries] == [e.pk for e in orm_entries]
    for ours, theirs in zip(entries, orm_entries, strict=True):
        assert (ours.position, ours.is_lead, ours.score) == (
            theirs.position,
            theirs.is_lead,
            theirs.score,
        )
        assert [_concrete(o) for o in ours.paper.organization_list] == [
            _concrete(o) for o in theirs.paper.organizations.all()
        ]
        picked = pick_language(list(theirs.paper.summaries.all()), "zh")
        assert ours.paper.summary_list == ([picked] if picked else [])
    # The lead of the newest daily is one paper, whether read as a lead or as an entry.
    assert home["leads"][new.pk].paper is entries[0].paper
    assert [o.label for o in entries[0].paper.organization_list] == ["Alpha Lab", "Zeta Lab"]
    assert selectors.daily_cards([], language="en") == ({}, {})


def test_search_results_read_only_published_papers_with_what_a_result_prints(db):
    venue = Venue.objects.create(slug="nsdi-2027", short_name="NSDI", year=2027)
    shown = make_paper("shown", topics=("kv",))
    Paper.objects.filter(pk=shown.pk).update(venue=venue, venue_status="accepted")
    draft_only, never = make_paper("draft-only"), make_paper("never")
    make_daily(papers=[shown])
    make_daily(date=dt.date(2026, 10, 29), papers=[draft_only], status="draft")
    ids = [never.pk, draft_only.pk, shown.pk, 999_999]
    with CaptureQueriesContext(connection) as queries:
        found = selectors.search_result_papers(ids)
    assert len(queries) == 1
    # A stale index row (a paper in a draft daily only, or in none) never shows.
    assert list(found) == [shown.pk]
    paper, orm = found[shown.pk], Paper.objects.select_related("venue").get(pk=shown.pk)
    assert _same_loaded(paper, orm) and paper.venue == venue and paper.abstract == orm.abstract
    assert {"source_hash", "edited_fields", "comment"} <= paper.get_deferred_fields()
    assert selectors.search_result_papers([]) == {}


def test_paper_headings_are_published_papers_with_their_summaries_headlines(db):
    shown = make_paper("shown")
    draft_only = make_paper("draft-only")
    make_daily(papers=[shown])
    make_daily(date=dt.date(2026, 10, 29), papers=[draft_only], status="draft")
    with CaptureQueriesContext(connection) as queries:
        found = selectors.paper_headings([draft_only.pk, shown.pk, 999_999])
    assert len(queries) == 2
    assert list(found) == [shown.pk]  # a draft's paper is not listed
    paper = found[shown.pk]
    orm = Paper.objects.prefetch_related("summaries").get(pk=shown.pk)
    assert _same_loaded(paper, orm) and "abstract" in paper.get_deferred_fields()
    assert len(paper.summary_list) == len(orm.summaries.all()) == 2
    for summary, theirs in zip(paper.summary_list, orm.summaries.all(), strict=True):
        assert _same_loaded(summary, theirs) and "body" in summary.get_deferred_fields()
    assert selectors.paper_headings([]) == {}
