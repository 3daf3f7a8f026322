"""``/api/v1/docs/``: the OpenAPI schema as a page, rendered on the server.

drf-spectacular's Swagger and Redoc views load scripts from a CDN and run inline ones, which
the site's CSP (``script-src 'self'``) forbids; this page is plain HTML from the same schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.generators import SchemaGenerator

METHODS = ("get", "post", "put", "patch", "delete")


@dataclass
class Field:
    name: str
    type: str
    description: str = ""
    required: bool = False
    ref: str = ""


@dataclass
class Operation:
    method: str
    path: str
    anchor: str
    summary: str
    description: str
    parameters: list[Field] = field(default_factory=list)
    responses: list[Field] = field(default_factory=list)


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _type(schema: dict) -> tuple[str, str]:
    """A short type ("string (date)", "array of Paper") and the component it names, if any."""
    if "$ref" in schema:
        name = _ref_name(schema["$ref"])
        return name, name
    for combined in ("allOf", "oneOf", "anyOf"):
        if combined in schema:
            parts = [_type(part) for part in schema[combined]]
            refs = [ref for _, ref in parts if ref]
            text = " or ".join(t for t, _ in parts)
            return text + (" or null" if schema.get("nullable") else ""), refs[0] if refs else ""
    kind = schema.get("type", "object")
    if kind == "array":
        inner, ref = _type(schema.get("items", {}))
        return f"array of {inner}", ref
    text = kind + (f" ({schema['format']})" if "format" in schema else "")
    if "enum" in schema:
        text += ": " + ", ".join(str(v) for v in schema["enum"] if v is not None)
    if schema.get("nullable"):
        text += " or null"
    return text, ""


def _fields(schema: dict) -> list[Field]:
    required = set(schema.get("required", []))
    rows = []
    for name, prop in schema.get("properties", {}).items():
        text, ref = _type(prop)
        rows.append(Field(name, text, prop.get("description", ""), name in required, ref))
    return rows


@cache
def api_reference() -> tuple[dict, list[Operation], list[tuple[str, list[Field]]]]:
    """The schema, its operations and its components (generated once per process)."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = []
    for path, item in schema["paths"].items():
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            params = []
            for p in op.get("parameters", []):
                text, ref = _type(p.get("schema", {}))
                where = p.get("in", "query")
                params.append(
                    Field(
                        p["name"],
                        f"{where}: {text}",
                        p.get("description", ""),
                        p.get("required", False),
                        ref,
                    )
                )
            responses = []
            for code, response in op.get("responses", {}).items():
                body = response.get("content", {}).get("application/json", {}).get("schema", {})
                text, ref = _type(body) if body else ("", "")
                responses.append(Field(code, text, response.get("description", ""), ref=ref))
            operations.append(
                Operation(
                    method.upper(),
                    path,
                    op.get("operationId", f"{method}-{path}"),
                    op.get("summary", ""),
                    op.get("description", ""),
                    params,
                    responses,
                )
            )
    components = [
        (name, _fields(component))
        for name, component in sorted(schema.get("components", {}).get("schemas", {}).items())
    ]
    return schema["info"], operations, components


def api_docs(request: HttpRequest) -> HttpResponse:
    info, operations, components = api_reference()
    return render(
        request,
        "dailies/api/docs.html",
        {"info": info, "operations": operations, "components": components},
    )
