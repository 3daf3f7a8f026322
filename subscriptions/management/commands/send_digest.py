import sys

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from dailies.management.commands._args import daily_from_args
from subscriptions import limits, services


class Command(BaseCommand):
    help = (
        "Mail a published daily to every confirmed subscriber of its track who has not had it. "
        "Idempotent: a second run sends nothing. Deliveries that failed for a passing reason "
        "are sent on the next run."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("track", help="track slug")
        parser.add_argument("date", help="YYYY-MM-DD")

    def handle(self, *args, track: str, date: str, **options) -> None:
        daily = daily_from_args(track, date)
        if not daily.is_published:
            raise CommandError(f"{daily} is {daily.status}, not published: nothing is mailed")
        ids = list(services.digest_recipients(daily).values_list("pk", flat=True).distinct())
        totals = {"sent": 0, "skipped": 0, "failed": 0, "retry": 0}
        with tqdm(
            total=len(ids),
            unit="mail",
            disable=not sys.stderr.isatty() or options["verbosity"] < 1,
            file=sys.stderr,
        ) as bar:
            for start in range(0, len(ids), limits.BATCH_SIZE):
                batch = ids[start : start + limits.BATCH_SIZE]
                outcome = services.digest_send_batch(daily_id=daily.pk, subscriber_ids=batch)
                for key, n in outcome.as_dict().items():
                    totals[key] += n
                bar.update(len(batch))
        self.stdout.write(
            f"{track} {date}: sent {totals['sent']}, skipped {totals['skipped']}, "
            f"failed {totals['failed']}, to retry {totals['retry']} "
            f"({len(ids)} subscribers due)"
        )
        if totals["failed"] or totals["retry"]:
            sys.exit(1)
