"""``{% fragments place %}``: what apps above dailies registered for a place of its pages
(``dailies.extensions.register_fragment``)."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from dailies.extensions import fragments as registered_fragments

register = template.Library()

# The render-context key under which a page render keeps the fragment templates it resolved.
_RESOLVED = object()


@register.simple_tag(takes_context=True)
def fragments(context: template.Context, place: str, **values) -> SafeString:
    """The fragments registered for ``place``, rendered with this context and ``values``
    (``paper=paper``); nothing when none is registered.

    A daily's page renders a place once per entry, so the templates are looked up once per
    page render (kept in the render context, as ``{% include %}`` keeps its own) and each
    entry only renders them.
    """
    names = registered_fragments(place)
    if not names:
        return mark_safe("")
    resolved = context.render_context.dicts[0].setdefault(_RESOLVED, {})
    templates = resolved.get(place)
    if templates is None:
        engine = context.template.engine
        templates = resolved[place] = [engine.get_template(name) for name in names]
    with context.push(**values):
        return mark_safe("".join(fragment.render(context) for fragment in templates))
