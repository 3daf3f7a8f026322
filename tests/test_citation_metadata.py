"""Citation metadata: the paper page's Highwire ``citation_*`` tags read back as Zotero's
"Embedded Metadata" translator reads them (meta elements by name), its BibTeX and RIS files,
and the COinS span beside each paper of a list."""

from __future__ import annotations

import datetime as dt
from urllib.parse import parse_qs

import pytest
from lxml import html as lxml_html

from dailies.models import Daily
from papers.models import Paper, Venue
from tests.factories import make_daily, make_paper

AUTHORS = ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra"]


def _paper(slug: str = "coloc", **fields) -> Paper:
    return make_paper(
        slug,
        title="Cross-Modal Data Co-Locality for Heterogeneous Storage Systems",
        short_name="CoLoc",
        arxiv_id="2610.01234",
        authors=AUTHORS,
        published_on=dt.date(2026, 10, 21),
        **fields,
    )


def _accepted(slug: str = "coloc") -> Paper:
    venue = Venue.objects.create(
        slug="nsdi-2027", short_name="NSDI", year=2027, full_name="NSDI 2027"
    )
    return _paper(
        slug,
        venue=venue,
        venue_status=Paper.VenueStatus.ACCEPTED,
        doi="10.1/xyz",
        topics=("storage",),
    )


def embedded_metadata(page: bytes) -> dict[str, list[str]]:
    """What Zotero's Embedded Metadata translator collects: every ``meta`` element's
    ``content`` under its ``name`` (a name may repeat: one author a tag)."""
    tags: dict[str, list[str]] = {}
    for meta in lxml_html.fromstring(page).iter("meta"):
        name = meta.get("name") or ""
        if name.startswith("citation_"):
            tags.setdefault(name, []).append(meta.get("content"))
    return tags


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_it_reads_the_citation_tags_back_from_the_paper_page(db, anonymous, lang):
    make_daily(papers=[_accepted()])
    response = anonymous.get(f"/{lang}/papers/coloc/")
    assert response.status_code == 200
    tags = embedded_metadata(response.content)
    assert tags == {
        "citation_title": ["Cross-Modal Data Co-Locality for Heterogeneous Storage Systems"],
        "citation_author": AUTHORS,
        "citation_publication_date": ["2026/10/21"],
        "citation_conference_title": ["NSDI 2027"],
        "citation_arxiv_id": ["2610.01234"],
        "citation_doi": ["10.1/xyz"],
        "citation_abstract_html_url": ["https://arxiv.org/abs/2610.01234"],
        "citation_pdf_url": ["https://arxiv.org/pdf/2610.01234"],
    }


def test_it_names_no_venue_for_a_paper_only_submitted_to_one(db, anonymous):
    venue = Venue.objects.create(slug="osdi-2027", short_name="OSDI", year=2027)
    make_daily(papers=[_paper(venue=venue, venue_status=Paper.VenueStatus.SUBMITTED)])
    tags = embedded_metadata(anonymous.get("/en/papers/coloc/").content)
    assert "citation_conference_title" not in tags
    assert tags["citation_arxiv_id"] == ["2610.01234"]


def test_it_escapes_what_the_tags_carry(db, anonymous):
    make_daily(papers=[make_paper("quotes", title='The "Fast" <Path> & more', authors=["A B"])])
    tags = embedded_metadata(anonymous.get("/en/papers/quotes/").content)
    assert tags["citation_title"] == ['The "Fast" <Path> & more']


def test_it_downloads_bibtex(db, anonymous):
    make_daily(papers=[_accepted()])
    response = anonymous.get("/en/papers/coloc/cite.bib")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-bibtex")
    assert response["Content-Disposition"] == 'attachment; filename="coloc.bib"'
    body = response.content.decode()
    assert body.startswith("@inproceedings{coloc2026,")
    assert "author = {Ada Lovelace and Alan Turing and Grace Hopper and Edsger Dijkstra}" in body
    assert "booktitle = {NSDI 2027}" in body
    assert "eprint = {2610.01234}" in body


def _ris_fields(body: str) -> list[tuple[str, str]]:
    """RIS as its readers parse it: ``TAG  - value`` a line."""
    return [(line[:2], line[6:]) for line in body.split("\r\n") if line]


def test_it_downloads_ris(db, anonymous):
    make_daily(papers=[_accepted()])
    response = anonymous.get("/zh/papers/coloc/cite.ris")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-research-info-systems")
    fields = _ris_fields(response.content.decode())
    assert fields[0] == ("TY", "CPAPER")
    assert fields[-1] == ("ER", "")
    assert [v for k, v in fields if k == "AU"] == AUTHORS
    by_tag = dict(fields)
    assert by_tag["TI"] == "Cross-Modal Data Co-Locality for Heterogeneous Storage Systems"
    assert by_tag["T2"] == "NSDI 2027"
    assert by_tag["DA"] == "2026/10/21"
    assert by_tag["DO"] == "10.1/xyz"
    assert by_tag["L1"] == "https://arxiv.org/pdf/2610.01234"


def test_it_writes_an_arxiv_preprint_as_a_journal_record_with_the_arxiv_id(db, anonymous):
    make_daily(papers=[_paper(abstract="Line one.\nLine two.")])
    fields = _ris_fields(anonymous.get("/en/papers/coloc/cite.ris").content.decode())
    by_tag = dict(fields)
    assert by_tag["TY"] == "JOUR"
    assert by_tag["JO"] == "arXiv preprint arXiv:2610.01234"
    assert by_tag["AB"] == "Line one. Line two."  # a value stays on its line


@pytest.mark.parametrize("suffix", ["cite.bib", "cite.ris"])
def test_it_refuses_the_citation_of_an_unpublished_paper(db, anonymous, suffix):
    make_daily(papers=[_paper()], status=Daily.Status.DRAFT)
    assert anonymous.get("/en/papers/coloc/").status_code == 404
    assert anonymous.get(f"/en/papers/coloc/{suffix}").status_code == 404


def _coins(page: bytes) -> list[dict[str, list[str]]]:
    return [
        parse_qs(span.get("title"))
        for span in lxml_html.fromstring(page).find_class("Z3988")
        if span.tag == "span"
    ]


@pytest.mark.parametrize("url", ["/en/infra/2026-10-28/", "/zh/papers/", "/en/topics/storage/"])
def test_it_prints_a_coins_span_for_each_paper_of_a_list(db, anonymous, url):
    make_daily(papers=[_accepted(), make_paper("second", topics=("storage",))])
    spans = _coins(anonymous.get(url).content)
    coloc = next(s for s in spans if "info:arxiv/2610.01234" in s["rft_id"])
    assert coloc["ctx_ver"] == ["Z39.88-2004"]
    assert coloc["rft_val_fmt"] == ["info:ofi/fmt:kev:mtx:book"]
    assert coloc["rft.genre"] == ["proceeding"]
    assert coloc["rft.atitle"] == ["Cross-Modal Data Co-Locality for Heterogeneous Storage Systems"]
    assert coloc["rft.btitle"] == ["NSDI 2027"]
    assert coloc["rft.au"] == AUTHORS
    assert coloc["rft.date"] == ["2026-10-21"]
    assert "info:doi/10.1/xyz" in coloc["rft_id"]
    assert len(spans) == 2


def test_it_prints_a_preprint_coins_for_an_arxiv_paper(db, anonymous):
    make_daily(papers=[_paper()])
    (coins,) = _coins(anonymous.get("/en/infra/2026-10-28/").content)
    assert coins["rft_val_fmt"] == ["info:ofi/fmt:kev:mtx:journal"]
    assert coins["rft.genre"] == ["preprint"]
    assert coins["rft.jtitle"] == ["arXiv"]
