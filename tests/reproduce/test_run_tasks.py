"""The grid engine of the reproductions and of cross-validation (``runner.run_tasks``), in this
process: shared inputs, results by task index, stop, failures collected or raised. The Dask
path is covered by tests/reproduce/test_reproduce.py (papers) and tests/test_evaluation.py
(cross-validation on two workers)."""

from __future__ import annotations

import pytest

from bnma_core.reproduce.runner import Shared, run_tasks


def scaled(x, table):
    if x < 0:
        raise ValueError(f"negative input {x}")
    return x * table["factor"]


def test_shared_inputs_are_resolved_and_results_keep_their_task_index():
    got = {}
    stopped = run_tasks(scaled, [(i, Shared(i % 2)) for i in range(5)],
                        on_result=got.__setitem__, shared=[{"factor": 10}, {"factor": 100}])
    assert not stopped
    assert got == {0: 0, 1: 100, 2: 20, 3: 300, 4: 40}


def test_failures_are_raised_unless_collected():
    tasks = [(1, Shared(0)), (-2, Shared(0)), (3, Shared(0))]
    got = {}
    with pytest.raises(ValueError, match="negative input -2"):
        run_tasks(scaled, tasks, on_result=got.__setitem__, shared=[{"factor": 1}])
    assert got == {0: 1}
    failures: list[str] = []
    got.clear()
    run_tasks(scaled, tasks, on_result=got.__setitem__, shared=[{"factor": 1}],
              failures=failures)
    assert got == {0: 1, 2: 3} and failures == ["ValueError: negative input -2"]


def test_stop_before_the_next_task():
    got = {}
    assert run_tasks(scaled, [(i, Shared(0)) for i in range(6)], on_result=got.__setitem__,
                     shared=[{"factor": 1}], should_stop=lambda: len(got) >= 2)
    assert got == {0: 0, 1: 1}
    assert not run_tasks(scaled, [], on_result=got.__setitem__)
    with pytest.raises(ValueError, match="workers must be >= 0"):
        run_tasks(scaled, [(1, 1)], on_result=got.__setitem__, workers=-1)
