"""``reverse()`` for the URLs that end in one slug, without the resolver on every call.

A list page links each of its items, and each item its topics, deep dive and code: a daily
page calls ``reverse()`` some fifty times, at 20–35 µs each. The URL of
``dailies:paper``, ``search:topic`` or ``deepdives:code`` is a prefix (language, section)
then a ``<slug:…>`` segment; the prefix is reversed once per view name, language, script
prefix and URLconf, and a slug the converter takes is appended. Any other slug goes
through ``reverse()``, so the result is always what ``reverse()`` gives.
"""

from __future__ import annotations

import re
from functools import lru_cache

from django.conf import settings
from django.urls import get_script_prefix, get_urlconf, reverse
from django.urls.converters import SlugConverter
from django.utils.translation import get_language

# A slug the <slug:> converter takes (and reverse() leaves as it is); any other goes through
# reverse(), which refuses it as before.
_PLAIN = re.compile(SlugConverter.regex)
_SAMPLE = "slug-sample"


@lru_cache(maxsize=512)
def _prefix(viewname: str, language: str | None, script: str, urlconf: str) -> str | None:
    url = reverse(viewname, args=[_SAMPLE], urlconf=urlconf)
    suffix = f"/{_SAMPLE}/"
    return url[: -len(suffix) + 1] if url.endswith(suffix) else None


def slug_url(viewname: str, slug: str) -> str:
    """``reverse(viewname, args=[slug])``, for a view whose URL ends in ``<slug:…>/``."""
    urlconf = get_urlconf() or settings.ROOT_URLCONF
    if _PLAIN.fullmatch(slug) and isinstance(urlconf, str):
        prefix = _prefix(viewname, get_language(), get_script_prefix(), urlconf)
        if prefix is not None:
            return f"{prefix}{slug}/"
    return reverse(viewname, args=[slug])
