"""Dark mode: the system preference by default, and a toggle that works without JavaScript
(a link sets a cookie; the server puts data-theme on <html>)."""

from __future__ import annotations

import re

import pytest

from dailies.views import THEME_COOKIE_AGE

# Pages are read as a browser reads them, whitespace collapsed (the templates' line breaks
# are djhtml's).


def test_it_follows_the_system_preference_by_default(demo, anonymous):
    html = " ".join(anonymous.get("/en/").content.decode().split())
    assert re.search(r"<html lang=\"en\">", html)
    assert '<meta name="color-scheme" content="light dark">' in html


def test_the_toggle_sets_a_cookie_and_returns_to_the_page(demo, anonymous):
    response = anonymous.get("/en/theme/dark/?next=/en/papers/%3Fq%3Dcache")
    assert response.status_code == 302 and response["Location"] == "/en/papers/?q=cache"
    cookie = response.cookies["theme"]
    assert cookie.value == "dark" and int(cookie["max-age"]) == THEME_COOKIE_AGE
    html = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    assert '<html lang="en" data-theme="dark">' in html
    assert anonymous.get("/en/theme/auto/?next=/en/").cookies["theme"].value == ""
    assert "data-theme" not in " ".join(anonymous.get("/en/").content.decode().split())


def test_every_page_links_the_toggle(demo, anonymous):
    html = " ".join(anonymous.get("/zh/papers/").content.decode().split())
    assert 'href="/zh/theme/dark/?next=%2Fzh%2Fpapers%2F"' in html


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/", "javascript:x"])
def test_it_only_returns_to_this_site(db, anonymous, target):
    response = anonymous.get("/en/theme/light/", {"next": target})
    assert response["Location"] == "/"


def test_it_ignores_an_unknown_theme(db, anonymous):
    assert anonymous.get("/en/theme/neon/").status_code == 404
    anonymous.cookies["theme"] = "neon"
    assert "data-theme" not in " ".join(anonymous.get("/en/topics/").content.decode().split())
