from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from deepdives import services
from deepdives.registry import PROGRAMS


class Command(BaseCommand):
    help = "Run registered reference programs and store their verified output."

    def add_arguments(self, parser) -> None:
        parser.add_argument("names", nargs="*", help="program names (default: all)")
        parser.add_argument("--timeout", type=int, default=None, help="seconds per program")

    def handle(self, *args, names: list[str], timeout: int | None, **options) -> None:
        unknown = [n for n in names if n not in PROGRAMS]
        if unknown:
            raise CommandError(
                f"not registered: {', '.join(unknown)} (known: {', '.join(PROGRAMS)})"
            )
        services.reference_sync()
        failed = []
        progress = tqdm(names or list(PROGRAMS), unit="program", disable=options["verbosity"] < 1)
        for name in progress:
            progress.set_description(name)
            row = services.reference_verify(name=name, timeout_s=timeout)
            line = f"{name}: {row.last_status} in {row.last_duration_ms / 1000:.1f} s"
            if row.last_error:
                line += f" — {row.last_error.splitlines()[0]}"
                failed.append(name)
            if options["verbosity"] >= 1:
                progress.write(line)
        if failed:
            raise CommandError(f"failed: {', '.join(failed)}")
