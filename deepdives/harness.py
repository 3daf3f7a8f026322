"""Runs one registered reference program in a child process for the verifier.

``python -m deepdives.harness <module> <result.json>`` calls the program's ``main([])``
(so its printed report is what a reader gets from ``python -m <module>``) and writes the
dictionary its ``run()`` returned to ``result.json``. Kept free of Django on purpose.
"""

from __future__ import annotations

import importlib
import json
import sys


def main(argv: list[str]) -> int:
    module_name, out_path = argv
    module = importlib.import_module(module_name)
    captured: dict = {}
    original_run = module.run

    def recording_run(*args, **kwargs):
        result = original_run(*args, **kwargs)
        captured["result"] = result
        return result

    module.run = recording_run
    status = module.main([])
    sys.stdout.flush()
    if "result" not in captured:
        print("harness: main() returned without calling run()", file=sys.stderr)
        return 3
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(captured["result"], f, allow_nan=True)
    return int(status or 0)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
