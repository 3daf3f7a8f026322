from django.core.management.base import BaseCommand
from tqdm import tqdm

from dailies.selectors import published_papers
from search.index import search_index_rebuild, search_index_refresh_stale


class Command(BaseCommand):
    help = "Rebuild the search index from the published papers (or refresh the stale rows)."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--stale",
            action="store_true",
            help="only refresh papers published, withdrawn or edited since they were indexed",
        )
        parser.add_argument("--batch-size", type=int, default=500)

    def handle(self, *args, stale: bool, batch_size: int, **options) -> None:
        quiet = options["verbosity"] < 1
        if stale:
            counts = search_index_refresh_stale(limit=10**9)
            if not quiet:
                self.stdout.write(
                    f"refreshed: {counts['indexed']} indexed, {counts['removed']} removed"
                )
            return
        total = published_papers().count()
        with tqdm(total=total, unit="paper", disable=quiet) as progress:
            counts = search_index_rebuild(progress=progress.update, batch_size=batch_size)
        if not quiet:
            self.stdout.write(f"indexed {counts['indexed']} published papers")
