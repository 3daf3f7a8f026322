from django.core.management.base import BaseCommand

from dailies.demo import demo_load


class Command(BaseCommand):
    help = "Load (or refresh) the demo content: the Infra track, its dailies and papers."

    def handle(self, *args, **options) -> None:
        counts = demo_load()
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo content loaded: {counts['papers']} papers in {counts['dailies']} dailies."
            )
        )
