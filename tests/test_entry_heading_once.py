"""A heading is "Name: headline" (``digest.entry_heading``), and prints the name once: a
machine headline that already opens with the system's name ("PrefixRoute: Cache-Affinity …")
is printed as it is, on the pages, in the feeds, the API and the mail."""

from __future__ import annotations

import pytest

from dailies.templatetags.digest import entry_heading
from papers.models import Summary
from subscriptions.services import digest_render
from tests.factories import make_daily, make_paper

EN = "PrefixRoute: Cache-Affinity Routing for Prefix-Heavy Serving"
ZH = "PrefixRoute：按前缀缓存亲和性路由请求"


@pytest.fixture(autouse=True)
def _uncached(settings):
    settings.PAGE_CACHE_ENABLED = False


@pytest.fixture
def daily(db):
    paper = make_paper("prefixroute", short_name="PrefixRoute")
    Summary.objects.filter(paper=paper, language="en").update(headline=EN)
    Summary.objects.filter(paper=paper, language="zh").update(headline=ZH)
    return make_daily(papers=[paper])


@pytest.mark.parametrize(
    "headline, expected",
    [
        (EN, EN),
        (
            "PrefixRoute routes requests by cached prefix",
            "PrefixRoute routes requests by cached prefix",
        ),
        ("prefixroute: lower case", "PrefixRoute: prefixroute: lower case"),
        ("PrefixRoute", "PrefixRoute"),
        ("PrefixRouter is another system", "PrefixRoute: PrefixRouter is another system"),
        ("PrefixRoute-2 is another system", "PrefixRoute: PrefixRoute-2 is another system"),
        ("Cache-Affinity Routing", "PrefixRoute: Cache-Affinity Routing"),
    ],
)
def test_it_prints_the_name_once_whatever_the_headline_opens_with(db, headline, expected):
    paper = make_paper(short_name="PrefixRoute")
    summary = Summary(paper=paper, language="en", headline=headline)
    assert entry_heading(paper, summary) == expected


def test_it_prints_a_chinese_headline_that_opens_with_the_name_once(db):
    paper = make_paper(short_name="PrefixRoute")
    assert entry_heading(paper, Summary(paper=paper, language="zh", headline=ZH)) == ZH
    other = Summary(paper=paper, language="zh", headline="按前缀路由")
    assert entry_heading(paper, other) == "PrefixRoute：按前缀路由"


@pytest.mark.parametrize(
    "path",
    [
        "/en/infra/2026-10-28/",
        "/zh/infra/2026-10-28/",
        "/en/papers/prefixroute/",
        "/zh/papers/prefixroute/",
        "/en/feeds/infra/papers.atom",
        "/zh/feeds/infra/papers.atom",
        "/en/feeds/infra.atom",
        "/api/v1/papers/prefixroute/",
    ],
)
def test_no_page_feed_or_api_prints_the_name_twice(daily, anonymous, path):
    body = anonymous.get(path).content.decode()
    assert "PrefixRoute" in body
    assert "PrefixRoute: PrefixRoute" not in body and "PrefixRoute：PrefixRoute" not in body
    assert EN in body or ZH in body or EN.replace(": ", "\\u003a ") in body


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_mail_prints_the_name_once(daily, language):
    entries = list(daily.entries.select_related("paper").prefetch_related("paper__summaries"))
    rendered = digest_render(daily=daily, entries=entries, language=language)
    for text in (rendered.text, rendered.html):
        assert "PrefixRoute: PrefixRoute" not in text and "PrefixRoute：PrefixRoute" not in text
        assert (EN if language == "en" else ZH) in text
