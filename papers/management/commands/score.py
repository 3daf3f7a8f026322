import json
import sys

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from papers.models import Track
from papers.scoring.service import get_scorer, track_score_pending, unscored_candidates


class Command(BaseCommand):
    help = "Score a track's unscored (new or changed) candidates."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--track", required=True, help="track slug")
        parser.add_argument(
            "--json", action="store_true", help="print one JSON line per scored paper"
        )

    def handle(self, *args, track: str, **options) -> None:
        track_obj = Track.objects.filter(slug=track).first()
        if track_obj is None:
            raise CommandError(f"no track {track!r}")
        total = unscored_candidates(track_obj).count()
        bar = tqdm(
            total=total,
            unit="paper",
            file=sys.stderr,
            disable=not sys.stderr.isatty() or options["json"],
        )
        scores = track_score_pending(track=track_obj, scorer=get_scorer(), progress=bar.update)
        bar.close()
        if options["json"]:
            for s in scores:
                self.stdout.write(
                    json.dumps(
                        {
                            "id": s.paper.canonical_id,
                            "title": s.paper.title,
                            "total": float(s.total),
                            "criteria": s.criteria,
                        },
                        ensure_ascii=False,
                    )
                )
        else:
            self.stdout.write(f"scored {len(scores)} paper(s) for {track}")
