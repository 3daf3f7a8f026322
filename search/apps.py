from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SearchConfig(AppConfig):
    name = "search"
    verbose_name = _("Search")

    def ready(self) -> None:
        import logging

        from django.conf import settings

        # checks registers the start-up check; tasks registers the tasks that services
        # enqueue by name (the tasks module imports them), in every process.
        from search import checks, tasks  # noqa: F401
        from search.embedding import model_problem

        if settings.SEARCH_VECTORS and (problem := model_problem()):
            # Processes that run no checks (gunicorn, Celery) say it when they start.
            logging.getLogger("search").error(
                "semantic search is off: %s (lexical search still answers)", problem
            )

        from dailies.extensions import (
            register_nearest_covered,
            register_on_papers_changed,
            register_related_papers,
        )
        from search.index import search_index_on_papers_changed
        from search.related import nearest_covered, related_papers

        # Dailies cannot import us: publishing, unpublishing and edits of published dailies
        # hand us the papers whose visibility or text changed, once they have committed.
        register_on_papers_changed(search_index_on_papers_changed)
        # The paper page lists the published papers most like it.
        register_related_papers(related_papers)
        # The desk shows each candidate's nearest published papers (repeats caught).
        register_nearest_covered(nearest_covered)
