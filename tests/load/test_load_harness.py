"""The load driver's own measuring tools (``bnma_ui.loadtest``): CPU seconds attributed to the
server, the normal sessions' browser and the hostile visitor; the visitor's idle priority,
which Chromium keeps (it resets niceness)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT

from bnma_ui.browser import missing_requirement

BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < {}: pass\n"


def test_cpu_sampler_attributes_each_process_tree():
    """Two busy children, one standing for the server and one for the visitor: each group gets
    its own child's CPU seconds (within the sampling interval), the rest gets neither."""
    from bnma_ui.loadtest import _CpuSampler

    server = subprocess.Popen([sys.executable, "-c", BUSY.format(1.0)])
    visitor = subprocess.Popen([sys.executable, "-c", BUSY.format(0.5)])
    sampler = _CpuSampler(server.pid, visitor_pid=visitor.pid, interval=0.05)
    server.wait()
    visitor.wait()
    used = sampler.stop()
    assert 0.6 <= used["server"] <= 1.3, used
    assert 0.2 <= used["visitor"] <= 0.8, used
    assert used["browser"] < 0.3, used


@pytest.mark.browser
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SCHED_IDLE is Linux's")
def test_an_idle_visitor_browser_stays_idle():
    """Every thread of a Chromium started by a process in ``SCHED_IDLE`` stays in that class
    (Chromium sets its processes' niceness, so ``nice 19`` alone would not hold)."""
    reason = missing_requirement()
    if reason:
        pytest.skip(reason)
    code = (
        "import os\n"
        "from bnma_ui.loadtest import _lower_visitor_priority, _descendants\n"
        "from bnma_ui.browser import headless_chromium\n"
        "_lower_visitor_priority()\n"
        "with headless_chromium() as b:\n"
        "    b.new_context().new_page().goto('data:text/html,<p>x</p>')\n"
        "    policies = set()\n"
        "    for pid in _descendants(os.getpid()):\n"
        "        for t in os.listdir(f'/proc/{pid}/task'):\n"
        "            try:\n"
        "                f = open(f'/proc/{pid}/task/{t}/stat').read().rsplit(')', 1)[1]\n"
        "            except OSError:\n"
        "                continue\n"
        "            policies.add(int(f.split()[38]))\n"
        "    print(sorted(policies))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == f"[{os.SCHED_IDLE}]", out.stdout
