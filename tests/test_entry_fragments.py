"""A daily's entries are kept rendered under their own data (digest_site/fragment_cache.py):
a render with the same data gives the same bytes without rendering them again, and any change
to what an entry prints — made here behind the services' backs, with no content version bump
and the page cache off — shows in the very next render."""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass
from decimal import Decimal

import pytest
from django.utils import timezone
from markupsafe import Markup

from dailies.models import Daily, DailyEntry
from deepdives.models import DeepDive, ReferenceCode
from digest_site import fragment_cache
from digest_site.fragment_cache import FragmentCache, NotKeyable, inputs_key
from papers.models import Organization, Paper, Score, Summary, Topic, Track, Venue
from tests.factories import make_daily, make_deep_dive, make_paper, make_track

URL = "/en/infra/2026-10-28/"


@pytest.fixture
def daily(db, settings):
    settings.PAGE_CACHE_ENABLED = False  # every request renders; only the fragments are kept
    papers = [
        make_paper("kv-paper", orgs=("Acme",), topics=("kv-cache",), authors=["Ada Lovelace"]),
        make_paper("moe-paper"),
    ]
    make_deep_dive(papers[0], reading_minutes_en=7)
    return make_daily(papers=papers)


def _page(client, url: str = URL) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_a_second_render_gives_the_same_bytes_from_the_kept_entries(daily, anonymous):
    first = _page(anonymous)
    assert len(fragment_cache.entries) == 2
    kept = dict(fragment_cache.entries.fragments)
    assert _page(anonymous) == first
    # The same two fragments, the same objects: nothing was rendered again.
    assert len(fragment_cache.entries) == 2
    assert all(fragment_cache.entries.fragments[key] is html for key, html in kept.items())


def test_each_language_keeps_its_own_entries(daily, anonymous):
    english, chinese = _page(anonymous), _page(anonymous, "/zh/infra/2026-10-28/")
    assert len(fragment_cache.entries) == 4
    assert "Lead story" in english and "Lead story" not in chinese
    assert _page(anonymous) == english and _page(anonymous, "/zh/infra/2026-10-28/") == chinese


def _edit_paper(daily):
    Paper.objects.filter(slug="kv-paper").update(title="A Renamed Paper", short_name="")
    Summary.objects.filter(paper__slug="kv-paper").update(headline="")


# Each change is made with a queryset's update(): no signal, no content version bump.
CHANGES = {
    "the paper's title": (_edit_paper, "A Renamed Paper"),
    "its authors": (
        lambda d: Paper.objects.filter(slug="kv-paper").update(authors=["Grace Hopper"]),
        "Grace Hopper",
    ),
    "a summary's body": (
        lambda d: Summary.objects.filter(paper__slug="kv-paper", language="en").update(
            body="A corrected summary. Takeaway sentence here."
        ),
        "A corrected summary.",
    ),
    "a summary's provenance": (
        lambda d: Summary.objects.filter(paper__slug="kv-paper", language="en").update(
            provenance=Summary.Provenance.MACHINE, reviewed_at=timezone.now()
        ),
        "Machine draft, reviewed by an editor",
    ),
    "a topic's name": (
        lambda d: Topic.objects.filter(slug="kv-cache").update(name_en="Key-value caching"),
        "Key-value caching",
    ),
    "an organisation's label": (
        lambda d: Organization.objects.filter(label="Acme").update(label="Acme Research"),
        "Acme Research",
    ),
    "the venue": (
        lambda d: Paper.objects.filter(slug="kv-paper").update(
            venue=Venue.objects.create(slug="osdi-2027", short_name="OSDI", year=2027),
            venue_status=Paper.VenueStatus.ACCEPTED,
        ),
        "Accepted at OSDI 2027",
    ),
    "a deep dive's reading time": (
        lambda d: DeepDive.objects.update(reading_minutes_en=42),
        "42 min",
    ),
    "a reference program linked": (
        lambda d: ReferenceCode.objects.create(
            slug="kv-code",
            name="kv",
            module="reference.kv",
            paper=Paper.objects.get(slug="kv-paper"),
        ),
        "/code/kv-code/",
    ),
    "the entry's score": (
        lambda d: DailyEntry.objects.filter(paper__slug="moe-paper").update(score=Decimal("2.15")),
        "2.15",
    ),
    "the lead": (
        lambda d: (
            DailyEntry.objects.filter(paper__slug="kv-paper").update(is_lead=False),
            DailyEntry.objects.filter(paper__slug="moe-paper").update(is_lead=True),
        ),
        'class="entry entry-lead" id="moe-paper"',
    ),
    "the track's name": (
        lambda d: Track.objects.filter(slug="infra").update(name_en="Systems"),
        "Systems",
    ),
    "a correction after publication": (
        lambda d: Summary.objects.filter(paper__slug="kv-paper", language="en").update(
            edited_at=timezone.now() + dt.timedelta(days=1)
        ),
        "Corrected on",
    ),
}


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_a_change_to_what_an_entry_prints_shows_in_the_next_render(daily, anonymous, change):
    apply, expected = CHANGES[change]
    before = _page(anonymous)
    assert expected not in before
    apply(daily)
    assert expected in _page(anonymous)


def test_a_scorers_record_change_shows_in_the_next_render(daily, anonymous):
    paper = Paper.objects.get(slug="kv-paper")
    Score.objects.create(
        paper=paper,
        track=daily.track,
        total=Decimal("3.95"),
        criteria={"novelty": 4},
        rationale_en="First rationale.",
        scorer="judge",
    )
    daily.candidates_scored = None
    Daily.objects.filter(pk=daily.pk).update(candidates_scored=None)
    assert "First rationale." in _page(anonymous)
    Score.objects.filter(paper=paper).update(rationale_en="A second look.", criteria={"novelty": 5})
    page = _page(anonymous)
    assert "A second look." in page and "<td>5</td>" in page


def test_a_draft_and_its_published_self_render_the_same_entries(db, anonymous, editor_client):
    """What an entry prints does not depend on who asks: a preview keeps what readers get
    once it is published, and nothing of the preview's own (its status flag) is kept."""
    daily = make_daily(papers=[make_paper("kv-paper")], status=Daily.Status.DRAFT)
    preview = editor_client.get(URL).content.decode()
    assert "entry-lead" in preview
    assert anonymous.get(URL).status_code == 404
    Daily.objects.filter(pk=daily.pk).update(
        status=Daily.Status.PUBLISHED, published_at=timezone.now()
    )
    page = _page(anonymous)
    assert 'class="status-flag"' not in page and 'id="kv-paper"' in page


# -- the keys ---------------------------------------------------------------------------


class Colour(enum.Enum):
    RED = 1


@dataclass
class Box:
    value: object


@pytest.mark.parametrize(
    "a, b",
    [
        (1, True),
        (1, 1.0),
        (0, None),
        ("1", 1),
        (Decimal("1.0"), Decimal("1.00")),
        ("<b>", Markup("<b>")),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ([1, 2], (1, 2)),
        ({1: "x"}, {True: "x"}),
        (Colour.RED, 1),
        (Box(1), Box(True)),
        (dt.date(2026, 10, 28), dt.datetime(2026, 10, 28)),
        (
            dt.datetime(2026, 10, 28, 8, tzinfo=dt.UTC),
            dt.datetime(2026, 10, 28, 16, tzinfo=dt.timezone(dt.timedelta(hours=8))),
        ),
    ],
)
def test_values_that_print_differently_have_different_keys(a, b):
    assert inputs_key(a) != inputs_key(b)


def test_equal_data_has_equal_keys():
    assert inputs_key([{"a": Decimal("4.50")}, Box("x")]) == inputs_key(
        [{"a": Decimal("4.50")}, Box("x")]
    )


def test_a_model_instance_is_keyed_by_its_fields_and_what_hangs_on_it(db):
    paper = make_paper("kv-paper", orgs=("Acme",))
    again = Paper.objects.get(pk=paper.pk)
    assert inputs_key(again) == inputs_key(Paper.objects.get(pk=paper.pk))
    again.title = "Other"
    assert inputs_key(again) != inputs_key(Paper.objects.get(pk=paper.pk))
    with_list = Paper.objects.get(pk=paper.pk)
    with_list.organization_list = list(paper.organizations.all())
    labelled = Paper.objects.get(pk=paper.pk)
    labelled.organization_list = list(paper.organizations.all())
    labelled.organization_list[0].label = "Acme Research"
    assert inputs_key(with_list) != inputs_key(labelled)
    # A related object (select_related, or set) counts as well.
    venue = Venue.objects.create(slug="osdi-2027", short_name="OSDI", year=2027)
    one, two = Paper.objects.get(pk=paper.pk), Paper.objects.get(pk=paper.pk)
    one.venue, two.venue = venue, Venue(pk=venue.pk, slug="osdi-2027", short_name="SOSP", year=2027)
    assert inputs_key(one) != inputs_key(two)


def test_a_cycle_between_instances_is_named_not_followed(db):
    paper = make_paper("kv-paper")
    summary = paper.summaries.first()
    summary.paper = paper
    paper.summary_list = [summary]
    assert inputs_key(paper) == inputs_key(paper)


def test_what_cannot_be_copied_exactly_is_rendered_every_time(db):
    kept, rendered = FragmentCache(kept=10), []

    def render():
        rendered.append(1)
        return Markup("<li>")

    for _ in range(2):
        kept.rendered("template", Paper.objects.all(), render)
        kept.rendered("template", object(), render)
    assert len(rendered) == 4 and len(kept) == 0
    with pytest.raises(NotKeyable):
        inputs_key({"x": object()})


def test_it_keeps_at_most_its_bound_dropping_the_least_recently_used(settings):
    assert FragmentCache().kept == settings.FRAGMENT_CACHE_KEPT == 1_000
    settings.FRAGMENT_CACHE_KEPT = 3
    kept = FragmentCache()
    for n in range(3):
        kept.rendered("t", n, lambda n=n: Markup(n))
    assert len(kept) == 3
    kept.rendered("t", 0, lambda: Markup("again"))  # used: now the newest
    kept.rendered("t", 3, lambda: Markup(3))  # a fourth: the least recently used (1) goes
    assert len(kept) == 3
    assert kept.rendered("t", 0, lambda: Markup("new")) == "0"
    assert kept.rendered("t", 1, lambda: Markup("rendered again")) == "rendered again"


def test_switched_off_it_renders_every_time(daily, anonymous, settings):
    settings.FRAGMENT_CACHE_ENABLED = False
    first = _page(anonymous)
    assert len(fragment_cache.entries) == 0 and _page(anonymous) == first


def test_a_changed_setting_or_a_new_fragment_forgets_what_was_kept(
    daily, anonymous, settings, monkeypatch
):
    from dailies import extensions

    _page(anonymous)
    assert len(fragment_cache.entries) == 2
    settings.SITE_URL = "https://elsewhere.example"
    assert len(fragment_cache.entries) == 0
    _page(anonymous)
    extensions.register_fragment("entry-actions", "deepdives/_entry_actions.html")  # known
    assert len(fragment_cache.entries) == 2
    monkeypatch.setattr(
        extensions, "_fragments", {k: [*v] for k, v in extensions._fragments.items()}
    )
    extensions.register_fragment("entry-actions", "deepdives/_paper_marks.html")
    assert len(fragment_cache.entries) == 0


# -- the index and topic pages ----------------------------------------------------------


def test_the_index_and_topic_pages_keep_their_papers(daily, anonymous):
    index = _page(anonymous, "/en/papers/")
    assert len(fragment_cache.index_items) == 2
    topic = _page(anonymous, "/en/topics/kv-cache/")
    assert len(fragment_cache.index_items) == 2  # the same paper, the same item
    assert _page(anonymous, "/en/papers/") == index
    assert _page(anonymous, "/en/topics/kv-cache/") == topic


# -- search results ------------------------------------------------------------------------


@pytest.fixture
def searchable(indexed_demo, settings):
    settings.PAGE_CACHE_ENABLED = False
    return indexed_demo


def _items(html: str) -> list[str]:
    return html.split('<ol class="paper-index search-results"', 1)[1].split("</ol>", 1)[0]


def test_a_search_keeps_its_papers_items_without_the_querys_marks(searchable, anonymous):
    """A result is its paper's item with the title and excerpt the query marked: the item
    is kept with markers in their place, so another query on the same papers renders none
    of them again and prints its own marks."""
    first = _page(anonymous, "/en/papers/?q=cache")
    kept = dict(fragment_cache.index_items.fragments)
    assert kept and "<mark>" in first
    for html in kept.values():
        assert "<mark>" not in html
    other = _page(anonymous, "/en/papers/?q=kv")
    assert "<mark>KV</mark>" in other and "<mark>cache</mark>" not in other
    assert _page(anonymous, "/en/papers/?q=cache") == first
    # The papers both queries found were rendered once.
    assert all(fragment_cache.index_items.fragments.get(key) is html for key, html in kept.items())


@pytest.mark.parametrize("query", ["cache", "kv cache", "attention", "缓存", "sparse moe"])
def test_kept_search_results_print_what_rendering_each_prints(
    searchable, anonymous, settings, query
):
    from dailies import selectors
    from digest_site import jinja
    from search.page import result_rows
    from search.service import in_hit_order, search

    kept = _page(anonymous, f"/en/papers/?q={query}")
    assert _page(anonymous, f"/en/papers/?q={query}") == kept
    settings.FRAGMENT_CACHE_ENABLED = False
    assert _page(anonymous, f"/en/papers/?q={query}") == kept
    # Each result prints the title and passage its row marked, in their places; no marker
    # is left on the page.
    results = search(query, language="en")
    hits = list(results[0:30])
    pairs = in_hit_order(hits, selectors.search_result_papers([h.paper_id for h in hits]))
    selectors.read_index_lists([paper for paper, _ in pairs])
    rows = result_rows(pairs, results.highlighter, "en")
    assert rows and jinja._MARKER not in kept
    for row in rows:
        item = kept.split(f'<li id="{row.paper.slug}">', 1)[1].split("</li>", 1)[0]
        assert row.title in item
        if row.excerpt:
            assert f'<p class="excerpt" lang="{row.excerpt_language}">{row.excerpt}</p>' in item


def test_a_search_result_cannot_print_a_marker_from_its_data(searchable, anonymous, is_postgres):
    """What a paper holds is escaped before it reaches the item, so text that looks like
    the markers (or like HTML) prints as text, never as the query's title or excerpt."""
    from digest_site import jinja

    # PostgreSQL's text cannot hold the markers' NUL: there, the rest of them.
    title, excerpt = (
        m.replace("\x00", "") if is_postgres else m for m in (jinja._TITLE, jinja._EXCERPT)
    )
    paper = Paper.objects.get(slug="hilo")
    Paper.objects.filter(pk=paper.pk).update(
        authors=[title, "<b>Ada</b>"], title=f"{paper.title} {excerpt}"
    )
    html = _page(anonymous, "/en/papers/?q=hilo")
    assert "<mark>HiLO</mark>" in html
    # Printed as the text it is (escaped), not taken for a marker and filled in.
    assert jinja._TITLE not in html and jinja._EXCERPT not in html
    assert title not in html and excerpt not in html and f"&lt;{title[1:-1]}&gt;" in html
    assert "&lt;b&gt;Ada&lt;/b&gt;" in html and "<b>Ada</b>" not in html


def test_a_change_to_an_index_item_shows_in_the_next_render(daily, anonymous):
    assert "A Renamed Paper" not in _page(anonymous, "/en/papers/")
    _edit_paper(daily)
    assert "A Renamed Paper" in _page(anonymous, "/en/papers/")
    # A new appearance of the paper, in another published daily.
    make_daily(date=dt.date(2026, 10, 29), papers=[Paper.objects.get(slug="kv-paper")])
    assert '<time datetime="2026-10-29">' in _page(anonymous, "/en/topics/kv-cache/")


# -- the home page ----------------------------------------------------------------------


def test_the_home_page_keeps_each_tracks_section(daily, anonymous):
    make_daily(date=dt.date(2026, 10, 27), papers=[make_paper("older-paper")])
    home = _page(anonymous, "/en/")
    assert len(fragment_cache.home_tracks) == 1
    assert _page(anonymous, "/en/") == home
    assert len(fragment_cache.home_tracks) == 1


@pytest.mark.parametrize(
    "apply, expected",
    [
        (
            lambda: Daily.objects.filter(date=dt.date(2026, 10, 28)).update(intro_en="New intro."),
            "New intro.",
        ),
        (
            lambda: Summary.objects.filter(paper__slug="older-paper", language="en").update(
                headline="Older, renamed"
            ),
            "Older, renamed",
        ),
        (
            lambda: Summary.objects.filter(paper__slug="moe-paper", language="en").update(
                takeaway="A new takeaway."
            ),
            "A new takeaway.",
        ),
        (
            lambda: Daily.objects.filter(date=dt.date(2026, 10, 28)).update(
                intro_en_provenance=Summary.Provenance.MACHINE
            ),
            "Intro: machine draft",
        ),
        (
            lambda: Summary.objects.filter(paper__slug="moe-paper", language="en").update(
                provenance=Summary.Provenance.MACHINE, reviewed_at=timezone.now()
            ),
            "Machine draft, reviewed by an editor",
        ),
        (
            lambda: Track.objects.filter(slug="infra").update(
                description_en="What the track covers."
            ),
            "What the track covers.",
        ),
    ],
    ids=[
        "the newest daily's intro",
        "a card's lead",
        "an entry's takeaway",
        "the intro's provenance",
        "a takeaway's provenance",
        "the track",
    ],
)
def test_a_change_to_a_home_section_shows_in_the_next_render(daily, anonymous, apply, expected):
    make_daily(date=dt.date(2026, 10, 27), papers=[make_paper("older-paper")])
    assert expected not in _page(anonymous, "/en/")
    apply()
    assert expected in _page(anonymous, "/en/")


def test_a_kept_home_section_is_not_built_again(daily, anonymous, monkeypatch):
    """A home section is kept under the rows it is built from (selectors.HomeTrack): a
    render with the same rows builds none of its dailies, entries, papers or summaries."""
    from digest_site.rows import Columns

    make_daily(date=dt.date(2026, 10, 27), papers=[make_paper("older-paper")])
    home = _page(anonymous, "/en/")
    built = []
    build = Columns.build

    def counted(self, row, start=0, db=None):
        built.append(self.model.__name__)
        return build(self, row, start, db)

    monkeypatch.setattr(Columns, "build", counted)
    assert _page(anonymous, "/en/") == home
    # The track (its feed links, the section's own) and the topics' chips: read each time.
    assert set(built) == {"Track", "Topic"}
    # Two tracks: each section built and kept on its own.
    other = make_track("data")
    make_daily(track=other, date=dt.date(2026, 10, 28), papers=[make_paper("data-paper")])
    built.clear()
    assert "data-paper" in _page(anonymous, "/en/")
    assert built.count("Daily") == 1 and len(fragment_cache.home_tracks) == 2


def test_the_home_pages_topics_and_feed_links_are_kept_and_follow_changes(daily, anonymous):
    """The home page's topic chips and each track's feed links ({% kept %}) are rendered
    once for what they print, and again when that changes (no content version bump)."""
    home = _page(anonymous, "/en/")
    assert len(fragment_cache.partials) == 3  # the head's links, the footer's, the chips
    kept = dict(fragment_cache.partials.fragments)
    assert _page(anonymous, "/en/") == home
    assert all(fragment_cache.partials.fragments[key] is html for key, html in kept.items())
    Topic.objects.filter(slug="kv-cache").update(name_en="Key-value caching")
    Track.objects.filter(slug="infra").update(name_en="Infrastructure")
    home = _page(anonymous, "/en/")
    assert "Key-value caching" in home.split('class="topic-chips"', 1)[1]
    head, footer = home.split("</head>", 1)[0], home.split("<footer", 1)[1]
    assert 'title="Infrastructure — Paper Daily"' in head
    assert "Infrastructure: Atom feed" in footer


def test_an_excerpt_a_machine_drafted_says_so_on_the_index_and_in_a_search(searchable, anonymous):
    """The index prints the start of a paper's summary, a search the passage that matched
    (from a summary or the abstract): under a machine's draft, who wrote it."""
    Summary.objects.filter(paper__slug="hilo", language="en").update(
        provenance=Summary.Provenance.MACHINE, reviewed_at=None
    )
    item = _page(anonymous, "/en/papers/").split('<li id="hilo">', 1)[1].split("</li>", 1)[0]
    assert '<p class="provenance">Machine draft, not yet reviewed by an editor</p>' in item
    other = _page(anonymous, "/en/papers/").split('<li id="wakman">', 1)[1].split("</li>", 1)[0]
    assert "provenance" not in other  # an editor's
    summary = Summary.objects.get(paper__slug="hilo", language="en")
    word = summary.body.split()[3].strip(".,;:")
    found = _page(anonymous, f"/en/papers/?q={word}")
    item = found.split('<li id="hilo">', 1)[1].split("</li>", 1)[0]
    assert f"<mark>{word}</mark>" in item
    assert "Machine draft, not yet reviewed by an editor" in item
    # Another query, whose passage comes from the abstract (written by the authors): the
    # same kept item, no note under the passage; the headline, from the machine's summary,
    # is marked beside it instead.
    item = _page(anonymous, "/en/papers/?q=validated")
    item = item.split('<li id="hilo">', 1)[1].split("</li>", 1)[0]
    assert "<mark>validated</mark>" in item and 'class="provenance"' not in item
    assert '</a> <span class="provenance-mark">Machine draft</span>' in item
