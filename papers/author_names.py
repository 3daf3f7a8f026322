"""How a written author name is normalised (``author_key``) and which URL word it gets
(``author_slug``): pure functions, shared by the services and the migrations."""

from __future__ import annotations

import hashlib
import re
import unicodedata

# Bounds of an author's stored name and key (a longer one is cut, not refused) and slug.
AUTHOR_NAME_MAX_LENGTH = 200
AUTHOR_SLUG_MAX_LENGTH = 120
# Letters NFKD does not take apart into a base letter and a mark.
_FOLD = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "ı": "i"})
_WORDS = re.compile(r"[^\W_]+")
_ASCII_KEY = re.compile(r"[a-z0-9 ]+")


def author_key(name: str) -> str:
    """``name`` normalised: "Last, First" turned round, accents and case folded, punctuation
    and spacing reduced to single spaces ('' for a name without letters)."""
    text = unicodedata.normalize("NFKC", str(name)).strip()
    if text.count(",") == 1:
        last, first = (part.strip() for part in text.split(","))
        if first and last:
            text = f"{first} {last}"
    decomposed = unicodedata.normalize("NFKD", text.casefold().translate(_FOLD))
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(_WORDS.findall(bare))[:AUTHOR_NAME_MAX_LENGTH].strip()


def author_slug(key: str) -> str:
    """The URL word of the author with ``key``, worked out from it alone so that a page can
    link a name without a query. A Latin key is itself with hyphens; any other (or a
    long one) is a digest, marked by a double hyphen no Latin key has."""
    if _ASCII_KEY.fullmatch(key) and len(key) <= AUTHOR_SLUG_MAX_LENGTH:
        return key.replace(" ", "-")
    return "x--" + hashlib.sha256(key.encode()).hexdigest()[:16]


def author_name_slug(name: str) -> str:
    """The slug of the author a written name links to ('' for a name without letters)."""
    key = author_key(name)
    return author_slug(key) if key else ""
