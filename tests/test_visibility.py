"""Nothing unpublished reaches an anonymous reader; staff preview it with a banner."""

from __future__ import annotations

import datetime as dt

import pytest

from dailies.models import Daily
from tests.factories import make_daily, make_deep_dive, make_paper

DRAFT_DATE = dt.date(2026, 11, 2)


@pytest.fixture(params=[Daily.Status.DRAFT, Daily.Status.SCHEDULED])
def hidden(request, demo):
    """A draft (or scheduled) daily whose only paper appears nowhere else."""
    secret = make_paper("secret-paper", title="A Secret Unpublished Result")
    daily = make_daily(
        date=DRAFT_DATE,
        papers=[secret],
        status=request.param,
        intro_en="Hidden intro words",
        intro_zh="隐藏的导语",
    )
    make_deep_dive(secret, slug="secret-dive", body_en="Secret deep dive body.")
    return daily, secret


HIDDEN_URLS = [
    "/{lang}/infra/2026-11-02/",
    "/{lang}/papers/secret-paper/",
    "/{lang}/deep-dives/secret-dive/",
]
LISTING_URLS = [
    "/{lang}/",
    "/{lang}/infra/",
    "/{lang}/papers/",
    "/{lang}/papers/?page=2",
    "/{lang}/infra/2026-10-29/",
]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_it_answers_404_for_the_hidden_daily_its_paper_and_deep_dive(hidden, anonymous, lang):
    for url in HIDDEN_URLS:
        assert anonymous.get(url.format(lang=lang)).status_code == 404, url


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_it_leaves_the_hidden_daily_out_of_every_listing(hidden, anonymous, lang):
    for url in LISTING_URLS:
        response = anonymous.get(url.format(lang=lang))
        assert response.status_code in (200, 404), url
        html = response.content.decode()
        for needle in ("secret-paper", "Secret Unpublished", "2026-11-02", "Hidden intro"):
            assert needle not in html, (url, needle)


def test_it_hides_a_deep_dive_whose_paper_is_only_in_a_draft(hidden, anonymous):
    assert anonymous.get("/en/deep-dives/secret-dive/").status_code == 404


def test_it_hides_a_draft_deep_dive_of_a_published_paper(demo, anonymous):
    from papers.models import Paper

    make_deep_dive(Paper.objects.get(slug="hilo"), slug="hilo-draft", status="draft")
    assert anonymous.get("/en/deep-dives/hilo-draft/").status_code == 404
    assert "hilo-draft" not in anonymous.get("/en/infra/2026-10-28/").content.decode()


def test_it_shows_staff_a_draft_with_a_preview_banner(hidden, editor_client):
    response = editor_client.get("/en/infra/2026-11-02/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Preview: readers cannot see this page" in html
    assert "A Secret Unpublished Result" in html
    paper = editor_client.get("/en/papers/secret-paper/").content.decode()
    assert "Preview" in paper


def test_it_shows_no_banner_on_published_pages_for_staff(demo, editor_client):
    html = editor_client.get("/en/infra/2026-10-28/").content.decode()
    assert "Preview:" not in html


def test_it_hides_a_daily_again_when_it_is_unpublished(demo, anonymous):
    from dailies.services import daily_unpublish

    daily = Daily.objects.get(date=dt.date(2026, 10, 26))
    daily_unpublish(daily=daily)
    assert anonymous.get("/en/infra/2026-10-26/").status_code == 404
    assert anonymous.get("/en/papers/kvstream/").status_code == 404
    assert "kvstream" not in anonymous.get("/en/papers/").content.decode()


def test_it_keeps_a_paper_visible_while_any_published_daily_has_it(db, anonymous):
    paper = make_paper("shared")
    make_daily(date=dt.date(2026, 1, 1), papers=[paper])
    make_daily(date=dt.date(2026, 1, 2), papers=[paper], status=Daily.Status.DRAFT)
    html = anonymous.get("/en/papers/shared/").content.decode()
    assert "2026-01-01" in html and "2026-01-02" not in html
