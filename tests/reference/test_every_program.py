"""Every registered reference program passes as the verifier runs it."""

from __future__ import annotations

from deepdives import registry


def test_every_registered_program_passes_as_the_command_runs_it(program_runs):
    """Each program in its own child process under its limits, as reference_verify runs it
    (the session's one run of each; the other modules here check what they returned)."""
    assert list(program_runs) == list(registry.PROGRAMS)
    for name, outcome in program_runs.items():
        assert outcome.passed, (name, outcome.error)
        assert outcome.output.strip(), name
        assert outcome.measurements, name
