"""The glossary: a Chinese draft renders the glossary's terms its English source uses as the
glossary says."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from papers.drafting.base import GlossaryEntry
from papers.drafting.grounding.text import ALNUM, GroundingFlag, normalise, quote


@functools.lru_cache(maxsize=512)
def glossary_term_pattern(term: str) -> re.Pattern:
    """An English term in running text: any case, hyphen or space between words, plural."""
    words = [re.escape(w) for w in re.split(r"[\s-]+", term.strip()) if w]
    body = r"[\s-]+".join(words)
    if words and words[-1][-1:].isalpha():
        body += r"(?:s|es)?"
    return re.compile(rf"(?<![{ALNUM}]){body}(?![{ALNUM}])", re.I)


def _rendering_spans(text: str, rendering: str) -> list[tuple[int, int]]:
    if rendering.isascii():
        return [(m.start(), m.end()) for m in glossary_term_pattern(rendering).finditer(text)]
    return [(m.start(), m.end()) for m in re.finditer(re.escape(rendering), text)]


def check_glossary(
    zh_draft: str, *, glossary: Iterable[GlossaryEntry], en_text: str = ""
) -> list[GroundingFlag]:
    """A flag for every rendering a glossary entry lists as wrong (``avoid``) found in
    ``zh_draft``, for the entries whose English term ``en_text`` uses (every entry when
    ``en_text`` is empty). An avoided string inside an accepted rendering of any entry (内存 in
    主机内存) is not a rendering of its own. A draft that does not name a concept is fine."""
    entries = list(glossary)
    norm_draft = normalise(zh_draft)
    norm_en = normalise(en_text)
    applies = [not en_text or bool(glossary_term_pattern(e.en).search(norm_en)) for e in entries]
    flags: list[GroundingFlag] = []
    for entry, applied in zip(entries, applies, strict=True):
        if not applied:
            continue
        for avoided in entry.avoid:
            if not avoided.strip():
                continue
            covered: list[tuple[int, int]] = []
            for other, other_applies in zip(entries, applies, strict=True):
                for accepted in other.zh:
                    if accepted == avoided and (other is entry or not other_applies):
                        continue
                    if avoided in accepted or accepted == avoided:
                        covered.extend(_rendering_spans(norm_draft, accepted))
            for start, end in _rendering_spans(norm_draft, normalise(avoided)):
                if any(s <= start and end <= e for s, e in covered):
                    continue
                preferred = " or ".join(f"“{z}”" for z in entry.zh[:2]) or "its accepted form"
                detail = (
                    f"{quote(zh_draft[start:end])} renders {quote(entry.en)} otherwise; "
                    f"the glossary writes {preferred}."
                )
                flags.append(GroundingFlag("glossary", zh_draft[start:end], start, end, detail))
    # of overlapping avoided renderings (GPU 内存, 内存) the longest speaks
    flags.sort(key=lambda flag: (flag.start, -flag.end))
    kept: list[GroundingFlag] = []
    for flag in flags:
        if not any(k.start <= flag.start and flag.end <= k.end for k in kept):
            kept.append(flag)
    return kept
