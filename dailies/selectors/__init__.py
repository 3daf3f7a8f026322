"""Reads for the public pages, the API, the feeds and the mail. Each page has one selector
that returns what it prints (a typed page object where it is more than a queryset), read
through the ORM with a fixed number of queries, whatever the number of rows: one module per
page, with the readers they share in ``common``."""

from dailies.selectors.archive import track_archive
from dailies.selectors.common import (
    appearances,
    daily_cards,
    paper_lists,
    parse_date,
    published_papers,
    published_tracks,
    visible_papers,
)
from dailies.selectors.daily import (
    DailyPage,
    daily_entries,
    daily_neighbours,
    daily_page,
    with_paper_lists,
)
from dailies.selectors.home import HomeSection, home_sections
from dailies.selectors.index import index_paper_count, index_papers, search_result_papers
from dailies.selectors.paper import paper_headings, paper_page
from dailies.selectors.topics import published_topics, topics_with_papers

__all__ = [
    "DailyPage",
    "HomeSection",
    "appearances",
    "daily_cards",
    "daily_entries",
    "daily_neighbours",
    "daily_page",
    "home_sections",
    "index_paper_count",
    "index_papers",
    "paper_headings",
    "paper_lists",
    "paper_page",
    "parse_date",
    "published_papers",
    "published_topics",
    "published_tracks",
    "search_result_papers",
    "topics_with_papers",
    "track_archive",
    "visible_papers",
    "with_paper_lists",
]
