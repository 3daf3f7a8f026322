from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DeepdivesConfig(AppConfig):
    name = "deepdives"
    verbose_name = _("Deep dives")

    def ready(self) -> None:
        from dailies.extensions import register_paper_prefetch
        from deepdives.selectors import deep_dive_prefetch

        # Daily and index pages mark entries that have a deep dive; dailies can't import us.
        register_paper_prefetch(deep_dive_prefetch)
