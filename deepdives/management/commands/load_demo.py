from django.core.management.base import BaseCommand

from dailies.demo import demo_load
from deepdives.demo import demo_load_deep_dives
from digest_site.cache_tags import ALL, retire


class Command(BaseCommand):
    help = (
        "Load (or refresh) the demo content: the Infra track, its dailies and papers, the deep "
        "dives and the registered reference programs. Safe to run again."
    )

    def handle(self, *args, **options) -> None:
        counts = demo_load()
        deep_dives = demo_load_deep_dives()
        retire(ALL)  # a refresh writes rows directly, not only through the services
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo content loaded: {counts['papers']} papers in {counts['dailies']} dailies, "
                f"{deep_dives} deep dives."
            )
        )
