"""Passage vectors made by the real embedding model, kept for the session by model and text.

A module that embeds many papers (tests/test_semantic_crosslingual.py: 118, about half a
minute of the model on one core) names their passages when the session starts
(``KEPT.start``, from its ``prebuild``): a child process embeds them with the same model
(``search.embedding.embed_passages``) in the session's background lane (tests/background.py)
while the tests before it run. The module's fixture then embeds through
``KEPT.embed_passages``, which answers from those vectors and runs the model in this process
for any passage it was not given, so a passage text that changed costs time, never a wrong
vector.

Run as ``python -m tests.embeddings <texts.json> <vectors.npy>``: the child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

from tests import background

if TYPE_CHECKING:
    import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def embed_in_child(texts: list[str]) -> dict[tuple[str, str], bytes]:
    """Each of ``texts``' vector by a child process, keyed by the model file and the text."""
    import numpy as np

    with tempfile.TemporaryDirectory(prefix="kept-passages-") as tmp:
        folder = Path(tmp)
        (folder / "texts.json").write_text(json.dumps(texts))
        with (folder / "log").open("w") as log:
            code = subprocess.run(
                [sys.executable, "-m", "tests.embeddings", "texts.json", "vectors.npy"],
                cwd=folder,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                timeout=600,
            ).returncode
        assert code == 0, (folder / "log").read_text()[-2000:]
        rows = np.load(folder / "vectors.npy")
        model = (folder / "model").read_text()
    return {(model, text): row.tobytes() for text, row in zip(texts, rows, strict=True)}


class KeptPassages:
    def __init__(self) -> None:
        self.kept: dict[tuple[str, str], bytes] = {}
        self._future: Future | None = None

    def start(self, texts: Sequence[str]) -> None:
        """Queue ``texts`` in the session's background lane."""
        self._future = background.submit(embed_in_child, list(dict.fromkeys(texts)))

    def _take(self) -> None:
        """The child's vectors, once; when the lane has not started the child, the model runs
        here instead, as passages are asked for."""
        future, self._future = self._future, None
        if future is not None and not future.cancel():
            self.kept.update(future.result())

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """What ``search.embedding.embed_passages(texts)`` gives: the kept vectors, and the
        model's for the passages not kept (kept from then on)."""
        import numpy as np

        from search.embedding import DIMENSIONS, embed_passages, model_path

        self._take()
        model = str(model_path())
        missing = [t for t in dict.fromkeys(texts) if (model, t) not in self.kept]
        if missing:
            rows = embed_passages(missing)
            self.kept.update({(model, t): r.tobytes() for t, r in zip(missing, rows, strict=True)})
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = np.frombuffer(self.kept[model, text], dtype=np.float32)
        return out


KEPT = KeptPassages()


def main(texts_path: str, vectors_path: str) -> None:
    import numpy as np

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "digest_site.settings")
    from search.embedding import embed_passages, model_path

    texts = json.loads(Path(texts_path).read_text())
    np.save(vectors_path, embed_passages(texts))
    Path("model").write_text(str(model_path()))


if __name__ == "__main__":
    main(*sys.argv[1:])
