"""Template helpers for deep dives (their own pages and the fragments they add to dailies')."""

from __future__ import annotations

from django import template
from django.utils.translation import get_language

from deepdives.models import DeepDive

register = template.Library()


@register.filter
def deep_dive_minutes(deep_dive: DeepDive) -> int:
    """Reading time in the current language (stored: list pages defer the bodies)."""
    return deep_dive.minutes(get_language())
