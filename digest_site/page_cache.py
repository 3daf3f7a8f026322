"""Public pages served from the cache, compressed and conditional — about the cost of a
static file — and retired by tag.

``PageCacheMiddleware`` sits right after WhiteNoise, before sessions, CSRF and auth. For an
anonymous reader (no session or messages cookie, no ``Authorization`` header) asking for a
public page, it answers from the cache. On a miss it lets the page render and, if the
response is public (200, no Set-Cookie, not private/no-store, varying on nothing personal),
stores it in identity, gzip and brotli forms under the scheme and host, the URL, the
language and the theme, with the version of each tag the page printed
(``tag(request, "daily:12", …)``, ``digest_site.cache_tags``). A change retires its tags
(``digest_site.invalidation``), and with them exactly the pages that printed them.

The key holds only what the page reads, so that no request makes an entry that another
request would not: a host outside ``ALLOWED_HOSTS`` is refused (400) before any lookup; the
query string keeps only the parameters the page reads (``PAGE_PARAMETERS``), and a request
with any other is rendered, never stored; the theme cookie counts only with a theme's value.

Two tiers: the shared cache (Redis in production), and in each process the pages it served
last (``PAGE_CACHE_LOCAL_BYTES`` of bodies), ready to send with their headers built. A hit
in the local tier costs no round trip while the process's memory of the tag versions is
younger than ``PAGE_CACHE_VERSION_RECHECK_MS`` (≤ 1 s; one small GET after that): a
retirement in this process takes effect at once, one in another process (another worker,
a Celery task) at most that much later.

A retired page is re-rendered by one request (single flight); the others meanwhile get the
copy from before, for at most ``PAGE_CACHE_STALE_S`` after the change that retired it.
Each response says which it was in ``Cache-Status`` (RFC 9211): ``hit``, or ``fwd=miss`` /
``fwd=stale`` with ``stored``; a stored one lists its tags in ``Surrogate-Key`` for a CDN or
Varnish in front, which a retirement purges (``CDN_PURGE_URLS``).

Every public response gets ``Cache-Control: public, max-age=…, stale-while-revalidate=…``,
a weak ETag of its body and a Last-Modified, and a 304 when the client already holds it.
Requests with a session get ``private, no-store`` and are never served from or stored in the
cache. When the cache is unreachable pages render uncached (the cache backend's circuit
breaker, ``digest_site.cache_backend``, makes that cost nothing).

A stored answer skips the view, and with it what the view would have checked of the request:
apps register those checks for their paths (``register_hit_check``), as the API does its
anonymous throttle, so that a client gets a 429 from a cached answer as from a rendered one.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

import brotli
from django.conf import settings
from django.contrib.messages.storage.cookie import CookieStorage
from django.core.cache import cache
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    HttpResponseNotAllowed,
    HttpResponseNotModified,
)
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.http import http_date, parse_etags, parse_http_date_safe
from django.utils.translation import get_language_from_request

from digest_site import cache_tags
from digest_site.context_processors import THEME_COOKIE, THEMES

log = logging.getLogger(__name__)

# Content types worth compressing (their main type, or the whole type).
COMPRESSIBLE = ("text/", "application/json", "application/xml", "image/svg+xml")
COMPRESSIBLE_SUFFIXES = ("+xml", "+json")
# Below this a compressed body is no smaller than its headers.
MIN_COMPRESS_BYTES = 200
GZIP_LEVEL = 6
# A response compressed for one request and never stored (staff, sessions, the page cache
# off) is compressed at level 4: on a 38 KB daily page 0.34 ms against level 6's 0.52 ms,
# for 2% more bytes (8,939 against 8,781; measured). Stored pages are compressed once, at 6.
GZIP_LEVEL_PER_REQUEST = 4
# Quality 5 compresses a 20 KB page in ~2 ms with 95% of quality 11's gain (measured).
BROTLI_QUALITY = 5
# Django's GZipMiddleware pads personal responses (CSRF tokens) against BREACH the same way.
GZIP_RANDOM_BYTES = 100
ENCODINGS = ("br", "gzip", "")
# The cache's name in Cache-Status (RFC 9211), and what a stored copy was.
CACHE_NAME = "PaperDaily"
HIT = f"{CACHE_NAME}; hit"
HIT_STALE = f"{CACHE_NAME}; hit; detail=stale-while-revalidate"
# Printed by every HTML page: the site's navigation (the tracks).
NAV = "nav"
# What a stored page that recorded no tags is retired by: every public change.
UNTAGGED = "untagged"
# Headers the middleware sets itself on every stored response.
_OWN_HEADERS = {"content-length", "content-encoding", "etag", "last-modified", "cache-control"}
# What a public page may vary on: the encoding, the language and — only when the session
# was read (staff see previews) and the request had none — the cookie. DRF adds Accept,
# but the API renders JSON only.
_PUBLIC_VARY = {"accept-encoding", "accept-language", "accept"}
_UNCACHEABLE_DIRECTIVES = ("private", "no-store", "no-cache", "max-age=0")
# Cookies the public pages read, with the values they tell apart: any other value renders as
# none (``context_processors.site``), so it shares that page's entry. A page that reads any
# other cookie must be listed here or send Cache-Control private.
KEY_COOKIES = {THEME_COOKIE: THEMES}

_SEARCH = ("q", "topic", "track", "from", "to")
_API = ("lang", "format")
# The query parameters each public page reads (views, paginators, filtersets, DRF's format
# override, the canonical link's ``page``), by path; ``{lang}`` is a language prefix. The first
# pattern that matches the whole path counts; a path none matches reads none.
PAGE_PARAMETERS = (
    (r"/{lang}/papers/", (*_SEARCH, "exact", "like", "page", "after", "before")),
    (r"/{lang}/topics/[^/]+/", ("page", "after", "before")),
    (r"/{lang}/feeds/search\.atom", _SEARCH),
    (r"/{lang}/[^/]+/", ("page",)),  # a track's archive
    (r"/sitemap[^/]*\.xml", ("p",)),
    (r"/api/v1/search", (*_SEARCH, "limit", "offset", *_API)),
    (r"/api/v1/dailies/", ("track", "from", "to", "cursor", "limit", *_API)),
    (
        r"/api/v1/papers/",
        (*_SEARCH[1:], "has_deep_dive", "has_verified_code", "cursor", "limit", *_API),
    ),
    (r"/api/v1/topics/", ("cursor", "limit", *_API)),
    (r"/api/v1/.*", _API),
)


# What a stored answer must pass before it is sent, by path prefix: ``check(request)`` returns
# the response to send instead (a 429), or None.
HitCheck = Callable[[HttpRequest], HttpResponseBase | None]
_hit_checks: list[tuple[str, HitCheck]] = []


def register_hit_check(prefix: str, check: HitCheck) -> None:
    """Run ``check`` on each request for a path under ``prefix`` that the cache answers
    (the view runs its own checks on the others)."""
    if (prefix, check) not in _hit_checks:
        _hit_checks.append((prefix, check))


def _refused(request: HttpRequest) -> HttpResponseBase | None:
    for prefix, check in _hit_checks:
        if request.path.startswith(prefix):
            refusal = check(request)
            if refusal is not None:
                return refusal
    return None


def _page_parameters() -> list[tuple[re.Pattern, frozenset[str]]]:
    languages = "|".join(re.escape(code) for code, _name in settings.LANGUAGES)
    return [
        (re.compile(pattern.replace("{lang}", f"(?:{languages})")), frozenset(names))
        for pattern, names in PAGE_PARAMETERS
    ]


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


def gzip_padded(body: bytes) -> bytes:
    """``body`` gzipped at ``GZIP_LEVEL_PER_REQUEST``, with a random-length file name in its
    header against BREACH, as Django's ``compress_string(…, max_random_bytes=…)`` pads it."""
    data = memoryview(gzip.compress(body, compresslevel=GZIP_LEVEL_PER_REQUEST, mtime=0))
    header = bytearray(data[:10])
    header[3] = gzip.FNAME
    name = b"a" * secrets.randbelow(GZIP_RANDOM_BYTES) + b"\x00"
    return bytes(header) + name + data[10:]


def compressed(body: bytes, encoding: str) -> bytes:
    if encoding == "br":
        return brotli.compress(body, quality=BROTLI_QUALITY, mode=brotli.MODE_TEXT)
    if encoding == "gzip":
        return gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)
    return body


@dataclass(frozen=True, slots=True)
class Ready:
    """A stored response as this process sends it: its headers validated once, the date of
    its Last-Modified formatted once, and the tag versions it was stored with."""

    status: int
    # Header name (lower case) → (name, value), as ``HttpResponse.headers`` keeps them.
    headers: dict[str, tuple[str, str]]
    body: bytes
    etag: str | None
    modified_s: int | None
    last_modified: str | None
    size: int
    # Tag → its version when the page was stored.
    stamp: dict[str, cache_tags.Token]

    @classmethod
    def of(cls, entry: tuple) -> Ready:
        status, headers, body, etag, modified_s, stamp = entry
        response = HttpResponse(status=status)
        for name, value in headers:
            response[name] = value
        response["Content-Length"] = str(len(body))
        if etag is not None:
            response["ETag"] = etag
        return cls(
            status=status,
            headers=dict(response.headers._store),
            body=body,
            etag=etag,
            modified_s=modified_s,
            last_modified=http_date(modified_s) if modified_s is not None else None,
            size=len(body),
            stamp=dict(stamp),
        )


class LocalPages:
    """The pages this process served last, at most ``max_bytes`` of bodies (the least
    recently served go first). Each is checked against its tags' versions when served."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.pages: OrderedDict[str, Ready] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()

    def get(self, key: str) -> Ready | None:
        with self.lock:
            ready = self.pages.get(key)
            if ready is not None:
                self.pages.move_to_end(key)
            return ready

    def put(self, key: str, ready: Ready) -> None:
        if ready.size > self.max_bytes:
            return
        with self.lock:
            previous = self.pages.pop(key, None)
            self.size += ready.size - (previous.size if previous else 0)
            self.pages[key] = ready
            while self.size > self.max_bytes:
                _key, oldest = self.pages.popitem(last=False)
                self.size -= oldest.size


def tag(request: HttpRequest, *tags: str) -> None:
    """Record that the response to ``request`` prints what ``tags`` name (``daily:12``,
    ``paper:34``, ``topic:kv-cache``, ``index``…): the page cache retires it when any of
    them is (``digest_site.invalidation``). A DRF request counts as its Django request."""
    request = getattr(request, "_request", request)
    recorded = getattr(request, "cache_tags", None)
    if recorded is None:
        recorded = request.cache_tags = set()
    recorded.update(tags)


def response_tags(request: HttpRequest, response: HttpResponseBase) -> tuple[str, ...]:
    """What a stored response is retired by: the tags its view recorded (``UNTAGGED`` when
    it recorded none: any public change retires it), the navigation for a page, and
    ``ALL``."""
    tags = set(getattr(request, "cache_tags", None) or (UNTAGGED,))
    if response.get("Content-Type", "").startswith("text/html"):
        tags.add(NAV)
    tags.add(cache_tags.ALL)
    return tuple(sorted(tags))


@dataclass(frozen=True, slots=True)
class Found:
    """What the cache holds for a request: the copy to send (None: none), whether it is
    current, and whether it may be sent stale while another request renders it."""

    ready: Ready | None = None
    current: bool = False
    stale_servable: bool = False


class PageCacheMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.allowed, self.excluded = _cacheable_prefixes()
        self.languages = {code for code, _name in settings.LANGUAGES}
        self.local = LocalPages(settings.PAGE_CACHE_LOCAL_BYTES)
        self.parameters = _page_parameters()

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

    def page_query(self, request: HttpRequest) -> str | None:
        """The query string as the page reads it: its parameters sorted by name, a repeated
        one's values in their order (a page reads the last); None when it has a parameter
        the page does not read."""
        query = request.META.get("QUERY_STRING", "")
        if not query:
            return ""
        read: frozenset[str] = frozenset()
        for pattern, names in self.parameters:
            if pattern.fullmatch(request.path):
                read = names
                break
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(name not in read for name, _value in pairs):
            return None
        return urlencode(sorted(pairs, key=lambda pair: pair[0]))

    def page_key(self, request: HttpRequest, query: str) -> str:
        """Scheme and host (the page's absolute links), URL (path and ``page_query``),
        language and the cookies pages read (the theme), hashed to a fixed length."""
        prefix = request.path.split("/", 2)[1]
        language = prefix if prefix in self.languages else get_language_from_request(request)
        cookies = []
        for name, values in KEY_COOKIES.items():
            value = request.COOKIES.get(name, "")
            cookies.append(value if value in values else "")
        site = f"{request.scheme}://{request.get_host().lower()}"
        material = f"{site}{request.path}?{query}|{language}|{'|'.join(cookies)}".encode()
        return hashlib.blake2b(material, digest_size=16).hexdigest()

    @staticmethod
    def _stored_key(key: str, encoding: str) -> str:
        return f"page:{key}:{encoding or 'identity'}"

    # -- the cache, which may be down ----------------------------------------------------

    @staticmethod
    def _cache_failed(what: str, error: Exception) -> None:
        log.warning("page cache: %s failed (%s); rendering uncached", what, error)

    @staticmethod
    def _judge(ready: Ready) -> Found:
        """``ready`` against its tags' current versions (from this process's memory of
        them while it is younger than ``PAGE_CACHE_VERSION_RECHECK_MS``)."""
        current = cache_tags.versions(ready.stamp, settings.PAGE_CACHE_VERSION_RECHECK_MS / 1000)
        retired = [tag for tag, version in ready.stamp.items() if current[tag] != version]
        if not retired:
            return Found(ready, current=True)
        times = [current[tag][1] for tag in retired if current[tag] is not None]
        # A tag whose version is lost says nothing of when it changed: never served stale.
        servable = len(times) == len(retired) and (
            time.time() - min(times) <= settings.PAGE_CACHE_STALE_S
        )
        return Found(ready, stale_servable=servable)

    def _lookup(self, key: str, encoding: str) -> Found:
        """The stored response for ``key``: this process's copy when it is current, else
        the shared cache's (another process may have re-rendered it)."""
        stored_key = self._stored_key(key, encoding)
        try:
            local = self.local.get(stored_key)
            if local is not None:
                found = self._judge(local)
                if found.current:
                    return found
            entry = cache.get(stored_key)
            if entry is None:
                return Found(local) if local is not None else Found()
            shared = self._judge(Ready.of(entry))
            if shared.current:
                self.local.put(stored_key, shared.ready)
            return shared
        except Exception as error:  # any cache error means "render uncached"
            self._cache_failed("reading", error)
            return Found()

    def _clock(self) -> int | None:
        try:
            return cache_tags.clock()
        except Exception as error:
            self._cache_failed("reading the clock", error)
            return None

    @staticmethod
    def _lock_key(key: str) -> str:
        return f"page-lock:{key}"

    def _take_render(self, key: str) -> bool:
        """This request re-renders the retired page (single flight): the others get the
        stale copy meanwhile, for at most ``PAGE_CACHE_STALE_S``."""
        try:
            return cache.add(self._lock_key(key), 1, settings.PAGE_CACHE_STALE_S or 1)
        except Exception as error:
            self._cache_failed("locking", error)
            return True

    def _release_render(self, key: str) -> None:
        try:
            cache.delete(self._lock_key(key))
        except Exception as error:  # it expires on its own
            self._cache_failed("unlocking", error)

    def _store(
        self, started: int, key: str, tags: tuple[str, ...], entries: dict[str, tuple]
    ) -> dict[str, Ready] | None:
        """Store ``entries`` with the versions of ``tags``, unless a tag was retired while
        the page rendered (the clock moved since ``started``: a change that committed
        mid-render may be missing from it). Returns them ready to send, by encoding, or
        None when they were not stored."""
        try:
            stamp = tuple(sorted(cache_tags.stamp(tags).items()))
            if cache_tags.clock() != started:
                return None
            stamped = {encoding: (*entry, stamp) for encoding, entry in entries.items()}
            cache.set_many(
                {self._stored_key(key, enc): entry for enc, entry in stamped.items()},
                settings.PAGE_CACHE_TIMEOUT,
            )
        except Exception as error:  # the cache is down: render uncached
            self._cache_failed("storing", error)
            return None
        ready = {encoding: Ready.of(entry) for encoding, entry in stamped.items()}
        for encoding, one in ready.items():
            self.local.put(self._stored_key(key, encoding), one)
        return ready

    # -- the response --------------------------------------------------------------------

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if request.method in ("OPTIONS", "TRACE") and self._is_page(request.path):
            return self._methods(request)
        if not self._cacheable_request(request):
            response = self.get_response(request)
            return self._finish_uncacheable(request, response)
        # Before any lookup: a host outside ALLOWED_HOSTS raises DisallowedHost (a 400).
        request.get_host()
        query = self.page_query(request)
        if query is None:  # a parameter the page does not read: rendered, never stored
            return self._finish_uncacheable(request, self.get_response(request))
        key = self.page_key(request, query)
        encoding = accepted_encoding(request.META.get("HTTP_ACCEPT_ENCODING", ""))
        found = self._lookup(key, encoding)
        if found.current or (found.stale_servable and not self._take_render(key)):
            refusal = _refused(request)
            if refusal is not None:
                return refusal
            status = HIT if found.current else HIT_STALE
            return self._respond(request, found.ready, status)
        try:
            return self._render(request, key, encoding, previous=found.ready)
        finally:
            if found.stale_servable:
                self._release_render(key)

    def _render(
        self, request: HttpRequest, key: str, encoding: str, *, previous: Ready | None
    ) -> HttpResponseBase:
        forwarded = "fwd=miss" if previous is None else "fwd=stale"
        started = self._clock()
        response = self.get_response(request)
        if not self._is_public(request, response):
            return self._finish_uncacheable(request, response)
        tags = response_tags(request, response)
        entries = self._entries(response, tags)
        ready = None
        if started is not None and request.method == "GET":
            ready = self._store(started, key, tags, entries)
        if ready is not None:
            return self._respond(
                request, ready.get(encoding) or ready[""], f"{CACHE_NAME}; {forwarded}; stored"
            )
        unstored = {encoding: (*entry, ()) for encoding, entry in entries.items()}
        return self._respond(
            request, Ready.of(unstored.get(encoding) or unstored[""]), f"{CACHE_NAME}; {forwarded}"
        )

    def _is_page(self, path: str) -> bool:
        """A public page (the API answers its own OPTIONS)."""
        return path.startswith(self.allowed) and not path.startswith("/api/")

    def _methods(self, request: HttpRequest) -> HttpResponseBase:
        """What a page allows, without rendering it: OPTIONS lists the methods, TRACE is
        refused."""
        methods = ["GET", "HEAD", "OPTIONS"]
        if request.path.startswith(self.excluded):
            methods.append("POST")  # the forms
        if request.method == "TRACE":
            return HttpResponseNotAllowed(methods)
        response = HttpResponse(status=200)
        response["Allow"] = ", ".join(methods)
        response["Content-Length"] = "0"
        return response

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

    def _entries(self, response: HttpResponseBase, tags: tuple[str, ...]) -> dict[str, tuple]:
        """The response as stored: (status, headers, body, etag, Last-Modified) per
        encoding. The ETag is the body's; Last-Modified is the view's own (the feeds date
        their items), since a page's render time cannot tell apart two copies made within
        one second."""
        body = response.content
        etag = f'W/"{hashlib.blake2b(body, digest_size=12).hexdigest()}"'
        modified_s = parse_http_date_safe(response.get("Last-Modified", ""))
        patch_cache_control(
            response,
            public=True,
            max_age=settings.PAGE_CACHE_MAX_AGE,
            stale_while_revalidate=settings.PAGE_CACHE_STALE_WHILE_REVALIDATE,
        )
        if KEY_COOKIES and response.get("Content-Type", "").startswith("text/html"):
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
        # For a CDN or Varnish in front (deploy/varnish/default.vcl): what to purge it by.
        headers.append(("Surrogate-Key", " ".join(tags)))
        entries = {}
        for encoding in ENCODINGS if compress else ("",):
            own = [("Content-Encoding", encoding)] if encoding else []
            entries[encoding] = (
                response.status_code,
                headers + own,
                compressed(body, encoding),
                etag,
                modified_s,
            )
        return entries

    def _respond(self, request: HttpRequest, ready: Ready, status: str) -> HttpResponseBase:
        last_modified = ready.last_modified
        if last_modified is not None and ready.modified_s > time.time():
            # Never claim the future.
            last_modified = None
        etag = ready.etag
        if etag is not None and self._not_modified(request, etag, ready.modified_s, last_modified):
            response = HttpResponseNotModified()
            for name in ("cache-control", "vary", "content-language", "etag"):
                if name in ready.headers:
                    response.headers._store[name] = ready.headers[name]
        else:
            response = HttpResponse(b"" if request.method == "HEAD" else ready.body)
            response.status_code = ready.status
            # Validated when the page was stored: copied, not set one by one.
            response.headers._store = ready.headers.copy()
        if last_modified is not None:
            response.headers._store["last-modified"] = ("Last-Modified", last_modified)
        response.headers._store["cache-status"] = ("Cache-Status", status)
        return response

    @staticmethod
    def _not_modified(
        request: HttpRequest, etag: str, modified_s: int | None, last_modified: str | None
    ) -> bool:
        if_none_match = request.META.get("HTTP_IF_NONE_MATCH")
        if if_none_match is not None:
            tags = parse_etags(if_none_match)
            bare = etag.removeprefix("W/")
            return "*" in tags or any(t.removeprefix("W/") == bare for t in tags)
        if_modified_since = request.META.get("HTTP_IF_MODIFIED_SINCE")
        if if_modified_since is None or last_modified is None:
            return False
        since = parse_http_date_safe(if_modified_since)
        return since is not None and modified_s <= since

    def _finish_uncacheable(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        """Staff and every request with a session: private, never stored (and nothing is
        retired here: a change retires what it touched, ``digest_site.invalidation``)."""
        if not self._anonymous(request):
            patch_cache_control(response, private=True, no_store=True)
            response["Cache-Status"] = f"{CACHE_NAME}; fwd=bypass"
        elif request.method in ("GET", "HEAD"):
            response["Cache-Status"] = f"{CACHE_NAME}; fwd=uri-miss"
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
        body = gzip_padded(response.content)
        if len(body) >= len(response.content):
            return response
        response.content = body
        response["Content-Length"] = str(len(body))
        response["Content-Encoding"] = "gzip"
        if response.has_header("ETag") and response["ETag"].startswith('"'):
            response["ETag"] = "W/" + response["ETag"]
        return response
