"""The demo deep dives (six on the 2026-10-28 daily), in both languages."""

from __future__ import annotations

import re

import pytest

from deepdives.models import DeepDive

SIX = ["hilo", "coloc", "trustann", "bellowskv", "zipfusion", "cosmos-llm-gateway"]


@pytest.fixture
def deep_dives(demo_deep_dives):
    assert demo_deep_dives["deep_dives"] >= 6


def test_each_is_long_enough_in_both_languages(deep_dives):
    for deep_dive in DeepDive.objects.all():  # every demo deep dive, not only these six
        words = len(re.findall(r"[A-Za-z][A-Za-z'’-]*", deep_dive.body_en))
        chars = len(re.findall(r"[\u4e00-\u9fff]", deep_dive.body_zh))
        assert words >= 1000, (deep_dive.slug, words)
        assert chars >= 1800, (deep_dive.slug, chars)


@pytest.mark.parametrize("slug", SIX)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_renders_with_reading_time_and_a_code_link(deep_dives, anonymous, slug, lang):
    response = anonymous.get(f"/{lang}/deep-dives/{slug}/")
    assert response.status_code == 200
    html = response.content.decode()
    deep_dive = DeepDive.objects.get(slug=slug)
    minutes = deep_dive.reading_minutes_zh if lang == "zh" else deep_dive.reading_minutes_en
    assert minutes >= 4
    expected = f"阅读约 {minutes} 分钟" if lang == "zh" else f"{minutes} min read"
    assert expected in html
    assert f'href="/{lang}/code/{deep_dive.reference_code.slug}/"' in html
    assert f'<div class="prose" lang="{lang}">' in html


def test_the_daily_shows_the_six_deep_dive_links(deep_dives, anonymous):
    html = anonymous.get("/en/infra/2026-10-28/").content.decode()
    links = re.findall(r'href="/en/deep-dives/([\w-]+)/">Deep dive · (\d+) min', html)
    assert [slug for slug, _ in links] == SIX
    zh = anonymous.get("/zh/infra/2026-10-28/").content.decode()
    assert len(re.findall(r"深度解读 · \d+ 分钟", zh)) == 6


def test_derived_designs_say_mechanism_as_described(deep_dives):
    for slug in ["hilo", "coloc", "bellowskv", "zipfusion"]:
        body = DeepDive.objects.get(slug=slug).body_en.lower()
        assert "mechanism as described" in body, slug
