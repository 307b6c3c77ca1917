"""The batch scheduler (ubpe.threads.run_in_order): order, errors, nesting, forks."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.errors import InvalidParameterError
from ubpe.threads import check_n_threads, default_threads, run_in_order


def slow_square(x: int) -> int:
    time.sleep((x % 3) * 0.0005)  # uneven durations: chunks finish out of order
    return x * x


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=40), st.integers(1, 5))
def test_results_are_in_order_whatever_the_threads(items, workers):
    assert run_in_order(slow_square, items, workers) == [x * x for x in items]


def test_the_calling_thread_and_pool_threads_both_work():
    seen = set()

    def where(x):
        seen.add(threading.current_thread().name)
        time.sleep(0.002)  # sleeping releases the GIL: the pool thread gets items too
        return x

    assert run_in_order(where, list(range(40)), 2) == list(range(40))
    assert threading.current_thread().name in seen
    assert any(name.startswith("ubpe") for name in seen)


def test_the_error_is_that_of_the_first_failing_item_in_order():
    def check(x):
        time.sleep(0.001 * (10 - x) if x < 10 else 0)  # later items fail first
        if x in (3, 7, 8):
            raise ValueError(f"item {x}")
        return x

    for workers in (1, 2, 4):
        with pytest.raises(ValueError, match="item 3"):
            run_in_order(check, list(range(12)), workers)


def test_a_failure_stops_handing_out_later_items():
    done = []

    def check(x):
        if x == 0:
            raise KeyError("first")
        time.sleep(0.001)
        done.append(x)

    with pytest.raises(KeyError):
        run_in_order(check, list(range(1000)), 2)
    assert len(done) < 10  # at most what the other thread held when the error came


def test_base_exceptions_pass_through():
    def stop(x):
        if x == 2:
            raise KeyboardInterrupt
        return x

    with pytest.raises(KeyboardInterrupt):
        run_in_order(stop, list(range(5)), 2)


def test_nested_calls_do_not_wait_for_a_busy_pool():
    # the inner calls run on the pool's threads and submit to the same pool: tasks that
    # never start are cancelled, so this must finish (a deadlock would hang the test)
    def inner(x):
        return sum(run_in_order(slow_square, list(range(x)), 3))

    assert run_in_order(inner, list(range(12)), 3) == [sum(k * k for k in range(x)) for x in range(12)]


def test_many_callers_at_once():
    results = {}

    def caller(k):
        results[k] = run_in_order(slow_square, list(range(k, k + 30)), 2)

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {k: [x * x for x in range(k, k + 30)] for k in range(6)}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_a_pool_of_its_own():
    code = (
        "import os\n"
        "from ubpe.threads import run_in_order\n"
        "assert run_in_order(abs, [-1, -2, -3], 2) == [1, 2, 3]\n"  # the parent's pool exists
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os._exit(0 if run_in_order(abs, list(range(-50, 0)), 2) == list(range(50, 0, -1)) else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "raise SystemExit(os.waitstatus_to_exitcode(status))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], timeout=60)
    assert done.returncode == 0


def test_thread_counts_are_checked():
    check_n_threads(None)
    check_n_threads(3)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(InvalidParameterError):
            check_n_threads(bad)


def test_the_default_follows_the_environment(monkeypatch):
    monkeypatch.setenv("UBPE_NUM_THREADS", "5")
    assert default_threads() == 5
    monkeypatch.setenv("UBPE_NUM_THREADS", "zero")
    with pytest.raises(InvalidParameterError, match="UBPE_NUM_THREADS"):
        default_threads()
