from django.core.management.base import BaseCommand

from dailies.demo.draft import demo_draft_load


class Command(BaseCommand):
    help = (
        "Import the bundled real arXiv listing into the demo track and leave a draft daily of "
        "it for the desk (run by `make run` after load_demo). Safe to run again."
    )

    def handle(self, *args, **options) -> None:
        self.stdout.write(demo_draft_load().line())
