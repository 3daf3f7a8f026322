"""The cache on Redis, failing fast while Redis is away.

Django's ``RedisCache`` with a circuit breaker: a call that cannot reach Redis (refused, or
no answer within the socket timeout) opens the breaker for ``CACHE_BREAKER_S`` seconds, and
every call in this process meanwhile fails at once with ``redis.ConnectionError`` instead
of waiting for its own timeout. Every user of the cache (the page cache, the content version,
the API's throttle, the limiters and locks kept in it) already treats an error as "no cache";
with the breaker, a Redis that accepts connections and never answers costs one timeout per
process, not one per request. After the window the next call tries Redis again.

redis-py retries a failed command three times with backoff by default: here it does not
retry, since each retry of a hung Redis waits out another timeout.
"""

from __future__ import annotations

import functools
import time

import redis
from django.conf import settings
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.backoff import NoBackoff
from redis.retry import Retry

# Server location → time.monotonic() until which calls to it fail at once; shared by the
# threads of a process (each has its own cache object).
_open_until: dict[str, float] = {}
_OUTAGE = (redis.ConnectionError, redis.TimeoutError)


class _Client(RedisCacheClient):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._client = functools.partial(self._lib.Redis, retry=Retry(NoBackoff(), 0))


class BreakerRedisCache(RedisCache):
    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = _Client

    def _guarded(self, call, *args, **kwargs):
        location = self._servers[0]
        if time.monotonic() < _open_until.get(location, 0.0):
            raise redis.ConnectionError("the cache is away (circuit breaker open)")
        try:
            return call(*args, **kwargs)
        except _OUTAGE:
            _open_until[location] = time.monotonic() + settings.CACHE_BREAKER_S
            raise

    def add(self, *args, **kwargs):
        return self._guarded(super().add, *args, **kwargs)

    def get(self, *args, **kwargs):
        return self._guarded(super().get, *args, **kwargs)

    def set(self, *args, **kwargs):
        return self._guarded(super().set, *args, **kwargs)

    def touch(self, *args, **kwargs):
        return self._guarded(super().touch, *args, **kwargs)

    def delete(self, *args, **kwargs):
        return self._guarded(super().delete, *args, **kwargs)

    def get_many(self, *args, **kwargs):
        return self._guarded(super().get_many, *args, **kwargs)

    def has_key(self, *args, **kwargs):
        return self._guarded(super().has_key, *args, **kwargs)

    def incr(self, *args, **kwargs):
        return self._guarded(super().incr, *args, **kwargs)

    def set_many(self, *args, **kwargs):
        return self._guarded(super().set_many, *args, **kwargs)

    def delete_many(self, *args, **kwargs):
        return self._guarded(super().delete_many, *args, **kwargs)

    def clear(self):
        return self._guarded(super().clear)
