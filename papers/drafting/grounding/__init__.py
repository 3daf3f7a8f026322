"""Grounding checks: a machine draft, in English or Chinese, may state no number,
organisation, venue or glossary rendering that its source does not support.

Pure Python, no database: the drafting service calls ``check_draft`` for every text it stores
and keeps what it returns as flags for an editor to fix or confirm.

The checks, a module each: ``numbers`` (the rules numbers are compared by), ``names``
(organisations and venues), ``glossary``, and ``draft`` (a whole draft, and a daily's intro);
``text`` is what they share.
"""

from papers.drafting.grounding.draft import COMMON_ORGANIZATIONS, check_draft, check_intro
from papers.drafting.grounding.glossary import check_glossary, glossary_term_pattern
from papers.drafting.grounding.names import check_names
from papers.drafting.grounding.numbers import NumberMention, check_numbers, extract_numbers
from papers.drafting.grounding.text import FLAG_KINDS, QUOTE_MAX_CHARS, GroundingFlag

__all__ = [
    "COMMON_ORGANIZATIONS",
    "FLAG_KINDS",
    "QUOTE_MAX_CHARS",
    "GroundingFlag",
    "NumberMention",
    "check_draft",
    "check_glossary",
    "check_intro",
    "check_names",
    "check_numbers",
    "extract_numbers",
    "glossary_term_pattern",
]
