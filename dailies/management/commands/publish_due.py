from django.core.management.base import BaseCommand

from dailies import services


class Command(BaseCommand):
    help = "Publish every scheduled daily whose time has come."

    def handle(self, *args, **options) -> None:
        published = [d for d in services.dailies_due() if services.daily_publish_if_due(daily_id=d)]
        self.stdout.write(f"published {len(published)} daily(ies)")
