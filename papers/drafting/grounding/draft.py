"""A whole draft against its paper (numbers, names and glossary), and a daily's intro against
the day's entries."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

from papers.drafting.base import PaperInput
from papers.drafting.grounding.glossary import check_glossary
from papers.drafting.grounding.names import check_names, clean_name, name_vocabulary, split_year
from papers.drafting.grounding.numbers import check_numbers
from papers.drafting.grounding.text import ALNUM, GroundingFlag, check_language, quote

# Organisations a draft may name although the site's table lacks them (a new day's papers
# come from anywhere): each group is one organisation's names. Checked like the table's: a
# name the paper's affiliations and source do not give is flagged. Names that are also
# ordinary words (Meta, Apple, 字节) are left out.
COMMON_ORGANIZATIONS: tuple[tuple[str, ...], ...] = (
    ("Alibaba", "Alibaba Group", "Alibaba Cloud", "Qwen Team", "阿里巴巴", "阿里云", "阿里"),
    ("Google", "Google DeepMind", "Google Research", "DeepMind", "谷歌"),
    ("Microsoft", "Microsoft Research", "微软", "微软研究院"),
    ("Meta AI", "Meta Platforms", "Facebook"),
    ("ByteDance", "ByteDance Seed", "Volcano Engine", "字节跳动", "火山引擎"),
    ("Tencent", "腾讯"),
    ("Baidu", "百度"),
    ("Huawei", "华为"),
    ("NVIDIA", "Nvidia", "英伟达"),
    ("Intel", "英特尔"),
    ("Amazon", "AWS", "Amazon Web Services", "亚马逊"),
    ("DeepSeek", "DeepSeek-AI", "深度求索"),
    ("Moonshot AI", "月之暗面"),
    ("Ant Group", "蚂蚁集团"),
    ("Kuaishou", "快手"),
    ("Meituan", "美团"),
    ("JD.com", "京东"),
    ("Xiaomi", "小米"),
    ("OpenAI",),
    ("Anthropic",),
    ("IBM",),
    ("Samsung", "三星"),
    ("Tsinghua University", "Tsinghua", "清华大学", "清华"),
    ("Peking University", "北京大学", "北大"),
    ("Shanghai Jiao Tong University", "上海交通大学", "上海交大"),
    ("Zhejiang University", "浙江大学", "浙大"),
    ("Chinese Academy of Sciences", "中国科学院", "中科院"),
    ("Stanford University", "Stanford", "斯坦福"),
    ("UC Berkeley", "Berkeley", "伯克利"),
    ("Carnegie Mellon University", "CMU", "卡内基梅隆"),
    ("MIT", "麻省理工"),
)


def _hashable_groups(known: Iterable[str | Sequence[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple((item,) if isinstance(item, str) else tuple(item) for item in known)


@functools.lru_cache(maxsize=512)
def _paper_vocabulary(
    kind: str, own: tuple[str, ...], known: tuple[tuple[str, ...], ...], source: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The paper's names and every known name, flat. A known item may be one name or one
    organisation's (venue's) names together — label, full name, Chinese name, aliases: when
    any of a group's names is the paper's, the whole group is the paper's, so an alias of the
    paper's own organisation is fine however the caller lists it. The known names that the
    source itself mentions (with their years) count as the paper's too."""
    groups = [tuple(n for n in group if n and n.strip()) for group in known]
    known_flat = tuple(n for group in groups for n in group)
    own_names = [n for n in own if n and n.strip()]
    matcher, _, _ = name_vocabulary(kind, (), known_flat)
    for hit in matcher.hits(source):
        own_names.append(f"{hit.base} {hit.year}" if hit.year else hit.base)
    own_keys = {clean_name(n).casefold() for n in own_names}
    if kind == "venue":
        own_keys |= {split_year(clean_name(n))[0].casefold() for n in own_names}
    for names in groups:
        if {clean_name(n).casefold() for n in names} & own_keys:
            own_names.extend(names)
    return tuple(own_names), known_flat


def check_draft(
    text: str,
    *,
    language: str,
    paper: PaperInput,
    known_organizations: Iterable[str | Sequence[str]] = (),
    known_venues: Iterable[str | Sequence[str]] = (),
) -> list[GroundingFlag]:
    """Every grounding flag of one draft text (a summary, headline, takeaway or headline
    number) against ``paper``, in order of position.

    The source is the paper's title, abstract and comments, with its venue, short name and
    canonical id (trusted metadata) for numbers. ``known_organizations``/``known_venues`` may
    list names, or groups of one organisation's names (label, name, Chinese name, aliases). A
    known organisation or venue the source itself names is fine ("DeepSeek's Engram" when the
    abstract says so): what is flagged is a name the source lacks. Chinese drafts are also
    checked against the paper's glossary, for the terms its English source uses."""
    check_language(language)
    source = paper.source_text
    metadata = "\n".join(p for p in (paper.venue, paper.short_name, paper.canonical_id) if p)
    flags = check_numbers(text, f"{source}\n{metadata}", language=language)
    for kind, own, known in (
        ("organization", paper.organizations, (*known_organizations, *COMMON_ORGANIZATIONS)),
        ("venue", (paper.venue,) if paper.venue else (), known_venues),
    ):
        own_names, known_flat = _paper_vocabulary(kind, tuple(own), _hashable_groups(known), source)
        if own_names or known_flat:
            flags += check_names(text, kind=kind, paper_names=own_names, known_names=known_flat)
    if language == "zh" and paper.glossary:
        flags += check_glossary(text, glossary=paper.glossary, en_text=source)
    flags.sort(key=lambda flag: (flag.start, flag.end))
    return flags


# "谷歌的 PrefixRoute", "Google's PrefixRoute": the organisation credited with the next name;
# "PrefixRoute, from Google", "PrefixRoute 由谷歌": with the name before.
_CREDITS_NEXT_RE = re.compile(r"\s*(?:'s|’s|的)\s*")
_CREDITS_PREVIOUS_RE = re.compile(
    r"\s*[,，(（]?\s*(?:(?:developed |built |proposed )?(?:by|from|at)|来自|出自|由)?\s*"
)


def check_intro(
    text: str,
    *,
    language: str,
    entries: Sequence[PaperInput],
    known_organizations: Iterable[str | Sequence[str]] = (),
) -> list[GroundingFlag]:
    """A flag for every organisation an intro names that is not one of the day's entries';
    one credited with an entry's system ("谷歌的 PrefixRoute") must be that entry's."""
    check_language(language)
    known = _hashable_groups((*known_organizations, *COMMON_ORGANIZATIONS))
    owners: list[tuple[str, frozenset[str], str]] = []  # short name, own names, shown
    for entry in entries:
        own, known_flat = _paper_vocabulary(
            "organization", entry.organizations, known, entry.source_text
        )
        keys = frozenset(clean_name(n).casefold() for n in own)
        owners.append((entry.short_name, keys, ", ".join(entry.organizations) or "none recorded"))
    all_keys = frozenset().union(*(keys for _, keys, _ in owners))
    matcher, _, _ = name_vocabulary("organization", (), tuple(n for g in known for n in g))
    named = sorted(
        (m.start(), m.end(), i)
        for i, (short, _, _) in enumerate(owners)
        if short
        for m in re.finditer(rf"(?<![{ALNUM}]){re.escape(short)}(?![{ALNUM}])", text)
    )
    flags: list[GroundingFlag] = []
    for hit in matcher.hits(text):
        written = text[hit.start : hit.name_end]
        key = hit.base.casefold()
        credited = next(
            (
                i
                for s, _, i in named
                if s >= hit.name_end and _CREDITS_NEXT_RE.fullmatch(text, hit.name_end, s)
            ),
            None,
        )
        if credited is None:
            credited = next(
                (
                    i
                    for _, e, i in reversed(named)
                    if e <= hit.start and _CREDITS_PREVIOUS_RE.fullmatch(text, e, hit.start)
                ),
                None,
            )
        if credited is not None:
            short, keys, shown = owners[credited]
            if key not in keys:
                detail = f"{quote(written)} is not an organisation of {short} ({shown})."
                flags.append(
                    GroundingFlag("organization", written, hit.start, hit.name_end, detail)
                )
        elif key not in all_keys:
            detail = f"{quote(written)} is not an organisation of any of the day's entries."
            flags.append(GroundingFlag("organization", written, hit.start, hit.name_end, detail))
    return flags
