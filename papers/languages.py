"""The two languages the site is written in, and how content falls back between them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from django.db import models
from django.utils.translation import gettext_lazy as _


class Language(models.TextChoices):
    EN = "en", _("English")
    ZH = "zh", _("Chinese")


LANGUAGE_CODES = tuple(Language.values)


def other_language(language: str) -> str:
    return Language.EN if language == Language.ZH else Language.ZH


class _HasLanguage(Protocol):
    language: str


T = TypeVar("T", bound=_HasLanguage)


def pick_language(items: Sequence[T], language: str) -> T | None:
    """The item written in ``language``, else one in the other language, else None."""
    by_language = {item.language: item for item in items}
    return by_language.get(language) or by_language.get(other_language(language))


class Localized(str):
    """Text in one language that remembers which language it is and which was asked for.

    Templates print it like a string and use ``is_fallback`` to show the
    "not yet translated" note and ``language`` for the ``lang`` attribute.
    """

    language: str
    requested: str

    def __new__(cls, text: str, *, language: str, requested: str) -> Localized:
        obj = super().__new__(cls, text)
        obj.language = language
        obj.requested = requested
        return obj

    @property
    def is_fallback(self) -> bool:
        return bool(self) and self.language != self.requested


def localized(obj: object, field: str, language: str) -> Localized:
    """``obj.<field>_<language>``, falling back to the other language when it is empty."""
    text = getattr(obj, f"{field}_{language}", "") or ""
    if text:
        return Localized(text, language=language, requested=language)
    other = other_language(language)
    return Localized(getattr(obj, f"{field}_{other}", "") or "", language=other, requested=language)
