from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DailiesConfig(AppConfig):
    name = "dailies"
    verbose_name = _("Dailies")

    def ready(self) -> None:
        from dailies.public_api.common import throttle_cached_answer
        from digest_site.page_cache import register_hit_check

        # The API's throttle holds for its answers from the page cache too.
        register_hit_check("/api/", throttle_cached_answer)
