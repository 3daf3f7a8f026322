"""Cache settings for a Redis at a given port: a real one a test starts, or none at all."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port nothing listens on (a cache there is unreachable until a test starts one)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def redis_caches(port: int) -> dict:
    """``CACHES`` for a Redis on ``port``, giving up on it in half a second."""
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
