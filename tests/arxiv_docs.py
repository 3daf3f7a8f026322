"""Builders of arXiv API documents (the 2026 format) for tests and benchmarks."""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import escape


@dataclass
class Entry:
    arxiv_id: str
    version: int = 1
    title: str = "A title"
    summary: str = "An abstract about KV cache serving."
    authors: list[tuple[str, str]] = field(default_factory=lambda: [("Ada Lovelace", "")])
    categories: tuple[str, ...] = ("cs.DC", "cs.LG")
    comment: str = ""
    journal_ref: str = ""
    doi: str = ""
    published: str = "2026-10-27T17:59:59Z"
    updated: str = ""


def entry_xml(e: Entry) -> str:
    authors = "".join(
        f"<author><name>{escape(name)}</name>"
        + (f"<arxiv:affiliation>{escape(aff)}</arxiv:affiliation>" if aff else "")
        + "</author>"
        for name, aff in e.authors
    )
    cats = "".join(
        f'<category term="{c}" scheme="http://arxiv.org/schemas/atom"/>' for c in e.categories
    )
    extra = ""
    if e.comment:
        extra += f"<arxiv:comment>{escape(e.comment)}</arxiv:comment>"
    if e.journal_ref:
        extra += f"<arxiv:journal_ref>{escape(e.journal_ref)}</arxiv:journal_ref>"
    if e.doi:
        extra += f"<arxiv:doi>{escape(e.doi)}</arxiv:doi>"
    vid = f"{e.arxiv_id}v{e.version}"
    return (
        f"<entry><id>http://arxiv.org/abs/{vid}</id>"
        f"<title>{escape(e.title)}</title><updated>{e.updated or e.published}</updated>"
        f'<link href="https://arxiv.org/abs/{vid}" rel="alternate" type="text/html"/>'
        f'<link href="https://arxiv.org/pdf/{vid}" rel="related" type="application/pdf" '
        f'title="pdf"/><summary>{escape(e.summary)}</summary>{cats}'
        f"<published>{e.published}</published>{extra}"
        f'<arxiv:primary_category term="{e.categories[0]}"/>{authors}</entry>'
    )


def api_page(entries: list[Entry], *, total: int | None = None, start: int = 0) -> bytes:
    total = len(entries) if total is None else total
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom" '
        'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom">'
        "<id>https://arxiv.org/api/test</id><title>arXiv Query</title>"
        "<updated>2026-10-28T00:00:00Z</updated>"
        f"<opensearch:itemsPerPage>{max(len(entries), 1)}</opensearch:itemsPerPage>"
        f"<opensearch:totalResults>{total}</opensearch:totalResults>"
        f"<opensearch:startIndex>{start}</opensearch:startIndex>"
        + "".join(entry_xml(e) for e in entries)
        + "</feed>"
    ).encode()


def numbered(count: int, *, first: int = 1, version: int = 1, prefix: str = "2610") -> list[Entry]:
    return [
        Entry(
            arxiv_id=f"{prefix}.{n:05d}",
            version=version,
            title=f"Paper {n} on serving",
            summary=f"Abstract {n}: KV cache and scheduling.",
        )
        for n in range(first, first + count)
    ]
