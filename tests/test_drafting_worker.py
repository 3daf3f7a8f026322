"""End to end through a real Celery worker with a recorded chat-completions server: assembly
queues drafting, every entry gets both languages and the daily both intros, and a flagged
entry keeps ``publish_daily`` refusing until an editor confirms it."""

from __future__ import annotations

import copy
import datetime as dt
import time
import tomllib
import zoneinfo
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from dailies.models import Daily
from dailies.tasks import assemble_daily
from papers.drafting.edits import summary_confirm
from papers.drafting.service import glossary_seed
from papers.models import Paper, Source, Summary, SummaryFlag
from papers.tasks import ingest_source_task, score_pending_papers
from tests.arxiv_docs import Entry, api_page
from tests.factories import make_track
from tests.llm_server import completion, recorded, user_message
from tests.recorded_server import Reply

pytestmark = [
    pytest.mark.redis,
    pytest.mark.postgres,
    pytest.mark.skipif(
        not (settings.REDIS_URL and settings.DATABASES["default"]["ENGINE"].endswith("postgresql")),
        reason="needs REDIS_URL and a PostgreSQL DATABASE_URL (CI sets both)",
    ),
]

DEMO = Path(__file__).resolve().parent.parent / "dailies" / "demo" / "papers"
PAPERS = {
    "hilo": ["Microsoft Research"],
    "trustann": [],
    "c2kv": ["Shanghai Jiao Tong University", "Alibaba Group"],
}
INVENTED = "压缩比高达 37 倍。"


@pytest.fixture
def worker_env(llm_server) -> dict[str, str]:
    return {
        "LLM_BASE_URL": llm_server.base_url,
        "LLM_API_KEY": "test-key",
        "LLM_MODEL": "draft-model-1",
        "LLM_TIMEOUT_S": "5",
        "LLM_MAX_RETRIES": "1",
    }


def _answers(llm_server) -> None:
    """Each paper's recorded answer, chosen by the title in the request; C2KV's Chinese
    summary claims a ratio its abstract lacks."""
    c2kv = copy.deepcopy(recorded("c2kv"))
    c2kv["zh"]["summary"] = c2kv["zh"]["summary"].replace("摘要没有给出", INVENTED + "摘要没有给出")
    answers = {"hilo": recorded("hilo"), "trustann": recorded("trustann"), "c2kv": c2kv}
    titles = {slug: _demo(slug)["title"] for slug in PAPERS}

    def choose(body: dict) -> Reply:
        user = user_message(body)
        if body["response_format"]["json_schema"]["name"] == "daily_intro":
            return completion(recorded("intro"))
        slug = next(slug for slug, title in titles.items() if title in user)
        return completion(answers[slug])

    llm_server.answer_with(choose)


def _demo(slug: str) -> dict:
    return tomllib.loads((DEMO / f"{slug}.toml").read_text(encoding="utf-8"))


def _feed() -> bytes:
    entries = []
    for i, (slug, affiliations) in enumerate(PAPERS.items()):
        data = _demo(slug)
        entries.append(
            Entry(
                arxiv_id=f"2612.{20000 + i:05d}",
                title=data["title"],
                summary=data["abstract"],
                authors=[(f"Author {n}", aff) for n, aff in enumerate(affiliations or [""])],
            )
        )
    return api_page(entries)


def _wait_for(check, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    pytest.fail("the worker did not finish drafting in time")


def test_assembly_queues_bilingual_drafting_and_a_flag_holds_publishing(
    worker, llm_server, recorded_server, editor, capsys
):
    _answers(llm_server)
    track = make_track("infra", name_en="Infra", name_zh="基础设施", min_score="1.00")
    glossary_seed(track=track)
    url = recorded_server.serve("/api/query", Reply(body=_feed()))
    source = Source.objects.create(
        name="e2e drafting", kind=Source.Kind.ARXIV_API, url=url, config={"search_query": "x"}
    )
    source.tracks.add(track)
    assert ingest_source_task.delay(source.pk).get(timeout=120)["new"] == 3
    score_pending_papers.delay().get(timeout=120)
    local = timezone.now().astimezone(zoneinfo.ZoneInfo(settings.EDITORIAL_TIME_ZONE))
    day = (local + dt.timedelta(days=1)).date()
    assert assemble_daily.delay(track.pk, day.isoformat()).get(timeout=120)["status"] == "created"

    daily = Daily.objects.get(track=track, date=day)
    _wait_for(lambda: Daily.objects.filter(pk=daily.pk).exclude(intro_zh="").exists())
    daily.refresh_from_db()
    papers = Paper.objects.filter(daily_entries__daily=daily)
    assert papers.count() == 3
    for paper in papers:
        for language in ("en", "zh"):
            summary = Summary.objects.get(paper=paper, language=language)
            assert summary.provenance == Summary.Provenance.MACHINE
            assert summary.model_name == "draft-model-1" and summary.takeaway in summary.body
    assert daily.intro_en == recorded("intro")["en"] and daily.intro_zh == recorded("intro")["zh"]
    assert (daily.intro_en_provenance, daily.intro_zh_provenance) == ("machine", "machine")

    flags = SummaryFlag.objects.filter(summary__paper__in=papers, resolution="")
    assert [(f.summary.paper.short_name, f.summary.language, f.text) for f in flags] == [
        ("C2KV", "zh", "37 倍")
    ]

    with pytest.raises(SystemExit):
        call_command("publish_daily", "infra", day.isoformat())
    assert "37 倍" in capsys.readouterr().err
    daily.refresh_from_db()
    assert daily.status == Daily.Status.DRAFT

    # The editor confirms the flagged number and reviews every machine draft (the track
    # requires review, as tracks do by default).
    for summary in Summary.objects.filter(paper__in=papers):
        summary_confirm(summary=summary, user=editor)
    call_command("publish_daily", "infra", day.isoformat())
    daily.refresh_from_db()
    assert daily.status == Daily.Status.PUBLISHED
