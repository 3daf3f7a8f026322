"""HTTP caching of public pages: validators, 304s, Cache-Control, Vary and compression."""

from __future__ import annotations

import datetime as dt
import gzip

import brotli
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dailies.models import Daily
from dailies.services import daily_unpublish
from papers.drafting.edits import summary_edit
from tests.factories import make_daily, make_paper

DAILY = "/en/infra/2026-10-28/"


@pytest.fixture
def daily(db):
    return make_daily(papers=[make_paper("kv-paper", topics=("kv",)), make_paper()])


def test_it_answers_304_to_the_current_etag_and_200_to_a_stale_one(daily, anonymous, editor):
    first = anonymous.get(DAILY)
    etag = first["ETag"]
    assert etag.startswith('W/"')
    not_modified = anonymous.get(DAILY, HTTP_IF_NONE_MATCH=etag)
    assert not_modified.status_code == 304 and not_modified.content == b""
    assert not_modified["ETag"] == etag and "public" in not_modified["Cache-Control"]
    summary = daily.entries.get(position=1).paper.summaries.get(language="en")
    summary_edit(summary=summary, user=editor, body="A corrected summary. Takeaway sentence here.")
    fresh = anonymous.get(DAILY, HTTP_IF_NONE_MATCH=etag)
    assert fresh.status_code == 200 and fresh["ETag"] != etag
    assert b"A corrected summary." in fresh.content


def test_a_page_is_validated_by_its_etag_alone(daily, anonymous):
    # Its render time cannot tell apart two copies made within one second.
    first = anonymous.get(DAILY)
    assert "Last-Modified" not in first
    daily_unpublish(daily=daily, user=None)
    since = "Thu, 01 Jan 2099 00:00:00 GMT"
    assert anonymous.get("/en/infra/", HTTP_IF_MODIFIED_SINCE=since).status_code == 200


def test_it_answers_304_without_rendering_when_the_page_is_stored(daily, anonymous):
    etag = anonymous.get("/en/papers/")["ETag"]
    with CaptureQueriesContext(connection) as queries:
        assert anonymous.get("/en/papers/", HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert len(queries) == 0


def test_it_gives_each_url_its_own_etag(daily, anonymous):
    assert anonymous.get(DAILY)["ETag"] != anonymous.get("/en/papers/")["ETag"]
    assert anonymous.get(DAILY)["ETag"] != anonymous.get("/zh/infra/2026-10-28/")["ETag"]


def test_it_sends_public_cache_control_to_anonymous_readers(daily, anonymous, settings):
    control = anonymous.get(DAILY)["Cache-Control"]
    assert set(control.replace(" ", "").split(",")) == {
        "public",
        f"max-age={settings.PAGE_CACHE_MAX_AGE}",
        f"stale-while-revalidate={settings.PAGE_CACHE_STALE_WHILE_REVALIDATE}",
    }


def test_it_sends_private_no_store_to_staff_and_previews(db, editor_client):
    make_daily()
    make_daily(date=dt.date(2026, 10, 29), status=Daily.Status.DRAFT)  # a preview
    for url in (DAILY, "/en/infra/2026-10-29/", "/en/papers/"):
        response = editor_client.get(url)
        assert response.status_code == 200
        directives = set(response["Cache-Control"].replace(" ", "").split(","))
        assert {"private", "no-store"} <= directives and "public" not in directives
        assert "ETag" not in response


def _vary(response) -> set[str]:
    return {v.strip().lower() for v in response.get("Vary", "").split(",") if v.strip()}


def test_it_varies_on_cookie_only_where_the_page_depends_on_it(daily, anonymous):
    # HTML pages follow the reader's theme cookie; feeds are the same for everyone.
    assert _vary(anonymous.get(DAILY)) == {"accept-encoding", "cookie"}
    assert _vary(anonymous.get("/en/papers/")) == {"accept-encoding", "cookie"}
    assert _vary(anonymous.get("/en/feeds/infra.atom")) == {"accept-encoding"}


@pytest.mark.parametrize(
    ("url", "content_type"),
    [
        (DAILY, "text/html"),
        ("/en/papers/", "text/html"),
        ("/api/v1/papers/", "application/json"),
        ("/en/feeds/infra.atom", "application/atom+xml"),
        ("/sitemap.xml", "application/xml"),
    ],
)
def test_it_compresses_with_brotli_or_gzip_as_the_client_accepts(
    daily, anonymous, url, content_type
):
    plain = anonymous.get(url)
    assert "Content-Encoding" not in plain
    assert plain["Content-Type"].startswith(content_type)
    for encoding, decompress in (("br", brotli.decompress), ("gzip", gzip.decompress)):
        for _ in range(2):  # rendered, then from the cache: the stored variant
            response = anonymous.get(url, HTTP_ACCEPT_ENCODING=f"{encoding}, identity")
            assert response["Content-Encoding"] == encoding
            assert int(response["Content-Length"]) == len(response.content)
            assert len(response.content) < len(plain.content)
            assert decompress(response.content) == plain.content
            assert response["ETag"] == plain["ETag"]
    preferred = anonymous.get(url, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert preferred["Content-Encoding"] == "br"
    refused = anonymous.get(url, HTTP_ACCEPT_ENCODING="br;q=0, gzip")
    assert refused["Content-Encoding"] == "gzip"


def test_it_gzips_staff_pages_but_never_with_brotli(daily, editor_client):
    response = editor_client.get(DAILY, HTTP_ACCEPT_ENCODING="br, gzip")
    assert response["Content-Encoding"] == "gzip"
    assert b"kv-paper" in gzip.decompress(response.content)


def test_a_personal_response_is_gzipped_per_request_with_random_padding(daily, editor_client):
    """Compressed for this request only (GZIP_LEVEL_PER_REQUEST), with a random-length name
    in the gzip header against BREACH, as Django pads it: the lengths vary."""
    bodies = [editor_client.get(DAILY, HTTP_ACCEPT_ENCODING="gzip").content for _ in range(6)]
    assert all(body[3] & gzip.FNAME for body in bodies)
    assert len({gzip.decompress(body) for body in bodies}) == 1
    assert len({len(body) for body in bodies}) > 1
