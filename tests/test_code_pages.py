"""Reference-code pages: list, source, verified output, chart, download."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET

import pytest

from dailies.models import Daily
from dailies.services import daily_unpublish
from deepdives import services
from deepdives.registry import PROGRAMS


@pytest.fixture(scope="module")
def _cosmos_verified(_module_demo, django_db_blocker):
    """cosmos verified once, into the module's demo (a run costs about 1.3 s of CPU)."""
    with django_db_blocker.unblock():
        services.reference_verify(name="cosmos")


@pytest.fixture
def verified(_cosmos_verified, demo_deep_dives):
    """The demo with its deep dives, cosmos verified, the other programs not run yet."""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_index_lists_every_program_with_its_status(verified, anonymous, lang):
    html = anonymous.get(f"/{lang}/code/").content.decode()
    for name in PROGRAMS:
        assert f'href="/{lang}/code/{name}/"' in html
    assert html.count("run-passed") == 1
    assert html.count("run-never") == len(PROGRAMS) - 1


def test_the_page_shows_source_command_output_chart_and_deep_dive(verified, anonymous):
    html = anonymous.get("/en/code/cosmos/").content.decode()
    assert "python -m deepdives.reference.cosmos" in html
    assert 'class="highlight"' in html and '<span class="k">def</span>' in html
    assert "Verified" in html and "took " in html
    assert 'src="/en/code/cosmos/chart.svg"' in html
    assert 'href="/en/deep-dives/cosmos-llm-gateway/"' in html
    assert 'href="/en/code/cosmos/raw/"' in html
    assert '<pre class="run-output"' in html


def test_the_chart_is_an_svg_drawn_from_the_stored_run(verified, anonymous):
    response = anonymous.get("/en/code/cosmos/chart.svg")
    assert response["Content-Type"] == "image/svg+xml"
    root = ET.fromstring(response.content)
    assert root.tag.endswith("svg")
    assert b"<script" not in response.content
    assert anonymous.get("/en/code/hilo/chart.svg").status_code == 404  # not run yet


def test_the_raw_file_downloads_as_python(verified, anonymous):
    response = anonymous.get("/en/code/zipfusion/raw/")
    assert response["Content-Disposition"] == 'attachment; filename="zipfusion.py"'
    assert response.content == PROGRAMS["zipfusion"].source_path().read_bytes()


def test_unknown_programs_are_not_found(verified, anonymous):
    assert anonymous.get("/en/code/nosuch/").status_code == 404
    assert anonymous.get("/en/code/nosuch/raw/").status_code == 404


def test_a_program_of_an_unpublished_paper_is_hidden(verified, anonymous):
    daily_unpublish(daily=Daily.objects.get(date=dt.date(2026, 10, 28)))
    assert anonymous.get("/en/code/cosmos/").status_code == 404
    assert anonymous.get("/en/code/cosmos/raw/").status_code == 404
    assert "/en/code/cosmos/" not in anonymous.get("/en/code/").content.decode()
