"""Dailies' pages, and the digest mail built on them, show what apps above dailies add
(deep dives, reference code) only through the extension points of ``dailies/extensions.py``:
a prefetch and template fragments at named places. No dailies template or template tag, and
no subscriptions template, names the other app's data."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.template import Context, Template
from django.utils import translation

import dailies
import subscriptions
from dailies import extensions
from dailies.selectors import daily_entries
from deepdives.models import ReferenceCode
from subscriptions.services import digest_render
from tests.factories import make_daily, make_deep_dive, make_paper

DEEP_DIVE_NAMES = re.compile(r"deep_?dive|reference_?code", re.IGNORECASE)


def test_no_dailies_template_or_template_tag_names_a_deep_dive():
    dailies_root = Path(dailies.__file__).parent
    files = [
        *dailies_root.joinpath("templates").rglob("*.*"),
        *dailies_root.joinpath("templatetags").rglob("*.py"),
        *Path(subscriptions.__file__).parent.joinpath("templates").rglob("*.*"),
    ]
    offenders = [
        f"{path.relative_to(dailies_root.parent)}:{number}: {line.strip()}"
        for path in sorted(files)
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if DEEP_DIVE_NAMES.search(line)
    ]
    assert len(files) > 20  # the scan reads the templates, not an empty folder
    assert offenders == []


@pytest.fixture
def place(monkeypatch) -> str:
    """A place of our own; what the test registers there goes when it ends."""
    monkeypatch.setattr(
        extensions, "_fragments", {k: [*v] for k, v in extensions._fragments.items()}
    )
    return "test-place"


def _paper_with_a_dive(url: str = "/en/deep-dives/x/") -> SimpleNamespace:
    return SimpleNamespace(deep_dive_list=[SimpleNamespace(get_absolute_url=lambda: url)])


def test_a_place_nothing_is_registered_for_renders_nothing(place):
    page = Template('{% load fragments %}[{% fragments "test-place" paper=paper %}]')
    assert page.render(Context({"paper": _paper_with_a_dive()})) == "[]"


def test_the_fragments_of_a_place_render_in_order_with_the_given_paper(place):
    extensions.register_fragment(place, "deepdives/_home_links.html")
    extensions.register_fragment(place, "deepdives/_paper_page.html")
    extensions.register_fragment(place, "deepdives/_home_links.html")  # once is enough
    page = Template('{% load fragments %}[{% fragments "test-place" paper=other %}]')
    other = SimpleNamespace(deep_dive_list=[], reference_code_list=[])
    with translation.override("en"):
        html = " ".join(page.render(Context({"other": other})).split())  # as a browser reads it
    assert html.startswith('[<a href="/en/deep-dives/">All deep dives →</a> · ')
    assert html.count("All deep dives") == 1


def test_the_places_of_the_lists_render_their_fragments_in_order(place):
    """The places a list repeats (an entry's actions, an index item's marks) render their
    fragments with the paper they give."""
    extensions.register_fragment(place, "deepdives/_paper_marks.html")
    extensions.register_fragment(place, "deepdives/_entry_actions.html")
    extensions.register_fragment(place, "deepdives/_paper_marks.html")  # once is enough
    page = Template('{% load fragments %}[{% fragments "test-place" paper=other %}]')
    other = _paper_with_a_dive("/en/deep-dives/y/")
    other.deep_dive_list[0].minutes = lambda language: 4
    other.reference_code_list = []
    with translation.override("en"):
        html = " ".join(page.render(Context({"other": other})).split())  # as a browser reads it
    assert html == (
        '[ · <a class="deep-dive-marker" href="/en/deep-dives/y/">Deep dive</a>'
        '<a class="deep-dive-link" href="/en/deep-dives/y/">Deep dive · 4 min →</a> ]'
    )


def test_a_page_links_the_deep_dives_of_its_entries_that_have_one(db, anonymous, settings):
    settings.PAGE_CACHE_ENABLED = False
    papers = [make_paper(f"p{i}") for i in range(6)]
    make_daily(papers=papers)
    for paper in papers[:3]:
        make_deep_dive(paper)
    # Each entry now renders on its own (digest_site/part_cache.py), so how often the engine is
    # asked for the fragment is the cached loader's business; what readers see is the test.
    html = anonymous.get("/en/infra/2026-10-28/").content.decode()
    assert html.count('class="deep-dive-link"') == 3


@pytest.fixture
def paper_with_dive_and_code(db):
    """A published paper with a three-minute deep dive and a reference program."""
    paper = make_paper("cosmos")
    daily = make_daily(papers=[paper])
    make_deep_dive(paper, body_en=" ".join(["word"] * 660))
    ReferenceCode.objects.create(
        slug="cosmos", name="COSMOS", module="deepdives.reference.cosmos", paper=paper
    )
    return daily


def test_the_paper_page_links_the_deep_dive_and_the_code_with_its_run_command(
    paper_with_dive_and_code, anonymous, settings
):
    settings.PAGE_CACHE_ENABLED = False
    html = anonymous.get("/en/papers/cosmos/").content.decode()
    assert (
        '<p><a class="deep-dive-link" href="/en/deep-dives/cosmos-dive/">Deep dive · 3 min' in html
    )
    assert (
        '<p><a class="code-link" href="/en/code/cosmos/">Reference code: cosmos →</a> '
        "<code>python -m deepdives.reference.cosmos</code></p>"
    ) in html


def test_the_home_page_links_all_deep_dives_beside_all_papers(demo, anonymous, settings):
    settings.PAGE_CACHE_ENABLED = False
    html = " ".join(anonymous.get("/en/").content.decode().split())  # as a browser reads it
    assert (
        '<p><a href="/en/deep-dives/">All deep dives →</a> · '
        '<a href="/en/papers/">All papers →</a></p>'
    ) in html


def test_the_digest_mail_links_the_deep_dive_and_the_code(paper_with_dive_and_code, settings):
    daily = paper_with_dive_and_code
    mail = digest_render(daily=daily, entries=daily_entries(daily), language="en")
    site = settings.SITE_URL
    assert (
        f' · <a href="{site}/en/deep-dives/cosmos-dive/">Deep dive · 3 min</a>'
        f' · <a href="{site}/en/code/cosmos/">Code</a></p>'
    ) in mail.html
    assert f"\n   Deep dive · 3 min: {site}/en/deep-dives/cosmos-dive/\n" in mail.text
