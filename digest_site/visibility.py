"""Who reads what is not public yet: one rule for every app's public reads.

What "published" means belongs to the content (``dailies.models.published_q`` and the
``published()`` querysets built on it). Who sees more than that is decided here: staff,
signed in and active, preview drafts and scheduled content, which the pages mark as a
preview; everyone else reads what is published. The querysets' ``visible_to(user)`` ask
``may_preview``, so a public read names its reader and never the rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, TypeAlias

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

# Who asks: a request's user (signed in or anonymous), or ``PUBLIC``.
Reader: TypeAlias = "AbstractBaseUser | AnonymousUser | None"

PUBLIC: Final = None
"""The reader of what is the same for everyone, whoever asks: listings, feeds, the sitemap,
the JSON API. Shared and cached, they never show a preview."""


def may_preview(user: Reader) -> bool:
    """Staff preview drafts and scheduled dailies and deep dives; everyone else (``PUBLIC``
    included) reads only what is published."""
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_staff)
