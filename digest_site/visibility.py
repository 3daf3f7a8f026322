"""Who reads what is not public yet: one rule for every app's public reads.

What "published" means belongs to the content (``dailies.models.published_q`` and the
``published()`` querysets built on it). Who sees more than that is decided here: staff,
signed in and active, preview drafts and scheduled content, which the pages mark as a
preview; everyone else reads what is published. The querysets' ``visible_to(user)`` ask
``may_preview``, so a public read names its reader and never the rule.

Who may change what readers see is decided here too (``may_change``): contributors draft and
propose, editors change or delete what is published. Each admin and service that writes
public content asks it, of an object whose publicness its app registered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final, TypeAlias

from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext as _

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
    from django.db.models import Model, QuerySet

# Who asks: a request's user (signed in or anonymous), or ``PUBLIC``.
Reader: TypeAlias = "AbstractBaseUser | AnonymousUser | None"

PUBLIC: Final = None
"""The reader of what is the same for everyone, whoever asks: listings, feeds, the sitemap,
the JSON API. Shared and cached, they never show a preview."""


def may_preview(user: Reader) -> bool:
    """Staff preview drafts and scheduled dailies and deep dives; everyone else (``PUBLIC``
    included) reads only what is published."""
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_staff)


# -- Who changes what readers see ----------------------------------------------------------

EDITOR_PERMISSION: Final = "dailies.publish_daily"
"""Editors hold it (the Editor group); contributors, who draft and propose, do not."""

# Model → its objects readers see. The app that decides what is published registers each
# model (dailies: papers and tracks; papers: what readers see through them), so an app low
# in the stack asks about its own objects without importing the apps above it.
_published: dict[type[Model], Callable[[], QuerySet]] = {}


def register_published(model: type[Model], published: Callable[[], QuerySet]) -> None:
    """``published()`` is the queryset of ``model``'s objects readers see."""
    _published[model] = published


def published_objects(model: type[Model]) -> QuerySet:
    """The objects of ``model`` readers see. A model no app registered counts as wholly
    public: a forgotten registration leaves its objects to editors, not open to everyone."""
    published = _published.get(model)
    return published() if published is not None else model._default_manager.all()


def is_public(obj: Model) -> bool:
    """Readers see ``obj`` (runs a query); an object not saved yet is nobody's."""
    return obj.pk is not None and published_objects(type(obj)).filter(pk=obj.pk).exists()


def may_change_public(user: Reader) -> bool:
    """Editors change or delete what readers see; ``None`` is the system (ingest, drafting,
    the scheduler)."""
    return user is None or user.has_perm(EDITOR_PERMISSION)


def may_change(user: Reader, obj: Model) -> bool:
    """Contributors draft and propose; once readers see ``obj``, only editors change or
    delete it. Runs a query for users who are not editors."""
    return may_change_public(user) or not is_public(obj)


def check_may_change(user: Reader, obj: Model) -> None:
    """``may_change``, or ``PermissionDenied`` with a message saying why."""
    if not may_change(user, obj):
        raise PermissionDenied(
            _("%(obj)s is public: only editors may change or delete it.") % {"obj": obj}
        )
