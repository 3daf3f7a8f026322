"""What the site says of itself is true of the data it shows."""

from __future__ import annotations

import pytest

NO_RUBRIC = {
    "en": "No rubric breakdown was recorded for this score",
    "zh": "这个分数没有记录分项得分",
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_footer_claims_no_rubric_for_scores_that_have_none(demo, anonymous, lang):
    html = anonymous.get(f"/{lang}/infra/2026-10-28/").content.decode()
    footer = html.split('<footer class="site-footer">', 1)[1]
    # The demo's scores were taken over from the dailies as published, without a rubric.
    assert NO_RUBRIC[lang] in html
    assert "every score shows its rubric" not in footer
    assert "每个分数都附有评分细则" not in footer
    claim = {
        "en": "each score says how it was made, with its rubric where the scorer recorded one",
        "zh": "每个分数都注明从何而来，评分器记录了细则的，一并列出",
    }[lang]
    assert claim in footer
