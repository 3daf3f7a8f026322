"""The session's background lane (tests/background.py): a job it has made is read from it;
one it has not started yet is made by the test that needs it, not waited for behind the
jobs before it; a job that failed raises where it is read."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, wait

import pytest

from tests import background


@pytest.fixture
def lane():
    pool = ThreadPoolExecutor(max_workers=1)
    yield pool
    pool.shutdown(wait=True, cancel_futures=True)


def test_a_job_the_lane_made_is_read_from_it(lane):
    done = lane.submit(threading.get_ident)
    done.result()
    assert background.result(done, threading.get_ident) != threading.get_ident()


def test_a_job_not_started_yet_is_made_by_the_test_that_needs_it(lane):
    release = threading.Event()
    busy = lane.submit(release.wait, 30)
    queued = lane.submit(threading.get_ident)
    try:
        assert background.result(queued, threading.get_ident) == threading.get_ident()
        assert queued.cancelled()
    finally:
        release.set()
    assert busy.result() is True


def test_a_job_that_failed_raises_where_it_is_read(lane):
    def fails():
        raise AssertionError("the build failed")

    failed = lane.submit(fails)
    wait([failed])
    with pytest.raises(AssertionError, match="the build failed"):
        background.result(failed, fails)


def test_without_a_lane_the_job_is_made_where_it_is_read():
    assert background.result(None, threading.get_ident) == threading.get_ident()
