"""Citation metadata for reference managers: the Highwire ``citation_*`` meta tags of a
paper's page (what Google Scholar and Zotero's "Embedded Metadata" translator read), its RIS
record, and the COinS span (OpenURL ContextObject) lists print beside each paper.

Each reads only the paper's own fields and its venue (``select_related`` by the callers);
links are the paper's ``paper_links`` (the digest template tags', which call these), given
by the caller, so every URL is a public http(s) one.
"""

from __future__ import annotations

from urllib.parse import urlencode

from papers.models import Paper

# Venue statuses under which the paper is (to be) in the venue's proceedings; "submitted to"
# is no publication and is not cited as one.
CITED_VENUE_STATUSES = frozenset(
    {
        Paper.VenueStatus.ACCEPTED,
        Paper.VenueStatus.TO_APPEAR,
        Paper.VenueStatus.PUBLISHED,
    }
)


def _authors(paper: Paper) -> list[str]:
    return [str(a).strip() for a in paper.authors or [] if str(a).strip()]


def cited_venue(paper: Paper) -> str:
    """The venue the paper appears in, as a citation names it ("" when none is known)."""
    if paper.venue_id is None or paper.venue_status not in CITED_VENUE_STATUSES:
        return ""
    return paper.venue.full_name or str(paper.venue)


def _urls(links: list[dict]) -> dict[str, str]:
    return {link["kind"]: link["url"] for link in links}


def citation_meta(paper: Paper, links: list[dict]) -> list[tuple[str, str]]:
    """The Highwire Press tags as (name, content) pairs, one ``citation_author`` an author,
    in the order Google Scholar's inclusion guidelines list them."""
    tags = [("citation_title", paper.title)]
    tags += [("citation_author", name) for name in _authors(paper)]
    if paper.published_on:
        tags.append(("citation_publication_date", f"{paper.published_on:%Y/%m/%d}"))
    elif paper.venue_id and paper.venue.year:
        tags.append(("citation_publication_date", str(paper.venue.year)))
    venue = cited_venue(paper)
    if venue:
        tags.append(("citation_conference_title", venue))
    if paper.arxiv_id:
        tags.append(("citation_arxiv_id", paper.arxiv_id))
    if paper.doi:
        tags.append(("citation_doi", paper.doi))
    urls = _urls(links)
    if urls.get("abs"):
        tags.append(("citation_abstract_html_url", urls["abs"]))
    if urls.get("pdf"):
        tags.append(("citation_pdf_url", urls["pdf"]))
    return tags


def _ris_type(paper: Paper) -> str:
    if paper.kind != Paper.Kind.PAPER:
        return "ELEC"
    if cited_venue(paper):
        return "CPAPER"
    return "JOUR" if paper.arxiv_id else "GEN"


def _ris_line(tag: str, value: str) -> str:
    # A record is line-based: a value never spans lines.
    return f"{tag}  - {' '.join(str(value).split())}"


def ris(paper: Paper, links: list[dict]) -> str:
    """The paper as one RIS record (CRLF line ends, as the format's readers expect)."""
    lines = [_ris_line("TY", _ris_type(paper)), _ris_line("TI", paper.title)]
    lines += [_ris_line("AU", name) for name in _authors(paper)]
    if paper.published_on:
        lines += [
            _ris_line("PY", str(paper.published_on.year)),
            _ris_line("DA", f"{paper.published_on:%Y/%m/%d}"),
        ]
    elif paper.venue_id and paper.venue.year:
        lines.append(_ris_line("PY", str(paper.venue.year)))
    venue = cited_venue(paper)
    if venue:
        lines.append(_ris_line("T2", venue))
    elif paper.arxiv_id:
        lines.append(_ris_line("JO", f"arXiv preprint arXiv:{paper.arxiv_id}"))
    if paper.arxiv_id:
        lines.append(_ris_line("AN", f"arXiv:{paper.arxiv_id}"))
    if paper.doi:
        lines.append(_ris_line("DO", paper.doi))
    urls = _urls(links)
    if urls.get("abs"):
        lines.append(_ris_line("UR", urls["abs"]))
    if urls.get("pdf"):
        lines.append(_ris_line("L1", urls["pdf"]))
    if paper.abstract:
        lines.append(_ris_line("AB", paper.abstract))
    lines.append("ER  - ")
    return "\r\n".join(lines) + "\r\n"


def coins(paper: Paper, links: list[dict]) -> str:
    """The ``title`` of a COinS span (``<span class="Z3988" title="…">``): an OpenURL 1.0
    ContextObject in KEV form, a conference paper as a proceeding, else a preprint."""
    venue = cited_venue(paper)
    fields: list[tuple[str, str]] = [("ctx_ver", "Z39.88-2004")]
    if venue:
        fields += [
            ("rft_val_fmt", "info:ofi/fmt:kev:mtx:book"),
            ("rft.genre", "proceeding"),
            ("rft.atitle", paper.title),
            ("rft.btitle", venue),
        ]
    else:
        fields += [
            ("rft_val_fmt", "info:ofi/fmt:kev:mtx:journal"),
            ("rft.genre", "preprint" if paper.kind == Paper.Kind.PAPER else "document"),
            ("rft.atitle", paper.title),
        ]
        if paper.arxiv_id:
            fields.append(("rft.jtitle", "arXiv"))
    fields += [("rft.au", name) for name in _authors(paper)]
    if paper.published_on:
        fields.append(("rft.date", paper.published_on.isoformat()))
    if paper.arxiv_id:
        fields.append(("rft_id", f"info:arxiv/{paper.arxiv_id}"))
    if paper.doi:
        fields.append(("rft_id", f"info:doi/{paper.doi}"))
    abs_url = _urls(links).get("abs")
    if abs_url:
        fields.append(("rft_id", abs_url))
    return urlencode(fields)
