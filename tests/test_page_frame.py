"""The frame every page shares (digest_site/jinja2/site/): the daily page, written in Jinja,
and the pages written as Django templates (templates/base.html) print the same head links,
header and footer, from the same pieces."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.template.defaultfilters import date as date_filter
from django.utils import timezone
from django.utils.timezone import template_localtime

from dailies.models import Daily
from tests.factories import make_daily, make_paper, make_track

DAILY = "/{lang}/infra/2026-10-28/"
INDEX = "/{lang}/papers/"


def _between(html: str, start: str, end: str) -> str:
    return html.split(start, 1)[1].split(end, 1)[0]


def _frame(html: str) -> dict[str, str]:
    """The parts of the frame that are the same on every page of a language: the header
    without its language switch (which links this page elsewhere), the footer without the
    page's feeds and the theme links' way back to it, and the stylesheet and icon links."""
    header = _between(html, '<header class="site-header">', "</header>")
    footer = _between(html, '<footer class="site-footer">', "</footer>")
    return {
        "header": re.sub(r'<nav class="lang-switch".*?</nav>', "", header, flags=re.S),
        "footer": "\n".join(
            line
            for line in re.sub(
                r'<li><a href="/\w+/feeds/(?!code\.atom)[^"]*"[^<]*</a></li>|\?next=[^"]*',
                "",
                footer,
            ).splitlines()
            if line.strip()
        ),
        "links": "\n".join(re.findall(r'<link rel="(?:stylesheet|icon)"[^>]*>', html)),
        "skip": _between(html, "<body", "<header"),
    }


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_daily_page_and_a_django_page_print_the_same_frame(demo, anonymous, lang):
    daily = anonymous.get(DAILY.format(lang=lang)).content.decode()
    index = anonymous.get(INDEX.format(lang=lang)).content.decode()
    frame, other = _frame(daily), _frame(index)
    for part in frame:
        assert frame[part] == other[part], part
    assert f'href="/{lang}/papers/"' in frame["header"] and frame["links"].count("<link") == 2
    for html in (daily, index):
        assert html.startswith("<!doctype html>\n<html lang=")
        assert html.rstrip().endswith("</footer>\n</body>\n</html>")
        head = html.split("</head>", 1)[0]
        assert head.count("<title>") == 1 and head.count('rel="canonical"') == 1


def test_the_header_follows_the_language_of_each_request(demo, anonymous):
    """The section links are kept per language: a page in one language never links the
    other's sections after a page in that language was served."""
    for lang in ("en", "zh", "en", "zh"):
        header = _frame(anonymous.get(DAILY.format(lang=lang)).content.decode())["header"]
        other = "zh" if lang == "en" else "en"
        assert f'href="/{lang}/topics/"' in header and f'href="/{other}/' not in header


def test_the_language_switch_links_the_same_daily_in_the_other_language(demo, anonymous):
    html = anonymous.get("/en/infra/2026-10-28/").content.decode()
    switch = _between(html, '<nav class="lang-switch"', "</nav>")
    assert 'href="/zh/infra/2026-10-28/"' in switch
    assert '<link rel="alternate" hreflang="zh-CN" href="' in html


def test_a_scheduled_draft_previews_its_time_as_the_django_pages_print_it(db, editor_client):
    track = make_track()
    daily = make_daily(track=track, papers=[make_paper("p")], status=Daily.Status.SCHEDULED)
    daily.publish_at = timezone.now().replace(microsecond=0) + dt.timedelta(hours=5)
    daily.save(update_fields=["publish_at"])
    html = editor_client.get(daily.get_absolute_url()).content.decode()
    flag = _between(html, '<p class="status-flag">', "</p>")
    shown = date_filter(template_localtime(daily.publish_at), "Y-m-d H:i")
    assert flag.startswith(f"{daily.get_status_display()} · {shown} · <a href=")
    assert 'class="preview-banner"' in html


def test_a_machine_drafted_intro_and_a_fallback_are_marked(db, anonymous):
    track = make_track()
    daily = make_daily(track=track, papers=[make_paper("p")], intro_zh="")
    daily.intro_en_provenance = "machine"
    daily.save(update_fields=["intro_en_provenance"])
    zh = anonymous.get(f"/zh/{track.slug}/{daily.date.isoformat()}/").content.decode()
    assert 'class="untranslated"' in zh.split('<p class="intro"', 1)[0].rsplit("<h1>", 1)[1]
    assert '<p class="intro" lang="en">' in zh and 'class="provenance"' in zh


def test_the_frames_static_urls_follow_a_changed_setting(db, anonymous, settings):
    """The frame's static URLs are kept per process, and forgotten when a setting changes."""
    settings.PAGE_CACHE_ENABLED = False
    assert "/static/css/site.css" in anonymous.get("/en/").content.decode()
    settings.STATIC_URL = "/assets/"
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    html = anonymous.get("/en/").content.decode()
    assert 'href="/assets/css/site.css"' in html
