"""``reverse()`` for the URLs that end in one slug, without the resolver on every call.

A list page links each of its items, and each item its topics, deep dive and code: a daily
page calls ``reverse()`` some fifty times, at 20–35 µs each. The URL of
``dailies:paper``, ``search:topic`` or ``deepdives:code`` is a prefix (language, section)
then a ``<slug:…>`` segment; the prefix is reversed once per view name, language, script
prefix and URLconf, and a slug the converter takes is appended. Any other slug goes
through ``reverse()``, so the result is always what ``reverse()`` gives.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache

from django.conf import settings
from django.urls import get_script_prefix, get_urlconf, reverse
from django.urls.converters import SlugConverter
from django.utils.translation import get_language

# A slug the <slug:> converter takes (and reverse() leaves as it is); any other goes through
# reverse(), which refuses it as before. An ISO date is one too (the daily's URL ends in one).
_PLAIN = re.compile(SlugConverter.regex)
# Stands for the last segment while the prefix is reversed: both a slug and an ISO date.
_SAMPLE = "2000-01-01"


@lru_cache(maxsize=512)
def _prefix(
    viewname: str, leading: tuple[str, ...], language: str | None, script: str, urlconf: str
) -> str | None:
    url = reverse(viewname, args=[*leading, _SAMPLE], urlconf=urlconf)
    suffix = f"/{_SAMPLE}/"
    return url[: -len(suffix) + 1] if url.endswith(suffix) else None


def slug_url(viewname: str, *args: str | dt.date) -> str:
    """``reverse(viewname, args=args)``, for a view whose URL ends in its last argument's
    segment: a ``<slug:…>`` given as a string, or a daily's ``<isodate:…>`` given as a date.
    The other arguments (a track's slug) are part of the prefix, kept per value."""
    *leading, last = args
    text = last.isoformat() if isinstance(last, dt.date) else last
    urlconf = get_urlconf() or settings.ROOT_URLCONF
    if _PLAIN.fullmatch(text) and isinstance(urlconf, str):
        prefix = _prefix(viewname, tuple(leading), get_language(), get_script_prefix(), urlconf)
        if prefix is not None:
            return f"{prefix}{text}/"
    return reverse(viewname, args=args)


@lru_cache(maxsize=1024)
def _plain(
    viewname: str, args: tuple[str, ...], language: str | None, script: str, urlconf: str
) -> str:
    return reverse(viewname, args=args, urlconf=urlconf)


def plain_url(viewname: str, *args: str) -> str:
    """``reverse(viewname, args=args)`` for a view without arguments (the site's sections a
    page's header and footer link) or with a few that recur on every page (a track's slug:
    its feeds), kept per arguments, language, script prefix and URLconf. An argument the
    ``<slug:>`` converter does not take goes through ``reverse()``, which refuses it."""
    urlconf = get_urlconf() or settings.ROOT_URLCONF
    if not isinstance(urlconf, str) or not all(map(_PLAIN.fullmatch, args)):
        return reverse(viewname, args=args)
    return _plain(viewname, args, get_language(), get_script_prefix(), urlconf)
