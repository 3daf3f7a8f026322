from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PapersConfig(AppConfig):
    name = "papers"
    verbose_name = _("Papers")

    def ready(self) -> None:
        from digest_site.visibility import published_objects, register_published
        from papers.models import (
            Author,
            GlossaryTerm,
            Organization,
            Paper,
            Summary,
            SummaryVersion,
            Topic,
            Track,
            Venue,
        )

        # Readers see these through the papers and tracks they belong to; which papers and
        # tracks readers see is the dailies' to say (registered there).
        def of_public_papers(model, path: str):
            return lambda: model.objects.filter(**{f"{path}__in": published_objects(Paper)})

        register_published(Summary, of_public_papers(Summary, "paper"))
        register_published(SummaryVersion, of_public_papers(SummaryVersion, "summary__paper"))
        register_published(Topic, of_public_papers(Topic, "papers"))
        register_published(Organization, of_public_papers(Organization, "papers"))
        register_published(Venue, of_public_papers(Venue, "papers"))
        register_published(Author, of_public_papers(Author, "paper_links__paper"))
        # A glossary governs how its track's public Chinese texts are written and checked.
        register_published(
            GlossaryTerm,
            lambda: GlossaryTerm.objects.filter(track__in=published_objects(Track)),
        )
