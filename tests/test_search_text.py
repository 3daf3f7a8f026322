"""Text → terms, query sanitising and highlighting: pure functions, no database."""

from __future__ import annotations

import pytest

from search.highlight import best_excerpt, excerpt, highlight, spans
from search.service import Highlighter
from search.text import MAX_QUERY_CHARS, WORD_RE, parse_query, terms, word_terms


def _hl(query: str) -> Highlighter:
    return Highlighter(parse_query(query))


def test_it_segments_chinese_runs_with_the_words_inside_longer_ones():
    found = terms("把注意力偏置折进键向量")
    assert {"注意", "注意力", "偏置", "向量"} <= set(found)
    assert "的" not in terms("模型的权重")


def test_it_stems_english_and_splits_camel_case():
    assert terms("caches caching cached") == ["cach", "cach", "cach"]
    assert {"kvcach", "kv", "cach"} <= set(terms("KVCache"))
    assert "the" not in terms("the cache")


def test_it_reads_mixed_queries_as_terms_of_both_languages():
    assert [t.term for t in parse_query("KV 缓存")] == ["kv", "缓存"]
    assert [t.term for t in parse_query("KV缓存")] == ["kv", "缓存"]


HOSTILE = [
    "",
    "   ",
    '"',
    "'",
    "' OR 1=1 --",
    "'; DROP TABLE papers_paper; --",
    "<script>alert(1)</script>",
    "kv* AND NOT cache OR NEAR(a b)",
    "head:kv ^cache -x +y ~z",
    "'kv':* & !cache | (a <-> b)",
    "%_%\\",
    "((((((",
    "\x00\x01\x02",
    "🙂🙂🙂",
    "a" * 5000,
    "kv cache " * 700,
]


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_it_turns_any_query_into_plain_bounded_terms(query):
    parsed = parse_query(query)
    assert len(parsed) <= 12
    for term in parsed:
        assert term.term.isalnum(), term
        assert len(term.term) <= 40


def test_it_cuts_long_queries():
    assert parse_query("x" * 10 + " kv" * 5000)[0].term == "x" * 10
    assert len("".join(t.term for t in parse_query("kv " * 5000))) <= MAX_QUERY_CHARS


def test_it_escapes_before_marking():
    marked = highlight('<b>KV</b> cache & "caches"', _hl("cache"))
    assert (
        marked == "&lt;b&gt;KV&lt;/b&gt; <mark>cache</mark> &amp; &quot;<mark>caches</mark>&quot;"
    )
    assert highlight("<script>", _hl("script")) == "&lt;<mark>script</mark>&gt;"


def test_it_marks_chinese_words_wherever_they_occur():
    assert highlight("分层 KV 缓存与缓存淘汰", _hl("缓存")) == (
        "分层 KV <mark>缓存</mark>与<mark>缓存</mark>淘汰"
    )


def test_it_cuts_an_excerpt_around_the_first_match():
    text = "Intro sentence here. " * 20 + "The KV cache is large. " + "Tail words. " * 20
    cut = excerpt(text, _hl("cache"), length=80)
    assert cut.startswith("…") and cut.endswith("…")
    assert "<mark>cache</mark>" in cut
    assert len(cut) < 80 + 40
    assert excerpt("nothing relevant", _hl("cache")) is None


def test_a_highlighter_works_each_distinct_word_out_once_and_marks_as_before(monkeypatch):
    """A page of results repeats its words, and pages repeat the corpus's: each distinct
    word is folded, stemmed and split once per process (``word_terms``), with the same marks
    as working each occurrence out."""
    import search.text

    calls = []
    real = search.text.latin_tokens
    monkeypatch.setattr(
        search.text,
        "latin_tokens",
        lambda word, *a, **kw: calls.append(word) or real(word, *a, **kw),
    )
    search.text._kept_terms_of.cache_clear()
    search.text.words_by_term.clear()
    text = "Caching the KVCache: caching again, the cache and KV caches. " * 20
    hl, again = _hl("caching KVCache"), _hl("again")
    calls.clear()  # the queries' own words
    marked = highlight(text, hl)
    assert sorted(calls) == sorted(
        {"Caching", "the", "KVCache", "caching", "again", "cache", "and", "KV", "caches"}
    )
    sentence = (
        "<mark>Caching</mark> the <mark>KVCache</mark>: <mark>caching</mark> again, the "
        "<mark>cache</mark> and KV <mark>caches</mark>. "
    )
    assert marked == sentence * 20
    # Another query on the same words works none of them out again, and marks its own.
    calls.clear()
    assert highlight(text, again) == (
        "Caching the KVCache: caching <mark>again</mark>, the cache and KV caches. " * 20
    )
    assert calls == []
    # A word longer than any term is worked out each time, never kept.
    blob = "x" * (search.text.WORD_TERMS_LONGEST + 1)
    assert search.text.word_terms(blob) == () and search.text.word_terms(blob) == ()
    assert calls == [blob, blob]


def _every_run(text: str, query: str, prefixes: tuple[str, ...] = ()) -> list[tuple[int, int]]:
    """The marks worked out the plain way: every run of letters and digits, one by one,
    matched when one of its terms is a query term or starts with a prefix; the query's
    Chinese words wherever they occur; touching marks joined."""
    terms_ = parse_query(query)
    latin = {t.term for t in terms_ if t.is_latin}
    found = [
        run.span()
        for run in WORD_RE.finditer(text)
        if any(t in latin or t.startswith(prefixes) for t in word_terms(run.group()))
    ]
    for word in (t.term for t in terms_ if not t.is_latin):
        found += [(at, at + len(word)) for at in range(len(text)) if text.startswith(word, at)]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


@pytest.mark.parametrize(
    ("text", "query", "prefixes"),
    [
        ("KVCache caching cache_x x_cache cache1 Cache缓存cache 缓存KV kv-cache", "cache", ()),
        ("the cache, the Cache; caches. cached? CACHE", "caching kv", ()),
        ("cache cache cachecache xcache cachex", "cache", ()),
        ("ÉcoleCache naïve café Straße STRASSE", "cache strasse", ()),
        ("分层KV缓存与缓存淘汰，缓存缓存", "缓存 kv", ()),
        ("quantized quantization quant quantum", "quant", ("quant",)),
        ("a_b _cache_ cache__cache 2cache cache2", "cache", ()),
        ("nothing here matches", "cache", ()),
        ("", "cache", ()),
    ],
)
def test_marks_are_the_runs_the_query_matched_as_if_each_were_worked_out(text, query, prefixes):
    """The highlighter asks a text's distinct words at once and looks again only for the
    ones that matched: the marks are those of working out every run of letters and digits."""
    hl = Highlighter(parse_query(query), prefixes)
    assert spans(text, hl) == _every_run(text, query, prefixes)
    # Asked again (the words known now), the same.
    assert spans(text, hl) == _every_run(text, query, prefixes)


def test_the_best_excerpt_shows_the_most_different_matched_words():
    hl = _hl("kv cache")
    texts = [("one cache, one cache, cache again", "en"), ("KV cache here", "en")]
    marked, language, at = best_excerpt(texts, hl)
    assert marked == "<mark>KV</mark> <mark>cache</mark> here" and language == "en" and at == 1
    assert best_excerpt([("nothing", "en")], hl) is None


def _best_by_marking_each(texts, hl):
    """The best excerpt worked out the plain way: every text's marks found and counted."""
    from search.highlight import EXCERPT_CHARS, _window, matched_words

    best, best_words = None, 0
    for at, (text, language) in enumerate(texts):
        text = " ".join(text.split())
        found = spans(text, hl)
        words = matched_words(text, found)
        if words > best_words:
            best, best_words = (_window(text, found, EXCERPT_CHARS), language, at), words
    return best


EXCERPT_TEXTS = [
    ("One cache,\n  one Cache, CACHE again and the caches.", "en"),
    ("KVCache caching   cache_x x_cache cache1 Cache缓存cache 缓存KV kv-cache", "en"),
    ("分层KV缓存与缓存淘汰，\n缓存 缓存策略。KV cache", "zh"),
    ("Caching the KV cache, " + "filler words here, " * 30 + "and KV caches at the end.", "en"),
    ("nothing here matches", "en"),
    ("", "en"),
]


@pytest.mark.parametrize(
    ("query", "prefixes"),
    [("cache", ()), ("kv cache", ()), ("缓存 kv", ()), ("缓存策略", ()), ("quant kv", ("ca",))],
)
def test_the_best_excerpt_is_the_one_marking_every_text_would_choose(query, prefixes):
    """Only the chosen text is looked through for its marks; the others are counted from
    their words. The excerpt, its language and its place are those of marking each."""
    hl = Highlighter(parse_query(query), prefixes)
    for start in range(len(EXCERPT_TEXTS)):
        texts = EXCERPT_TEXTS[start:] + EXCERPT_TEXTS[:start]
        assert best_excerpt(texts, hl) == _best_by_marking_each(texts, hl)


def test_the_best_excerpt_looks_for_marks_in_the_chosen_text_alone(monkeypatch):
    import search.highlight

    looked = []
    monkeypatch.setattr(
        search.highlight,
        "spans",
        lambda text, hl, matched=None: looked.append(text) or spans(text, hl, matched),
    )
    texts = [("the cache", "en"), ("KV cache and caches", "en"), ("no match", "en")]
    assert best_excerpt(texts, _hl("kv cache"))[2] == 1
    assert looked == ["KV cache and caches"]


@pytest.mark.parametrize("kept", [3, 4, 9])
def test_the_words_known_by_term_stay_within_their_bound_and_mark_the_same(monkeypatch, kept):
    """The process knows at most ``kept`` words by term (``words_by_term``): past that it
    starts afresh, and a text with more distinct words than that is worked out word by word.
    The marks are the same either way."""
    import search.text

    words = search.text.WordsByTerm(kept)
    monkeypatch.setattr(search.text, "words_by_term", words)
    monkeypatch.setattr("search.service.words_by_term", words)
    blob = "x" * (search.text.WORD_TERMS_LONGEST + 1)
    texts = [
        "the cache caches",  # 3 distinct words: exactly the bound of the first case
        "KVCache and cache, again caching",  # 5, one known
        f"{blob} cache",  # the blob is never kept
        "caches the cache",  # known (or known again)
        "the KVCache and the caches cache and caching",  # 5: more than 4 words known
    ]
    hl = _hl("cache kv")
    for text in texts:
        assert spans(text, hl) == _every_run(text, "cache kv")
        assert len(words) <= kept
    assert blob not in words._known
