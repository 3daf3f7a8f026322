"""Verifying reference programs: limits, a minimal environment, stale detection."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from deepdives import registry, services
from deepdives.models import ReferenceCode
from deepdives.registry import Program
from deepdives.tasks import verify_reference_code
from digest_site.cache_tags import versions
from tests.factories import make_paper

PROGRAMS_DIR = Path(__file__).resolve().parent / "programs"


@pytest.fixture
def register(monkeypatch, db):
    """Register an extra program (kept outside the project) for one test."""

    def add(name: str, module: str, root: Path = PROGRAMS_DIR.parent.parent, **fields) -> Program:
        program = Program(
            name=name,
            module=module,
            system=name.title(),
            paper_slug=None,
            summary_en="test",
            summary_zh="测试",
            pythonpath=(str(root),),
            **fields,
        )
        monkeypatch.setitem(registry.PROGRAMS, name, program)
        services.reference_sync()
        return program

    return add


def test_it_verifies_a_registered_program_and_stores_what_it_measured(db):
    services.reference_sync()
    row = services.reference_verify(name="cosmos")
    assert row.last_status == ReferenceCode.RunStatus.PASSED, row.last_error
    assert "budget" in row.last_output.lower()
    assert row.last_measurements["system"]
    assert row.code_hash == registry.get_program("cosmos").code_hash()
    assert row.last_duration_ms > 0 and row.last_run_at is not None
    assert services.verification_state(row) == "passed"


def test_it_stops_a_hanging_program_at_its_limit_and_says_why(register):
    register("sleepy", "tests.programs.sleepy")
    row = services.reference_verify(name="sleepy", timeout_s=2)
    assert row.last_status == ReferenceCode.RunStatus.FAILED
    assert "time limit of 2 s" in row.last_error
    assert "starting and then hanging" in row.last_output
    assert 2000 <= row.last_duration_ms < 15000
    assert row.last_measurements is None


def test_it_stops_a_program_at_its_memory_limit(register):
    register("greedy", "tests.programs.greedy", memory_mb=512)
    row = services.reference_verify(name="greedy")
    assert row.last_status == ReferenceCode.RunStatus.FAILED
    assert "MemoryError" in row.last_error or "memory" in row.last_error.lower()


def test_it_gives_programs_a_minimal_environment(register, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "do-not-leak")
    monkeypatch.setenv("DATABASE_URL", "postgres://secret@db/x")
    register("envprobe", "tests.programs.envprobe")
    row = services.reference_verify(name="envprobe")
    assert row.last_status == ReferenceCode.RunStatus.PASSED, row.last_error
    names = set(row.last_measurements["names"])
    assert not names & {"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    assert {"PATH", "PYTHONPATH", "HOME"} <= names


def test_it_marks_a_verification_stale_when_the_code_changes(register, tmp_path):
    package = tmp_path / "scratch"
    package.mkdir()
    (package / "__init__.py").write_text("")
    shutil.copy(PROGRAMS_DIR / "envprobe.py", package / "probe.py")
    register("probe", "scratch.probe", root=tmp_path)
    row = services.reference_verify(name="probe")
    assert services.verification_state(row) == "passed"
    with (package / "probe.py").open("a") as f:
        f.write("\n# an edit after the verified run\n")
    assert services.verification_state(row) == "stale"
    row = services.reference_verify(name="probe")
    assert services.verification_state(row) == "passed"


def test_it_runs_only_registered_programs(db):
    ReferenceCode.objects.create(slug="typed", name="Typed in the admin", module="os")
    with pytest.raises(LookupError):
        services.reference_verify(name="typed")
    with pytest.raises(CommandError, match="not registered"):
        call_command("verify_reference", "typed")


def test_the_task_verifies_one_program(db, eager_tasks):
    services.reference_sync()
    assert verify_reference_code.delay("zipfusion").get() == "passed"


def test_the_command_verifies_only_the_programs_it_is_given(db):
    call_command("verify_reference", "zipfusion", verbosity=0)
    statuses = dict(ReferenceCode.objects.values_list("slug", "last_status"))
    assert statuses["zipfusion"] == "passed"
    assert statuses["hilo"] == "never"


def test_an_editors_texts_and_link_survive_the_next_verification(db, editor):
    """The registry seeds a program's name, descriptions and paper; an editor's edit of them
    in the admin outlives the sync every verification runs."""
    paper = make_paper("zipfusion")
    other = make_paper("other")
    services.reference_sync()
    row = ReferenceCode.objects.get(slug="zipfusion")
    assert row.paper == paper and row.description_en == registry.PROGRAMS["zipfusion"].summary_en
    row.name = "ZipFusion (BF16)"
    row.description_en = "An editor's description."
    row.description_zh = "编辑写的说明。"
    row.paper = other
    services.reference_code_save(code=row, user=editor)
    call_command("verify_reference", "zipfusion", verbosity=0)
    row = ReferenceCode.objects.get(slug="zipfusion")
    assert row.last_status == ReferenceCode.RunStatus.PASSED, row.last_error
    assert (row.name, row.description_en, row.description_zh, row.paper) == (
        "ZipFusion (BF16)",
        "An editor's description.",
        "编辑写的说明。",
        other,
    )


def test_the_sync_keeps_the_registrys_module_and_makes_a_link_it_could_not_make_before(
    db, monkeypatch
):
    services.reference_sync()
    row = ReferenceCode.objects.get(slug="zipfusion")
    assert row.paper is None  # its paper was not ingested yet
    paper = make_paper("zipfusion")
    moved = dataclasses.replace(registry.PROGRAMS["zipfusion"], module="tests.programs.envprobe")
    monkeypatch.setitem(registry.PROGRAMS, "zipfusion", moved)
    before = versions(["program:zipfusion"])
    services.reference_sync()
    row.refresh_from_db()
    assert (row.module, row.paper) == ("tests.programs.envprobe", paper)
    assert versions(["program:zipfusion"]) != before  # its code page shows the change
    unchanged = versions(["program:zipfusion"])
    services.reference_sync()
    assert versions(["program:zipfusion"]) == unchanged  # nothing changed: cached pages stay


def test_a_link_an_editor_removed_stays_removed_through_the_next_sync(db, editor):
    paper = make_paper("zipfusion")
    services.reference_sync()
    row = ReferenceCode.objects.get(slug="zipfusion")
    assert row.paper == paper and not row.paper_set_by_editor
    row.paper = None  # the editor takes the program off the paper's pages
    services.reference_code_save(code=row, user=editor)
    call_command("verify_reference", "zipfusion", verbosity=0)  # which syncs first
    row.refresh_from_db()
    assert row.paper is None and row.paper_set_by_editor
    # An edit of its texts alone leaves the registry's right to link it as it was.
    other = ReferenceCode.objects.get(slug="hilo")
    other.description_en = "Edited."
    services.reference_code_save(code=other, user=editor)
    other.refresh_from_db()
    assert not other.paper_set_by_editor


def test_a_registered_programs_name_in_urls_is_the_registrys(db, editor):
    services.reference_sync()
    row = ReferenceCode.objects.get(slug="zipfusion")
    row.slug = "zip"
    with pytest.raises(ValidationError, match="registry"):
        services.reference_code_save(code=row, user=editor)
    assert ReferenceCode.objects.filter(slug="zipfusion").exists()


def test_the_periodic_task_syncs_keeps_edits_and_queues_one_verification_a_program(
    db, eager_tasks, editor, monkeypatch
):
    from deepdives import tasks

    services.reference_sync()
    row = ReferenceCode.objects.get(slug="hilo")
    row.description_en = "Edited in the admin."
    services.reference_code_save(code=row, user=editor)
    queued = []
    monkeypatch.setattr(tasks.verify_reference_code, "delay", queued.append)
    assert tasks.verify_all_reference_code.delay().get() == list(registry.PROGRAMS) == queued
    assert ReferenceCode.objects.get(slug="hilo").description_en == "Edited in the admin."
