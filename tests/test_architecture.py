"""The house's layers hold: import-linter's contracts (pyproject.toml) are all kept.

A contract is a rule about imports — ``papers`` imports no app above it, ``dailies`` neither
``search`` nor ``deepdives``, the reference programs use no Django — checked on the whole
import graph, imports inside functions included.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(*configs: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", *map(str, configs)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_every_layer_contract_is_kept():
    result = _lint()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
    # Every contract named in pyproject.toml ran: none was skipped by a typo in its type.
    assert result.stdout.count(" KEPT") == 5, result.stdout


def test_a_broken_layer_is_reported(tmp_path):
    """The check can fail: a contract the code breaks (dailies builds on papers) is caught."""
    config = tmp_path / "broken.toml"
    config.write_text(
        "[tool.importlinter]\n"
        'root_packages = ["papers", "dailies"]\n'
        "[[tool.importlinter.contracts]]\n"
        'name = "dailies without papers"\n'
        'type = "forbidden"\n'
        'source_modules = ["dailies"]\n'
        'forbidden_modules = ["papers"]\n'
    )
    result = _lint(config)
    assert result.returncode != 0
    assert "dailies without papers BROKEN" in result.stdout
    assert "dailies." in result.stdout and "-> papers" in result.stdout
