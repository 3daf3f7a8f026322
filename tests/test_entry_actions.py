"""Entries you can act on: links, byline, topic links, the system's name, and citations, on
the daily, index and paper pages."""

from __future__ import annotations

import re

import pytest

from dailies.templatetags.digest import BYLINE_AUTHORS, bibtex, byline, plain_citation
from papers.models import Paper
from tests.factories import make_daily, make_paper

# Pages are read as a browser reads them, whitespace collapsed (the templates' line breaks
# are djhtml's).

AUTHORS = ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra"]


def _arxiv_paper(slug: str = "coloc", **fields) -> Paper:
    return make_paper(
        slug,
        title="Cross-Modal Data Co-Locality for Heterogeneous Storage Systems",
        short_name="CoLoc",
        arxiv_id="2610.01234",
        authors=AUTHORS,
        topics=("storage",),
        **fields,
    )


def _block(html: str, slug: str) -> str:
    return html.split(f'id="{slug}"', 1)[1].split("</article>", 1)[0]


@pytest.mark.parametrize("url", ["/en/infra/2026-10-28/", "/en/papers/", "/en/papers/coloc/"])
def test_it_links_the_arxiv_abstract_and_pdf_everywhere(db, anonymous, url):
    make_daily(papers=[_arxiv_paper()])
    html = " ".join(anonymous.get(url).content.decode().split())
    assert 'href="https://arxiv.org/abs/2610.01234"' in html
    assert 'href="https://arxiv.org/pdf/2610.01234"' in html
    assert 'href="/en/topics/storage/"' in html
    assert "Ada Lovelace, Alan Turing, Grace Hopper et al." in html


def test_every_entry_of_a_published_daily_has_its_links(db, anonymous):
    papers = [
        _arxiv_paper("a1"),
        make_paper("d1", doi="10.1145/3600006.3613165"),
        make_paper("u1", abs_url="https://research.example.com/eic"),
    ]
    make_daily(papers=papers)
    html = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    entries = re.findall(r'<li class="entry[^"]*" id="[^"]+">.*?</article>', html, re.S)
    assert len(entries) == 3
    for entry in entries:
        assert re.search(r'<a class="ext-link link-\w+" href="https://', entry), entry[:200]
    assert 'href="https://doi.org/10.1145/3600006.3613165"' in html
    assert "No public link is known yet." not in html


def test_it_never_prints_an_unsafe_stored_link(db, anonymous):
    paper = make_paper("bad")
    Paper.objects.filter(pk=paper.pk).update(abs_url="javascript:alert(1)")
    make_daily(papers=[paper])
    html = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    assert "javascript:" not in html
    # Said once, in the daily's overview, not under the entry.
    assert "No public link is known yet" not in _block(html, "bad")
    assert "No public link is known yet for any paper of this daily." in html


def test_it_leads_the_title_with_the_short_name_where_the_title_lacks_it(db, anonymous):
    make_daily(papers=[make_paper("t1", title="Secure vector search", short_name="TrustANN")])
    html = " ".join(anonymous.get("/en/papers/").content.decode().split())
    assert "TrustANN: Secure vector search" in html


def test_the_byline_names_three_authors_then_et_al():
    assert byline(AUTHORS[:BYLINE_AUTHORS]) == "Ada Lovelace, Alan Turing, Grace Hopper"
    assert byline(AUTHORS) == "Ada Lovelace, Alan Turing, Grace Hopper et al."
    assert byline([]) == ""


def test_it_cites_in_bibtex_and_plain_text(db, anonymous):
    paper = _arxiv_paper(published_on="2026-10-20")
    paper.refresh_from_db()
    entry = bibtex(paper)
    assert entry.startswith("@misc{coloc2026,")
    assert "title = {{Cross-Modal Data Co-Locality" in entry
    assert "author = {Ada Lovelace and Alan Turing and Grace Hopper and Edsger Dijkstra}" in entry
    assert "eprint = {2610.01234}" in entry and "url = {https://arxiv.org/abs/2610.01234}" in entry
    assert plain_citation(paper) == (
        "Ada Lovelace, Alan Turing, Grace Hopper et al. (2026). Cross-Modal Data Co-Locality "
        "for Heterogeneous Storage Systems. arXiv:2610.01234."
    )
    make_daily(papers=[paper])
    html = " ".join(anonymous.get("/en/papers/coloc/").content.decode().split())
    assert '<details class="cite">' in html and "@misc{coloc2026," in html


def test_it_escapes_bibtex_specials(db):
    paper = make_paper("amp", title="Caches & Queues: 100% of {it}")
    assert "Caches \\& Queues: 100\\% of \\{it\\}" in bibtex(paper)
