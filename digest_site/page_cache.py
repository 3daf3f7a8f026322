"""Public pages served from the cache, compressed and conditional — about the cost of a
static file.

``PageCacheMiddleware`` sits right after WhiteNoise, before sessions, CSRF and auth. For an
anonymous reader (no session or messages cookie, no ``Authorization`` header) asking for a
public page, it answers from the cache: one round trip fetches the content version and the
stored response, already compressed for the client. On a miss it lets the page render and,
if the response is public (200, no Set-Cookie, not private/no-store, varying on nothing
personal), stores it in identity, gzip and brotli forms under the URL, the language and the
content version (``digest_site.content``). Bumping the version retires every stored page.

Every public response gets ``Cache-Control: public, max-age=…, stale-while-revalidate=…``,
a weak ETag and a Last-Modified derived from the version and the URL, and a 304 when the
client already holds it. Requests with a session get ``private, no-store`` and are never
served from or stored in the cache. When the cache is unreachable pages render uncached; the
middleware then leaves the cache alone for ``PAGE_CACHE_RETRY_S`` seconds.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import time
from collections.abc import Callable
from urllib.parse import parse_qsl, urlencode

import brotli
from django.conf import settings
from django.contrib.messages.storage.cookie import CookieStorage
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseNotModified
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.http import http_date, parse_etags, parse_http_date_safe
from django.utils.text import compress_string
from django.utils.translation import get_language_from_request

from digest_site.content import (
    VERSION_KEY,
    content_version_bump,
    content_version_init,
    version_time_ns,
)

log = logging.getLogger(__name__)

# Content types worth compressing (their main type, or the whole type).
COMPRESSIBLE = ("text/", "application/json", "application/xml", "image/svg+xml")
COMPRESSIBLE_SUFFIXES = ("+xml", "+json")
# Below this a compressed body is no smaller than its headers.
MIN_COMPRESS_BYTES = 200
GZIP_LEVEL = 6
# Quality 5 compresses a 20 KB page in ~2 ms with 95% of quality 11's gain (measured).
BROTLI_QUALITY = 5
# Django's GZipMiddleware pads personal responses (CSRF tokens) against BREACH the same way.
GZIP_RANDOM_BYTES = 100
ENCODINGS = ("br", "gzip", "")
# Headers the middleware sets itself on every stored response.
_OWN_HEADERS = {"content-length", "content-encoding", "etag", "last-modified", "cache-control"}
# What a public page may vary on: the encoding, the language and — only when the session
# was read (staff see previews) and the request had none — the cookie. DRF adds Accept,
# but the API renders JSON only.
_PUBLIC_VARY = {"accept-encoding", "accept-language", "accept"}
_UNCACHEABLE_DIRECTIVES = ("private", "no-store", "no-cache", "max-age=0")


def _cacheable_prefixes() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Paths whose GET responses may be cached, and the exceptions (forms, tokens)."""
    languages = [code for code, _name in settings.LANGUAGES]
    allowed = (*(f"/{code}/" for code in languages), "/sitemap", "/robots.txt", "/api/")
    excluded = tuple(f"/{code}/subscribe/" for code in languages)
    return allowed, excluded


def accepted_encodings(header: str) -> set[str]:
    """The encodings an Accept-Encoding header allows (q=0 refuses one)."""
    accepted = set()
    for part in header.lower().split(","):
        name, _sep, params = part.partition(";")
        params = params.replace(" ", "")
        if params.startswith("q=") and params[2:] in ("0", "0.0", "0.00", "0.000"):
            continue
        accepted.add(name.strip())
    if "*" in accepted:
        accepted.update(ENCODINGS[:-1])
    return accepted


def accepted_encoding(header: str) -> str:
    """The best encoding the client accepts: ``br``, ``gzip`` or ``""`` (identity)."""
    accepted = accepted_encodings(header)
    return next((encoding for encoding in ENCODINGS[:-1] if encoding in accepted), "")


def is_compressible(content_type: str) -> bool:
    main = content_type.split(";", 1)[0].strip().lower()
    return main.startswith(COMPRESSIBLE) or main.endswith(COMPRESSIBLE_SUFFIXES)


def compressed(body: bytes, encoding: str) -> bytes:
    if encoding == "br":
        return brotli.compress(body, quality=BROTLI_QUALITY, mode=brotli.MODE_TEXT)
    if encoding == "gzip":
        return gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)
    return body


class PageCacheMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.allowed, self.excluded = _cacheable_prefixes()
        self.languages = {code for code, _name in settings.LANGUAGES}
        # The version this process saw last: a hit asks for it and the page in one trip.
        self.last_version: str | None = None
        self.cache_down_until = 0.0

    # -- the request ---------------------------------------------------------------------

    def _anonymous(self, request: HttpRequest) -> bool:
        cookies = request.COOKIES
        return (
            settings.SESSION_COOKIE_NAME not in cookies
            and CookieStorage.cookie_name not in cookies
            and "HTTP_AUTHORIZATION" not in request.META
        )

    def _cacheable_request(self, request: HttpRequest) -> bool:
        path = request.path
        return (
            settings.PAGE_CACHE_ENABLED
            and request.method in ("GET", "HEAD")
            and path.startswith(self.allowed)
            and not path.startswith(self.excluded)
            and len(request.META.get("QUERY_STRING", "")) <= settings.PAGE_CACHE_MAX_QUERY
            and self._anonymous(request)
        )

    def page_key(self, request: HttpRequest) -> str:
        """URL (path and normalised query), language and the cookies pages read (the
        theme), hashed to a fixed length."""
        query = urlencode(sorted(parse_qsl(request.META.get("QUERY_STRING", ""), True)))
        prefix = request.path.split("/", 2)[1]
        language = prefix if prefix in self.languages else get_language_from_request(request)
        cookies = "|".join(
            request.COOKIES.get(name, "") for name in settings.PAGE_CACHE_KEY_COOKIES
        )
        material = f"{request.path}?{query}|{language}|{cookies}".encode()
        return hashlib.blake2b(material, digest_size=16).hexdigest()

    @staticmethod
    def _stored_key(version: str, key: str, encoding: str) -> str:
        return f"page:{version}:{key}:{encoding or 'identity'}"

    # -- the cache, which may be down ----------------------------------------------------

    def _cache_usable(self) -> bool:
        return time.monotonic() >= self.cache_down_until

    def _cache_failed(self, what: str, error: Exception) -> None:
        self.cache_down_until = time.monotonic() + settings.PAGE_CACHE_RETRY_S
        log.warning("page cache: %s failed (%s); rendering uncached", what, error)

    def _lookup(self, key: str, encoding: str) -> tuple[str | None, tuple | None]:
        """The content version and the stored response for ``key`` (either may be None)."""
        if not self._cache_usable():
            return None, None
        try:
            last = self.last_version
            wanted = [VERSION_KEY] + ([self._stored_key(last, key, encoding)] if last else [])
            found = cache.get_many(wanted)
            version = found.get(VERSION_KEY) or content_version_init()
            if version == last:
                return version, found.get(wanted[-1])
            self.last_version = version
            return version, cache.get(self._stored_key(version, key, encoding))
        except Exception as error:  # any cache error means "render uncached"
            self._cache_failed("reading", error)
            return None, None

    def _store(self, version: str, key: str, entries: dict[str, tuple]) -> None:
        if not self._cache_usable():
            return
        try:
            cache.set_many(
                {self._stored_key(version, key, enc): entry for enc, entry in entries.items()},
                settings.PAGE_CACHE_TIMEOUT,
            )
        except Exception as error:  # the cache is down: render uncached
            self._cache_failed("storing", error)

    # -- the response --------------------------------------------------------------------

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if not self._cacheable_request(request):
            response = self.get_response(request)
            return self._finish_uncacheable(request, response)
        key = self.page_key(request)
        encoding = accepted_encoding(request.META.get("HTTP_ACCEPT_ENCODING", ""))
        version, entry = self._lookup(key, encoding)
        if entry is not None:
            return self._respond(request, entry)
        response = self.get_response(request)
        if not self._is_public(request, response):
            return self._finish_uncacheable(request, response)
        entries = self._entries(response, version or "", key)
        if version is not None and request.method == "GET":
            self._store(version, key, entries)
        return self._respond(request, entries.get(encoding) or entries[""])

    def _is_public(self, request: HttpRequest, response: HttpResponseBase) -> bool:
        """A response any anonymous reader may get: nothing personal, nothing secret."""
        if response.status_code != 200 or response.streaming or response.cookies:
            return False
        if response.has_header("Content-Encoding"):
            return False
        if len(response.content) > settings.PAGE_CACHE_MAX_BYTES:
            return False
        control = response.get("Cache-Control", "").lower()
        if any(directive in control for directive in _UNCACHEABLE_DIRECTIVES):
            return False
        vary = {v.strip().lower() for v in response.get("Vary", "").split(",") if v.strip()}
        session = getattr(request, "session", None)
        if "cookie" in vary and session is not None and session.accessed:
            # The session was read (a staff check) but the request had none: this is the
            # page every cookieless reader gets.
            vary.discard("cookie")
        return vary <= _PUBLIC_VARY

    def _entries(self, response: HttpResponseBase, version: str, key: str) -> dict[str, tuple]:
        """The response as stored: (status, headers, body, etag, version time) per encoding."""
        body = response.content
        # Without a version (the cache is down) nothing can tell a client its copy is current.
        etag = None
        if version:
            digest = hashlib.blake2b(f"{version}|{key}".encode(), digest_size=12).hexdigest()
            etag = f'W/"{digest}"'
        patch_cache_control(
            response,
            public=True,
            max_age=settings.PAGE_CACHE_MAX_AGE,
            stale_while_revalidate=settings.PAGE_CACHE_STALE_WHILE_REVALIDATE,
        )
        if settings.PAGE_CACHE_KEY_COOKIES and response.get("Content-Type", "").startswith(
            "text/html"
        ):
            # An HTML page depends on those cookies (the theme), so must a browser's or proxy's
            # copy: after a toggle the reader gets the page in the new theme, not the old one.
            patch_vary_headers(response, ("Cookie",))
        compress = is_compressible(response.get("Content-Type", "")) and (
            len(body) >= MIN_COMPRESS_BYTES
        )
        if compress:
            patch_vary_headers(response, ("Accept-Encoding",))
        headers = [
            (name, value) for name, value in response.items() if name.lower() not in _OWN_HEADERS
        ]
        headers.append(("Cache-Control", response["Cache-Control"]))
        modified_ns = version_time_ns(version) if version else None
        entries = {}
        for encoding in ENCODINGS if compress else ("",):
            own = [("Content-Encoding", encoding)] if encoding else []
            entries[encoding] = (
                response.status_code,
                headers + own,
                compressed(body, encoding),
                etag,
                modified_ns,
            )
        return entries

    def _respond(self, request: HttpRequest, entry: tuple) -> HttpResponseBase:
        status, headers, body, etag, modified_ns = entry
        last_modified = None
        if modified_ns is not None and modified_ns <= time.time_ns():
            # A version made in a burst may be dated a little ahead; never claim the future.
            last_modified = modified_ns // 1_000_000_000
        if etag is not None and self._not_modified(request, etag, last_modified):
            response = HttpResponseNotModified()
            for name, value in headers:
                if name.lower() in ("cache-control", "vary", "content-language"):
                    response[name] = value
        else:
            response = HttpResponse(b"" if request.method == "HEAD" else body, status=status)
            for name, value in headers:
                response[name] = value
            response["Content-Length"] = str(len(body))
        if etag is not None:
            response["ETag"] = etag
        if last_modified is not None:
            response["Last-Modified"] = http_date(last_modified)
        return response

    @staticmethod
    def _not_modified(request: HttpRequest, etag: str, last_modified: int | None) -> bool:
        if_none_match = request.META.get("HTTP_IF_NONE_MATCH")
        if if_none_match is not None:
            tags = parse_etags(if_none_match)
            bare = etag.removeprefix("W/")
            return "*" in tags or any(t.removeprefix("W/") == bare for t in tags)
        since = parse_http_date_safe(request.META.get("HTTP_IF_MODIFIED_SINCE", ""))
        return since is not None and last_modified is not None and last_modified <= since

    def _finish_uncacheable(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        """Staff and every request with a session: private, never stored; a staff write
        that succeeded retires the cached pages (admin saves of tracks, topics, venues…)."""
        if not self._anonymous(request):
            patch_cache_control(response, private=True, no_store=True)
            user = getattr(request, "user", None)
            if (
                request.method not in ("GET", "HEAD", "OPTIONS")
                and response.status_code < 400
                and user is not None
                and user.is_staff
            ):
                content_version_bump()
        return self._gzip_personal(request, response)

    @staticmethod
    def _gzip_personal(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        """gzip (not brotli) with Django's BREACH padding: the body may hold a CSRF token."""
        if (
            response.streaming
            or response.has_header("Content-Encoding")
            or not is_compressible(response.get("Content-Type", ""))
            or len(response.content) < MIN_COMPRESS_BYTES
        ):
            return response
        patch_vary_headers(response, ("Accept-Encoding",))
        if "gzip" not in accepted_encodings(request.META.get("HTTP_ACCEPT_ENCODING", "")):
            return response
        body = compress_string(response.content, max_random_bytes=GZIP_RANDOM_BYTES)
        if len(body) >= len(response.content):
            return response
        response.content = body
        response["Content-Length"] = str(len(body))
        response["Content-Encoding"] = "gzip"
        if response.has_header("ETag") and response["ETag"].startswith('"'):
            response["ETag"] = "W/" + response["ETag"]
        return response
