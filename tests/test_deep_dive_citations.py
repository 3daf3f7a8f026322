"""Deep-dive figures bound to their program's verified run: the page fills them from the
stored run, and a run that does not give a cited result as written fails verification, which
both the code page and the deep dive say."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from deepdives import registry, services
from deepdives.citations import DEFAULT_RTOL, CitationProblem, fill, spec_for
from deepdives.models import DeepDive, ReferenceCode
from deepdives.registry import Program
from tests.factories import make_daily, make_deep_dive, make_paper

ROOT = Path(__file__).resolve().parent.parent
BODY = (
    "## Results\n\nThe fused kernel reads {run:speedup=1.41}× fewer bytes; against float64 "
    "it is within {run:attention.max_abs_err:.2e}, at {run:sizes.0=8,192} tokens.\n"
)


@pytest.mark.parametrize(
    ("written", "value", "spec"),
    [
        ("1.96e-06", 1.9634e-06, ".2e"),
        ("93.2%", 0.93195, ".1%"),
        ("8,192", 8192, ",.0f"),
        ("11.55", 11.547, ".2f"),
        ("7", 7, ".0f"),
    ],
)
def test_the_written_value_says_how_the_result_is_written(written, value, spec):
    assert spec_for(written) == spec
    assert format(value, spec) == written


def test_a_path_reaches_keys_that_hold_dots_and_list_items():
    result = {"by": {"gaussian_x0.02": {"bits": [11.17, 11.2]}}}
    assert fill("{run:by.gaussian_x0.02.bits.1=11.20}", result) == ("11.20", [])


def test_it_fills_citations_and_names_what_the_run_does_not_back():
    text, problems = fill(BODY, {"speedup": 1.5212, "sizes": [8192]})
    assert "reads 1.52× fewer" in text and "at 8,192 tokens" in text
    assert "{run:" not in text
    assert problems == [
        CitationProblem("speedup", "1.41", "1.52"),
        CitationProblem("attention.max_abs_err", None, None),
    ]


# Rounding edges: half a unit of the written last digit above the written value.
EDGES = [("0.2930", 0.29305), ("1.96e-06", 1.965e-06), ("93.2%", 0.9325), ("11.55", 11.555)]


def _cite(written: str, value) -> list[CitationProblem]:
    return fill(f"{{run:x={written}}}", {"x": value})[1]


@pytest.mark.parametrize(("below", "edge"), EDGES)
def test_a_result_on_a_rounding_edge_passes_on_either_side_of_it(below, edge):
    """Two machines whose floats differ in the last bits put a result that sits on a
    rounding edge on either side of it: both runs back both ways of writing it."""
    above = fill(f"{{run:x:{spec_for(below)}}}", {"x": math.nextafter(edge, 2 * edge)})[0]
    assert above != below  # the same result, rounded on the other machine
    for value in (math.nextafter(edge, 0), edge, math.nextafter(edge, 2 * edge)):
        assert _cite(below, value) == [] and _cite(above, value) == [], (value, below, above)


@pytest.mark.parametrize(("written", "edge"), EDGES)
def test_a_result_past_the_edge_by_more_than_float_noise_has_changed(written, edge):
    inside = edge * (1 + float(DEFAULT_RTOL) / 2)
    outside = edge * (1 + float(DEFAULT_RTOL) * 2)
    assert _cite(written, inside) == []
    assert [p.written for p in _cite(written, outside)] == [written]


def test_integers_compare_exactly_however_large():
    assert _cite("20,000,000", 20_000_000) == []
    assert _cite("20,000,000", 20_000_001) == [CitationProblem("x", "20,000,000", "20,000,001")]
    assert _cite("8,192", 8192.4) == [] and _cite("8,192", 8192.6) != []


def test_a_stated_tolerance_widens_the_edge_by_that_much_of_the_value():
    value = 0.3056 * (1 + 0.0009)  # prints 0.3059
    assert _cite("0.3056", value) == [CitationProblem("x", "0.3056", "0.3059")]
    assert _cite("0.3056~0.1%", value) == [] and _cite("0.3056~1e-3", value) == []
    assert _cite("0.3056~0.1%", 0.3056 * 1.0012) == [CitationProblem("x", "0.3056", "0.3060")]
    # The page shows the run's value at the written precision, not the author's.
    assert fill("{run:x=0.3056~0.1%}", {"x": value})[0] == "0.3059"


def test_an_unreadable_tolerance_backs_nothing():
    assert _cite("0.3056~about", 0.3056) != []
    assert _cite("0.3056~", 0.3056) != []


def test_non_numbers_and_non_finite_results_compare_as_written():
    assert _cite("yes", "yes") == [] and _cite("yes", "no") != []
    assert _cite("1.0", float("nan")) != []


def _program(monkeypatch, module: str) -> ReferenceCode:
    monkeypatch.setitem(
        registry.PROGRAMS,
        "figures",
        Program(
            name="figures",
            module=module,
            system="Figures",
            paper_slug=None,
            summary_en="test",
            summary_zh="测试",
            pythonpath=(str(ROOT),),
        ),
    )
    services.reference_sync()
    return services.reference_verify(name="figures")


@pytest.fixture
def cited(db, monkeypatch):
    paper = make_paper("figures-paper")
    make_daily(papers=[paper])
    row = _program(monkeypatch, "tests.programs.figures")
    deep_dive = make_deep_dive(paper, slug="figures", body_en=BODY, reference_code=row)
    services.reference_citations_check(code=row)
    return deep_dive, row


def test_a_run_that_gives_the_cited_results_passes_and_the_text_shows_them(cited, anonymous):
    deep_dive, row = cited
    row.refresh_from_db()
    assert row.last_status == ReferenceCode.RunStatus.PASSED, row.last_error
    html = anonymous.get("/en/deep-dives/figures/").content.decode()
    assert "reads 1.41× fewer" in html and "within 9.28e-07" in html and "8,192" in html
    assert "{run:" not in html and "cited-problems" not in html
    assert "Verified" in anonymous.get("/en/code/figures/").content.decode()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_changed_or_missing_cited_result_fails_and_both_pages_say_so(
    cited, anonymous, monkeypatch, lang
):
    deep_dive, row = cited
    row = _program(monkeypatch, "tests.programs.figures_changed")
    assert row.last_status == ReferenceCode.RunStatus.FAILED
    assert "speedup: written 1.41, the run gives 1.52" in row.last_error
    assert "attention.max_abs_err: not in the run's result" in row.last_error

    code_page = anonymous.get(f"/{lang}/code/figures/").content.decode()
    assert 'class="run-status run-failed"' in code_page
    assert "speedup: written 1.41, the run gives 1.52" in code_page

    page = anonymous.get(f"/{lang}/deep-dives/figures/").content.decode()
    problems = page.split('class="run-error cited-problems"', 1)[1].split("</div>", 1)[0]
    assert "<code>speedup</code>" in problems and "1.52" in problems
    assert "<code>attention.max_abs_err</code>" in problems
    assert "reads 1.52× fewer" in page  # the text shows what the run gives


def test_correcting_the_text_passes_the_stored_run_again(cited, monkeypatch):
    deep_dive, row = cited
    _program(monkeypatch, "tests.programs.figures_changed")
    deep_dive.body_en = "The fused kernel reads {run:speedup=1.52}× fewer bytes."
    services.deep_dive_save(deep_dive=deep_dive, user=None)
    row.refresh_from_db()
    assert row.last_status == ReferenceCode.RunStatus.PASSED and row.last_error == ""
    assert DeepDive.objects.get(pk=deep_dive.pk).body_en.startswith("The fused")


@pytest.mark.programs
def test_every_demo_deep_dive_cites_results_its_program_gives(demo, program_runs, monkeypatch):
    from deepdives.demo import demo_load_deep_dives

    # The verifier stores and judges the session's one run of each program (program_runs),
    # which running all of them again here would only repeat (about a minute).
    monkeypatch.setattr(
        services, "run_program", lambda program, timeout_s=None: program_runs[program.name]
    )
    demo_load_deep_dives()
    for deep_dive in DeepDive.objects.select_related("reference_code"):
        code = services.reference_verify(name=deep_dive.reference_code.slug)
        assert "{run:" in deep_dive.body_en and "{run:" in deep_dive.body_zh, deep_dive.slug
        assert code.last_status == ReferenceCode.RunStatus.PASSED, (code.slug, code.last_error)
