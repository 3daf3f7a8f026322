from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DailiesConfig(AppConfig):
    name = "dailies"
    verbose_name = _("Dailies")

    def ready(self) -> None:
        from dailies import sitemaps, tasks  # noqa: F401
        from dailies.selectors import published_papers, published_tracks
        from digest_site.page_cache import register_hit_check
        from digest_site.sitemaps import register_sections
        from digest_site.visibility import register_published
        from papers.models import Paper, Track

        # The API's throttle holds for its answers from the page cache too.
        register_hit_check("/api/", _throttle_cached_answer)
        # What "published" means is ours: the papers app asks it of its own objects (who
        # may change them, digest_site.visibility) without importing us.
        register_published(Paper, published_papers)
        register_published(Track, published_tracks)
        # The site's sitemap lists our pages; the site's package cannot import us.
        register_sections(sitemaps.sitemaps)
        # Services enqueue our tasks by name (the tasks module imports them): ``tasks`` is
        # imported above so that they are registered in every process, not only in a worker.


def _throttle_cached_answer(request):
    # Imported at the first cached API answer: the API's modules bring DRF and
    # drf-spectacular (about half a second of CPU) to every process's start.
    from dailies.public_api.common import throttle_cached_answer

    return throttle_cached_answer(request)
