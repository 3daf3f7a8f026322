"""One word ranks the same when PostgreSQL ranks only the papers with it in an A field first
(``PostgresBackend._exact_head_first``) as when it ranks every match."""

from __future__ import annotations

import datetime as dt

import pytest

from dailies.services import daily_publish
from search.backends import postgres
from search.service import search
from tests.factories import make_daily, make_paper

# (where the word is, how often): title (A), summary (B), abstract (C), or a mix.
PLACES = [
    ("title", 1),
    ("title", 1),
    ("summary", 3),
    ("summary", 1),
    ("abstract", 1),
    ("abstract", 4),
    ("title+summary", 2),
    ("summary+abstract", 2),
    ("title", 1),
    ("summary", 2),
    ("abstract", 2),
    ("title+abstract", 1),
]


@pytest.fixture
def quasar_papers(db, django_capture_on_commit_callbacks):
    papers = []
    for n, (place, times) in enumerate(PLACES):
        words = " ".join(["quasar"] * times)
        papers.append(
            make_paper(
                f"item-{n}",
                title=f"Study {n}" + (f" of {words}" if "title" in place else ""),
                en=f"Findings {n}." + (f" On {words}." if "summary" in place else ""),
                zh=None,
                abstract=f"Abstract {n}." + (f" About {words}." if "abstract" in place else ""),
            )
        )
    with django_capture_on_commit_callbacks(execute=True):
        for day, paper in enumerate(papers, start=1):
            daily = make_daily(date=dt.date(2026, 9, day), papers=[paper], status="draft")
            daily.entries.update(accepted_untranslated=["zh"])  # English only, accepted
            daily_publish(daily=daily)
    return papers


@pytest.fixture
def postgres_backend(is_postgres):
    if not is_postgres:
        pytest.skip("the head-first ranking is the PostgreSQL backend's")
    return postgres.PostgresBackend()


def test_it_ranks_one_word_exactly_as_ranking_every_match(quasar_papers, postgres_backend):
    match = search("quasar").match
    assert match.terms == ("quasar",)
    everything = postgres_backend._exact_all(match, offset=0, limit=100)
    assert len(everything) == len(PLACES)
    # Every window, including those across the last paper with the word in its title.
    for offset in range(len(PLACES) + 1):
        for limit in (1, 2, 3, 5, len(PLACES)):
            page = postgres_backend._exact_head_first(match, offset=offset, limit=limit)
            assert page == everything[offset : offset + limit], (offset, limit)


def test_it_puts_every_title_match_above_every_other_match(quasar_papers):
    hits = search("quasar")[0:100]
    in_title = {
        p.pk for p, (place, _) in zip(quasar_papers, PLACES, strict=True) if "title" in place
    }
    ranks = [h.paper_id in in_title for h in hits]
    assert ranks == sorted(ranks, reverse=True)
    assert min(h.score for h in hits if h.paper_id in in_title) > 0.6
    assert max(h.score for h in hits if h.paper_id not in in_title) < 0.4
