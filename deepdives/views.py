"""Deep-dive pages."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import get_language

from deepdives.models import DeepDive
from deepdives.text import render_markdown


def deep_dive_detail(request: HttpRequest, slug: str) -> HttpResponse:
    user = request.user
    staff = bool(user.is_authenticated and user.is_active and user.is_staff)
    queryset = DeepDive.objects.all() if staff else DeepDive.objects.published()
    deep_dive = get_object_or_404(queryset.select_related("paper", "reference_code"), slug=slug)
    language = get_language()
    body = deep_dive.body(language)
    return render(
        request,
        "deepdives/detail.html",
        {
            "deep_dive": deep_dive,
            "paper": deep_dive.paper,
            "title": deep_dive.title(language),
            "body": body,
            "body_html": render_markdown(body),
            "minutes": deep_dive.minutes(language),
            "preview": staff and not DeepDive.objects.published().filter(pk=deep_dive.pk).exists(),
        },
    )
