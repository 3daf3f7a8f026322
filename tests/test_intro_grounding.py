"""A drafted intro is checked for the organisations it names, as summaries are: a system
credited to another organisation than its entry's is flagged for the editor."""

from __future__ import annotations

from dailies.drafting import daily_intro_draft
from dailies.models import Daily
from papers.drafting.base import IntroDraft
from tests.factories import make_daily, make_paper


class IntroWriter:
    """A drafter whose intro is given: stands in for a model's answer."""

    def __init__(self, **texts: str) -> None:
        self.texts = texts

    def draft_intro(self, intro) -> IntroDraft:
        return IntroDraft(drafter="written", drafter_version="1", texts=dict(self.texts))


def _draft_daily():
    paper = make_paper(
        "prefixroute",
        short_name="PrefixRoute",
        orgs=("Alibaba",),
        abstract="PrefixRoute routes requests by prefix cache affinity.",
    )
    return make_daily(papers=[paper], status=Daily.Status.DRAFT, intro_en="", intro_zh="")


def _organization_flags(daily, language):
    daily.refresh_from_db()
    return [
        f for f in daily.intro_flags if f["language"] == language and f["kind"] == "organization"
    ]


def test_an_intro_crediting_a_system_to_another_organisation_is_flagged(db):
    daily = _draft_daily()
    writer = IntroWriter(
        en="Google's PrefixRoute leads today: routing by prefix cache affinity.",
        zh="今天的头条是谷歌的 PrefixRoute：按前缀缓存亲和性路由请求。",
    )

    drafted, _missing = daily_intro_draft(daily=daily, drafter=writer)

    assert sorted(drafted) == ["en", "zh"]
    assert [f["text"] for f in _organization_flags(daily, "en")] == ["Google"]
    assert [f["text"] for f in _organization_flags(daily, "zh")] == ["谷歌"]


def test_an_intro_crediting_the_entrys_own_organisation_is_not_flagged(db):
    daily = _draft_daily()
    writer = IntroWriter(
        en="Alibaba's PrefixRoute leads today: routing by prefix cache affinity.",
        zh="今天的头条是阿里巴巴的 PrefixRoute：按前缀缓存亲和性路由请求。",
    )

    daily_intro_draft(daily=daily, drafter=writer)

    assert _organization_flags(daily, "en") == [] and _organization_flags(daily, "zh") == []


def test_the_counts_of_the_day_an_offline_intro_gives_are_not_flagged(db):
    """'… and 7 more' counts the entries the intro does not name: a count of the day."""
    from papers.drafting.offline import OfflineDrafter

    papers = [
        make_paper(
            f"system-{name.lower()}",
            title=f"The {name} system",  # no figure in any source: the counts are the day's
            short_name=name,
            abstract=f"{name} schedules requests.",
            en=None,
            zh=None,
        )
        for name in ("Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel")
        + ("India", "Juliet")
    ]
    daily = make_daily(papers=papers, status=Daily.Status.DRAFT, intro_en="", intro_zh="")

    drafted, _missing = daily_intro_draft(daily=daily, drafter=OfflineDrafter())

    daily.refresh_from_db()
    assert sorted(drafted) == ["en", "zh"] and "7 more" in daily.intro_en
    assert [f for f in daily.intro_flags if f["kind"] == "number"] == []
