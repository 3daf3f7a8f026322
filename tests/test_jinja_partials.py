"""The Jinja2 partials a page repeats down a list (digest_site/jinja.py): their words reach the
catalogue through ``make messages`` and render in the page's language, values are escaped, a
missing value is an error, and the pages they make read as the Django templates did."""

from __future__ import annotations

import gettext
from pathlib import Path

import jinja2
import pytest
from django.conf import settings
from django.template import engines
from django.utils import translation
from django.utils.translation.template import templatize

from digest_site import jinja as partials
from tests.factories import make_daily, make_deep_dive, make_paper

MO = Path(settings.LOCALE_PATHS[0]) / "zh" / "LC_MESSAGES" / "django.mo"
# The apps' partials and pages, and the site's frame (digest_site/jinja2/site/).
PARTIALS = sorted(
    path
    for folder in ("dailies/jinja2", "deepdives/jinja2", "digest_site/jinja2")
    for path in (Path(settings.BASE_DIR) / folder).rglob("*.html")
)


def test_the_partials_are_found():
    names = {path.name for path in PARTIALS}
    assert {"_entry.html", "_paper_actions.html", "_index_items.html"} <= names
    assert {"daily.html", "base.html", "_header.html", "_footer.html"} <= names


@pytest.mark.parametrize("path", PARTIALS, ids=lambda path: path.name)
def test_every_word_of_a_partial_is_found_by_make_messages_and_translated(path):
    """``make messages`` reads the partials as it reads Django's templates (templatize):
    a ``_("…")`` it cannot see (with keyword arguments, say) would drop out of the catalogue
    and print in English on the Chinese pages."""
    source = path.read_text()
    env = engines["jinja2"].env
    calls = list(env.extract_translations(source))
    # make messages reads _("…") in a template, not ngettext: plurals come from Python.
    assert {function for _, function, _ in calls} <= {"_"}, path.name
    words = [message for _, _, message in calls]
    seen_by_make_messages = templatize(source, origin=str(path))
    with MO.open("rb") as mo:
        catalogue = gettext.GNUTranslations(mo)._catalog
    for word in words:
        assert isinstance(word, str), f"{path.name}: only literal words are extracted: {word!r}"
        assert f"_({word!r})" in seen_by_make_messages or f'_("{word}")' in (
            seen_by_make_messages
        ), f"{path.name}: make messages does not see {word!r}"
        assert catalogue.get(word), f"{path.name}: {word!r} has no Chinese translation"


def test_values_are_escaped_and_translated_words_trusted():
    page = engines["jinja2"].from_string(
        '{{ title }} {{ _("scorer\'s total %(total)s, set by the editor")|format(total=total) }}'
    )
    with translation.override("en"):
        html = page.render({"title": "<script>x</script>", "total": "<b>", "_": partials._gettext})
    assert html == "&lt;script&gt;x&lt;/script&gt; scorer's total &lt;b&gt;, set by the editor"


def test_a_placeholder_may_be_called_value():
    """The catalogue names some placeholders ``value`` (``{% blocktranslate with value=… %}``),
    the name of the builtin format filter's own first argument."""
    page = engines["jinja2"].from_string(
        '{{ _("Minimum score of the track: %(value)s.")|format(value=low) }}'
    )
    with translation.override("zh"):
        html = page.render({"low": "<3.00>", "_": partials._gettext})
    assert html == "赛道最低分：&lt;3.00&gt;。"


@pytest.mark.parametrize("debug", [False, True])
def test_a_value_the_partial_does_not_receive_is_an_error(debug, settings):
    settings.DEBUG = debug
    env = partials.environment(loader=jinja2.DictLoader({}), undefined=jinja2.Undefined)
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("[{{ missing }}]").render()
    with pytest.raises(jinja2.UndefinedError):
        partials.render("dailies/_provenance.html", {"published_at": None})
    assert engines["jinja2"].env.undefined is jinja2.StrictUndefined


def test_templates_read_the_globals_as_one_dict_the_templates_own_on_top():
    """Each render and include copies a template's globals: a plain dict, not Jinja's
    ChainMap over the environment's, and a template's own globals still come first."""
    env = partials.environment(loader=jinja2.DictLoader({"t.html": "{{ plain_url }}|{{ x }}"}))
    template = env.get_template("t.html", globals={"x": "own", "plain_url": "mine"})
    assert type(template.globals) is dict
    assert template.globals["slug_url"] is env.globals["slug_url"]
    assert template.render() == "mine|own"
    assert env.from_string("{{ x|default('none') }}").render() == "none"  # not leaked


@pytest.fixture
def daily_with_a_dive(db):
    papers = [make_paper(f"p{i}", topics=("kv-cache",)) for i in range(3)]
    make_deep_dive(papers[0])
    return make_daily(papers=papers, scores=["4.20", "3.90", "3.50"])


def test_each_page_prints_the_partials_words_in_its_own_language(
    daily_with_a_dive, anonymous, settings
):
    """The words are looked up once per render, in the language of that render: a Chinese
    page after an English one (same process, same compiled partials) is in Chinese."""
    settings.PAGE_CACHE_ENABLED = False
    english = anonymous.get("/en/infra/2026-10-28/").content.decode()
    chinese = anonymous.get("/zh/infra/2026-10-28/").content.decode()
    english_again = anonymous.get("/en/infra/2026-10-28/").content.decode()
    assert english == english_again
    words = [
        ("show how it was scored", "查看评分依据"),
        ("No scorer's record is stored for this score.", "这个分数没有存档的评分记录。"),
        (">Cite<", ">引用<"),
        ("Deep dive · 1 min", "深度解读 · 1 分钟"),
    ]
    for en, zh in words:
        assert en in english and en not in chinese
        assert zh in chinese and zh not in english
    assert english.count('<li class="entry') == chinese.count('<li class="entry') == 3


def test_the_index_and_the_paper_page_use_the_same_partial_for_links_and_citation(
    daily_with_a_dive, anonymous, settings
):
    settings.PAGE_CACHE_ENABLED = False
    index = anonymous.get("/en/papers/").content.decode()
    paper = anonymous.get("/en/papers/p0/").content.decode()
    daily = anonymous.get("/en/infra/2026-10-28/").content.decode()
    for html in (index, paper, daily):
        assert '<details class="cite">' in html
        assert 'href="/en/topics/kv-cache/"' in html
    # The entry actions (deep dive, code) are the lists' and not the paper page's.
    assert 'class="deep-dive-link" href="/en/deep-dives/p0-dive/"' in daily
    assert 'class="deep-dive-marker" href="/en/deep-dives/p0-dive/"' in index


def test_a_word_is_kept_per_language_and_the_kept_words_are_bounded(monkeypatch):
    monkeypatch.setattr(partials, "_words", {})
    monkeypatch.setattr(partials, "_WORDS_KEPT", 2)
    with translation.override("zh"):
        assert partials.translator()("Lead story") == "头条"
    with translation.override("en"):
        translate = partials.translator()
        assert translate("Lead story") == "Lead story"
        translate("Cite"), translate("Score"), translate("Topics")
    assert partials._words["zh"] == {"Lead story": "头条"}
    assert list(partials._words["en"]) == ["Lead story", "Cite"]  # then no more kept
    with translation.override("en"):
        assert partials.translator()("Topics") == "Topics"  # still translated
