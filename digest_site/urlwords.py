"""The words the site's URL layout takes for itself: no track may be named by one.

A track lives at /<lang>/<track>/, beside the site's sections (/<lang>/papers/,
/<lang>/code/, …). The top level's words (/admin/, /api/, /healthz, …) are taken too, so that
serving a language without its prefix would not hand a section's address to a track.
tests/test_url_words.py checks that every word that begins a URL pattern is here.
"""

RESERVED_WORDS = frozenset(
    {
        # /<lang>/…: the sections beside the tracks
        "papers",
        "deep-dives",
        "topics",
        "code",
        "feeds",
        "search",
        "subscribe",
        "theme",
        "labs",
        "authors",
        "follow",
        # /…: the top level
        "admin",
        "api",
        "healthz",
        "mcp",
        "readyz",
        "static",
    }
)
