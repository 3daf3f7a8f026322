"""Every bound of following, in one place (tests reach them here)."""

from __future__ import annotations

from decimal import Decimal

# Values of one kind (tracks, topics, labs or authors) a filter set may name.
MAX_VALUES_PER_KIND = 20
# The longest slug a filter value may be (Author.slug's length).
MAX_SLUG_LENGTH = 120
# The query string of a filter set, whole (a longer one is refused before it is read).
MAX_QUERY_LENGTH = 4000
# What a minimum score may be: a score, in steps of 0.05.
MIN_SCORE_LOWEST = Decimal("1.00")
MIN_SCORE_HIGHEST = Decimal("5.00")
