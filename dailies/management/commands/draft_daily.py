import json
import sys

from django.core.management.base import BaseCommand
from tqdm import tqdm

from dailies.drafting import daily_draft
from dailies.management.commands._args import daily_from_args


class Command(BaseCommand):
    help = (
        "Draft the summaries of a daily's entries and its intro, in both languages where the "
        "drafter writes both. Editors' texts are never replaced."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("track", help="track slug")
        parser.add_argument("date", help="YYYY-MM-DD")
        parser.add_argument(
            "--redraft", action="store_true", help="replace machine drafts drafted before"
        )
        parser.add_argument(
            "--json", action="store_true", help="one JSON line per entry, then a summary line"
        )

    def handle(self, *args, track: str, date: str, **options) -> None:
        daily = daily_from_args(track, date)
        with tqdm(
            total=daily.entries.count(),
            unit="entry",
            disable=not sys.stderr.isatty() or options["verbosity"] < 1,
            file=sys.stderr,
        ) as bar:
            outcome = daily_draft(daily=daily, redraft=options["redraft"], progress=bar.update)
        if options["json"]:
            for entry in outcome.entries:
                self.stdout.write(json.dumps(entry.as_dict(), ensure_ascii=False))
            self.stdout.write(json.dumps(outcome.summary_line(), ensure_ascii=False))
        else:
            line = outcome.summary_line()
            self.stdout.write(
                f"{track} {date}: drafted {line['drafted']} entries, {line['flagged']} flagged; "
                f"intro {', '.join(line['intro']) or 'unchanged'}"
            )
            for entry in outcome.entries:
                for flag in entry.as_dict()["flags"]:
                    self.stdout.write(
                        f"  flag {entry.canonical_id} [{flag['language']}] "
                        f"{flag['kind']}: {flag['text']}"
                    )
        if outcome.stopped:
            self.stderr.write(f"draft_daily: stopped: {outcome.stopped}")
            sys.exit(1)
