import json

from django.core.management.base import BaseCommand

from dailies.assembly import daily_assemble
from dailies.management.commands._args import track_and_date_from_args


class Command(BaseCommand):
    help = "Assemble (or refresh) a track's draft daily for a date from its scored candidates."

    def add_arguments(self, parser) -> None:
        parser.add_argument("track", help="track slug")
        parser.add_argument("date", help="YYYY-MM-DD")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args, track: str, date: str, **options) -> None:
        track_obj, day = track_and_date_from_args(track, date)
        result = daily_assemble(track=track_obj, date=day)
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict(), ensure_ascii=False))
        else:
            self.stdout.write(f"{track} {day}: {result.status} — {result.message}")
