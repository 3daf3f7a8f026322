"""GET /api/v1/papers/, /api/v1/papers/<slug>/ and /api/v1/topics/: published papers only,
every field the paper page shows, each filter, and a fixed query count."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from dailies.models import Daily
from deepdives.models import DeepDive, ReferenceCode
from deepdives.registry import PROGRAMS
from papers.models import Paper, Score, Summary, Venue
from tests.factories import make_daily, make_deep_dive, make_paper, make_track

pytestmark = pytest.mark.django_db

DAY = dt.date(2026, 10, 28)


def _get(client, url: str, status: int = 200) -> dict:
    response = client.get(url)
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    return response.json()


def _slugs(client, query: str = "") -> list[str]:
    return [p["slug"] for p in _get(client, f"/api/v1/papers/?{query}")["results"]]


def test_it_shows_a_paper_with_every_field_its_page_shows(anonymous):
    venue = Venue.objects.create(slug="nsdi-2027", short_name="NSDI", year=2027)
    hilo = make_paper(
        "hilo",
        orgs=("Microsoft",),
        topics=("reliability",),
        authors=["A. Author", "B. Author"],
        abstract="We present HiLO.",
        abs_url="https://arxiv.org/abs/2601.00001",
        pdf_url="https://arxiv.org/pdf/2601.00001",
        doi="10.1145/123 456",
        venue=venue,
        venue_status=Paper.VenueStatus.ACCEPTED,
    )
    Score.objects.create(
        paper=hilo,
        track=make_track(),
        total=Decimal("4.35"),
        criteria={"relevance": 5, "novelty": 4},
        rationale_en="Directly on topic.",
        scorer="rubric",
        scorer_version="2",
    )
    make_daily(date=DAY, papers=[hilo], scores=["4.35"])
    make_deep_dive(hilo)
    data = _get(anonymous, "/api/v1/papers/hilo/")
    assert data["title"].startswith("Paper number") and data["short_name"] == "Hilo"
    assert data["authors"] == ["A. Author", "B. Author"]
    assert data["abstract"] == "We present HiLO."
    assert data["venue"] == {
        "short_name": "NSDI",
        "year": 2027,
        "full_name": "",
        "status": "accepted",
        "label": "Accepted at NSDI 2027",
    }
    assert data["links"] == {
        "abstract": "https://arxiv.org/abs/2601.00001",
        "pdf": "https://arxiv.org/pdf/2601.00001",
        "doi": "https://doi.org/10.1145/123%20456",
    }
    assert data["summary"]["heading"] == "Hilo: hilo headline"
    assert data["summary"]["provenance"] == "editor"
    assert data["summary"]["provenance_label"] == "Written by an editor"
    assert [t["slug"] for t in data["topics"]] == ["reliability"]
    assert data["deep_dive"] == {
        "title": "hilo deep dive",
        "minutes": 1,
        "url": "http://testserver/en/deep-dives/hilo-dive/",
    }
    [score] = data["scores"]
    assert score["total"] == 4.35 and score["scorer"] == "rubric"
    assert score["criteria"] == [
        {"name": "relevance", "label": "Relevance to the track", "value": 5.0},
        {"name": "novelty", "label": "Novelty", "value": 4.0},
    ]
    assert score["rationale"] == "Directly on topic." and score["rationale_language"] == "en"
    [daily] = data["dailies"]
    assert daily["date"] == "2026-10-28" and daily["is_lead"] and daily["score"] == 4.35
    assert daily["url"] == "http://testserver/en/infra/2026-10-28/#hilo"
    assert daily["api_url"] == "http://testserver/api/v1/dailies/infra/2026-10-28/?lang=en"


def test_it_marks_a_summary_shown_in_the_other_language(anonymous):
    machine = make_paper("machine", zh=None)
    Summary.objects.filter(paper=machine).update(provenance=Summary.Provenance.MACHINE)
    make_daily(date=DAY, papers=[machine])
    summary = _get(anonymous, "/api/v1/papers/machine/?lang=zh")["summary"]
    assert summary["language"] == "en" and summary["not_yet_translated"] is True
    assert summary["note"]
    assert summary["provenance"] == "machine" and summary["reviewed"] is False
    english = _get(anonymous, "/api/v1/papers/machine/?lang=en")["summary"]
    assert english["not_yet_translated"] is False and english["note"] is None


def test_it_never_links_an_unsafe_stored_url(anonymous):
    paper = make_paper("unsafe")
    # Written past the model's validators, as an old row or a raw import could be.
    Paper.objects.filter(pk=paper.pk).update(
        abs_url="javascript:alert(1)", pdf_url=" JaVaScRiPt:alert(1)", doi=""
    )
    make_daily(date=DAY, papers=[paper])
    links = _get(anonymous, "/api/v1/papers/unsafe/")["links"]
    assert links == {"abstract": None, "pdf": None, "doi": None}


@pytest.mark.parametrize("status", [Daily.Status.DRAFT, Daily.Status.SCHEDULED])
def test_it_hides_papers_of_unpublished_dailies(anonymous, editor_client, status):
    hidden, both = make_paper("hidden"), make_paper("both")
    make_daily(date=DAY, papers=[hidden, both], status=status)
    make_daily(date=DAY - dt.timedelta(days=1), papers=[both])
    for client in (anonymous, editor_client):
        assert _slugs(client) == ["both"]
        _get(client, "/api/v1/papers/hidden/", 404)
        # The published paper does not reveal the unpublished daily it is also in.
        assert [d["date"] for d in _get(client, "/api/v1/papers/both/")["dailies"]] == [
            "2026-10-27"
        ]
        assert _get(client, "/api/v1/search?q=hidden")["results"] == []


def test_it_filters_by_topic_and_track(anonymous):
    cache_paper = make_paper("cache", topics=("kv-cache",))
    other = make_paper("other", topics=("storage",))
    make_daily(track=make_track("infra"), date=DAY, papers=[cache_paper])
    make_daily(track=make_track("ml"), date=DAY, papers=[other])
    assert _slugs(anonymous, "topic=kv-cache") == ["cache"]
    assert _slugs(anonymous, "track=ml") == ["other"]
    assert _slugs(anonymous, "track=infra&topic=storage") == []


def test_it_narrows_track_and_dates_by_one_appearance(anonymous):
    moved = make_paper("moved")
    make_daily(track=make_track("infra"), date=DAY, papers=[moved])
    make_daily(track=make_track("ml"), date=DAY + dt.timedelta(days=5), papers=[moved])
    assert _slugs(anonymous, "from=2026-10-28&to=2026-10-28") == ["moved"]
    assert _slugs(anonymous, "track=infra&from=2026-11-01") == []  # in ml then, not infra
    assert _slugs(anonymous, "track=ml&from=2026-11-01") == ["moved"]
    assert _slugs(anonymous, "to=2026-10-27") == []


def _code(paper: Paper, name: str, *, status: str, current: bool) -> ReferenceCode:
    program = PROGRAMS[name]
    return ReferenceCode.objects.create(
        slug=name,
        name=program.system,
        module=program.module,
        paper=paper,
        last_status=status,
        last_run_at=timezone.now(),
        code_hash=program.code_hash() if current else "0" * 64,
    )


def test_it_filters_by_deep_dive_and_verified_code(anonymous):
    dived, draft_dive, plain = make_paper("dived"), make_paper("draft-dive"), make_paper("plain")
    verified, stale, failed = make_paper("verified"), make_paper("stale"), make_paper("failed")
    make_daily(date=DAY, papers=[dived, draft_dive, plain, verified, stale, failed])
    make_deep_dive(dived)
    make_deep_dive(draft_dive, status=DeepDive.Status.DRAFT)
    names = list(PROGRAMS)
    _code(verified, names[0], status=ReferenceCode.RunStatus.PASSED, current=True)
    _code(stale, names[1], status=ReferenceCode.RunStatus.PASSED, current=False)
    _code(failed, names[2], status=ReferenceCode.RunStatus.FAILED, current=True)
    assert _slugs(anonymous, "has_deep_dive=true") == ["dived"]
    assert "dived" not in _slugs(anonymous, "has_deep_dive=false")
    assert _slugs(anonymous, "has_verified_code=true") == ["verified"]
    assert set(_slugs(anonymous, "has_verified_code=false")) == {
        "dived",
        "draft-dive",
        "plain",
        "stale",
        "failed",
    }
    codes = _get(anonymous, "/api/v1/papers/verified/")["code"]
    assert [c["slug"] for c in codes] == [names[0]] and codes[0]["last_status"] == "passed"


@pytest.mark.parametrize(
    "query, field",
    [
        ("topic=nope", "topic"),
        ("track=nope", "track"),
        ("has_deep_dive=maybe", "has_deep_dive"),
        ("has_verified_code=2", "has_verified_code"),
        ("from=2026-13-01", "from"),
        ("from=2026-10-30&to=2026-10-01", "to"),
        ("lang=de", "lang"),
    ],
)
def test_it_rejects_bad_filters_with_the_reason(anonymous, query, field):
    make_daily(date=DAY)
    errors = _get(anonymous, f"/api/v1/papers/?{query}", 400)
    assert list(errors) == [field] and errors[field][0]


def test_it_answers_json_404_for_an_unknown_paper_or_cursor(anonymous):
    make_daily(date=DAY)
    assert _get(anonymous, "/api/v1/papers/nope/", 404)["detail"]
    assert _get(anonymous, "/api/v1/papers/no%20such/", 404)["detail"]
    assert _get(anonymous, "/api/v1/papers/?cursor=bogus", 404)["detail"] == "Invalid cursor"


def test_it_pages_papers_in_the_index_order(anonymous):
    older = [make_paper(f"old-{n}") for n in range(3)]
    newer = [make_paper(f"new-{n}") for n in range(3)]
    make_daily(date=DAY, papers=older)
    make_daily(date=DAY + dt.timedelta(days=1), papers=newer)
    seen, url = [], "/api/v1/papers/?limit=2"
    while url:
        data = _get(anonymous, url)
        seen += [p["slug"] for p in data["results"]]
        url = data["next"]
    assert seen == ["new-0", "new-1", "new-2", "old-0", "old-1", "old-2"]
    html = anonymous.get("/en/papers/").content.decode()
    assert [html.index(f"/en/papers/{slug}/") for slug in seen] == sorted(
        html.index(f"/en/papers/{slug}/") for slug in seen
    )


def test_it_lists_topics_of_published_papers_most_papers_first(anonymous):
    make_daily(
        date=DAY,
        papers=[make_paper(topics=("kv-cache", "storage")), make_paper(topics=("kv-cache",))],
    )
    make_daily(
        date=DAY + dt.timedelta(days=1),
        papers=[make_paper(topics=("secret",))],
        status=Daily.Status.DRAFT,
    )
    data = _get(anonymous, "/api/v1/topics/?lang=zh")
    assert [(t["slug"], t["papers"]) for t in data["results"]] == [("kv-cache", 2), ("storage", 1)]
    first = data["results"][0]
    assert first["url"] == "http://testserver/zh/topics/kv-cache/"
    assert first["papers_api_url"] == "http://testserver/api/v1/papers/?topic=kv-cache&lang=zh"


def _papers(count: int, date: dt.date) -> None:
    papers = [
        make_paper(orgs=("Microsoft",), topics=("kv-cache", f"t{date.day}-{n}"))
        for n in range(count)
    ]
    daily = make_daily(date=date, papers=papers)
    for paper in papers[:2]:
        make_deep_dive(paper)
    assert daily.entries.count() == count


def test_it_lists_papers_in_a_fixed_number_of_queries(anonymous, django_assert_num_queries):
    _papers(3, DAY)
    # papers, organisations, summaries, topics, deep dives, reference code, appearances
    with django_assert_num_queries(7):
        assert len(_get(anonymous, "/api/v1/papers/?limit=100")["results"]) == 3
    _papers(27, DAY + dt.timedelta(days=1))
    with django_assert_num_queries(7):
        assert len(_get(anonymous, "/api/v1/papers/?limit=99")["results"]) == 30


def test_it_lists_topics_in_a_fixed_number_of_queries(anonymous, django_assert_num_queries):
    _papers(3, DAY)
    with django_assert_num_queries(1):
        assert len(_get(anonymous, "/api/v1/topics/?limit=100")["results"]) == 4
    _papers(27, DAY + dt.timedelta(days=1))
    with django_assert_num_queries(1):
        assert len(_get(anonymous, "/api/v1/topics/?limit=99")["results"]) == 31
