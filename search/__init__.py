"""Search over the published papers, in Chinese and English, on PostgreSQL or SQLite: the
cross-day index and its search page, the topic pages, the search API and feeds, and the
related papers on a paper's page. It sits above dailies (search → dailies → papers).

- ``search.service.search()`` answers a query (the index page, the API and the feed call it);
- ``search.index.search_index_refresh()`` keeps the index in step with publication (dailies'
  services report the papers they change through ``dailies.extensions.papers_changed``,
  which this app's ``ready()`` subscribes to) and rebuilds it;
- ``search.text`` turns text into terms; ``search.backends`` holds the PostgreSQL
  (tsvector + GIN + pg_trgm) and SQLite (FTS5) implementations;
- ``search.highlight`` marks the matched words in titles and excerpts.
"""
