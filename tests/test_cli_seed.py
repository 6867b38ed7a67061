"""Same input, same answer (issue 32 item 6): ``bnma explain`` seeds the fit of a randomized
method with ``--seed`` (before: ``random_state=None``, a fresh chain per process, while the
output said ``"seed": 0``), records the seeds it used, and prints identical bytes in two
processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT

COMMAND = [sys.executable, "-m", "bnma_core", "explain", "--data", "wbc", "--row", "0",
           "--method", "bma10", "--interval", "--json"]


def _run(*extra: str) -> bytes:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(COMMAND + list(extra), cwd=ROOT, env=env, capture_output=True,
                          check=True, timeout=600)
    return done.stdout


def test_the_same_explain_command_in_two_processes_prints_identical_bytes():
    first, second = _run(), _run()
    assert first == second
    out = json.loads(first)
    assert out["seeds"] == {"fit": 0, "draws": 0}


def test_a_seed_outside_the_dashboards_range_is_refused_with_a_sentence():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(COMMAND + ["--seed", str(2**40)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "The seed must be between 0 and 2,147,483,647" in done.stderr
