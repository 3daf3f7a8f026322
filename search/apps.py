from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SearchConfig(AppConfig):
    name = "search"
    verbose_name = _("Search")

    def ready(self) -> None:
        from dailies.extensions import register_on_papers_changed, register_related_papers
        from search.index import search_index_on_papers_changed
        from search.related import related_papers

        # Dailies cannot import us: publishing, unpublishing and edits of published dailies
        # hand us the papers whose visibility or text changed, once they have committed.
        register_on_papers_changed(search_index_on_papers_changed)
        # The paper page lists the published papers most like it.
        register_related_papers(related_papers)
