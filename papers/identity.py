"""Canonical identity of a research item: arXiv id without version, else DOI, else a
normalised URL, else (for items typed in by hand with no identifier) the normalised title."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit, urlunsplit

_ARXIV_NEW = re.compile(r"^(\d{4}\.\d{4,5})(v\d+)?$")
_ARXIV_OLD = re.compile(r"^([a-z\-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?$")


def normalise_title(title: str) -> str:
    text = unicodedata.normalize("NFKC", title).casefold()
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalise_url(url: str) -> str:
    """The URL as an identity, never as a link to store: http and https name one page, but
    a port other than its scheme's default names another."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower().removeprefix("www.")
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address
    try:
        port = parts.port
    except ValueError:  # out of range: ingest refuses such a link before it gets here
        port = None
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme.lower()):
        host = f"{host}:{port}"
    path = parts.path.rstrip("/") or "/"
    return urlunsplit(("https", host, path, parts.query, ""))


def canonical_id(*, arxiv_id: str = "", doi: str = "", url: str = "", title: str = "") -> str:
    if arxiv_id:
        match = _ARXIV_NEW.match(arxiv_id.strip()) or _ARXIV_OLD.match(arxiv_id.strip())
        if not match:
            raise ValueError(f"not an arXiv identifier: {arxiv_id!r}")
        return f"arxiv:{match.group(1)}"
    if doi:
        return f"doi:{doi.strip().lower().removeprefix('https://doi.org/')}"
    if url:
        return f"url:{normalise_url(url)}"
    if title.strip():
        return f"title:{normalise_title(title)}"
    raise ValueError("an item needs an arXiv id, a DOI, a URL or a title")
