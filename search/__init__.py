"""Search over the published papers, in Chinese and English, on PostgreSQL or SQLite.

- ``dailies.search.service.search()`` answers a query (the index page and the API call it);
- ``dailies.search.index.search_index_refresh()`` keeps the index in step with publication
  (the publishing services call ``search_index_refresh_on_commit()``) and rebuilds it;
- ``dailies.search.text`` turns text into terms; ``dailies.search.backends`` holds the
  PostgreSQL (tsvector + GIN + pg_trgm) and SQLite (FTS5) implementations;
- ``dailies.search.highlight`` marks the matched words in titles and excerpts.

This module imports nothing, so ``dailies.models`` can import the search models from it.
"""
