"""Every item of the four demo dailies has reference code the site runs; twelve have deep
dives."""

from __future__ import annotations

import re

import pytest

from deepdives.models import DeepDive, ReferenceCode
from deepdives.registry import PROGRAMS
from papers.models import Paper

DAYS = ["2026-10-26", "2026-10-27", "2026-10-28", "2026-10-29"]


@pytest.fixture
def site(demo_deep_dives):
    pass


def test_every_demo_item_has_a_registered_program(site):
    slugs = set(Paper.objects.values_list("slug", flat=True))
    with_code = {p.paper_slug for p in PROGRAMS.values()}
    assert slugs == with_code
    assert len(PROGRAMS) == 16


def test_the_four_dailies_link_twelve_deep_dives(site, anonymous):
    linked = set()
    for day in DAYS:
        html = anonymous.get(f"/en/infra/{day}/").content.decode()
        linked |= set(re.findall(r'href="/en/deep-dives/([\w-]+)/"', html))
    assert len(linked) == 12
    assert DeepDive.objects.published().count() == 12


def test_the_code_index_lists_all_sixteen(site, anonymous):
    html = anonymous.get("/en/code/").content.decode()
    assert len(set(re.findall(r'href="/en/code/([\w-]+)/"', html))) == 16


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_item_links_its_code_from_its_paper_page(site, anonymous, lang):
    for row in ReferenceCode.objects.select_related("paper"):
        html = anonymous.get(f"/{lang}/papers/{row.paper.slug}/").content.decode()
        assert f'href="/{lang}/code/{row.slug}/"' in html, row.slug
