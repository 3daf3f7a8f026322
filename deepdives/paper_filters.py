"""Conditions on papers that the dailies' public filters use (registered in ``apps.py``):
dailies cannot import this app, so it asks for them by name."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q

from deepdives.models import DeepDive, ReferenceCode
from deepdives.registry import PROGRAMS


def has_deep_dive() -> Q:
    """The paper has a published deep dive (readers see it once the paper's daily is out)."""
    dives = DeepDive.objects.filter(paper=OuterRef("pk"), status=DeepDive.Status.PUBLISHED)
    return Q(Exists(dives))


def _current_code() -> Q:
    """Runs of the program as it is now: a stored hash that still matches the source."""
    current = Q(pk__in=[])
    for name, program in PROGRAMS.items():
        try:
            current |= Q(slug=name, code_hash=program.code_hash())
        except (LookupError, OSError):
            continue  # a program that cannot be read has no current run
    return current


def has_verified_code() -> Q:
    """The paper has reference code whose last run passed and is not stale (the code has
    not changed since), as ``services.verification_state`` says "passed". Reads each
    registered program's source once to hash it."""
    codes = ReferenceCode.objects.filter(
        _current_code(),
        paper=OuterRef("pk"),
        last_status=ReferenceCode.RunStatus.PASSED,
        last_run_at__isnull=False,
    )
    return Q(Exists(codes))
