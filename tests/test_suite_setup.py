"""How the suite itself runs: settings that keep it fast without changing what it checks."""

from __future__ import annotations

import numpy  # noqa: F401  (loads its BLAS)
from threadpoolctl import threadpool_info


def test_numpy_runs_on_one_blas_thread_as_the_verifier_runs_the_programs():
    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas and all(pool["num_threads"] == 1 for pool in blas), blas
