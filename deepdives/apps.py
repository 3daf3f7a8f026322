from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DeepdivesConfig(AppConfig):
    name = "deepdives"
    verbose_name = _("Deep dives")

    def ready(self) -> None:
        from dailies.extensions import (
            register_fragment,
            register_paper_feature,
            register_paper_filter,
            register_paper_prefetch,
        )
        from deepdives import sitemaps
        from deepdives.paper_filters import has_deep_dive, has_verified_code
        from deepdives.selectors import (
            deep_dive_prefetch,
            papers_with_published_deep_dive,
            reference_code_prefetch,
        )
        from digest_site.sitemaps import register_sections

        # Daily, index and paper pages link deep dives and reference code; dailies can't
        # import us, so we hand it the prefetches.
        register_paper_prefetch(deep_dive_prefetch)
        register_paper_prefetch(reference_code_prefetch)
        # The pages show them through our fragments, at the places their templates name.
        register_fragment("paper-marks", "deepdives/_paper_marks.html")
        register_fragment("entry-actions", "deepdives/_entry_actions.html")
        register_fragment("paper-page", "deepdives/_paper_page.html")
        register_fragment("home-links", "deepdives/_home_links.html")
        register_fragment("mail-links", "deepdives/_mail_links.html")
        register_fragment("mail-links-text", "deepdives/_mail_links.txt")
        # A daily's drafted intro counts the deep dives that go out with it.
        register_paper_feature("deep_dive", papers_with_published_deep_dive)
        # The read API narrows papers to those with a deep dive or verified code.
        register_paper_filter("has_deep_dive", has_deep_dive)
        register_paper_filter("has_verified_code", has_verified_code)
        # The site's sitemap lists our pages after the dailies'.
        register_sections(sitemaps.sitemaps)
