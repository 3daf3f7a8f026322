"""Pages to follow: a lab's and an author's published papers across days, each with an
Atom feed, in both languages; names linking there from every page; the sitemap; nothing
unpublished."""

from __future__ import annotations

import datetime as dt

import feedparser
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dailies.models import Daily
from papers.authors import author_merge
from papers.models import Author, Paper
from tests.factories import make_daily, make_paper, make_track

LANGS = ["en", "zh"]


def _feed(client, url: str):
    response = client.get(url)
    assert response.status_code == 200, response.content[:300]
    parsed = feedparser.parse(response.content)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    return parsed


@pytest.fixture
def site(db):
    track = make_track("infra")
    shown = make_paper(
        "shown", orgs=("Acme",), authors=["José García", "Ada Lovelace"], topics=("kv",)
    )
    other = make_paper("other", orgs=("Acme",), authors=["Garcia, Jose"])
    hidden = make_paper("hidden", orgs=("Acme", "Secret"), authors=["Jose Garcia", "Zed Hidden"])
    make_daily(track=track, date=dt.date(2026, 10, 27), papers=[shown])
    make_daily(track=track, date=dt.date(2026, 10, 28), papers=[other])
    make_daily(track=track, date=dt.date(2026, 10, 29), papers=[hidden], status=Daily.Status.DRAFT)
    return track


@pytest.mark.parametrize("lang", LANGS)
def test_it_lists_a_labs_published_papers_with_their_dailies_and_scores(site, anonymous, lang):
    response = anonymous.get(f"/{lang}/labs/acme/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="shown"' in html and 'id="other"' in html
    assert 'id="hidden"' not in html
    assert "/infra/2026-10-27/" in html and "/infra/2026-10-28/" in html
    assert f'href="/{lang}/feeds/labs/acme.atom"' in html
    assert ("2 papers from this lab" if lang == "en" else "共出现过 2 篇论文") in html


@pytest.mark.parametrize("lang", LANGS)
def test_it_merges_name_variants_on_one_author_page(site, anonymous, lang):
    assert Author.objects.filter(key="jose garcia").count() == 1
    response = anonymous.get(f"/{lang}/authors/jose-garcia/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="shown"' in html and 'id="other"' in html and 'id="hidden"' not in html


@pytest.mark.parametrize("lang", LANGS)
def test_it_serves_lab_and_author_feeds_without_unpublished_papers(site, anonymous, lang):
    for url in (f"/{lang}/feeds/labs/acme.atom", f"/{lang}/feeds/authors/jose-garcia.atom"):
        parsed = _feed(anonymous, url)
        links = {e.link for e in parsed.entries}
        assert links == {
            f"http://testserver/{lang}/papers/shown/",
            f"http://testserver/{lang}/papers/other/",
        }
        assert parsed.feed.language == ("zh-CN" if lang == "zh" else "en")


def test_it_hides_labs_and_authors_with_only_unpublished_papers(site, anonymous):
    for url in (
        "/en/labs/secret/",
        "/en/authors/zed-hidden/",
        "/en/feeds/labs/secret.atom",
        "/en/feeds/authors/zed-hidden.atom",
        "/en/labs/nobody/",
        "/en/authors/nobody/",
    ):
        assert anonymous.get(url).status_code == 404, url


def test_it_links_org_and_author_names_on_the_paper_and_daily_pages(site, anonymous):
    paper_page = anonymous.get("/en/papers/shown/").content.decode()
    assert 'href="/en/labs/acme/"' in paper_page
    assert 'href="/en/authors/jose-garcia/">José García</a>' in paper_page
    assert 'href="/en/authors/ada-lovelace/"' in paper_page
    daily = anonymous.get("/zh/infra/2026-10-27/").content.decode()
    assert 'href="/zh/labs/acme/"' in daily and 'href="/zh/authors/jose-garcia/"' in daily
    for url in ("/en/papers/", "/en/topics/kv/", "/en/"):
        assert 'href="/en/labs/acme/"' in anonymous.get(url).content.decode(), url


def test_it_sends_a_merged_name_to_the_author_it_was_merged_into(site, anonymous, editor):
    ada = Author.objects.get(key="ada lovelace")
    jose = Author.objects.get(key="jose garcia")
    author_merge(source=ada, target=jose, user=editor)
    ada.refresh_from_db()
    assert (ada.merged_into, ada.merged_by) == (jose, editor) and ada.merged_at is not None
    response = anonymous.get("/zh/authors/ada-lovelace/")
    assert response.status_code == 301 and response["Location"] == "/zh/authors/jose-garcia/"


def test_it_refuses_an_author_merge_by_a_contributor(site, contributor):
    from django.core.exceptions import PermissionDenied

    ada = Author.objects.get(key="ada lovelace")
    with pytest.raises(PermissionDenied):
        author_merge(source=ada, target=Author.objects.get(key="jose garcia"), user=contributor)


def test_it_lists_labs_and_authors_in_both_languages_in_the_sitemap(site, anonymous):
    xml = anonymous.get("/sitemap.xml").content.decode()
    for lang in LANGS:
        assert f"http://testserver/{lang}/labs/acme/" in xml
        assert f"http://testserver/{lang}/authors/jose-garcia/" in xml
    assert "/labs/secret/" not in xml and "/authors/zed-hidden/" not in xml


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


# The lab or author (two queries: the row, and whether readers see it), the count, the page
# of papers, their organisations, summaries, topics and appearances, and what the apps above
# read onto each item (deep dives, reference code).
@pytest.mark.parametrize("kind", ["labs/acme", "authors/jose-garcia"])
def test_it_reads_a_lab_or_author_page_in_a_fixed_number_of_queries(db, anonymous, kind):
    track = make_track("infra")
    counts = []
    for day in range(1, 4):
        papers = [
            make_paper(orgs=("Acme", f"Other{day}"), authors=["José García", f"X{day} Y{i}"])
            for i in range(day * 3)
        ]
        make_daily(track=track, date=dt.date(2026, 10, day), papers=papers)
        counts.append(_queries(anonymous, f"/en/{kind}/"))
    assert counts == [PAGE_QUERIES] * 3


PAGE_QUERIES = 10


def test_it_merges_authors_in_the_admin_by_an_editor_recorded_with_who_and_when(
    site, editor_client, editor, anonymous
):
    ada = Author.objects.get(key="ada lovelace")
    response = editor_client.post(
        f"/admin/papers/author/{ada.pk}/change/", {"name": ada.name, "merge_into": "jose-garcia"}
    )
    assert response.status_code == 302
    ada.refresh_from_db()
    assert ada.merged_into.slug == "jose-garcia" and ada.merged_by == editor
    assert ada.merged_at is not None
    # Its paper is now on the author it was merged into, once.
    assert anonymous.get("/en/authors/jose-garcia/").content.decode().count('id="shown"') == 1


@pytest.mark.django_db(transaction=True)
def test_it_backfills_authors_from_the_names_stored_on_papers():
    from django.db.migrations.executor import MigrationExecutor

    from papers.models import PaperAuthor

    head = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        old = MigrationExecutor(connection).migrate([("papers", "0013_track_require_review")])
        old.apps.get_model("papers", "Paper").objects.create(
            slug="p",
            title="P",
            canonical_id="title:p",
            authors=["Müller, Jörg", "Jorg Muller", "Li Na"],
        )
    finally:
        MigrationExecutor(connection).migrate(head)
    links = PaperAuthor.objects.filter(paper__slug="p").order_by("position")
    assert [(link.author.key, link.position) for link in links] == [
        ("jorg muller", 1),
        ("li na", 2),
    ]


def test_it_retires_an_authors_pages_and_papers_when_names_are_merged(site):
    from digest_site import invalidation

    jose = Author.objects.get(key="jose garcia")
    shown, other = (Paper.objects.get(slug=s) for s in ("shown", "other"))
    assert invalidation.tags_of(jose) >= {
        f"author:{jose.pk}",
        "index",
        f"paper:{shown.pk}",
        f"paper:{other.pk}",
    }


@pytest.mark.parametrize("kind", ["labs/acme", "authors/jose-garcia"])
def test_it_tags_a_lab_or_author_page_with_its_papers(site, anonymous, kind):
    response = anonymous.get(f"/en/{kind}/")
    shown = Paper.objects.get(slug="shown")
    assert f"paper:{shown.pk}" in response.wsgi_request.cache_tags
    assert "index" in response.wsgi_request.cache_tags
