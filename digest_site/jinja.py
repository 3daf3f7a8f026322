"""The Jinja2 environment of the partials a page repeats down a list (``<app>/jinja2/``).

A daily prints each entry with its score breakdown, provenance, links, topics and citation;
with Django's template engine that is about a thousand nodes a page, and rendering them was
5 of the 6.5 ms of an uncached daily's render. Jinja2 compiles a template to Python, so the
same partials render in a fraction of that. The pages' frames stay Django templates and
place a partial with ``{% jinja %}`` (``dailies/templatetags/digest.py``).

The partials behave as Django's templates do: output is escaped unless marked safe; a
translated word is trusted and the values put into it are escaped (``_("… %(n)s …")|format(n=…)``,
as ``{% blocktranslate %}`` does); a variable the template does not receive is an error,
not an empty string. Their words are written ``_("…")`` with a literal, which ``make
messages`` finds in them as in Django's templates; it cannot see ``ngettext`` there, so a
word with a plural comes from a Python helper (``digest.paper_count``).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

import jinja2
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.template import engines
from django.urls import reverse
from django.utils.timezone import template_localtime
from django.utils.translation import get_language, gettext, ngettext
from markupsafe import Markup, escape, soft_str

from dailies.extensions import fragments as registered_fragments
from dailies.templatetags import digest
from digest_site import fragment_cache
from digest_site.slug_urls import plain_url, slug_url
from papers.languages import pick_language


def _trusted(text: str) -> Markup:
    # A catalogue's translation is written by us, as a template's literal text is.
    return Markup(text)


def _gettext(message: str) -> Markup:
    return _trusted(gettext(message))


def _ngettext(singular: str, plural: str, number: int) -> Markup:
    return _trusted(ngettext(singular, plural, number))


def _format(text, /, **values):
    """``_("… %(value)s …")|format(value=…)``: the builtin filter's %-formatting (values
    escaped into a trusted word), with any placeholder name; the builtin's own first
    argument is called ``value``, as Django's catalogue names some placeholders."""
    return soft_str(text) % values


def _date(value) -> str:
    """``{{ value|date:"Y-m-d" }}``: a datetime in the current time zone, then its date."""
    return digest.iso_date(template_localtime(value))


def _date_time(value) -> str:
    """``{{ value|date:"Y-m-d H:i" }}``: a datetime in the current time zone, to the minute."""
    return f"{template_localtime(value):%Y-%m-%d %H:%M}"


def _url(viewname: str, *args) -> str:
    """``{% url viewname arg … %}``."""
    return reverse(viewname, args=args)


def _local_name(obj) -> str:
    """A track's or topic's name in the current language (``{% local_name %}``)."""
    return obj.name(get_language())


# Words the partials translated, per language, kept per process: the catalogues are read
# once at start. Bounded: only ``_("…")`` literals come here, but a word computed at render
# time would be one more each time.
_WORDS_KEPT = 2_000
_words: dict[str | None, dict[str, Markup]] = {}


def translator():
    """``_`` for one render: a word a partial repeats down a list (a label each entry prints),
    or that every page prints, is looked up in the catalogue once per process and language."""
    known = _words.setdefault(get_language(), {})

    def translate(message: str) -> Markup:
        text = known.get(message)
        if text is None:
            text = _gettext(message)
            if len(known) < _WORDS_KEPT:
                known[message] = text
        return text

    return translate


@receiver(setting_changed)
def _forget_words(**kwargs) -> None:
    _words.clear()


@jinja2.pass_context
def _fragments(context: jinja2.runtime.Context, place: str, **values) -> Markup:
    """The Jinja partials apps registered for ``place`` (``dailies.extensions``), rendered
    with ``values``; the places the partials name take Jinja templates."""
    env, translate = context.environment, context["_"]
    return Markup(
        "".join(
            env.get_template(name).render({**values, "_": translate})
            for name in registered_fragments(place)
        )
    )


@jinja2.pass_context
def _index_item(context: jinja2.runtime.Context, paper, language: str) -> Markup:
    """A paper of the index or a topic page (``dailies/_index_item.html``), rendered from the
    paper with what was read onto it (``selectors.read_index_lists``) and the language alone,
    and kept by them (``fragment_cache.index_items``)."""
    return render_kept(
        fragment_cache.index_items,
        "dailies/_index_item.html",
        (paper, language),
        lambda: {"paper": paper, "row": None, "language": language},
        context["_"],
    )


@dataclass(frozen=True)
class _StandIns:
    """A search result's row (``search.page.ResultRow``) as the kept item is rendered with:
    markers where the result's marked title, its excerpt, the excerpt's language, the note
    under a machine's excerpt and the mark of a machine's headline go."""

    title: Markup
    excerpt: Markup | None
    excerpt_language: Markup
    excerpt_note: Markup
    headline_note: Markup


# ``<`` never reaches the page unescaped from text, and the token is this process's own:
# nothing printed from the data can be taken for a marker.
_MARKER = f"<\x00{secrets.token_hex(8)}:"
_TITLE, _EXCERPT, _EXCERPT_LANGUAGE, _EXCERPT_NOTE, _HEADLINE_NOTE = (
    Markup(f"{_MARKER}{name}>") for name in "telnh"
)


@jinja2.pass_context
def _search_item(context: jinja2.runtime.Context, row, language: str) -> Markup:
    """A search result: the index's item of its paper (``dailies/_index_item.html``), but for
    the title and excerpt the query marked. Those are the only parts of it that depend on the
    query, so the item is kept as rendered with markers in their places (by the paper, the
    language and whether an excerpt is printed: ``fragment_cache.index_items``) and the
    result's own title, excerpt, excerpt language, the note under a machine's excerpt and
    the mark of a machine's headline fill them in."""
    has_excerpt = bool(row.excerpt)
    paper = row.paper
    html = render_kept(
        fragment_cache.index_items,
        "dailies/_index_item.html",
        (paper, language, has_excerpt),
        lambda: {
            "paper": paper,
            "row": _StandIns(
                _TITLE,
                _EXCERPT if has_excerpt else None,
                _EXCERPT_LANGUAGE,
                _EXCERPT_NOTE,
                _HEADLINE_NOTE,
            ),
            "language": language,
        },
        context["_"],
    )
    return (
        html.replace(_TITLE, row.title)
        .replace(_EXCERPT, row.excerpt or "")
        .replace(_EXCERPT_LANGUAGE, escape(row.excerpt_language))
        .replace(_EXCERPT_NOTE, _machine_note(row.excerpt_summary, context["_"]))
        .replace(_HEADLINE_NOTE, _headline_note(row, language))
    )


def _headline_note(row, language: str) -> Markup:
    """Beside the headline of a result whose excerpt came from another text than the
    headline's summary (the abstract, the summary in the other language), which then has no
    note on the item: "Machine draft" when a machine drafted that summary
    (``digest.headline_mark``). An item without an excerpt prints the summary and its note."""
    headline = pick_language(row.paper.summary_list, language)
    if not row.excerpt or row.excerpt_summary is headline:
        return Markup("")
    return Markup(digest.headline_mark(headline))


def _machine_note(summary, translate) -> Markup:
    """Under an excerpt cut from a summary a machine drafted, who wrote it (as under an
    entry: ``dailies/_provenance.html``); nothing under an editor's or an abstract's."""
    if summary is None or summary.provenance == summary.Provenance.EDITOR:
        return Markup("")
    template = engines["jinja2"].env.get_template("dailies/_provenance.html")
    return Markup(template.render({"summary": summary, "published_at": None, "_": translate}))


class _Environment(jinja2.Environment):
    """Jinja's environment with each template's globals as one plain dict.

    Every render and include makes a context, which copies the template's globals into its
    parent and lists their names; Jinja keeps them as a ChainMap over the environment's,
    whose copy and listing run in Python, key by key (about a tenth of an uncached daily's
    render, for its 40-odd contexts). A dict copies in C. The environment's globals are all
    set before a template loads (``environment``), as Jinja asks of them anyway.
    """

    def make_globals(self, d):
        return {**self.globals, **(d or {})}


def environment(**options) -> jinja2.Environment:
    # Django's backend sets a lenient Undefined (and DebugUndefined under DEBUG): here a
    # value a partial is not given is an error in tests, development and production alike.
    options["undefined"] = jinja2.StrictUndefined
    # As Django keeps a template file's last newline.
    options.setdefault("keep_trailing_newline", True)
    env = _Environment(extensions=["jinja2.ext.i18n"], **options)
    env.install_gettext_callables(_gettext, _ngettext, newstyle=False)
    env.globals.update(
        {
            "bibtex": digest.bibtex,
            "entry_heading": digest.entry_heading,
            "excerpt": digest.excerpt,
            "full_title": digest.full_title,
            "headline_mark": digest.headline_mark,
            "fragments": _fragments,
            "index_item": _index_item,
            "search_item": _search_item,
            "get_language": get_language,
            "intro_is_machine": digest.intro_is_machine,
            "local": digest.local,
            "paper_count": digest.paper_count,
            "paper_links": digest.paper_links,
            "pick_language": pick_language,
            "plain_url": plain_url,
            "scored_candidates": digest.scored_candidates,
            "selected_count": digest.selected_count,
            "plain_citation": digest.plain_citation,
            "slug_url": slug_url,
            "url": _url,
            "venue_badge": digest.venue_badge,
            "with_takeaway": digest.with_takeaway,
        }
    )
    env.filters.update(
        {
            "byline": digest.byline,
            "date": _date,
            "date_time": _date_time,
            "format": _format,
            "local_name": _local_name,
            "native_name": digest.native_name,
            "score": digest.score,
            "truncate_clean": digest.truncate_clean,
        }
    )
    return env


def page_values(request) -> dict:
    """The context processor of the pages written in Jinja: ``_`` as the partials get it
    (a word looked up once a render; the i18n extension's own ``_`` costs a context call
    each time)."""
    return {"_": translator()}


def render_kept(
    kept: fragment_cache.FragmentCache,
    template_name: str,
    inputs,
    values: Callable[[], dict],
    translate: Callable[[str], Markup],
) -> Markup:
    """``template_name`` rendered with ``values()`` alone (and ``translate`` as ``_``), kept in
    ``kept`` under ``inputs``: everything ``values()`` is made from (``fragment_cache``)."""
    template = engines["jinja2"].env.get_template(template_name)
    return kept.rendered(
        template, inputs, lambda: Markup(template.render({**values(), "_": translate}))
    )


def render(template_name: str, values: dict) -> Markup:
    """``template_name`` from the Jinja engine's folders, rendered with ``values``."""
    template = engines["jinja2"].env.get_template(template_name)
    return Markup(template.render({**values, "_": translator()}))
