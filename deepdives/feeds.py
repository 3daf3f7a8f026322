"""``/<lang>/feeds/code.atom``: reference-code verification as a feed.

One item per published program's last verified run — it passed, failed, or went stale (its
code changed since, see ``services.verification_state``). An item's id names the run and
the state, so a new run or a run going stale is a new item, and a re-render is not.
"""

from __future__ import annotations

import datetime as dt

from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from dailies.feeds import FEED_ITEMS, ContentFeed
from deepdives.models import ReferenceCode
from deepdives.registry import PROGRAMS
from deepdives.services import VerificationState, verification_state
from digest_site.visibility import PUBLIC

STATE_LABELS = {  # as on the code pages (deepdives/_status.html)
    VerificationState.PASSED: gettext_noop("Verified"),
    VerificationState.FAILED: gettext_noop("Failed"),
    VerificationState.STALE: gettext_noop("Stale: code changed since the last run"),
}


def _stale_since(row: ReferenceCode) -> dt.datetime:
    """When the program's source last changed in this checkout (its file's mtime), or its
    run if that is later: the time a stale run went stale."""
    mtime = PROGRAMS[row.slug].source_path().stat().st_mtime
    return max(row.last_run_at, dt.datetime.fromtimestamp(mtime, tz=dt.UTC))


class CodeFeed(ContentFeed):
    cache_tags = ("programs",)

    def runs(self) -> list[ReferenceCode]:
        """The published programs' last runs, newest first (one query, once per request)."""
        if not hasattr(self, "_runs"):
            rows = list(
                ReferenceCode.objects.visible_to(PUBLIC)
                .filter(last_run_at__isnull=False, slug__in=list(PROGRAMS))
                .select_related("paper")
                .defer("last_output")
            )
            for row in rows:
                row.state = verification_state(row)
                row.content_updated = (
                    _stale_since(row) if row.state == VerificationState.STALE else row.last_run_at
                )
            rows.sort(key=lambda r: (r.content_updated, r.slug), reverse=True)
            self._runs = rows[:FEED_ITEMS]
        return self._runs

    def items(self, obj) -> list[ReferenceCode]:
        return self.runs()

    def stamps(self, obj) -> list[tuple[str, dt.datetime]]:
        return [(f"{r.slug}/{r.state}", r.content_updated) for r in self.runs()]

    def title(self) -> str:
        return f"{gettext('Reference code')} — {gettext('Paper Daily')}"

    subtitle = description = title

    def link(self) -> str:
        return self.absolute(reverse("deepdives:code_index"))

    def feed_guid(self) -> str:
        return self.tag("feed", "code", self.lang)

    def item_title(self, row: ReferenceCode) -> str:
        return f"{row.name} — {gettext(STATE_LABELS[row.state])}"

    def item_link(self, row: ReferenceCode) -> str:
        return self.absolute(row.get_absolute_url())

    def item_guid(self, row: ReferenceCode) -> str:
        run = timezone.localtime(row.last_run_at, dt.UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        return self.tag("code", row.slug, run, row.state, self.lang)

    def item_pubdate(self, row: ReferenceCode) -> dt.datetime:
        return row.content_updated

    def item_description(self, row: ReferenceCode) -> str:
        return self.render(
            "deepdives/feeds/code.html",
            row=row,
            state=row.state,
            description=row.description(self.lang),
        )
