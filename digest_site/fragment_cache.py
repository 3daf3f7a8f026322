"""Rendered fragments kept per process under the data they were rendered from.

The page cache (``page_cache``) keeps whole pages under the content version, which every
publish and edit bumps: after a bump every page renders afresh, though most of what a page
prints has not changed (a daily's entries are the same papers, summaries and scores as
before another track's daily was published). A fragment kept here is keyed by its inputs
themselves, not by a version: the key is an exact copy of every value the fragment's
renderer receives (``inputs_key``: the objects' fields and the lists and objects hung on
them, to the last character), with the language, time zone and script prefix of the render
and the template object. Nothing has to retire it: a fragment whose inputs changed has
another key, and the old one ages out of the LRU. Where the values are built from rows read
for that fragment alone (a home page section: ``dailies.selectors.HomeTrack``), the key is
a copy of those rows, as the database returned them, and the values are built only to
render it: what is built from equal rows is equal.

The renderer must read nothing but what it is given: the partials are rendered with their
values alone (``template.render(values)``; the Jinja environment's StrictUndefined makes a
name they are not given an error), and values of a kind ``inputs_key`` cannot copy exactly
(a queryset, an object without fields) are refused, so that fragment is rendered each time.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import fields, is_dataclass

from django.conf import settings
from django.core.signals import setting_changed
from django.db.models import Model
from django.urls import get_script_prefix
from django.utils.timezone import get_current_timezone_name
from django.utils.translation import get_language
from markupsafe import Markup

# Values kept as they are, beside their type (a bool is an int, and 1 == 1.0 == True). A
# datetime is not: two that are the same instant in other zones are equal but print apart.
_SCALARS = frozenset({str, int, float, bool, type(None), bytes, dt.date, dt.time, dt.timedelta})


class NotKeyable(TypeError):
    """A value ``inputs_key`` cannot copy exactly: the fragment is rendered every time."""


def inputs_key(value) -> tuple:
    """A hashable copy of ``value`` that equals another's exactly when a renderer reading
    them sees the same: a model instance's loaded fields and what was hung on it (lists,
    related objects), a dataclass's fields, lists, tuples and dicts in their order, every
    value with its type (a ``Decimal`` as its text: ``1.0`` and ``1.00`` are equal but
    print differently; a ``Markup`` apart from a ``str``). An object already being copied
    (a cycle) is named by its class and primary key."""
    return (type(value), _key(value, set()))


def _keys(values, open_: set) -> tuple:
    # The values' types, then the values (scalars as they are, the rest copied). Most
    # lists and rows are scalars only: those are copied as they are, without a Python loop.
    types = tuple(map(type, values))
    if _SCALARS.issuperset(types):
        return (types, tuple(values))
    return (types, tuple([v if type(v) in _SCALARS else _key(v, open_) for v in values]))


def _key(value, open_: set):
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list or kind is tuple:
        return _keys(value, open_)
    if isinstance(value, dt.datetime):
        return (value, value.tzinfo)
    if isinstance(value, Model):
        if id(value) in open_:
            return ("cycle", value.pk)
        open_.add(id(value))
        own = dict(value.__dict__)
        related = own.pop("_state").fields_cache  # related objects read with it, by name
        key = (
            tuple(own),
            _keys(own.values(), open_),
            (tuple(related), _keys(related.values(), open_)) if related else (),
        )
        open_.discard(id(value))
        return key
    if isinstance(value, dict):
        return (_keys(list(value), open_), _keys(value.values(), open_))
    if isinstance(value, str):  # Markup and other marked strings (their type is kept)
        return str(value)
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    if isinstance(value, enum.Enum):
        return _key(value.value, open_)
    if isinstance(value, (list, tuple)):
        return _keys(value, open_)
    if is_dataclass(value) and not isinstance(value, type):
        if id(value) in open_:
            raise NotKeyable(f"a cycle through {kind.__name__}")
        open_.add(id(value))
        key = _keys([getattr(value, f.name) for f in fields(value)], open_)
        open_.discard(id(value))
        return key
    raise NotKeyable(f"{kind.__name__} values are not copied into fragment keys")


class FragmentCache:
    """Rendered fragments by their inputs, the least recently used dropped past ``kept``
    (``FRAGMENT_CACHE_KEPT`` by default); none kept with ``FRAGMENT_CACHE_ENABLED`` off."""

    def __init__(self, kept: int | None = None) -> None:
        self._kept = kept
        self.fragments: OrderedDict[tuple, Markup] = OrderedDict()
        self.lock = threading.Lock()

    @property
    def kept(self) -> int:
        if not settings.FRAGMENT_CACHE_ENABLED:
            return 0
        return settings.FRAGMENT_CACHE_KEPT if self._kept is None else self._kept

    def __len__(self) -> int:
        return len(self.fragments)

    def clear(self) -> None:
        with self.lock:
            self.fragments.clear()

    def rendered(self, template, inputs, render: Callable[[], Markup]) -> Markup:
        """``render()``, a rendering of ``template`` from ``inputs`` and nothing else, as
        kept from an earlier call with equal inputs in the same language, time zone and
        script prefix; rendered and kept otherwise (rendered, not kept, when ``inputs``
        cannot be copied exactly)."""
        kept = self.kept
        if not kept:
            return render()
        try:
            key = (
                template,
                get_language(),
                get_current_timezone_name(),
                get_script_prefix(),
                inputs_key(inputs),
            )
        except NotKeyable:
            return render()
        with self.lock:
            html = self.fragments.get(key)
            if html is not None:
                self.fragments.move_to_end(key)
                return html
        html = render()
        with self.lock:
            self.fragments[key] = html
            while len(self.fragments) > kept:
                self.fragments.popitem(last=False)
        return html


# A daily's entries (dailies.daily_page.entries_html), the papers of the index and topic
# pages (digest_site.jinja, index_item), the home page's tracks (daily_page.home_sections)
# and the partials Django templates keep ({% kept %}: the home page's topics, each track's
# feed links), each kept within FRAGMENT_CACHE_KEPT.
entries = FragmentCache()
index_items = FragmentCache()
home_tracks = FragmentCache()
partials = FragmentCache()


def clear() -> None:
    entries.clear()
    index_items.clear()
    home_tracks.clear()
    partials.clear()


def _forget(**kwargs) -> None:
    # A test that changes settings (the site's URL, the languages) gets fresh renders.
    clear()


setting_changed.connect(_forget, dispatch_uid="fragment_cache_forget")
