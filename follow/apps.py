from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class FollowConfig(AppConfig):
    name = "follow"
    verbose_name = _("Following")

    def ready(self) -> None:
        from digest_site.sitemaps import register_sections
        from follow import sitemaps

        # The site's sitemap lists the lab and author pages; its package cannot import us.
        register_sections(sitemaps.sitemaps)
