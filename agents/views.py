"""``/mcp/``: the MCP server over streamable HTTP, served by Django (WSGI) one request at a
time: the request becomes an ASGI call of the SDK's transport in stateless JSON mode, run
in an event loop for the request (``async_to_sync``)."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from agents.tools import MAX_BODY_BYTES
from dailies.public_api.common import throttle_cached_answer


def _scope(request: HttpRequest) -> dict:
    headers = [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in request.headers.items()
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": headers,
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "server": (request.get_host(), 0),
    }


@csrf_exempt  # an API for agents: no cookies are read, nothing is changed
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    # The read API's anonymous throttle, counted with its other answers.
    refusal = throttle_cached_answer(request)
    if refusal is not None:
        return refusal
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > MAX_BODY_BYTES:
        return JsonResponse(
            {"detail": f"The request body is over {MAX_BODY_BYTES} bytes."}, status=413
        )
    from agents.server import handle_http  # the SDK is imported by the requests that use it

    status, headers, body = async_to_sync(handle_http)(_scope(request), request.body)
    response = HttpResponse(body, status=status)
    for name, value in headers:
        if name.lower() not in (b"content-length",):
            response[name.decode("latin-1")] = value.decode("latin-1")
    response["Cache-Control"] = "no-store"
    return response
