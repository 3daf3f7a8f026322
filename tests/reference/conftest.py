"""The reference programs' own tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def result(request, program_runs) -> dict:
    """What the module's program returned from ``run(seed=0)``, from the session's one run of
    it as the verifier runs it (``python -m <module>`` in a child process; see program_runs)."""
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    outcome = program_runs[name]
    assert outcome.passed, (name, outcome.error)
    return outcome.measurements
