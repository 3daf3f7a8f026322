import datetime as dt
import sys
import zoneinfo

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, no_translations

from dailies import services
from dailies.management.commands._args import daily_from_args


def _when(value: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        raise CommandError(f"not an ISO time (2026-10-28T08:00): {value!r}") from None
    if moment.tzinfo is None:  # a bare time is the editors' local time
        moment = moment.replace(tzinfo=zoneinfo.ZoneInfo(settings.EDITORIAL_TIME_ZONE))
    return moment


class Command(BaseCommand):
    help = (
        "Publish a daily now, or schedule it with --at, through the publishing checklist; "
        "exits 1 listing every reason when it is refused."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("track", help="track slug")
        parser.add_argument("date", help="YYYY-MM-DD")
        parser.add_argument(
            "--at", help="schedule at this ISO time (editorial time zone unless it has an offset)"
        )

    @no_translations  # operators read English, whatever language a test or shell left on
    def handle(self, *args, track: str, date: str, at: str | None = None, **options) -> None:
        daily = daily_from_args(track, date)
        try:
            if at:
                daily = services.daily_schedule(daily=daily, publish_at=_when(at))
                self.stdout.write(f"{daily}: scheduled for {daily.publish_at.isoformat()}")
            else:
                daily = services.daily_publish(daily=daily)
                self.stdout.write(f"{daily}: published at {daily.published_at.isoformat()}")
        except ValidationError as exc:
            self.stderr.write(f"publish_daily: {daily} was not published:")
            for message in exc.messages:
                self.stderr.write(f"- {message}")
            sys.exit(1)
