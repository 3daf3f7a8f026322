"""The read-only MCP server (the official ``mcp`` SDK's ``MCPServer``): five tools over the
published content (``agents.tools``), served over stdio by ``manage.py mcp_server`` and over
streamable HTTP at ``/mcp/`` (``agents.views``).

The tools read the ORM through ``sync_to_async`` (thread-sensitive): under ``/mcp/`` that is
the request's own thread and database connection; under stdio one thread of its own.
Imported only where it is used: the SDK (Starlette, pydantic) stays out of every start.
"""

from __future__ import annotations

import functools
from typing import Any

import anyio
from asgiref.sync import sync_to_async
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import ToolAnnotations

from agents import tools

INSTRUCTIONS = (
    "Read-only access to Paper Daily, an edited bilingual (en/zh) daily digest of research "
    "papers: search the published papers, read a track's daily or weekly roundup, a paper "
    "with its scores and summaries, and the topics. Only published content is served; "
    "machine-written texts say so (provenance)."
)
READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False)


async def _call(fn, /, *args, **kwargs) -> dict[str, Any]:
    try:
        return await sync_to_async(functools.partial(fn, *args, **kwargs), thread_sensitive=True)()
    except tools.ToolInputError as error:
        raise ToolError(str(error)) from error


def build_server() -> MCPServer:
    server = MCPServer(name="paper-daily", instructions=INSTRUCTIONS)

    @server.tool(annotations=READ_ONLY)
    async def search_papers(
        query: str = "",
        topic: str | None = None,
        track: str | None = None,
        lang: str = "en",
        limit: int = tools.DEFAULT_LIMIT,
        offset: int = 0,
    ) -> dict[str, Any]:
        """Search the published papers in either language (as the site's search ranks
        them); without a query, list them newest first. Filters: topic and track slugs.
        limit 1-100, offset up to the search's bound."""
        return await _call(
            tools.search_papers,
            query,
            topic=topic,
            track=track,
            lang=lang,
            limit=limit,
            offset=offset,
        )

    @server.tool(annotations=READ_ONLY)
    async def get_daily(track: str, date: str, lang: str = "en") -> dict[str, Any]:
        """A track's published daily (date YYYY-MM-DD): intro, stats and every entry with
        its score, summary and links."""
        return await _call(tools.get_daily, track, date, lang=lang)

    @server.tool(annotations=READ_ONLY)
    async def get_paper(slug: str, lang: str = "en") -> dict[str, Any]:
        """A published paper by its slug: summary, authors, venue, links, scores with their
        rubric, the dailies it appeared in."""
        return await _call(tools.get_paper, slug, lang=lang)

    @server.tool(annotations=READ_ONLY)
    async def list_topics(lang: str = "en", limit: int = tools.DEFAULT_LIMIT) -> dict[str, Any]:
        """The topics of the published papers, the most papers first (limit 1-100)."""
        return await _call(tools.list_topics, lang=lang, limit=limit)

    @server.tool(annotations=READ_ONLY)
    async def get_week(track: str, week: str, lang: str = "en") -> dict[str, Any]:
        """A track's weekly roundup for an ISO week such as 2026-W44: the week's dailies,
        editors' picks, highest scores, deep dives and verified code, and its intro once
        an editor has published it."""
        return await _call(tools.get_week, track, week, lang=lang)

    return server


@functools.cache
def server() -> MCPServer:
    """The process's server (its tools are registered once)."""
    return build_server()


# Django checks the Host against ALLOWED_HOSTS before the view runs; the SDK's own check
# (for servers bound to localhost) would refuse the site's real host names.
_SECURITY = TransportSecuritySettings(enable_dns_rebinding_protection=False)


async def handle_http(scope: dict, body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """One HTTP request to ``/mcp/`` answered by the SDK's streamable HTTP transport,
    stateless and in JSON (each POST carries one message and gets its answer in the
    response): status, headers and body. A manager a request, as stateless mode makes a
    transport a request anyway."""
    manager = StreamableHTTPSessionManager(
        app=server()._lowlevel_server,
        json_response=True,
        stateless=True,
        security_settings=_SECURITY,
        max_request_body_size=tools.MAX_BODY_BYTES,
    )
    answered = anyio.Event()
    pending = [{"type": "http.request", "body": body, "more_body": False}]
    status, headers, chunks = 500, [], []

    async def receive() -> dict:
        if pending:
            return pending.pop()
        await answered.wait()  # the client stays connected until its answer is sent
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status, headers = message["status"], list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                answered.set()

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    answered.set()
    return status, headers, b"".join(chunks)
