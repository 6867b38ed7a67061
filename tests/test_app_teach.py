"""AppTest (headless Streamlit) tests of the Order MCMC page's run controls (invalid values
block Run, Stop is off once a run has stopped, the true network and its SHD for data sampled
from ASIA) and of the Teach page's step mode (1 / 10 / 100 iterations are the library's
chain)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import ROOT

from bnma_core.network import load_network

st_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = st_testing.AppTest
TIMEOUT = 180


def _page(name: str, ds=None, network: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.switch_page(f"pages/{name}")
    if ds is not None:
        at.session_state["bnma_dataset"] = ds
        at.session_state["bnma_dataset_label"] = "test data"
        at.session_state["bnma_dataset_network"] = network
    at.run()
    return at


def _no_failure(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _plain(markdown: str) -> str:
    """Text shown from escaped Markdown (backslashes removed)."""
    import re

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def _button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def _asia(rows: int = 500):
    return load_network("asia").sample(rows, seed=0, class_variable="lung")


def _finish(at: AppTest, name: str = "mcmc") -> None:
    run = at.session_state[name + "__bnma_bg"]
    assert run.wait(TIMEOUT), f"the {name} run did not end within {TIMEOUT} s"
    at.run()


# --- Order MCMC page ----------------------------------------------------------------------


@pytest.mark.parametrize("n_iter", [5, 600_000])
def test_invalid_iterations_block_run_with_a_sentence(n_iter):
    at = _page("2_Order_MCMC.py", _asia())
    _no_failure(at)
    assert not _button(at, "Run").disabled
    at.number_input(key="mcmc_iter").set_value(n_iter).run()
    _no_failure(at)
    assert _button(at, "Run").disabled
    errors = [_plain(e.value) for e in at.error]
    assert any("between 10 and 500,000" in e and "Run is off" in e for e in errors), errors
    assert at.session_state["mcmc_iter"] == n_iter  # the value typed, not an older one
    assert "mcmc__bnma_bg" not in at.session_state


def test_small_runs_are_allowed():
    at = _page("2_Order_MCMC.py", _asia())
    at.number_input(key="mcmc_iter").set_value(20).run()
    at.number_input(key="mcmc_burn").set_value(5).run()
    at.number_input(key="mcmc_orders").set_value(5).run()
    assert not at.error and not _button(at, "Run").disabled
    _button(at, "Run").click().run()
    _finish(at)
    _no_failure(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Iterations per chain"] == "20"


def test_stop_is_off_after_a_stopped_run():
    at = _page("2_Order_MCMC.py", _asia())
    at.number_input(key="mcmc_iter").set_value(500_000).run()
    _button(at, "Run").click().run()
    _no_failure(at)
    run = at.session_state["mcmc__bnma_bg"]
    deadline = time.time() + TIMEOUT
    while not run.events and not run.done and time.time() < deadline:
        run.wait(0.05)
    assert not run.done
    at.run()
    assert not _button(at, "Stop").disabled
    _button(at, "Stop").click().run()
    _no_failure(at)
    assert run.done
    assert _button(at, "Stop").disabled  # in the same redraw, not one interaction later
    assert any("Stopped after" in w.value for w in at.warning)


def test_true_network_and_shd_for_asia_data():
    at = _page("2_Order_MCMC.py", _asia(1000), network="asia")
    at.number_input(key="mcmc_iter").set_value(3000).run()
    at.number_input(key="mcmc_burn").set_value(500).run()
    _button(at, "Run").click().run()
    _finish(at)
    _no_failure(at)
    metrics = {m.label: m.value for m in at.metric}
    shd = int(metrics["SHD of the averaged network (arcs with P > 0.5)"])
    assert 0 <= shd <= 8
    assert "Rank-normalised R-hat (log score)" in metrics
    assert any(s.value.startswith("The true network") for s in at.subheader)
    # 4 chains by default: the ArviZ verdict is shown in words
    verdicts = [m.value for m in list(at.success) + list(at.warning)]
    assert any(v.startswith(("Converged", "Not yet converged")) for v in verdicts), verdicts
