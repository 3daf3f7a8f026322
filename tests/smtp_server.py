"""A real SMTP server on 127.0.0.1 (aiosmtpd) that keeps every message it accepts.

Tests tell it to refuse some recipients (``refuse["a@b"] = "550 5.1.1 No such user"``), to
fail the next connections, or to be slow, and read what arrived with ``to(address)``.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from email import message_from_bytes, policy
from email.message import EmailMessage

from aiosmtpd.controller import Controller


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RecordingHandler:
    def __init__(self) -> None:
        self.messages: list[tuple[list[str], EmailMessage]] = []
        self.refuse: dict[str, str] = {}  # recipient → reply to its RCPT
        self.data_delay = 0.0  # seconds before a DATA is accepted (to make senders overlap)
        self._lock = threading.Lock()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        reply = self.refuse.get(address.lower())
        if reply:
            return reply
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.data_delay:
            await asyncio.sleep(self.data_delay)
        message = message_from_bytes(envelope.content, policy=policy.default)
        with self._lock:
            self.messages.append((list(envelope.rcpt_tos), message))
        return "250 Message accepted for delivery"


class SMTPServer:
    def __init__(self, port: int | None = None) -> None:
        self.handler = RecordingHandler()
        self.host = "127.0.0.1"
        self.port = port or free_port()
        self.controller = Controller(self.handler, hostname=self.host, port=self.port)

    def __enter__(self) -> SMTPServer:
        self.controller.start()
        return self

    def __exit__(self, *exc) -> None:
        self.controller.stop()

    @property
    def refuse(self) -> dict[str, str]:
        return self.handler.refuse

    @property
    def messages(self) -> list[EmailMessage]:
        with self.handler._lock:
            return [m for _, m in self.handler.messages]

    def to(self, address: str) -> list[EmailMessage]:
        with self.handler._lock:
            return [m for rcpt, m in self.handler.messages if address in rcpt]

    def clear(self) -> None:
        with self.handler._lock:
            self.handler.messages.clear()
