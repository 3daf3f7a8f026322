"""manage.py ingest SOURCE [--since --until] | --file PATH --format F --track SLUG [--json]"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from papers.ingest.service import (
    FORMATS,
    ingest_document,
    ingest_runs_fail_stale,
    ingest_source,
)
from papers.models import IngestRun, Source, Track

FORMAT_NAMES = sorted(kind.value for kind in FORMATS)  # Source.Kind values


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"not a date (YYYY-MM-DD): {value!r}") from None


class Command(BaseCommand):
    help = "Fetch one source now, backfill a date window, or import a downloaded file."

    def add_arguments(self, parser) -> None:
        parser.add_argument("source", nargs="?", help="source name or id")
        parser.add_argument("--since", type=_date, help="backfill from this date (YYYY-MM-DD)")
        parser.add_argument("--until", type=_date, help="backfill up to this date (YYYY-MM-DD)")
        parser.add_argument("--file", type=Path, help="import this file instead of fetching")
        parser.add_argument("--format", choices=FORMAT_NAMES, help="format of --file")
        parser.add_argument(
            "--track",
            action="append",
            default=[],
            help="track slug the imported papers are candidates for",
        )
        parser.add_argument(
            "--json", action="store_true", help="print the run as one JSON object on the last line"
        )

    def handle(self, *args, **options) -> None:
        try:
            run = self._run(options)
        except CommandError as exc:
            # One line, no traceback: operators grep these.
            self.stderr.write(f"ingest: {exc}")
            sys.exit(2)
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "status": run.status,
                        "fetched": run.fetched,
                        "new": run.new,
                        "updated": run.updated,
                        "unchanged": run.unchanged,
                        "skipped": run.skipped,
                        "rejected": run.rejected,
                        "lost": run.lost,
                        "message": run.message,
                        "run": run.pk,
                    },
                    ensure_ascii=False,
                )
            )
        else:
            self.stdout.write(f"{run.label}: {run.status} — {run.message}")
        if run.status == IngestRun.Status.FAILED:
            self.stderr.write(
                f"ingest: failed: {run.message.splitlines()[0] if run.message else ''}"
            )
            sys.exit(1)

    def _run(self, options) -> IngestRun:
        bar = tqdm(
            unit="entry",
            disable=not sys.stderr.isatty() or options["verbosity"] < 1,
            file=sys.stderr,
        )
        try:
            # Runs killed midway (a lost worker, an interrupted command) are marked failed.
            if stale := ingest_runs_fail_stale():
                self.stderr.write(f"ingest: marked {len(stale)} stale running runs failed")
            if options["file"]:
                return self._from_file(options, bar.update)
            if not options["source"]:
                raise CommandError("name a source, or give --file with --format and --track")
            source = self._source(options["source"])
            return ingest_source(
                source=source, since=options["since"], until=options["until"], progress=bar.update
            )
        finally:
            bar.close()

    def _source(self, name: str) -> Source:
        source = Source.objects.filter(name=name).first()
        if source is None and name.isdigit():
            source = Source.objects.filter(pk=int(name)).first()
        if source is None:
            known = ", ".join(Source.objects.values_list("name", flat=True)) or "none"
            raise CommandError(f"no source named {name!r} (known: {known})")
        return source

    def _from_file(self, options, progress) -> IngestRun:
        path: Path = options["file"]
        if not options["format"]:
            raise CommandError("--file needs --format (" + "|".join(FORMAT_NAMES) + ")")
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        tracks = list(Track.objects.filter(slug__in=options["track"]))
        missing = set(options["track"]) - {t.slug for t in tracks}
        if missing:
            raise CommandError(f"no such track: {', '.join(sorted(missing))}")
        return ingest_document(
            data=path.read_bytes(),
            fmt=options["format"],
            tracks=tracks,
            label=str(path),
            progress=progress,
        )
