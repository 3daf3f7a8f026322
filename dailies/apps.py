from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DailiesConfig(AppConfig):
    name = "dailies"
    verbose_name = _("Dailies")

    def ready(self) -> None:
        from dailies.public_api.common import throttle_cached_answer
        from dailies.selectors import published_papers, published_tracks
        from digest_site.page_cache import register_hit_check
        from digest_site.visibility import register_published
        from papers.models import Paper, Track

        # The API's throttle holds for its answers from the page cache too.
        register_hit_check("/api/", throttle_cached_answer)
        # What "published" means is ours: the papers app asks it of its own objects (who
        # may change them, digest_site.visibility) without importing us.
        register_published(Paper, published_papers)
        register_published(Track, published_tracks)
