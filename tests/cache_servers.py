"""Cache settings for a Redis at a given port: a real one a test starts, or none at all; and
a server that accepts connections and never answers (a Redis that hangs)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager


def free_port() -> int:
    """A port nothing listens on (a cache there is unreachable until a test starts one)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def redis_caches(port: int, timeout: float = 0.5) -> dict:
    """``CACHES`` for a Redis on ``port``, giving up on it in ``timeout`` seconds."""
    return {
        "default": {
            "BACKEND": "digest_site.cache_backend.BreakerRedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_connect_timeout": timeout, "socket_timeout": timeout},
        }
    }


class SilentServer:
    """A TCP server on 127.0.0.1 that accepts connections and never answers.

    The kernel completes each connection and takes what the client sends, so a client sees a
    server that hangs; the test counts the connections made to it."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.setblocking(False)
        self.port: int = self.listener.getsockname()[1]
        self.held: list[socket.socket] = []

    def connections(self) -> int:
        """How many connections clients have made to it so far."""
        while True:
            try:
                self.held.append(self.listener.accept()[0])
            except BlockingIOError:
                return len(self.held)

    def close(self) -> None:
        self.connections()
        for conn in self.held:
            conn.close()
        self.listener.close()


@contextmanager
def silent_server() -> Iterator[SilentServer]:
    """A server that accepts connections and never answers, closed on leaving."""
    server = SilentServer()
    try:
        yield server
    finally:
        server.close()
