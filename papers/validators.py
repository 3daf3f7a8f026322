"""URLs are data, never markup: one definition of a URL we may store and link to.

A stored URL ends up in an ``href``. Only public ``http``/``https`` addresses with a host and
no credentials qualify; ``javascript:``, ``data:``, ``vbscript:`` and their disguises
(``JaVaScRiPt:``, `` javascript:``, ``java\\tscript:`` — browsers drop tabs and newlines
inside a URL) never do. Ingest drops such links, model fields refuse them, and templates
print links through :func:`safe_url` as a second guard.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.utils.deconstruct import deconstructible
from django.utils.translation import gettext_lazy as _

# The longest URL a Paper stores (its abs_url/pdf_url columns are this wide).
URL_MAX_LENGTH = 500
SCHEMES = ("http", "https")
# Control, format (zero-width, bidi overrides) and separator characters: never part of a URL
# we store; a browser ignores some of them inside a scheme, so they could smuggle one in.
_INVISIBLE = {"Cc", "Cf", "Zs", "Zl", "Zp"}


def url_problem(value: str, *, max_length: int = URL_MAX_LENGTH) -> str:
    """Why ``value`` is not a public http(s) URL we may store and link to; "" when it is."""
    value = value.strip()
    if len(value) > max_length:
        return f"it is {len(value)} characters; the limit is {max_length}"
    if any(unicodedata.category(char) in _INVISIBLE for char in value):
        return "it contains whitespace or control characters"
    scheme = value.split(":", 1)[0].lower() if ":" in value else ""
    if scheme not in SCHEMES:
        shown = f"{scheme[:20]}:" if scheme else "no scheme"
        return f"only http and https links are allowed, not {shown}"
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        return "it is not a well-formed URL"
    if "@" in parts.netloc:
        return "it carries credentials (user:password@)"
    if not parts.hostname:
        return "it has no host"
    return ""


@deconstructible
class PublicURLValidator:
    """A Django validator for model and form fields (the message says what is wrong)."""

    code = "unsafe_url"

    def __init__(self, max_length: int = URL_MAX_LENGTH) -> None:
        self.max_length = max_length

    def __call__(self, value: str) -> None:
        problem = url_problem(str(value), max_length=self.max_length)
        if problem:
            raise ValidationError(
                _("Enter a public http(s) link: %(problem)s."),
                code=self.code,
                params={"problem": problem},
            )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PublicURLValidator) and other.max_length == self.max_length


validate_public_url = PublicURLValidator()


def safe_url(value: str | None) -> str:
    """``value`` stripped when it is a public http(s) URL, else "" (for printing an href)."""
    if not value:
        return ""
    value = str(value)
    # Kept per string: pages print the same stored links on every render (an index page
    # some ninety, each checked character by character). A string longer than twice any URL
    # we accept is refused whatever it holds, and not kept.
    return _kept_verdict(value) if len(value) <= 2 * URL_MAX_LENGTH else _verdict(value)


def _verdict(value: str) -> str:
    return value.strip() if not url_problem(value) else ""


_kept_verdict = lru_cache(maxsize=4096)(_verdict)
