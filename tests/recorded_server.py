"""A real HTTP server on 127.0.0.1 that serves recorded responses and misbehaves on purpose.

Each path has a script of responses; requests take them in turn and the last one repeats.
A response can be delayed (read timeouts), cut short (truncated bodies) or carry any status
and headers. Every request is logged with its time, so tests can check spacing and headers.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/atom+xml; charset=utf-8"
    delay: float = 0.0  # seconds before the headers are sent
    truncate_to: int | None = None  # send only this many bytes of the body


@dataclass
class Logged:
    at: float
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes = b""


class RecordedServer:
    def __init__(self) -> None:
        self.scripts: dict[str, list[Reply]] = {}
        self.choosers: dict[str, object] = {}
        self.log: list[Logged] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self._answer(self.rfile.read(length) if length else b"")

            def do_GET(self) -> None:
                self._answer(b"")

            def _answer(self, request_body: bytes) -> None:
                parts = urlsplit(self.path)
                with server._lock:
                    server.log.append(
                        Logged(
                            time.monotonic(),
                            parts.path,
                            parse_qs(parts.query),
                            dict(self.headers),
                            request_body,
                        )
                    )
                    reply = server._next(parts.path, parse_qs(parts.query))
                if reply.delay:
                    time.sleep(reply.delay)
                body = reply.body
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if reply.status != 304:
                        self.wfile.write(
                            body[: reply.truncate_to] if reply.truncate_to is not None else body
                        )
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a read timeout): expected
                if reply.truncate_to is not None:
                    self.close_connection = True

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def _next(self, path: str, query: dict) -> Reply:
        chooser = self.choosers.get(path)
        if chooser is not None:
            return chooser(query)
        script = self.scripts.get(path)
        if not script:
            return Reply(status=404, body=b"not found", content_type="text/plain")
        return script.pop(0) if len(script) > 1 else script[0]

    def serve(self, path: str, *replies: Reply) -> str:
        self.scripts[path] = list(replies)
        return self.url(path)

    def route(self, path: str, chooser) -> str:
        """Answer by the query string: ``chooser(query) -> Reply``."""
        self.choosers[path] = chooser
        return self.url(path)

    def url(self, path: str) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}{path}"

    def requests_to(self, path: str) -> list[Logged]:
        return [entry for entry in self.log if entry.path == path]

    def __enter__(self) -> RecordedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
