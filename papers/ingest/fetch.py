"""Polite, bounded HTTP fetching: timeouts, retries with backoff and jitter, Retry-After,
conditional GET, and arXiv's one-request-every-3-seconds rule across all workers.

Bounded: a response body has a maximum size (streamed, never read whole first); a request
has a wall-clock deadline (connect, headers and body together — a server dripping a byte at
a time cannot hold it open) and so does a run (every page, retry and wait of one source);
redirects are followed by hand, a bounded number of times. Only public hosts are fetched:
every address a host resolves to must be public (no loopback, private, link-local,
multicast, reserved or unspecified address), and the connection goes to an address that was
checked, so a name that resolves differently a moment later cannot slip through. Hosts in
``INGEST_ALLOWED_PRIVATE_HOSTS`` are exempt (a local mirror, the tests' recorded server).
"""

from __future__ import annotations

import email.utils
import ipaddress
import logging
import random
import socket
import threading
import time
from dataclasses import dataclass, field, fields

import httpcore
import httpx
from django.conf import settings

from papers.ingest import limits
from papers.validators import url_problem

log = logging.getLogger(__name__)

USER_AGENT = "PaperDaily/0.1 (+https://github.com/paper-daily; research digest ingest)"
RETRY_STATUSES = {429, 500, 502, 503, 504}
_CHUNK = 64 * 1024


class FetchError(Exception):
    """The source could not be fetched; the message says why, in one line."""


class FetchRefused(FetchError):
    """Fetching would be unsafe or unbounded (a private host, a body too large): not retried."""


class DeadlineExceeded(FetchError):
    """A request's or a run's wall-clock deadline passed."""


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
    max_body_bytes: int = limits.MAX_BODY_BYTES
    request_deadline: float = limits.REQUEST_DEADLINE
    run_deadline: float = limits.RUN_DEADLINE
    max_redirects: int = limits.MAX_REDIRECTS
    allowed_private_hosts: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def from_settings(cls) -> FetchPolicy:
        overrides = dict(getattr(settings, "INGEST_FETCH_POLICY", {}))
        known = {f.name for f in fields(cls)}
        unknown = set(overrides) - known
        if unknown:
            raise ValueError(f"INGEST_FETCH_POLICY: unknown keys {', '.join(sorted(unknown))}")
        hosts = overrides.pop(
            "allowed_private_hosts", getattr(settings, "INGEST_ALLOWED_PRIVATE_HOSTS", [])
        )
        return cls(**overrides, allowed_private_hosts=frozenset(h.lower() for h in hosts))


class Deadline:
    """A point on the monotonic clock; ``what`` names it in messages ("request", "run")."""

    def __init__(self, seconds: float, what: str) -> None:
        self.seconds = seconds
        self.what = what
        self.at = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def expired(self) -> bool:
        return self.remaining() <= 0

    def message(self) -> str:
        return f"the {self.what} deadline of {self.seconds:g} s passed"

    def check(self) -> None:
        if self.expired():
            raise DeadlineExceeded(self.message())

    def sooner(self, seconds: float, what: str) -> Deadline:
        """A deadline ``seconds`` from now, or this one when it comes first."""
        return self if self.remaining() <= seconds else Deadline(seconds, what)


def run_deadline(policy: FetchPolicy | None = None) -> Deadline:
    return Deadline((policy or FetchPolicy.from_settings()).run_deadline, "run")


# --------------------------------------------------------------------------------------------
# Spacing requests (arXiv)
# --------------------------------------------------------------------------------------------


class RateLimiter:
    """At most one request per ``interval`` seconds for a host, across all workers.

    With Redis configured a slot is claimed with ``SET key NX PX interval``: only one
    caller on any machine wins it, and it frees itself when the interval has passed. Without
    Redis — or when Redis does not answer — there is only this process, and a lock with the
    time of the next slot does; ``fallback`` then says why, for the run's message.
    """

    _lock = threading.Lock()
    _next_slot: dict[str, float] = {}

    def __init__(self, key: str, interval: float, *, redis_url: str | None = None) -> None:
        self.key = f"paperdaily:ratelimit:{key}"
        self.interval = interval
        self.redis_url = redis_url
        self.fallback = ""

    def wait(self, deadline: Deadline | None = None) -> float:
        """Block until the caller holds the next slot; returns the seconds waited."""
        if self.interval <= 0:
            return 0.0
        started = time.monotonic()
        if self.redis_url and not self.fallback:
            try:
                self._wait_redis(deadline)
            except _redis_errors() as exc:
                self.fallback = (
                    f"Redis did not answer ({type(exc).__name__}: {str(exc)[:120]}); "
                    "arXiv requests were spaced by this process's lock only"
                )
                log.warning("rate limiter %s: %s", self.key, self.fallback)
                self._wait_local(deadline)
        else:
            self._wait_local(deadline)
        return time.monotonic() - started

    def _wait_redis(self, deadline: Deadline | None) -> None:
        import redis

        client = redis.Redis.from_url(
            self.redis_url, socket_connect_timeout=2.0, socket_timeout=2.0
        )
        try:
            ms = max(1, int(self.interval * 1000))
            while not client.set(self.key, "1", nx=True, px=ms):
                if deadline is not None:
                    deadline.check()
                remaining = client.pttl(self.key)
                time.sleep(max(remaining, 5) / 1000 if remaining and remaining > 0 else 0.01)
        finally:
            client.close()

    def _wait_local(self, deadline: Deadline | None) -> None:
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next_slot.get(self.key, 0.0))
            self._next_slot[self.key] = slot + self.interval
        if deadline is not None and slot - now > deadline.remaining():
            raise DeadlineExceeded(deadline.message() + " while waiting for the arXiv slot")
        if slot > now:
            time.sleep(slot - now)


def _redis_errors() -> tuple[type[Exception], ...]:
    import redis

    return (redis.RedisError,)


def arxiv_limiter() -> RateLimiter:
    return RateLimiter(
        "arxiv",
        float(getattr(settings, "ARXIV_MIN_INTERVAL", 3.0)),
        redis_url=settings.REDIS_URL,
    )


def retry_after_seconds(value: str | None, cap: float) -> float | None:
    """Seconds from a Retry-After header (a number or an HTTP date); None when it is neither."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), cap)
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if parsed is None:
        return None
    return min(max(0.0, parsed.timestamp() - time.time()), cap)


def backoff_delay(policy: FetchPolicy, attempt: int) -> float:
    base = min(policy.backoff_cap, policy.backoff_base * 2**attempt)
    return base / 2 + random.uniform(0, base / 2)  # "equal jitter"


# --------------------------------------------------------------------------------------------
# Public hosts only, within the deadline: a guarded network backend
# --------------------------------------------------------------------------------------------


def address_problem(address: str) -> str:
    """Why an IP address is not a public one; "" when it is."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for flag, what in (
        ("is_loopback", "loopback"),
        ("is_link_local", "link-local"),
        ("is_multicast", "multicast"),
        ("is_unspecified", "unspecified"),
        ("is_reserved", "reserved"),
        ("is_private", "private"),
    ):
        if getattr(ip, flag):
            return f"{ip} is a {what} address"
    if not ip.is_global:
        return f"{ip} is not a public address"
    return ""


class _Guard:
    """What the backend consults on every connect and read: the policy and the deadline."""

    def __init__(self, policy: FetchPolicy) -> None:
        self.policy = policy
        self.deadline = Deadline(policy.request_deadline, "request")
        self.deadline_hit = False

    def clamp(self, timeout: float | None) -> float:
        remaining = self.deadline.remaining()
        if remaining <= 0:
            self.deadline_hit = True
            raise httpcore.ReadTimeout(self.deadline.message())
        if timeout is None or remaining < timeout:
            # The deadline, not the socket timeout, is what will end this wait.
            self.deadline_hit = True
            return remaining
        self.deadline_hit = False
        return timeout


class _GuardedStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, guard: _Guard) -> None:
        self.inner = inner
        self.guard = guard

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, self.guard.clamp(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, self.guard.clamp(timeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> httpcore.NetworkStream:
        tls = self.inner.start_tls(ssl_context, server_hostname, self.guard.clamp(timeout))
        return _GuardedStream(tls, self.guard)

    def get_extra_info(self, info: str):
        return self.inner.get_extra_info(info)


class _GuardedBackend(httpcore.NetworkBackend):
    def __init__(self, guard: _Guard) -> None:
        self.inner = httpcore.SyncBackend()
        self.guard = guard

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        targets = [host]
        if host.lower().strip("[]") not in self.guard.policy.allowed_private_hosts:
            targets = _public_addresses(host, port)  # connect to an address that was checked
        for number, target in enumerate(targets, start=1):
            try:
                stream = self.inner.connect_tcp(
                    target, port, timeout=self.guard.clamp(timeout),
                    local_address=local_address, socket_options=socket_options,
                )  # fmt: skip
            except httpcore.ConnectError:
                if number == len(targets):
                    raise
            else:
                return _GuardedStream(stream, self.guard)
        raise AssertionError("unreachable")  # pragma: no cover

    def connect_unix_socket(self, *args, **kwargs):
        raise FetchRefused("unix sockets are never fetched")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


def _public_addresses(host: str, port: int) -> list[str]:
    """The addresses of ``host``, once every one of them proved public."""
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    for address in addresses:
        if problem := address_problem(address):
            raise FetchRefused(
                f"refused to fetch from {host}: {problem} "
                "(allow it in INGEST_ALLOWED_PRIVATE_HOSTS if it is meant)"
            )
    if not addresses:
        raise httpcore.ConnectError(f"{host} has no address")
    return addresses


def _client(guard: _Guard) -> httpx.Client:
    transport = httpx.HTTPTransport()
    # httpx has no public hook for the network backend; the pool it builds is replaced by an
    # identical one that connects through the guard.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(), network_backend=_GuardedBackend(guard)
    )
    # trust_env=False: a proxy from the environment would hide where we really connect.
    return httpx.Client(transport=transport, follow_redirects=False, trust_env=False)


# --------------------------------------------------------------------------------------------
# fetch
# --------------------------------------------------------------------------------------------


@dataclass
class _Retry(Exception):
    problem: str
    delay: float | None = None


def fetch(
    url: str,
    *,
    params: dict | None = None,
    etag: str = "",
    last_modified: str = "",
    limiter: RateLimiter | None = None,
    policy: FetchPolicy | None = None,
    deadline: Deadline | None = None,
    on_request=None,
) -> Response:
    """GET ``url`` with retries, within ``deadline`` (the run's; one is made when not given).

    Raises FetchError when every attempt failed, FetchRefused (not retried) when the fetch
    would be unsafe or unbounded, DeadlineExceeded when the run's deadline passed.
    """
    policy = policy or FetchPolicy.from_settings()
    deadline = deadline or run_deadline(policy)
    headers = {
        "User-Agent": USER_AGENT,
        "Accept": "application/atom+xml, application/xml, "
        "application/rss+xml, text/xml;q=0.9, */*;q=0.5",
    }
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    guard = _Guard(policy)
    last_problem = "no attempt made"
    with _client(guard) as client:
        for attempt in range(policy.attempts):
            deadline.check()
            if limiter is not None:
                limiter.wait(deadline)
            if on_request is not None:
                on_request()
            guard.deadline = deadline.sooner(policy.request_deadline, "request")
            try:
                return _get(client, url, params, headers, policy, guard)
            except _Retry as retry:
                last_problem = retry.problem
                delay = retry.delay if retry.delay is not None else backoff_delay(policy, attempt)
            except httpx.TimeoutException as exc:
                if guard.deadline_hit:
                    last_problem = guard.deadline.message()
                    if guard.deadline is deadline:
                        raise DeadlineExceeded(f"{url}: {last_problem}") from None
                else:
                    last_problem = f"timed out ({type(exc).__name__})"
                delay = backoff_delay(policy, attempt)
            except httpx.TransportError as exc:
                last_problem = f"network error: {exc}"
                delay = backoff_delay(policy, attempt)
            except FetchRefused as exc:
                raise FetchRefused(f"{url}: {exc}") from None
            if attempt + 1 < policy.attempts:
                if delay >= deadline.remaining():
                    raise DeadlineExceeded(
                        f"{url}: {last_problem}; {deadline.message()} before a retry"
                    )
                log.info("fetch %s: %s; retrying in %.1f s", url, last_problem, delay)
                time.sleep(delay)
    raise FetchError(f"{url}: {last_problem} after {policy.attempts} attempts")


def _get(client: httpx.Client, url: str, params, headers, policy: FetchPolicy, guard: _Guard):
    """One attempt: follow redirects by hand, each hop checked, and read a bounded body."""
    request = client.build_request("GET", url, params=params, headers=headers)
    for hop in range(policy.max_redirects + 1):
        problem = url_problem(str(request.url), max_length=limits.REQUEST_URL)
        if problem:
            where = "redirected to a link that" if hop else "the link"
            raise FetchRefused(f"{where} is not a public http(s) URL: {problem}")
        timeout = httpx.Timeout(policy.read_timeout, connect=policy.connect_timeout)
        request.extensions["timeout"] = timeout.as_dict()
        reply = client.send(request, stream=True)
        try:
            if reply.next_request is not None:
                if hop == policy.max_redirects:
                    raise FetchRefused(f"more than {policy.max_redirects} redirects")
                request = reply.next_request
                continue
            if reply.status_code in RETRY_STATUSES:
                raise _Retry(
                    f"HTTP {reply.status_code}",
                    retry_after_seconds(reply.headers.get("Retry-After"), policy.retry_after_cap),
                )
            return Response(
                status=reply.status_code,
                body=_read_body(reply, policy.max_body_bytes),
                content_type=reply.headers.get("Content-Type", ""),
                etag=reply.headers.get("ETag", ""),
                last_modified=reply.headers.get("Last-Modified", ""),
            )
        finally:
            reply.close()
    raise AssertionError("unreachable")  # pragma: no cover


def _read_body(reply: httpx.Response, limit: int) -> bytes:
    declared = reply.headers.get("Content-Length", "")
    if declared.strip().isdigit() and int(declared) > limit:
        raise FetchRefused(
            f"the response is {int(declared):,} bytes (Content-Length); the limit is {limit:,}"
        )
    chunks: list[bytes] = []
    size = 0
    for chunk in reply.iter_bytes(_CHUNK):  # decoded: a compressed bomb is counted as it grows
        size += len(chunk)
        if size > limit:
            raise FetchRefused(
                f"the response is larger than the limit of {limit:,} bytes (refused while reading)"
            )
        chunks.append(chunk)
    return b"".join(chunks)
