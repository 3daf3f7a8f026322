"""The house's layers hold: import-linter's contracts (pyproject.toml) are all kept.

A contract is a rule about imports — the site's ground floor (``digest_site``) imports no
app, ``papers`` imports no app above it, ``dailies`` neither ``search`` nor ``deepdives``,
the reference programs use no Django, no two modules import each other — checked on the
whole import graph, imports inside functions included.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(*configs: Path, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", *map(str, configs)],
        cwd=path or ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_every_layer_contract_is_kept():
    result = _lint()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
    # Every contract named in pyproject.toml ran: none was skipped by a typo in its type.
    assert result.stdout.count(" KEPT") == 9, result.stdout


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


def test_an_import_cycle_is_reported_even_through_a_function(tmp_path):
    """Two modules that import each other, one of them inside a function (as a task module
    and the service it enqueues from used to), break the no-cycle contract."""
    package = tmp_path / "loop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "services.py").write_text(
        "def enqueue():\n    from loop.tasks import run\n\n    run()\n"
    )
    (package / "tasks.py").write_text("from loop import services\n\n\ndef run():\n    pass\n")
    config = tmp_path / "cycle.toml"
    config.write_text(
        "[tool.importlinter]\n"
        'root_packages = ["loop"]\n'
        "[[tool.importlinter.contracts]]\n"
        'name = "no cycles"\n'
        'type = "acyclic_siblings"\n'
        'ancestors = ["loop"]\n'
    )
    result = _lint(config, path=tmp_path)
    assert result.returncode != 0
    assert "no cycles BROKEN" in result.stdout
