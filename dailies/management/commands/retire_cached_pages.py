from django.core.management.base import BaseCommand

from digest_site import invalidation


class Command(BaseCommand):
    help = (
        "Retire every cached page and every figure kept beside them (the topics' counts), "
        "here and in the CDN (CDN_PURGE_URLS): for writes that did not go through the "
        "services, such as a restored database backup or SQL run by hand."
    )

    def handle(self, *args, **options) -> None:
        invalidation.everything()  # raises when the cache is unreachable
        self.stdout.write("every cached page retired")
