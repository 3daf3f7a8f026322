"""Both languages under /zh/ and /en/, a switch that keeps the reader in place, fallbacks."""

from __future__ import annotations

import re

import pytest

from papers.models import Summary
from tests.factories import make_daily, make_paper


@pytest.mark.parametrize(
    ("accept", "target"),
    [
        ("zh-CN,zh;q=0.9,en;q=0.8", "/zh/"),
        ("en-US,en;q=0.9", "/en/"),
        ("zh-TW", "/zh/"),
        ("fr-FR,fr;q=0.9", "/en/"),
    ],
)
def test_it_redirects_the_root_by_the_browsers_language(db, anonymous, accept, target):
    response = anonymous.get("/", headers={"accept-language": accept})
    assert response.status_code == 302
    assert response["Location"] == target


@pytest.mark.parametrize(
    "path",
    ["/en/", "/en/infra/", "/en/infra/2026-10-28/", "/en/papers/", "/en/papers/hilo/"],
)

# Pages are read as a browser reads them, whitespace collapsed (the templates' line breaks
# are djhtml's).
def test_its_language_switch_keeps_the_reader_on_the_same_item(demo, anonymous, path):
    html = " ".join(anonymous.get(path).content.decode().split())
    switch = html.split('class="lang-switch"', 1)[1].split("</nav>", 1)[0]
    assert f'href="{path.replace("/en/", "/zh/", 1)}"' in switch
    zh = " ".join(anonymous.get(path.replace("/en/", "/zh/", 1)).content.decode().split())
    back = zh.split('class="lang-switch"', 1)[1].split("</nav>", 1)[0]
    assert f'href="{path}"' in back


def test_its_language_switch_keeps_the_page_number(demo, anonymous, settings):
    settings.PAGE_SIZE = 5
    html = " ".join(anonymous.get("/en/papers/?page=2").content.decode().split())
    assert 'href="/zh/papers/?page=2"' in html


def test_it_falls_back_to_the_other_language_with_a_visible_note(db, anonymous):
    paper = make_paper("only-english", zh=None)
    make_daily(papers=[paper], intro_zh="")
    html = " ".join(anonymous.get("/zh/infra/2026-10-28/").content.decode().split())
    assert html.count("尚未翻译，以下为原文。") == 2  # the intro and the entry
    assert '<p class="summary" lang="en">' in html
    english = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    assert "Not yet translated" not in english


def test_it_marks_the_page_language_for_type_and_screen_readers(demo, anonymous):
    assert '<html lang="zh-CN">' in " ".join(anonymous.get("/zh/").content.decode().split())
    assert '<html lang="en">' in " ".join(anonymous.get("/en/").content.decode().split())


def test_it_writes_each_demo_summary_natively_in_both_languages(demo):
    for summary in Summary.objects.select_related("paper"):
        assert summary.takeaway in summary.body, summary
        has_cjk = bool(re.search(r"[\u4e00-\u9fff]", summary.body))
        assert has_cjk == (summary.language == "zh"), summary
    assert Summary.objects.filter(language="en").count() == 16
    assert Summary.objects.filter(language="zh").count() == 16
