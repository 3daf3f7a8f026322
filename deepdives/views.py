"""Deep-dive and reference-code pages."""

from __future__ import annotations

import ast

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import get_language
from django.views.decorators.http import condition
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from deepdives import services
from deepdives.citations import fill
from deepdives.models import DeepDive, ReferenceCode
from deepdives.registry import PROGRAMS
from deepdives.text import render_markdown_with_toc
from digest_site.page_cache import tag
from digest_site.visibility import PUBLIC, may_preview


def deep_dive_index(request: HttpRequest) -> HttpResponse:
    """Every published deep dive, newest paper appearance first, with its reading time
    (two queries: the bodies are deferred, the minutes are stored)."""
    deep_dives = (
        DeepDive.objects.visible_to(PUBLIC)
        .select_related("paper")
        .prefetch_related("paper__summaries")
        .defer("body_en", "body_zh")
        .order_by("-updated_at", "slug")
    )
    tag(request, "deepdives")
    return render(request, "deepdives/index.html", {"deep_dives": list(deep_dives)})


def _toc(toc_tokens: list[dict]) -> list[dict]:
    """The headings of a deep dive (Python-Markdown's toc extension's tokens, as its page
    names their anchors): the sections (h2) with their subsections (h3), [{id, name,
    children}]. The title (h1) is the page's own heading, not an entry."""
    sections: list[dict] = []

    def walk(tokens: list[dict]) -> None:
        for token in tokens:
            if token["level"] == 2:
                children = [c for c in token["children"] if c["level"] == 3]
                sections.append({"id": token["id"], "name": token["name"], "children": children})
            elif token["level"] < 2:
                walk(token["children"])

    walk(toc_tokens)
    return sections


def deep_dive_detail(request: HttpRequest, slug: str) -> HttpResponse:
    deep_dive = get_object_or_404(
        DeepDive.objects.visible_to(request.user).select_related("paper", "reference_code"),
        slug=slug,
    )
    tag(request, f"deepdive:{deep_dive.slug}", f"paper:{deep_dive.paper_id}")
    if deep_dive.reference_code is not None:
        tag(request, f"program:{deep_dive.reference_code.slug}")
    language = get_language()
    body = deep_dive.body(language)
    # Figures cited from the program's verified run are filled from it (deepdives.citations).
    code = deep_dive.reference_code
    filled, cited_problems = fill(str(body), code.last_measurements if code else None)
    body_html, toc_tokens = render_markdown_with_toc(filled)
    return render(
        request,
        "deepdives/detail.html",
        {
            "deep_dive": deep_dive,
            "paper": deep_dive.paper,
            "title": deep_dive.title(language),
            "body": body,
            "body_html": body_html,
            "toc": _toc(toc_tokens),
            "minutes": deep_dive.minutes(language),
            "cited_problems": cited_problems,
            "body_text": filled,
            "preview": may_preview(request.user)
            and not DeepDive.objects.visible_to(PUBLIC).filter(pk=deep_dive.pk).exists(),
        },
    )


def _visible_code(request: HttpRequest, name: str) -> ReferenceCode:
    if name not in PROGRAMS:
        raise Http404("no such program")
    tag(request, f"program:{name}")
    return get_object_or_404(
        ReferenceCode.objects.visible_to(request.user).select_related("paper"), slug=name
    )


def code_index(request: HttpRequest) -> HttpResponse:
    rows = [
        row
        for row in ReferenceCode.objects.visible_to(PUBLIC)
        .select_related("paper")
        .prefetch_related("deep_dives")
        .order_by("name")
        if row.slug in PROGRAMS
    ]
    for row in rows:
        row.state = services.verification_state(row)
    tag(request, "programs")
    return render(request, "deepdives/code_index.html", {"rows": rows})


def code_detail(request: HttpRequest, name: str) -> HttpResponse:
    row = _visible_code(request, name)
    program = PROGRAMS[name]
    source = program.source_path().read_text(encoding="utf-8")
    # Line numbers are plain text (not links that look like links); each line keeps an
    # anchor (#L12) for linking to it.
    formatter = HtmlFormatter(linenos="table", cssclass="highlight", lineanchors="L")
    main = _main_function(source)
    main_html = ""
    if main is not None:
        first, last = main
        excerpt = "\n".join(source.splitlines()[first - 1 : last]) + "\n"
        main_html = highlight(
            excerpt,
            PythonLexer(),
            HtmlFormatter(linenos="table", cssclass="highlight", linenostart=first),
        )
    deep_dive = DeepDive.objects.visible_to(PUBLIC).filter(reference_code=row).first()
    return render(
        request,
        "deepdives/code_detail.html",
        {
            "row": row,
            "program": program,
            "state": services.verification_state(row),
            "source_html": highlight(source, PythonLexer(), formatter),
            "main_html": main_html,
            "main_lines": main,
            "source_lines": source.count("\n") + 1,
            "has_chart": program.chart is not None and bool(row.last_measurements),
            "deep_dive": deep_dive,
            "description": row.description(get_language()),
        },
    )


def _main_function(source: str) -> tuple[int, int] | None:
    """First and last line of the program's entry point: ``main()``, else the last
    top-level function."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    chosen = next((f for f in functions if f.name == "main"), functions[-1] if functions else None)
    if chosen is None:
        return None
    first = min([chosen.lineno, *(d.lineno for d in chosen.decorator_list)])
    return first, chosen.end_lineno or chosen.lineno


def _chart_etag(request: HttpRequest, name: str) -> str | None:
    row = ReferenceCode.objects.filter(slug=name).values("last_run_at", "code_hash").first()
    return (
        f'"{row["code_hash"][:16]}-{row["last_run_at"]:%s}"' if row and row["last_run_at"] else None
    )


@condition(etag_func=_chart_etag)
def code_chart(request: HttpRequest, name: str) -> HttpResponse:
    row = _visible_code(request, name)
    svg = services.reference_chart_svg(row)
    if svg is None:
        raise Http404("no chart for this program")
    response = HttpResponse(svg, content_type="image/svg+xml")
    # The SVG is ours, but serve it as an image that may not run anything.
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    return response


def code_source(request: HttpRequest, name: str) -> HttpResponse:
    _visible_code(request, name)
    source = PROGRAMS[name].source_path().read_bytes()
    response = HttpResponse(source, content_type="text/x-python; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}.py"'
    return response
