import json
import sys

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from dailies.drafting import daily_paper_draft
from papers.drafting.base import DraftingStopped
from papers.models import Paper


class Command(BaseCommand):
    help = "Draft one paper's summaries (by id, canonical id such as arxiv:2510.01234, or slug)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("id", help="the paper's id, canonical id or slug")
        parser.add_argument("--redraft", action="store_true", help="replace earlier machine drafts")
        parser.add_argument("--json", action="store_true", help="print the outcome as JSON")

    def handle(self, *args, id: str, **options) -> None:
        lookup = Q(canonical_id=id) | Q(slug=id)
        if id.isdigit():
            lookup |= Q(pk=int(id))
        paper = Paper.objects.filter(lookup).first()
        if paper is None:
            raise CommandError(f"no paper {id!r}")
        try:
            outcome = daily_paper_draft(
                paper=paper, track=paper.tracks.first(), redraft=options["redraft"]
            )
        except DraftingStopped as exc:
            self.stderr.write(f"draft_paper: stopped: {exc}")
            sys.exit(1)
        if options["json"]:
            self.stdout.write(json.dumps(outcome.as_dict(), ensure_ascii=False))
            return
        languages = ", ".join(outcome.languages) or "nothing new"
        self.stdout.write(f"{paper.canonical_id}: drafted {languages} ({outcome.drafter})")
        for language, reason in outcome.missing.items():
            self.stdout.write(f"  {language}: not drafted — {reason}")
        for flag in outcome.as_dict()["flags"]:
            self.stdout.write(f"  flag [{flag['language']}] {flag['kind']}: {flag['text']}")
