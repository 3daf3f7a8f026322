"""A track's weekly roundup: /<lang>/<track>/week/<ISO year>-W<week>/ lists the week's
published dailies (the editors' picks, the highest scores, the deep dives, the verified
code), its intro once an editor has published it, and its own Atom feed."""

from __future__ import annotations

import datetime as dt
from html import unescape

import feedparser
import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from audit.models import AuditRecord
from dailies import services
from dailies.drafting import roundup_intro_draft
from dailies.models import Daily, WeeklyRoundup
from dailies.weekly import WEEK_TOP_SCORES
from deepdives.models import ReferenceCode
from deepdives.registry import PROGRAMS
from digest_site.page_cache import HIT
from papers.drafting.llm import VERSION as LLM_VERSION
from papers.drafting.llm import LLMDrafter
from papers.drafting.offline import OfflineDrafter
from papers.models import LLMRequest, Summary
from tests.factories import make_daily, make_deep_dive, make_paper, make_track
from tests.llm_server import completion, system_message, user_message

# Pages are read as a browser reads them, whitespace collapsed (the templates' line breaks
# are djhtml's).

# ISO week 2026-W44: Monday 26 October to Sunday 1 November.
MONDAY = dt.date(2026, 10, 26)
WEEK = "/en/infra/week/2026-W44/"


def _day(n: int) -> dt.date:
    return MONDAY + dt.timedelta(days=n)


def _week(papers_a_day: int = 3) -> dict[str, list]:
    """Two published dailies in the week, a draft one, and a published one the week after."""
    track = make_track()
    made = {"published": [], "draft": [], "next_week": []}
    for k, n in enumerate((0, 2)):
        papers = [
            make_paper(f"w{n}-{i}", orgs=("NVIDIA",) if i == 0 else ()) for i in range(papers_a_day)
        ]
        scores = [f"{4.5 - 0.1 * i - 0.05 * k:.2f}" for i in range(papers_a_day)]
        made["published"].append(
            make_daily(track=track, date=_day(n), papers=papers, scores=scores)
        )
    secret = make_paper("secret-draft-paper", title="A secret draft paper")
    made["draft"].append(
        make_daily(track=track, date=_day(4), papers=[secret], status=Daily.Status.DRAFT)
    )
    later = make_paper("next-week-paper")
    made["next_week"].append(make_daily(track=track, date=_day(7), papers=[later]))
    return made


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_it_lists_the_weeks_published_dailies_picks_first(db, anonymous, lang):
    _week()
    response = anonymous.get(f"/{lang}/infra/week/2026-W44/")
    assert response.status_code == 200
    html = " ".join(response.content.decode().split())
    assert f'href="/{lang}/infra/2026-10-26/"' in html
    assert f'href="/{lang}/infra/2026-10-28/"' in html
    # The picks (each daily's lead) come before the highest scores.
    picks, top = html.index('id="picks-h"'), html.index('id="top-h"')
    assert picks < html.index("/papers/w0-0/") < top
    assert picks < html.index("/papers/w2-0/") < top
    assert html.index("/papers/w0-1/") > top
    # Nothing of a draft daily, nothing of another week.
    assert "secret-draft-paper" not in html
    assert "2026-10-30" not in html
    assert "next-week-paper" not in html
    # An organisation's name links to its lab page, as on the daily.
    assert f'href="/{lang}/labs/nvidia/">NVIDIA</a>' in html


def test_it_lists_the_highest_scores_in_order_within_their_bound(db, anonymous):
    _week(papers_a_day=WEEK_TOP_SCORES)
    html = " ".join(anonymous.get(WEEK).content.decode().split())
    top = html[html.index('id="top-h"') :]
    # w0-1 scored 4.40, w2-1 4.35, w0-2 4.30, ...; the picks are not listed again.
    assert top.index("/papers/w0-1/") < top.index("/papers/w2-1/") < top.index("/papers/w0-2/")
    assert top.count('class="week-entry"') == WEEK_TOP_SCORES
    assert "/papers/w0-0/" not in top.split('id="dives-h"')[0]


def test_it_answers_404_for_a_week_without_a_published_daily(db, anonymous):
    _week()
    make_daily(date=dt.date(2026, 11, 18), status=Daily.Status.DRAFT)
    assert anonymous.get("/en/infra/week/2026-W47/").status_code == 404
    assert anonymous.get("/en/infra/week/2026-W40/").status_code == 404
    assert anonymous.get("/en/nosuch/week/2026-W44/").status_code == 404
    # Weeks a year does not have are no URL of the site.
    assert anonymous.get("/en/infra/week/2026-W54/").status_code == 404
    assert anonymous.get("/en/infra/week/2026-W00/").status_code == 404


def test_it_lists_the_deep_dives_and_the_verified_code_of_the_week(db, anonymous):
    made = _week()
    paper = made["published"][1].entries.get(position=2).paper
    make_deep_dive(paper)
    draft_dive = made["published"][0].entries.get(position=3).paper
    make_deep_dive(draft_dive, status="draft")
    coded = made["published"][0].entries.get(position=2).paper
    name, program = next(iter(PROGRAMS.items()))
    ReferenceCode.objects.filter(slug=name).delete()
    ReferenceCode.objects.create(
        slug=name,
        name=name,
        module=program.module,
        paper=coded,
        last_status=ReferenceCode.RunStatus.PASSED,
        last_run_at=timezone.now(),
        code_hash=program.code_hash(),
    )
    html = " ".join(anonymous.get(WEEK).content.decode().split())
    dives = html[html.index('id="dives-h"') : html.index('id="code-h"')]
    assert f"/papers/{paper.slug}/" in dives
    assert f"/deep-dives/{paper.slug}-dive/" in dives
    assert f"/papers/{draft_dive.slug}/" not in dives
    code = html[html.index('id="code-h"') :]
    assert f"/papers/{coded.slug}/" in code
    assert f"/code/{name}/" in code


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_it_links_the_nearest_weeks_with_a_published_daily(db, anonymous, lang):
    made = _week()
    track = made["published"][0].track
    make_daily(track=track, date=MONDAY - dt.timedelta(weeks=2), papers=[make_paper("w42")])
    for day, slug in ((MONDAY - dt.timedelta(weeks=1), "w43"), (_day(14), "w46")):
        make_daily(track=track, date=day, papers=[make_paper(slug)], status=Daily.Status.DRAFT)
    previous, following = ("上一周", "下一周") if lang == "zh" else ("Previous week", "Next week")
    html = " ".join(anonymous.get(f"/{lang}/infra/week/2026-W44/").content.decode().split())
    # W43 has only a draft daily: the link skips it.
    assert f'<a rel="prev" href="/{lang}/infra/week/2026-W42/">← {previous} · 2026-W42</a>' in html
    assert f'<a rel="next" href="/{lang}/infra/week/2026-W45/">{following} · 2026-W45 →</a>' in html
    assert "2026-W43" not in html
    # Nor W46: the last week with a published daily has no next link.
    html = " ".join(anonymous.get(f"/{lang}/infra/week/2026-W45/").content.decode().split())
    assert f'rel="prev" href="/{lang}/infra/week/2026-W44/"' in html
    assert 'rel="next"' not in html and "2026-W46" not in html
    html = " ".join(anonymous.get(f"/{lang}/infra/week/2026-W42/").content.decode().split())
    assert 'rel="prev"' not in html and f'rel="next" href="/{lang}/infra/week/2026-W44/"' in html


def test_the_daily_page_links_its_week(db, anonymous):
    _week()
    for lang in ("en", "zh"):
        html = " ".join(anonymous.get(f"/{lang}/infra/2026-10-28/").content.decode().split())
        assert f'href="/{lang}/infra/week/2026-W44/"' in html


# -- the intro -------------------------------------------------------------------------------


def _drafted(track=None) -> WeeklyRoundup:
    roundup = services.roundup_get_or_create(track=track or make_track(), week_start=MONDAY)
    drafted, missing = roundup_intro_draft(roundup=roundup, drafter=OfflineDrafter())
    assert drafted == ["en", "zh"], missing
    return WeeklyRoundup.objects.get(pk=roundup.pk)


def test_it_drafts_the_intro_from_the_published_week_only(db):
    _week()
    roundup = _drafted()
    assert roundup.intro_en.startswith("This week's Infra roundup gathers 6 papers from 2 dailies.")
    assert "W0-0" in roundup.intro_en and "NVIDIA" in roundup.intro_en
    assert roundup.intro_zh.startswith("本周infra赛道周报汇集 2 期日报中的 6 篇论文。")
    assert "Secret" not in roundup.intro_en + roundup.intro_zh
    assert roundup.intro_en_provenance == roundup.intro_zh_provenance == "machine"
    assert roundup.intro_flags == []  # its counts are the week's, its names its entries'
    assert roundup.intro_drafter.startswith("offline")
    assert not roundup.is_published


WEEK_EN = (
    "This week's Infra roundup gathers 6 papers from 2 dailies, most of them about serving "
    "under load. The editors' first pick is W0-0 from NVIDIA, then W2-0; 17 teams should "
    "read W0-1 next, and everyone else can start with the picks."
)
WEEK_ZH = (
    "本周基础设施周报汇集 2 期日报中的 6 篇论文，主线是高负载下的服务。编辑首选 NVIDIA 的 W0-0，"
    "其次是 W2-0；做推理服务的团队接着读 W0-1，其他读者先看编辑精选即可。"
)


@pytest.fixture
def llm(settings, llm_server):
    """The LLM drafter against the recorded server, one language request at a time."""
    settings.LLM_BASE_URL = llm_server.base_url
    settings.LLM_API_KEY = "test-key"
    settings.LLM_DRAFT_MODEL = "draft-model-1"
    settings.LLM_DAILY_TOKEN_BUDGET = 0
    settings.LLM_CONCURRENCY = 1
    return llm_server


def test_the_llm_drafts_each_language_of_the_weeks_intro_in_its_own_request(db, llm):
    _week()
    llm.script(completion({"en": WEEK_EN}), completion({"zh": WEEK_ZH}))
    roundup = services.roundup_get_or_create(track=make_track(), week_start=MONDAY)
    drafted, missing = roundup_intro_draft(roundup=roundup, drafter=LLMDrafter.from_settings())
    assert drafted == ["en", "zh"], missing
    en, zh = llm.bodies()
    for body, language in ((en, "en"), (zh, "zh")):
        assert body["response_format"]["json_schema"]["schema"]["required"] == [language]
        user = user_message(body)
        assert user.startswith("Track: Infra") and "Week: 2026-W44 (a weekly roundup of 2" in user
        assert "W0-0" in user and "secret" not in user.lower()
    # The instructions say what the intro introduces: a week's roundup, not one day's issue.
    assert "intro of a weekly roundup" in system_message(en)
    assert "one day" not in system_message(en) and "the day" not in system_message(en)
    assert "一周周报" in system_message(zh) and "某一天" not in system_message(zh)
    roundup = WeeklyRoundup.objects.get()
    assert (roundup.intro_en, roundup.intro_zh) == (WEEK_EN, WEEK_ZH)
    assert roundup.intro_en_provenance == roundup.intro_zh_provenance == "machine"
    assert roundup.intro_drafter == f"llm {LLM_VERSION} draft-model-1"
    # The week's counts (6 papers, 2 dailies) are grounded; 17 is no number of the week.
    assert [(f["language"], f["kind"], f["text"]) for f in roundup.intro_flags] == [
        ("en", "number", "17")
    ]
    assert LLMRequest.objects.filter(purpose="draft_intro").count() == 2


def test_the_page_shows_no_intro_until_an_editor_publishes_it(db, anonymous, editor):
    _week()
    roundup = _drafted()
    assert roundup.intro_en not in " ".join(anonymous.get(WEEK).content.decode().split())
    services.roundup_publish(roundup=roundup, user=editor)
    roundup.refresh_from_db()
    assert (roundup.published_by, roundup.status) == (editor, "published")
    assert roundup.published_at is not None
    assert AuditRecord.objects.filter(object_id=str(roundup.pk), action="publish").exists()
    for lang, text in (("en", roundup.intro_en), ("zh", roundup.intro_zh)):
        html = " ".join(anonymous.get(f"/{lang}/infra/week/2026-W44/").content.decode().split())
        assert text.replace("'", "&#x27;") in html
        assert 'class="provenance"' in html  # machine text says so
    services.roundup_unpublish(roundup=roundup, user=editor)
    assert 'class="intro"' not in " ".join(anonymous.get(WEEK).content.decode().split())


def test_only_an_editor_publishes_the_intro_and_never_with_open_flags(db, contributor, editor):
    _week()
    roundup = _drafted()
    with pytest.raises(PermissionDenied):
        services.roundup_publish(roundup=roundup, user=contributor)
    with pytest.raises(PermissionDenied):
        services.roundup_publish(roundup=roundup, user=None)
    roundup.intro_flags = [{"language": "en", "kind": "number", "text": "42", "detail": ""}]
    roundup.save()
    with pytest.raises(ValidationError, match="unconfirmed number"):
        services.roundup_publish(roundup=roundup, user=editor)
    services.roundup_intro_confirm(roundup=roundup, user=editor)
    services.roundup_publish(roundup=roundup, user=editor)
    assert WeeklyRoundup.objects.get().is_published


def test_an_editors_text_is_never_redrafted(db, editor):
    _week()
    roundup = _drafted()
    services.roundup_edit(roundup=roundup, user=editor, intro_en="Mine.", intro_zh=roundup.intro_zh)
    drafted, missing = roundup_intro_draft(
        roundup=WeeklyRoundup.objects.get(), drafter=OfflineDrafter(), redraft=True
    )
    roundup = WeeklyRoundup.objects.get()
    assert drafted == ["zh"] and missing == {"en": "written by an editor"}
    assert roundup.intro_en == "Mine."
    assert roundup.intro_en_provenance == Summary.Provenance.EDITOR


def test_an_editors_change_drops_that_language_s_flags_and_a_confirm_is_audited(db, editor):
    _week()
    roundup = _drafted()
    roundup.intro_flags = [
        {"language": "en", "kind": "number", "text": "42", "detail": ""},
        {"language": "zh", "kind": "number", "text": "7", "detail": ""},
    ]
    roundup.save()
    services.roundup_edit(roundup=roundup, user=editor, intro_en="Mine.", intro_zh=roundup.intro_zh)
    roundup = WeeklyRoundup.objects.get()
    assert [f["language"] for f in roundup.intro_flags] == ["zh"]
    assert roundup.intro_en_provenance == Summary.Provenance.EDITOR
    assert roundup.intro_zh_provenance == Summary.Provenance.MACHINE
    roundup.intro_flags = []
    roundup.save()
    services.roundup_publish(roundup=roundup, user=editor)
    WeeklyRoundup.objects.update(intro_flags=[{"language": "zh", "kind": "number", "text": "7"}])
    services.roundup_intro_confirm(roundup=roundup, user=editor)
    assert WeeklyRoundup.objects.get().intro_flags == []
    record = AuditRecord.objects.filter(object_id=str(roundup.pk), action="edit").latest("pk")
    assert record.user == editor
    assert record.changes == {
        "intro_flags": [[{"language": "zh", "kind": "number", "text": "7"}], []]
    }


def test_the_admin_publishes_the_intro_and_records_who(db, editor_client, editor):
    _week()
    roundup = _drafted()
    response = editor_client.post(
        "/admin/dailies/weeklyroundup/",
        {"action": "publish_intro", "_selected_action": [roundup.pk]},
    )
    assert response.status_code == 302
    roundup.refresh_from_db()
    assert roundup.is_published and roundup.published_by == editor


def test_a_contributor_cannot_publish_from_the_admin(db, contributor_client):
    _week()
    roundup = _drafted()
    contributor_client.post(
        "/admin/dailies/weeklyroundup/",
        {"action": "publish_intro", "_selected_action": [roundup.pk]},
    )
    assert not WeeklyRoundup.objects.get(pk=roundup.pk).is_published


# -- the page cache --------------------------------------------------------------------------

WEEKS_FEED = "/en/feeds/infra/weeks.atom"
# Pages that print nothing of the week's roundup.
UNRELATED = ["/en/infra/2026-10-26/", "/en/infra/week/2026-W45/", "/en/papers/w0-0/", "/en/"]


def _kept(client, urls: list[str]) -> list[str]:
    """Those of ``urls`` the page cache still answers (each warmed first)."""
    return [url for url in urls if client.get(url)["Cache-Status"] == HIT]


def _warm(client, urls: list[str]) -> None:
    for url in urls:
        client.get(url)
    assert _kept(client, urls) == urls


def test_the_week_page_records_its_week_its_dailies_and_every_paper_of_them(db, anonymous):
    made = _week()
    keys = set(anonymous.get(WEEK)["Surrogate-Key"].split())
    papers = {f"paper:{e.paper_id}" for d in made["published"] for e in d.entries.all()}
    dailies = {f"daily:{d.pk}" for d in made["published"]}
    assert {"week:infra:2026-W44", "track:infra", *dailies, *papers} <= keys
    assert f"daily:{made['draft'][0].pk}" not in keys


def test_a_published_roundup_edit_retires_the_week_page_and_feed_and_nothing_else(
    db, anonymous, editor
):
    _week()
    roundup = _drafted()
    services.roundup_publish(roundup=roundup, user=editor)
    _warm(anonymous, [WEEK, "/zh/infra/week/2026-W44/", WEEKS_FEED, *UNRELATED])
    services.roundup_edit(
        roundup=roundup, user=editor, intro_en="A corrected intro.", intro_zh=roundup.intro_zh
    )
    assert _kept(anonymous, [WEEK, "/zh/infra/week/2026-W44/", WEEKS_FEED]) == []
    assert _kept(anonymous, UNRELATED) == UNRELATED
    assert "A corrected intro." in " ".join(anonymous.get(WEEK).content.decode().split())


def test_publishing_and_unpublishing_the_intro_retire_the_week_page(db, anonymous, editor):
    _week()
    roundup = _drafted()
    _warm(anonymous, [WEEK, *UNRELATED])
    services.roundup_publish(roundup=roundup, user=editor)
    assert _kept(anonymous, [WEEK, *UNRELATED]) == UNRELATED
    assert 'class="intro"' in " ".join(anonymous.get(WEEK).content.decode().split())
    services.roundup_unpublish(roundup=roundup, user=editor)
    assert 'class="intro"' not in " ".join(anonymous.get(WEEK).content.decode().split())


def test_a_draft_roundup_edit_retires_nothing(db, anonymous, contributor):
    _week()
    roundup = _drafted()
    _warm(anonymous, [WEEK, WEEKS_FEED, *UNRELATED])
    services.roundup_edit(roundup=roundup, user=contributor, intro_en="Draft.", intro_zh="")
    assert _kept(anonymous, [WEEK, WEEKS_FEED, *UNRELATED]) == [WEEK, WEEKS_FEED, *UNRELATED]


def test_a_daily_published_in_the_week_retires_its_week_page(db, anonymous, editor):
    made = _week()
    _warm(anonymous, [WEEK, "/en/infra/week/2026-W45/"])
    services.daily_publish(daily=made["draft"][0], user=editor)
    assert _kept(anonymous, [WEEK]) == []
    assert "secret-draft-paper" in " ".join(anonymous.get(WEEK).content.decode().split())


def test_a_daily_published_in_another_week_retires_the_week_pages_it_neighbours(
    db, anonymous, editor
):
    made = _week()
    before = MONDAY - dt.timedelta(days=3)  # Friday of 2026-W43
    w43 = make_daily(
        track=made["published"][0].track,
        date=before,
        papers=[make_paper("w43")],
        status=Daily.Status.DRAFT,
    )
    _warm(anonymous, [WEEK])
    assert 'rel="prev"' not in " ".join(anonymous.get(WEEK).content.decode().split())
    services.daily_publish(daily=w43, user=editor)
    assert _kept(anonymous, [WEEK]) == []
    assert 'rel="prev" href="/en/infra/week/2026-W43/"' in " ".join(
        anonymous.get(WEEK).content.decode().split()
    )


def test_deleting_a_published_roundup_takes_an_editor_and_retires_the_week_page(
    db, anonymous, editor, contributor
):
    _week()
    roundup = _drafted()
    services.roundup_publish(roundup=roundup, user=editor)
    with pytest.raises(PermissionDenied):
        services.roundup_delete(roundup=roundup, user=contributor)
    _warm(anonymous, [WEEK])
    services.roundup_delete(roundup=roundup, user=editor)
    assert 'class="intro"' not in " ".join(anonymous.get(WEEK).content.decode().split())
    assert AuditRecord.objects.filter(object_id=str(roundup.pk), action="delete").exists()


# -- the feed --------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_its_feed_has_a_week_an_item_without_drafts(db, anonymous, editor, lang):
    _week()
    roundup = _drafted()
    response = anonymous.get(f"/{lang}/feeds/infra/weeks.atom")
    assert response.status_code == 200
    feed = feedparser.parse(response.content)
    assert not feed.bozo, feed.bozo_exception
    links = [entry.link for entry in feed.entries]
    assert links == [
        f"http://testserver/{lang}/infra/week/2026-W45/",
        f"http://testserver/{lang}/infra/week/2026-W44/",
    ]
    body = feed.entries[1].summary
    assert "/papers/w0-0/" in body and "/papers/w2-0/" in body
    assert "secret-draft-paper" not in " ".join(response.content.decode().split())
    assert roundup.intro_en[:30] not in body
    services.roundup_publish(roundup=roundup, user=editor)
    feed = feedparser.parse(anonymous.get(f"/{lang}/feeds/infra/weeks.atom").content)
    assert not feed.bozo
    text = roundup.intro_en if lang == "en" else roundup.intro_zh
    assert text[:20] in unescape(feed.entries[1].summary)


# -- cost ------------------------------------------------------------------------------------


@pytest.mark.parametrize("papers_a_day", [2, 12])
def test_the_page_costs_a_fixed_number_of_queries(
    db, anonymous, django_assert_num_queries, papers_a_day
):
    made = _week(papers_a_day=papers_a_day)
    make_deep_dive(made["published"][0].entries.get(position=1).paper)
    services.roundup_get_or_create(track=make_track(), week_start=MONDAY)
    make_daily(track=make_track(), date=MONDAY - dt.timedelta(weeks=1))
    # The track, the dailies (with the dates of the weeks before and after), the roundup,
    # the entries with their paper and venue, their organisations, summaries, topics, deep
    # dives and code, the deep-dive feature, the verified code: 11 whatever the number of
    # papers.
    with django_assert_num_queries(11):
        response = anonymous.get(WEEK)
    html = " ".join(response.content.decode().split())
    assert 'rel="prev" href="/en/infra/week/2026-W43/"' in html
    assert 'rel="next" href="/en/infra/week/2026-W45/"' in html


@pytest.mark.parametrize("weeks", [1, 3])
def test_the_feed_costs_a_fixed_number_of_queries(db, anonymous, django_assert_num_queries, weeks):
    track = make_track()
    for n in range(weeks):
        make_daily(track=track, date=_day(7 * n))
    with django_assert_num_queries(6):
        assert anonymous.get("/en/feeds/infra/weeks.atom").status_code == 200
