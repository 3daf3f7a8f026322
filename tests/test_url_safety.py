"""URLs are data, never markup: unsafe links never get stored, and never get rendered."""

from __future__ import annotations

import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from papers.identity import canonical_id
from papers.ingest.parsers import parse_arxiv_api, parse_arxiv_rss, parse_feed, parse_oai_pmh
from papers.ingest.service import ingest_document, ingest_source
from papers.models import IngestRun, Paper, Source
from papers.validators import URL_MAX_LENGTH, safe_url, validate_public_url
from tests.arxiv_docs import Entry, api_page, entry_xml
from tests.factories import make_daily, make_paper, make_track
from tests.recorded_server import Reply

UNSAFE = [
    "JaVaScRiPt:alert(document.domain)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "\x01javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "ftp://files.example.org/paper.pdf",
    "https://user:secret@example.org/paper.pdf",
    "https://@example.org/",
    "//example.org/paper.pdf",
    "https:///no-host",
    "https://exa mple.org/",
    "https://example.org/\u200bpaper",
    "https://[::1/",
    "https://example.org:99999/",
]
SAFE = ["https://arxiv.org/abs/2610.01234v2", "http://Lab.Example/blog/post?a=1&b=2#top"]
HREFS = re.compile(r"""<a\b[^>]*?\bhref\s*=\s*["']?([^"'\s>]*)""", re.IGNORECASE)


@pytest.mark.parametrize("value", UNSAFE)
def test_it_refuses_every_unsafe_url(value):
    with pytest.raises(ValidationError):
        validate_public_url(value)
    assert safe_url(value) == ""


@pytest.mark.parametrize("value", SAFE)
def test_it_keeps_public_http_urls(value):
    validate_public_url(value)
    assert safe_url(f"  {value} ") == value


def test_it_bounds_the_length_of_a_url_at_its_edge():
    base = "https://example.org/"
    at_limit = base + "a" * (URL_MAX_LENGTH - len(base))
    validate_public_url(at_limit)
    with pytest.raises(ValidationError, match="the limit is"):
        validate_public_url(at_limit + "a")
    assert safe_url(at_limit + "a") == ""


# --- Every ingest format ----------------------------------------------------------------------


def _api_with_links(abs_href: str, pdf_href: str) -> bytes:
    good = entry_xml(Entry("2610.00001"))
    good = good.replace('href="https://arxiv.org/abs/2610.00001v1"', f'href="{abs_href}"')
    good = good.replace('href="https://arxiv.org/pdf/2610.00001v1"', f'href="{pdf_href}"')
    return api_page([]).replace(b"</feed>", good.encode() + b"</feed>")


def test_the_arxiv_api_never_yields_a_script_link():
    feed = parse_arxiv_api(
        _api_with_links("data:text/html,hi", "JaVaScRiPt:alert(document.domain)")
    )
    (item,) = feed.items
    assert item.pdf_url == "https://arxiv.org/pdf/2610.00001v1"  # the one its id gives
    assert item.abs_url == item.url == "https://arxiv.org/abs/2610.00001v1"
    assert any("PDF link dropped: only http and https" in note for note in item.notes)
    assert any("abstract link" in note and "data:" in note for note in item.notes)


def test_the_arxiv_rss_never_yields_a_script_link():
    rss = (
        b'<?xml version="1.0"?><rss version="2.0" xmlns:arxiv="http://arxiv.org/schemas/atom">'
        b"<channel><title>cs.DC</title><item><title>Serving</title>"
        b"<link> JaVaScRiPt:alert(document.domain)</link>"
        b"<description>arXiv:2610.00002v1 Announce Type: new Abstract: KV.</description>"
        b"<guid isPermaLink='false'>oai:arXiv.org:2610.00002v1</guid>"
        b"<arxiv:announce_type>new</arxiv:announce_type></item></channel></rss>"
    )
    (item,) = parse_arxiv_rss(rss).items
    assert item.abs_url == item.url == "https://arxiv.org/abs/2610.00002v1"
    assert item.notes == ["link and abstract link dropped: only http and https links are "
                          "allowed, not javascript:"]  # fmt: skip


def test_oai_pmh_links_come_only_from_the_arxiv_id():
    # The arXiv OAI format carries no links: they are built from the id, which must be one.
    oai = (
        b'<?xml version="1.0"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
        b"<ListRecords><record><header><identifier>oai:arXiv.org:2610.00003</identifier>"
        b'</header><metadata><arXiv xmlns="http://arxiv.org/OAI/arXiv/">'
        b"<id>javascript:alert(1)//2610.00003</id><title>Serving</title>"
        b"<license>javascript:alert(1)</license><abstract>KV.</abstract></arXiv></metadata>"
        b"</record></ListRecords></OAI-PMH>"
    )
    (item,) = parse_oai_pmh(oai).items
    assert (item.abs_url, item.pdf_url) == (
        "https://arxiv.org/abs/2610.00003",
        "https://arxiv.org/pdf/2610.00003",
    )


def _blog(link: str, guid: str = "") -> bytes:
    guid_xml = f"<guid>{guid}</guid>" if guid else ""
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Lab</title>'
        "<link>https://lab.example/blog</link><description>posts</description>"
        f"<item><title>Serving at scale</title><link>{link}</link>{guid_xml}"
        "<description>How we serve.</description></item></channel></rss>"
    ).encode()


@pytest.mark.parametrize("link", ["JaVaScRiPt:alert(1)", "data:text/html,x", "vbscript:x"])
def test_a_feed_entry_keeps_its_public_guid_when_its_link_is_unsafe(link):
    (item,) = parse_feed(_blog(link, guid="https://lab.example/blog/serving")).items
    assert item.url == "https://lab.example/blog/serving"
    assert len(item.notes) == 1 and item.notes[0].startswith("link dropped: only http and https")


def test_a_feed_entry_with_only_an_unsafe_link_is_rejected_and_says_why():
    feed = parse_feed(_blog("JaVaScRiPt:alert(1)"))
    assert feed.items == []
    (rejection,) = feed.rejected
    assert rejection.reason == (
        "no identifier (link dropped: only http and https links are allowed, not javascript:)"
    )


def test_an_ingest_run_drops_the_link_keeps_the_entry_and_notes_it(db, recorded_server):
    url = recorded_server.serve(
        "/api/query", Reply(body=_api_with_links("https://arxiv.org/abs/2610.00001v1", UNSAFE[0]))
    )
    source = Source.objects.create(
        name="arxiv", kind=Source.Kind.ARXIV_API, url=url, config={"search_query": "cat:cs.DC"}
    )
    run = ingest_source(source=source)
    assert run.status == IngestRun.Status.SUCCEEDED, run.message
    assert (run.new, run.rejected) == (1, [])
    assert "1 note:" in run.message
    assert "PDF link dropped: only http and https links are allowed, not javascript:" in (
        run.message
    )
    paper = Paper.objects.get()
    assert paper.pdf_url == "https://arxiv.org/pdf/2610.00001v1"


# --- The admin --------------------------------------------------------------------------------


@pytest.fixture
def superuser_client(client, django_user_model):
    user = django_user_model.objects.create_superuser("root", "root@example.org", "pw")
    client.force_login(user)
    return client


@pytest.mark.parametrize("value", ["JaVaScRiPt:alert(1)", "data:text/html,x", *UNSAFE[7:9]])
def test_the_admin_refuses_an_unsafe_source_url(db, superuser_client, value):
    response = superuser_client.post(
        reverse("admin:papers_source_add"),
        {
            "name": "evil",
            "kind": Source.Kind.FEED,
            "url": value,
            "config": "{}",
            "enabled": "on",
            "interval_minutes": 60,
        },
    )
    assert response.status_code == 200
    assert "url" in response.context["adminform"].form.errors
    assert not Source.objects.exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("pdf_url", "JaVaScRiPt:alert(document.domain)"),
        ("abs_url", "vbscript:msgbox(1)"),
        ("pdf_url", "ftp://files.example.org/paper.pdf"),
        ("abs_url", "https://user:secret@example.org/paper"),
    ],
)
def test_the_admin_refuses_an_unsafe_paper_link(db, superuser_client, field, value):
    paper = make_paper("linked", pdf_url="https://arxiv.org/pdf/2610.00001")
    url = reverse("admin:papers_paper_change", args=[paper.pk])
    form = superuser_client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None}
    data.update(
        {
            "organizations": [],
            "topics": [],
            "tracks": [],
            "authors": "[]",
            "categories": "[]",
            "affiliations": "[]",
            "scores-TOTAL_FORMS": 0,
            "scores-INITIAL_FORMS": 0,
            field: value,
        }
    )
    response = superuser_client.post(url, data)
    assert response.status_code == 200
    assert field in response.context["adminform"].form.errors
    paper.refresh_from_db()
    assert paper.pdf_url == "https://arxiv.org/pdf/2610.00001" and paper.abs_url == ""


# --- Rendering --------------------------------------------------------------------------------


def test_the_paper_page_never_renders_a_script_href(db, anonymous):
    paper = make_paper("stored-before", abs_url="https://arxiv.org/abs/2610.00009")
    make_daily(track=make_track(), papers=[paper])
    # As a row written before the validators existed would be: no validation on update().
    Paper.objects.filter(pk=paper.pk).update(pdf_url="JaVaScRiPt:alert(document.domain)")
    html = anonymous.get("/en/papers/stored-before/").content.decode()
    hrefs = HREFS.findall(html)
    assert "https://arxiv.org/abs/2610.00009" in hrefs
    assert not [h for h in hrefs if re.match(r"\s*(javascript|data|vbscript):", h, re.I)]
    assert "alert(document.domain)" not in html


def test_the_digest_mail_never_links_a_script_url(db):
    from django.template.loader import render_to_string

    from dailies.selectors import daily_entries

    paper = make_paper("mailed", abs_url="https://arxiv.org/abs/2610.00009")
    track = make_track()
    daily = make_daily(track=track, papers=[paper, make_paper("other")])
    Paper.objects.filter(pk=paper.pk).update(abs_url="JaVaScRiPt:alert(document.domain)")
    context = {
        "daily": daily,
        "track": track,
        "track_name": track.name_en,
        "entries": daily_entries(daily),
        "LANG": "en",
        "site_url": "https://paperdaily.example",
        "daily_url": "https://paperdaily.example/en/infra/2026-10-28/",
        "unsubscribe_url": "https://paperdaily.example/u/x/",
        "preferences_url": "https://paperdaily.example/p/x/",
    }
    for template in ("digest.html", "digest.txt"):
        mail = render_to_string(f"subscriptions/email/{template}", context)
        assert "alert(document.domain)" not in mail
        assert "/en/papers/mailed/" in mail or template == "digest.html"


def test_safe_url_keeps_its_verdicts_only_for_strings_a_url_could_be():
    from papers import validators

    validators._kept_verdict.cache_clear()
    assert validators.safe_url(" https://arxiv.org/abs/2410.00001 ") == (
        "https://arxiv.org/abs/2410.00001"
    )
    assert validators.safe_url("javascript:alert(1)") == ""
    assert validators._kept_verdict.cache_info().currsize == 2
    blob = "https://example.org/" + "a" * (2 * validators.URL_MAX_LENGTH)
    assert validators.safe_url(blob) == ""
    assert validators._kept_verdict.cache_info().currsize == 2


# --- Links as given -----------------------------------------------------------------------------


def _rss(*links: str) -> bytes:
    items = "".join(
        f"<item><title>Post {n}</title><link>{link}</link></item>"
        for n, link in enumerate(links, start=1)
    )
    return f'<rss version="2.0"><channel><title>Lab</title>{items}</channel></rss>'.encode()


def test_ingest_keeps_ports_and_schemes_as_given(db):
    links = [
        "https://lab.example:8443/p",
        "http://blog.example:8080/posts/1",
        "http://plain.example/post",
        "https://lab.example/p",  # the same path without the port is another page
    ]
    run = ingest_document(data=_rss(*links), fmt=Source.Kind.FEED, tracks=[], label="lab")
    assert run.status == IngestRun.Status.SUCCEEDED and run.new == 4, run.message
    stored = dict(Paper.objects.values_list("title", "abs_url"))
    assert stored == {f"Post {n}": link for n, link in enumerate(links, start=1)}
    # A default port and http/https still name one item.
    assert canonical_id(url="http://lab.example:80/p") == canonical_id(url="https://lab.example/p")
    assert canonical_id(url="https://lab.example:8443/p") == "url:https://lab.example:8443/p"


def test_ingest_still_drops_a_link_of_another_scheme_or_with_credentials(db):
    links = ["ftp://files.example:2121/p", "https://user:pw@lab.example:8443/p"]
    run = ingest_document(data=_rss(*links), fmt=Source.Kind.FEED, tracks=[], label="lab")
    assert run.new == 0 and len(run.rejected) == 2
    assert not Paper.objects.exists()


def test_the_arxiv_api_upgrades_only_arxiv_s_own_http_links():
    feed = parse_arxiv_api(
        _api_with_links("http://mirror.example:8080/abs/2610.00001v1", "http://arxiv.org/pdf/x")
    )
    (item,) = feed.items
    assert item.abs_url == "http://mirror.example:8080/abs/2610.00001v1"
    assert item.pdf_url == "https://arxiv.org/pdf/x"
