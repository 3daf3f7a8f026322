"""``manage.py mcp_server``: the read-only MCP server over stdio, for an agent that starts it
as a subprocess (Claude Desktop, an IDE). It serves what the public reads, as ``/mcp/``."""

from __future__ import annotations

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Serve the read-only MCP server (search_papers, get_daily, get_paper, list_topics, "
        "get_week) over stdio."
    )

    requires_system_checks: list = []

    def handle(self, *args, **options) -> None:
        from agents.server import server  # the SDK is imported by the command that uses it

        server().run("stdio")
