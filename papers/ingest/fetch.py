"""Polite HTTP fetching: timeouts, retries with backoff and jitter, Retry-After, conditional
GET, and arXiv's one-request-every-3-seconds rule across all workers."""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
from dataclasses import dataclass

import httpx
from django.conf import settings

log = logging.getLogger(__name__)

USER_AGENT = "PaperDaily/0.1 (+https://github.com/paper-daily; research digest ingest)"
RETRY_STATUSES = {429, 500, 502, 503, 504}


class FetchError(Exception):
    """The source could not be fetched; the message says why, in one line."""


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    content_type: str
    etag: str = ""
    last_modified: str = ""

    @property
    def not_modified(self) -> bool:
        return self.status == 304


@dataclass(frozen=True)
class FetchPolicy:
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    attempts: int = 4
    backoff_base: float = 1.0  # seconds; attempt n waits base * 2**n plus jitter
    backoff_cap: float = 60.0
    retry_after_cap: float = 120.0

    @classmethod
    def from_settings(cls) -> FetchPolicy:
        return cls(**getattr(settings, "INGEST_FETCH_POLICY", {}))


class RateLimiter:
    """At most one request per ``interval`` seconds for a host, across all workers.

    With Redis configured a slot is claimed with ``SET key NX PX interval``: only one
    caller on any machine wins it, and it frees itself when the interval has passed. Without
    Redis there is only this process, and a lock with the time of the next slot does.
    """

    _lock = threading.Lock()
    _next_slot: dict[str, float] = {}

    def __init__(self, key: str, interval: float, *, redis_url: str | None = None) -> None:
        self.key = f"paperdaily:ratelimit:{key}"
        self.interval = interval
        self.redis_url = redis_url

    def wait(self) -> float:
        """Block until the caller holds the next slot; returns the seconds waited."""
        if self.interval <= 0:
            return 0.0
        started = time.monotonic()
        if self.redis_url:
            self._wait_redis()
        else:
            self._wait_local()
        return time.monotonic() - started

    def _wait_redis(self) -> None:
        import redis

        client = redis.Redis.from_url(self.redis_url)
        try:
            ms = max(1, int(self.interval * 1000))
            while not client.set(self.key, "1", nx=True, px=ms):
                remaining = client.pttl(self.key)
                time.sleep(max(remaining, 5) / 1000 if remaining and remaining > 0 else 0.01)
        finally:
            client.close()

    def _wait_local(self) -> None:
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next_slot.get(self.key, 0.0))
            self._next_slot[self.key] = slot + self.interval
        if slot > now:
            time.sleep(slot - now)


def arxiv_limiter() -> RateLimiter:
    return RateLimiter(
        "arxiv",
        float(getattr(settings, "ARXIV_MIN_INTERVAL", 3.0)),
        redis_url=settings.REDIS_URL,
    )


def retry_after_seconds(value: str | None, cap: float) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), cap)
    parsed = email.utils.parsedate_to_datetime(value) if value else None
    if parsed is None:
        return None
    return min(max(0.0, parsed.timestamp() - time.time()), cap)


def backoff_delay(policy: FetchPolicy, attempt: int) -> float:
    base = min(policy.backoff_cap, policy.backoff_base * 2**attempt)
    return base / 2 + random.uniform(0, base / 2)  # "equal jitter"


def fetch(
    url: str,
    *,
    params: dict | None = None,
    etag: str = "",
    last_modified: str = "",
    limiter: RateLimiter | None = None,
    policy: FetchPolicy | None = None,
    client: httpx.Client | None = None,
    on_request=None,
) -> Response:
    """GET ``url`` with retries. Raises FetchError when every attempt failed."""
    policy = policy or FetchPolicy.from_settings()
    headers = {
        "User-Agent": USER_AGENT,
        "Accept": "application/atom+xml, application/xml, "
        "application/rss+xml, text/xml;q=0.9, */*;q=0.5",
    }
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    timeout = httpx.Timeout(policy.read_timeout, connect=policy.connect_timeout)
    own_client = client is None
    client = client or httpx.Client(timeout=timeout, follow_redirects=True)
    last_problem = "no attempt made"
    try:
        for attempt in range(policy.attempts):
            if limiter is not None:
                limiter.wait()
            if on_request is not None:
                on_request()
            try:
                reply = client.get(url, params=params, headers=headers, timeout=timeout)
                body = reply.read()
            except httpx.TimeoutException as exc:
                last_problem = f"timed out ({type(exc).__name__})"
                delay = backoff_delay(policy, attempt)
            except httpx.TransportError as exc:
                last_problem = f"network error: {exc}"
                delay = backoff_delay(policy, attempt)
            else:
                if reply.status_code in RETRY_STATUSES:
                    last_problem = f"HTTP {reply.status_code}"
                    delay = retry_after_seconds(
                        reply.headers.get("Retry-After"), policy.retry_after_cap
                    )
                    if delay is None:
                        delay = backoff_delay(policy, attempt)
                else:
                    return Response(
                        status=reply.status_code,
                        body=body,
                        content_type=reply.headers.get("Content-Type", ""),
                        etag=reply.headers.get("ETag", ""),
                        last_modified=reply.headers.get("Last-Modified", ""),
                    )
            if attempt + 1 < policy.attempts:
                log.info("fetch %s: %s; retrying in %.1f s", url, last_problem, delay)
                time.sleep(delay)
    finally:
        if own_client:
            client.close()
    raise FetchError(f"{url}: {last_problem} after {policy.attempts} attempts")
