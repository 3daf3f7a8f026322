from django.core.management.base import BaseCommand, CommandError

from digest_site import content


class Command(BaseCommand):
    help = (
        "Retire every cached page and every figure kept per content version (the topics' and "
        "the index's counts): for writes that did not go through the services, such as a "
        "restored database backup or SQL run by hand."
    )

    def handle(self, *args, **options) -> None:
        before = content.content_version()
        content.content_version_bump()
        after = content.content_version()
        if after == before:
            raise CommandError("the cache did not take the new content version: is it reachable?")
        self.stdout.write(f"content version {before} → {after}: cached pages retired")
