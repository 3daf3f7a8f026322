"""One lane of work beside the tests: what a session will need and takes long to make (the
reference programs' runs, the MCP tests' site, the cross-lingual corpus's vectors), each in a
child process, started as soon as the session's tests are known and run one at a time, so
that it is made on the machine's other core while the tests before it run (the suite itself
runs on one). tests/conftest.py starts it (pytest_collection_finish) and closes it.

A test that needs a job's result waits for it (``Future.result``); a job that failed raises
there. Without the lane (under xdist, where both cores run tests), the fixtures make what
they need themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

_lane: list[ThreadPoolExecutor] = []


def open_lane() -> None:
    if not _lane:
        _lane.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="background"))


def submit(job: Callable, *args) -> Future | None:
    """Queue ``job(*args)`` in the lane; None when there is no lane."""
    return _lane[0].submit(job, *args) if _lane else None


def close_lane() -> None:
    """Drop the jobs not started; the one running ends by itself (each child has a time
    limit)."""
    while _lane:
        _lane.pop().shutdown(wait=True, cancel_futures=True)


def result(future: Future | None, job: Callable, *args):
    """What ``job(*args)`` gives: from the lane, or made here when the lane has not started
    it (or there is none), rather than waiting behind the jobs before it."""
    if future is None or future.cancel():
        return job(*args)
    return future.result()
