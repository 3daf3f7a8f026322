"""Writes for deep dives and reference code: who may publish and edit them, syncing the
registry and verifying programs."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.models import AuditRecord
from audit.services import audit_diff, audit_record
from deepdives.charts import render_chart_svg
from deepdives.citations import problems_of
from deepdives.models import DeepDive, ReferenceCode
from deepdives.registry import PROGRAMS, Program, get_program
from digest_site import invalidation
from papers.models import Paper

OUTPUT_LIMIT = 64_000  # characters of a program's output kept in the database


@transaction.atomic
def reference_sync() -> list[ReferenceCode]:
    """One row per registered program; rows of unregistered ones stay but can no longer run.

    The registry owns what runs (the module) and keeps it in step on every sync. The name,
    the descriptions and the paper link are only seeded from it when the row is made: from
    then on they are the editors' (the admin edits them), and a sync — every verification
    runs one — leaves them alone. A link the registry names but could not make yet (the
    paper was not ingested when the row was made) is made once the paper exists, unless an
    editor has set or removed the link since (``paper_set_by_editor``)."""
    papers = {
        p.slug: p
        for p in Paper.objects.filter(
            slug__in=[p.paper_slug for p in PROGRAMS.values() if p.paper_slug]
        )
    }
    stored = {row.slug: row for row in ReferenceCode.objects.filter(slug__in=list(PROGRAMS))}
    rows, changed = [], False
    for program in PROGRAMS.values():
        paper = papers.get(program.paper_slug)
        row = stored.get(program.name)
        if row is None:
            row = ReferenceCode.objects.create(
                slug=program.name,
                name=program.system,
                module=program.module,
                paper=paper,
                description_en=program.summary_en,
                description_zh=program.summary_zh,
            )
            changed = True
        else:
            fields = []
            if row.module != program.module:
                row.module = program.module
                fields.append("module")
            if row.paper_id is None and paper is not None and not row.paper_set_by_editor:
                row.paper = paper
                fields.append("paper")
            if fields:
                row.save(update_fields=fields)
                changed = True
        rows.append(row)
    if changed:
        invalidation.changed(*rows)
    return rows


@dataclass(frozen=True)
class RunOutcome:
    passed: bool
    output: str
    error: str
    measurements: dict | None
    duration_ms: int


def _limit_memory(memory_mb: int):
    def apply() -> None:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def _minimal_env(home: str, program: Program) -> dict[str, str]:
    """Just enough to run Python and NumPy: no secrets, no database or broker URLs."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": os.pathsep.join([str(settings.BASE_DIR), *program.pythonpath]),
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": home,
        "LANG": "C.UTF-8",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    # Machine-specific BLAS settings keep NumPy correct on some CPUs; pass them through.
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def run_program(program: Program, *, timeout_s: int | None = None) -> RunOutcome:
    """Run a registered program in a child process with a time and a memory limit."""
    timeout_s = timeout_s or program.timeout_s
    with tempfile.TemporaryDirectory(prefix="refcode-") as tmp:
        result_path = Path(tmp) / "result.json"
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "deepdives.harness", program.module, str(result_path)],
            cwd=tmp,
            env=_minimal_env(tmp, program),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # so a hung program and its children die together
            preexec_fn=_limit_memory(program.memory_mb),
        )
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            return RunOutcome(
                passed=False,
                output=out[-OUTPUT_LIMIT:],
                error=f"Stopped at the time limit of {timeout_s} s.",
                measurements=None,
                duration_ms=int((time.monotonic() - started) * 1000),
            )
        duration_ms = int((time.monotonic() - started) * 1000)
        if proc.returncode != 0:
            reason = f"Exited with status {proc.returncode}."
            if proc.returncode < 0:
                reason = f"Killed by signal {-proc.returncode}."
            if "MemoryError" in err:
                reason += f" Ran out of memory (limit {program.memory_mb} MB)."
            tail = "\n".join(err.strip().splitlines()[-15:])
            return RunOutcome(
                False, out[-OUTPUT_LIMIT:], f"{reason}\n{tail}".strip(), None, duration_ms
            )
        try:
            measurements = json.loads(result_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return RunOutcome(
                False, out[-OUTPUT_LIMIT:], f"No readable result: {exc}", None, duration_ms
            )
        return RunOutcome(True, out[-OUTPUT_LIMIT:], "", measurements, duration_ms)


def reference_verify(*, name: str, timeout_s: int | None = None) -> ReferenceCode:
    """Run the registered program ``name`` and store what happened.

    The run happens outside any transaction (it can take a while); the result is written in
    one short UPDATE.
    """
    program = get_program(name)
    code_hash = program.code_hash()
    outcome = run_program(program, timeout_s=timeout_s)
    row = ReferenceCode.objects.get(slug=program.name)
    row.last_status = (
        ReferenceCode.RunStatus.PASSED if outcome.passed else ReferenceCode.RunStatus.FAILED
    )
    row.last_output = outcome.output
    row.last_error = outcome.error
    row.last_measurements = _json_safe(outcome.measurements)
    _citations_verdict(row)
    row.last_duration_ms = outcome.duration_ms
    row.last_run_at = timezone.now()
    row.code_hash = code_hash
    row.save(
        update_fields=[
            "last_status",
            "last_output",
            "last_error",
            "last_measurements",
            "last_duration_ms",
            "last_run_at",
            "code_hash",
        ]
    )
    invalidation.changed(row)  # the code pages show the verified run
    return row


def _json_safe(value):
    """NaN and infinities are not JSON; store them as None."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


class VerificationState(StrEnum):
    """What the code pages say of a program's stored run: its status, or stale."""

    NEVER = ReferenceCode.RunStatus.NEVER
    PASSED = ReferenceCode.RunStatus.PASSED
    FAILED = ReferenceCode.RunStatus.FAILED
    STALE = "stale"  # the code changed since the stored run


def verification_state(row: ReferenceCode) -> VerificationState:
    if row.last_run_at is None:
        return VerificationState.NEVER
    program = PROGRAMS.get(row.slug)
    if program is None or program.code_hash() != row.code_hash:
        return VerificationState.STALE
    return VerificationState(row.last_status)


def _citations_verdict(row: ReferenceCode) -> bool:
    """Fail ``row``'s stored run when its deep dives cite results it does not give as
    written, and pass it again once they do (a run that failed by itself stored no result
    and stays failed). Changes the instance only; True when it changed. One query."""
    if row.last_measurements is None:
        return False
    problems = cited_problems(DeepDive.objects.filter(reference_code=row), row.last_measurements)
    status, error = ReferenceCode.RunStatus.PASSED, ""
    if problems:
        status, error = ReferenceCode.RunStatus.FAILED, citation_error(problems)
    if (status, error) == (row.last_status, row.last_error):
        return False
    row.last_status, row.last_error = status, error
    return True


def reference_citations_check(*, code: ReferenceCode) -> ReferenceCode:
    """Check the citations of ``code``'s deep dives against its stored run again (after a
    deep dive's text or link changed) and store the verdict."""
    if _citations_verdict(code):
        code.save(update_fields=["last_status", "last_error"])
        invalidation.changed(code)  # the code pages and deep dives say whether it is verified
    return code


def cited_problems(deep_dives: Iterable[DeepDive], measurements: dict | None) -> list:
    """The citations of ``deep_dives`` (both bodies) that ``measurements``, a program's run
    result, does not back: missing or changed results (``deepdives.citations``)."""
    return problems_of((body for d in deep_dives for body in (d.body_en, d.body_zh)), measurements)


def citation_error(problems: list) -> str:
    """What a run's error says of its deep dives' citations it does not back."""
    lines = [_("The deep dive cites results this run does not give as written:")]
    return "\n".join([*lines, *(f"- {problem}" for problem in problems)])


def reference_chart_svg(row: ReferenceCode) -> str | None:
    program = PROGRAMS.get(row.slug)
    if program is None or program.chart is None or not row.last_measurements:
        return None
    return render_chart_svg(program.chart, row.last_measurements)


# --- Who may change what readers see -------------------------------------------------------

PUBLISH_DEEP_DIVE_PERMISSION = "deepdives.publish_deepdive"
Action = AuditRecord.Action


def user_may_publish_deep_dives(user) -> bool:
    """Editors hold the permission; ``None`` is the system (an import, the demo)."""
    return user is None or user.has_perm(PUBLISH_DEEP_DIVE_PERMISSION)


def deep_dive_may_change(*, deep_dive: DeepDive, user) -> bool:
    """Contributors prepare drafts; a published deep dive is the editors'."""
    return deep_dive.status != DeepDive.Status.PUBLISHED or user_may_publish_deep_dives(user)


def reference_code_is_public(code: ReferenceCode) -> bool:
    """Runs a query."""
    return ReferenceCode.objects.published().filter(pk=code.pk).exists()


def reference_code_may_change(*, code: ReferenceCode, user) -> bool:
    """Runs a query for users without the permission."""
    return user_may_publish_deep_dives(user) or not reference_code_is_public(code)


def _deny_published(obj) -> PermissionDenied:
    return PermissionDenied(
        _("%(obj)s is public: only editors may change or delete it.") % {"obj": obj}
    )


def _status_action(before: str | None, after: str) -> str | None:
    published = DeepDive.Status.PUBLISHED
    if after == published and before != published:
        return Action.PUBLISH
    if before == published and after != published:
        return Action.UNPUBLISH
    return Action.EDIT if after == published else None


@transaction.atomic
def deep_dive_save(*, deep_dive: DeepDive, user) -> DeepDive:
    """Create or edit a deep dive from an instance holding the new values.

    Contributors may write and edit drafts; publishing, unpublishing and changing a published
    deep dive take the publish permission. Every change readers can see is audited."""
    stored = None
    if deep_dive.pk is not None:
        stored = DeepDive.objects.select_for_update().filter(pk=deep_dive.pk).first()
    if stored is None:
        changes = {"status": [None, deep_dive.status]}
    else:
        changes = audit_diff(before=stored, after=deep_dive)
        if not changes:
            return deep_dive
        if not deep_dive_may_change(deep_dive=stored, user=user):
            raise _deny_published(stored)
    status_before = stored.status if stored else DeepDive.Status.DRAFT
    if deep_dive.status != status_before and not user_may_publish_deep_dives(user):
        raise PermissionDenied(_("Only editors may publish or unpublish a deep dive."))
    deep_dive.full_clean()
    deep_dive.save()
    for code_id in {deep_dive.reference_code_id, stored.reference_code_id if stored else None}:
        if code_id is not None:
            reference_citations_check(code=ReferenceCode.objects.get(pk=code_id))
    action = _status_action(stored.status if stored else None, deep_dive.status)
    if action is not None:
        audit_record(user=user, action=action, obj=deep_dive, changes=changes)
    if DeepDive.Status.PUBLISHED in (status_before, deep_dive.status):
        invalidation.changed(*(d for d in (stored, deep_dive) if d is not None))
    return deep_dive


def deep_dive_publish(*, deep_dive: DeepDive, user) -> DeepDive:
    deep_dive.status = DeepDive.Status.PUBLISHED
    return deep_dive_save(deep_dive=deep_dive, user=user)


def deep_dive_unpublish(*, deep_dive: DeepDive, user) -> DeepDive:
    deep_dive.status = DeepDive.Status.DRAFT
    return deep_dive_save(deep_dive=deep_dive, user=user)


@transaction.atomic
def deep_dive_delete(*, deep_dive: DeepDive, user) -> None:
    stored = DeepDive.objects.select_for_update().get(pk=deep_dive.pk)
    if not deep_dive_may_change(deep_dive=stored, user=user):
        raise _deny_published(stored)
    if stored.status == DeepDive.Status.PUBLISHED:
        audit_record(
            user=user, action=Action.DELETE, obj=stored, changes={"status": [stored.status, None]}
        )
        invalidation.changed(stored)
    stored.delete()
    if stored.reference_code_id is not None:
        reference_citations_check(code=ReferenceCode.objects.get(pk=stored.reference_code_id))


@transaction.atomic
def reference_code_save(*, code: ReferenceCode, user) -> ReferenceCode:
    """Create or edit a reference program's row (name, descriptions, paper) from an instance
    holding the new values. Which paper it belongs to decides where readers see it: only
    editors set or move it, and only they make or edit a program readers can see. A
    registered program's slug is the registry's."""
    stored = None
    if code.pk is not None:
        stored = ReferenceCode.objects.select_for_update().get(pk=code.pk)
    changes = audit_diff(before=stored or ReferenceCode(), after=code)
    if stored is not None and not changes:
        return code
    if stored is not None and "slug" in changes and stored.slug in PROGRAMS:
        raise ValidationError(
            {"slug": _("A registered program's name is the registry's: rename it there.")}
        )
    may_publish = user_may_publish_deep_dives(user)
    if "paper" in changes and not may_publish:
        raise PermissionDenied(
            _("Only editors may change which paper a reference program belongs to.")
        )
    public = stored is not None and reference_code_is_public(stored)
    if public and not may_publish:
        raise _deny_published(stored)
    if stored is None and code.slug in PROGRAMS:
        code.module = PROGRAMS[code.slug].module  # the registry's, as the sync sets it
    if "paper" in changes and stored is not None:
        code.paper_set_by_editor = True  # a program an editor unlinked stays unlinked
    code.full_clean()
    code.save()
    if stored is None:
        # Readers see a registered program's row (the code pages list no other).
        public = code.slug in PROGRAMS and reference_code_is_public(code)
        if public and not may_publish:
            raise _deny_published(code)
    if public or "paper" in changes:
        audit_record(user=user, action=Action.EDIT, obj=code, changes=changes)
        invalidation.changed(*(c for c in (stored, code) if c is not None))
    return code


@transaction.atomic
def reference_code_delete(*, code: ReferenceCode, user) -> None:
    stored = ReferenceCode.objects.select_for_update().get(pk=code.pk)
    public = reference_code_is_public(stored)
    if public and not user_may_publish_deep_dives(user):
        raise _deny_published(stored)
    if public:
        audit_record(
            user=user, action=Action.DELETE, obj=stored, changes={"paper": [stored.paper_id, None]}
        )
        invalidation.changed(stored)
    stored.delete()
