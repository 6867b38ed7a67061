"""Small load test: two browser sessions run order MCMC at once while an observer switches
pages; both finish, Stop lands, memory comes back (the N = 2..8 version is
``benchmarks/load_test.py``)."""

from __future__ import annotations

import math

import pytest

from bnma_ui.browser import missing_requirement

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_two_sessions_at_once(tmp_path):
    reason = missing_requirement()
    if reason:
        pytest.skip(f"{reason}; load test skipped")
    from bnma_ui.loadtest import run_load

    res = run_load(2, iterations=5_000, log_dir=tmp_path)
    print(res.as_dict())
    assert res.completed == 2 and not res.errors, res.as_dict()
    assert math.isfinite(res.stop_latency_s) and res.stop_latency_s < 30, res.stop_latency_s
    # the server logged when the stopped run's work ended (a generous bound: busy machines)
    assert math.isfinite(res.server_stop_s) and res.server_stop_s < 30, res.as_dict()
    assert res.switches >= 1 and res.switch_p95_s < 60
    assert res.rss_end_mb - res.rss_start_mb < 200, res.as_dict()
