"""The track archive's read: a track's published dailies as cards."""

from __future__ import annotations

from django.db.models import QuerySet

from dailies.models import Daily
from dailies.selectors.common import daily_cards
from digest_site.visibility import PUBLIC
from papers.models import Track


def track_archive(track: Track) -> QuerySet[Daily]:
    """A track's published dailies as cards, newest first."""
    return daily_cards(Daily.objects.visible_to(PUBLIC).filter(track=track)).order_by("-date")
