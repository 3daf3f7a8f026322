"""What every endpoint of the read API shares: page size, throttling and ``?lang=``."""

from __future__ import annotations

import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import translation
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import Throttled, ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.throttling import AnonRateThrottle

from digest_site.page_cache import tag
from papers.languages import Language

# The one bound on a page of the read API (the search endpoint's ``limit`` uses it too).
PAGE_SIZE = 20
MAX_PAGE_SIZE = 100


class Cursor(CursorPagination):
    """Opaque ``cursor`` links; ``limit`` up to ``MAX_PAGE_SIZE``. Each view sets ``ordering``."""

    page_size = PAGE_SIZE
    page_size_query_param = "limit"
    max_page_size = MAX_PAGE_SIZE
    page_size_query_description = f"Items per page (1–{MAX_PAGE_SIZE}, default {PAGE_SIZE})."


log = logging.getLogger(__name__)


class AnonThrottle(AnonRateThrottle):
    """DRF's anonymous throttle (counts in Django's cache) at ``settings.API_ANON_RATE``,
    read on each request so a changed setting applies without a restart of the class."""

    def get_rate(self) -> str:
        return settings.API_ANON_RATE

    def allow_request(self, request, view) -> bool:
        # The counts live in the cache; when it is unreachable the API still answers (the
        # pages do too) rather than failing every request with a 500.
        try:
            return super().allow_request(request, view)
        except Exception:  # the cache backend's own errors (Redis down, timeouts)
            log.warning("API throttle skipped: the cache is unreachable", exc_info=True)
            return True


class _CachedAnswerThrottle(AnonThrottle):
    """The same count for an answer the page cache sends, whose request has no user yet:
    the page cache answers only requests without a session or credentials."""

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


def throttle_cached_answer(request: HttpRequest) -> HttpResponse | None:
    """The API's anonymous throttle for an answer from the page cache
    (``digest_site.page_cache.register_hit_check``): counted with the rendered answers,
    refused with the 429 DRF would send (its detail, in JSON, and Retry-After)."""
    throttle = _CachedAnswerThrottle()
    if throttle.allow_request(request, None):
        return None
    with translation.override(translation.get_language_from_request(request)):
        refusal = Throttled(throttle.wait())
    response = JsonResponse({"detail": str(refusal.detail)}, status=refusal.status_code)
    if refusal.wait:
        response["Retry-After"] = str(refusal.wait)
    return response


LANG_PARAMETER = OpenApiParameter(
    "lang",
    str,
    enum=Language.values,
    default=Language.EN,
    description="The language of texts and page URLs; a text missing in it falls back to "
    "the other language and says so (not_yet_translated).",
)

_detail = inline_serializer("ErrorDetail", {"detail": serializers.CharField()})
ERROR_RESPONSES = {
    400: OpenApiResponse(
        OpenApiTypes.OBJECT, description="A parameter is malformed: {parameter: [reasons]}."
    ),
    404: OpenApiResponse(_detail, description="Not published, unknown, or an invalid cursor."),
    429: OpenApiResponse(_detail, description="Too many requests; see Retry-After."),
}


class LanguageMixin:
    """Validates ``?lang=`` (400 when unknown) and renders the response in that language,
    so page URLs carry its prefix and fallbacks are marked against it."""

    lang: str = Language.EN
    # What the answers print, for the page cache (``page_cache.tag``): any paper.
    cache_tags: tuple[str, ...] = ("index",)

    def initial(self, request: Request, *args, **kwargs) -> None:
        super().initial(request, *args, **kwargs)
        tag(request, *self.cache_tags)
        lang = request.query_params.get("lang", Language.EN)
        if lang not in Language.values:
            raise ValidationError({"lang": [f"“{lang[:20]}” is not one of: en, zh."]})
        self.lang = lang

    def get_serializer_context(self) -> dict:
        return {**super().get_serializer_context(), "lang": self.lang}

    def list(self, request: Request, *args, **kwargs):
        with translation.override(self.lang):
            return super().list(request, *args, **kwargs)

    def retrieve(self, request: Request, *args, **kwargs):
        with translation.override(self.lang):
            return super().retrieve(request, *args, **kwargs)  # type: ignore[misc]
