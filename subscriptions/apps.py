from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SubscriptionsConfig(AppConfig):
    name = "subscriptions"
    verbose_name = _("Email digest")

    def ready(self) -> None:
        from dailies.extensions import register_on_publish
        from subscriptions.tasks import digest_on_publish

        # Dailies cannot import us; it calls this with the daily's id after publishing.
        register_on_publish(digest_on_publish)
