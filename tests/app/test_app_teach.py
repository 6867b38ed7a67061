"""AppTest (headless Streamlit) tests of the Order MCMC page's run controls (invalid values
block Run, Stop is off once a run has stopped, the true network and its SHD for data sampled
from ASIA) and of the Teach page's step mode (1 / 10 / 100 iterations are the library's
chain)."""

from __future__ import annotations

import time

import numpy as np
import pytest
import streamlit.testing.v1 as st_testing
from conftest import ROOT

from bnma_core.network import load_network

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
    shd = int(metrics["SHD, averaged network (P > 0.5)"])
    assert 0 <= shd <= 8
    assert "Rank-normalised R-hat" in metrics
    assert any(s.value.startswith("The true network") for s in at.subheader)
    # 4 chains by default: the ArviZ verdict is shown in words
    verdicts = [m.value for m in list(at.success) + list(at.warning)]
    assert any(v.startswith(("Converged", "Not yet converged")) for v in verdicts), verdicts


# --- Teach page -----------------------------------------------------------------------------


def _player_data(at: AppTest) -> dict:
    """The batch of moves embedded in the Teach page's step player (its iframe)."""
    import json
    import re

    frames = [e for e in at.get("iframe") if "const D = " in e.proto.srcdoc]
    assert len(frames) == 1
    return json.loads(re.search(r"const D = (\{.*?\});\n", frames[0].proto.srcdoc).group(1))


def test_teach_step_player_holds_the_librarys_chain():
    """The step player gets chain 0's moves in one batch (the browser plays them: no server
    button per step), and they are the library's chain; "Next 1,000 moves" loads the next
    batch, continuing the same chain."""
    from bnma_core.structure.teaching import STEP_BATCH, lesson_dataset, step_sampler

    at = _page("7_Teach.py")
    _no_failure(at)
    assert not [b for b in at.button if b.label in ("+1", "+10", "+100")]  # in the browser
    n_iter = at.session_state["teach_step"]["settings"]["iterations per chain"]
    ref = step_sampler(lesson_dataset("asia"), n_iter=n_iter, burn_in=n_iter // 4,
                       random_state=0)
    ref.chains[0].advance(2 * STEP_BATCH)
    c = ref.chains[0]
    scores = np.r_[c.initial_log_score, c.trace_score]
    d = _player_data(at)
    assert d["moves"]["iteration"] == list(range(1, STEP_BATCH + 1))
    np.testing.assert_allclose(d["moves"]["log_score"], scores[:STEP_BATCH], atol=1e-4)
    assert d["moves"]["accepted"] == [bool(a) for a in c.trace_acc[:STEP_BATCH]]
    _button(at, f"Next {STEP_BATCH:,} moves").click().run()
    _no_failure(at)
    d = _player_data(at)
    assert d["start"] == STEP_BATCH and d["moves"]["iteration"][0] == STEP_BATCH + 1
    np.testing.assert_allclose(d["moves"]["log_score"], scores[STEP_BATCH:2 * STEP_BATCH],
                               atol=1e-4)
    assert d["history"][-1][0] == STEP_BATCH


def test_teach_step_state_is_small():
    """Per-session memory of the stepped lesson (30 students share one server): the moves
    are shared by every session with the same settings, a session keeps only where its
    batch starts."""
    import pickle

    at = _page("7_Teach.py")
    state = at.session_state["teach_step"]
    size = len(pickle.dumps(state))
    print(f"teach step state: {size:,} bytes")
    assert size < 2_000


def test_teach_four_chains_diagnostics():
    at = _page("7_Teach.py")
    at.selectbox(key="teach_iter").set_value(2_000).run()
    next(b for b in at.button if b.label == "Run the 4 chains and diagnose").click().run()
    _no_failure(at)
    labels = {m.label: m.value for m in at.metric}
    assert "Rank-normalised R-hat (log score)" in labels
    verdicts = [m.value for m in list(at.success) + list(at.warning)]
    assert any(v.startswith(("Converged", "Not yet converged")) for v in verdicts), verdicts
    assert any(d.proto.label == "Handout (HTML)" for d in at.get("download_button"))
    # the step panel does not go stale: the player is a replay of chain 0, and the page
    # says the chains ran to the end (no "Chain 0 has done ..." beside an older iteration)
    infos = [i.value for i in at.info]
    assert any(v.startswith("All 4 chains have run their 2,000 iterations") for v in infos)
    assert not [m for m in at.metric if m.label == "Iteration"]
    # one unit on the page, named on the axis: the natural log of the player's scores
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("ln P(order, data)" in s for s in specs) and not any("log2" in s for s in specs)


def test_teach_exact_lesson_runs_and_shows_the_error():
    at = _page("7_Teach.py")
    at.radio(key="teach_lesson").set_value("exact").run()
    at.selectbox(key="teach_exact_iter").set_value(5_000).run()
    _button(at, "Run").click().run()
    _finish(at, "teach_exact")
    _no_failure(at)
    labels = {m.label: m.value for m in at.metric}
    assert float(labels["Largest error |estimate − exact|"]) < 0.5
    assert _button(at, "Stop").disabled


def test_teach_averaging_lesson_runs_the_learning_curve_and_stops():
    """Lesson 3 draws the learning curve of the measured case (ASIA, class smoke) and Stop
    ends the run with the sizes finished so far."""
    at = _page("7_Teach.py")
    at.radio(key="teach_lesson").set_value("averaging").run()
    _no_failure(at)
    assert at.radio(key="teach_curve_net").value == "asia"
    _button(at, "Run").click().run()
    run = at.session_state["teach_curve__bnma_bg"]
    deadline = time.monotonic() + TIMEOUT
    while not run.events and not run.done and time.monotonic() < deadline:
        run.wait(0.5)  # the first training size
    at.session_state["teach_curve_stop"] = True
    at.run()
    assert run.wait(30), "Stop did not end the learning curve"
    at.run()
    _no_failure(at)
    assert _button(at, "Stop").disabled
    sizes = at.session_state["teach_curve_state"].get("entry")
    assert sizes is not None and 25 in set(sizes["size"])
