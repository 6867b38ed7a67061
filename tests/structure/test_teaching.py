"""The Teach page's library side: lesson data, the step sampler, the MCMC edge posteriors
approaching the exact ones, the diagnostics of a fitted order-MCMC model from its kept orders,
and the figures of viz.diagnostics."""

import numpy as np
import pytest

from bnma_core import viz
from bnma_core.classifiers.registry import fit_method
from bnma_core.structure.diagnostics import kept_orders_diagnostics
from bnma_core.structure.teaching import exact_convergence, lesson_dataset, step_sampler


@pytest.fixture(scope="module")
def asia():
    return lesson_dataset("asia", rows=400)


def test_lesson_data():
    assert lesson_dataset("asia").class_name == "lung"
    wbc = lesson_dataset("wbc")
    assert wbc.n_rows == 683 and (wbc.codes >= 0).all()
    with pytest.raises(ValueError, match="Unknown lesson data"):
        lesson_dataset("iris")


def test_step_sampler_is_order_mcmc_on_every_variable(asia):
    s = step_sampler(asia, n_iter=500, burn_in=100, random_state=1)
    assert len(s.chains) == 4 and s.table.n_vars == asia.n_vars
    res = s.step(10)
    assert res.iteration == 10 and len(res.moves) == 10


def test_mcmc_approaches_the_exact_edge_posteriors(asia):
    events = list(exact_convergence(asia, n_iter=6000, burn_in=500, every=1000,
                                    structure_prior="uniform", random_state=0))
    assert [e["iteration"] for e in events] == [1000, 2000, 3000, 4000, 5000, 6000]
    assert all(e["draws"] > 0 for e in events)
    assert events[-1]["max_abs_error"] < 0.1, [e["max_abs_error"] for e in events]
    assert events[-1]["max_abs_error"] <= events[0]["max_abs_error"] + 0.02
    stop = list(exact_convergence(asia, n_iter=6000, burn_in=500, every=1000,
                                  should_stop=lambda: True, exact=events[0]["exact"]))
    assert stop == []


def test_kept_orders_diagnostics_match_the_models_edge_posteriors(asia):
    model = fit_method("bma30", asia, n_iter=2000, burn_in=500, n_orders=20, n_chains=4,
                       max_parents=2, random_state=0)
    report = kept_orders_diagnostics(model)
    assert report.n_chains == 4 and report.n_edge_draws == 20
    assert report.n_draws == 1500
    post = report.edges.set_index(["parent", "child"])["posterior"]
    E = model.edge_posterior_
    for (p, c), v in post.items():
        assert v == pytest.approx(E.loc[p, c], abs=1e-9)
    two = fit_method("bma30", asia, n_iter=2000, burn_in=500, n_orders=20, n_chains=2,
                     max_parents=2, random_state=0)
    with pytest.raises(ValueError, match="at least 4 chains"):
        kept_orders_diagnostics(two)


def test_figures(asia):
    names = list(asia.names)
    s = step_sampler(asia, n_iter=400, burn_in=100, random_state=2)
    mv = s.step(1).moves[0]
    fig = viz.order_move_figure(names, mv.order, mv.positions, mv.kind, mv.proposed_order,
                                mv.accepted)
    assert len(fig.layout.shapes) == 2 * len(names)
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    assert len(arrows) == len(mv.nodes)
    s.run()
    d = s.diagnostics(names, n_least=2)
    assert len(viz.rank_plot_figure(d.log_score).data) == 5  # 4 chains + uniform line
    acf = viz.autocorrelation_figure(d.log_score)
    assert len(acf.data) == 4 and all(tr.y[0] == 1.0 for tr in acf.data)  # lag 0: itself
    np.testing.assert_array_equal(acf.data[1].y, d.log_score.autocorrelation[1])
    assert len(viz.edge_traces_figure(d.least_converged).data) == 4 * len(d.least_converged)
    assert viz.concordance_figure(d.concordance).data[1].x.shape[0] == len(d.concordance)
    E = np.full((len(names), len(names)), 0.5)
    fig = viz.exact_vs_estimate_figure(E, E, names)
    assert "largest error 0.000" in fig.layout.title.text


def test_trace_reference_order_is_a_legend_entry():
    """The reference order's label sat under the chains' lines: it is a legend entry."""
    import pandas as pd

    trace = pd.DataFrame({"chain": [0, 0, 1, 1], "iteration": [1, 2, 1, 2],
                          "log2_score": [-10.0, -9.0, -11.0, -9.5]})
    fig = viz.trace_figure(trace, reference_log2=-9.2, burn_in=1)
    assert [t.name for t in fig.data] == ["chain 0", "chain 1", "reference order"]
    assert not any("reference" in (a.text or "") for a in fig.layout.annotations)


def test_step_frames_are_the_chains_moves_cut_anywhere(asia):
    """A batch of moves for the browser (DESIGN §14) is the sampler's chain: the scores before
    each move are the chain's trace, the decisions its accept flags, wherever the batch
    starts; the best network of each move is the order's best network."""
    import json

    from bnma_core.kernels.orders import order_best_parents
    from bnma_core.structure.teaching import step_frames

    ref = step_sampler(asia, n_iter=600, burn_in=150, random_state=3)
    ref.chains[0].advance(600)
    c = ref.chains[0]
    scores = np.r_[c.initial_log_score, c.trace_score]
    for start, count in ((0, 250), (250, 250), (500, 250)):
        f = step_frames(asia, n_iter=600, random_state=3, start=start, count=count)
        json.dumps(f)  # JSON-ready
        m = f["moves"]
        n = min(count, 600 - start)
        assert m["iteration"] == list(range(start + 1, start + n + 1))
        np.testing.assert_allclose(m["log_score"], scores[start:start + n], atol=1e-4)
        assert m["accepted"] == [bool(a) for a in c.trace_acc[start:start + n]]
        assert f["score"] == pytest.approx(scores[start])
        assert f["history"][-1][0] == start
        order = np.array(f["order"])
        tab = ref.table.arrays()
        for k in range(n):
            if m["accepted"][k]:
                order = np.array(m["proposed_order"][k])
            arcs = {tuple(a) for a in f["nets"][m["net"][k]]}
            assert arcs == {(int(y), int(x)) for y, x in
                            zip(*np.nonzero(order_best_parents(tab, order)))}
    with pytest.raises(ValueError, match="start must be between 0 and 600"):
        step_frames(asia, n_iter=600, start=601)


def test_step_player_shows_what_it_is_given(asia):
    """The player page carries the batch as JSON and draws only those numbers (one unit:
    natural log; labels in words; no "->")."""
    import json
    import re

    from bnma_core.structure.teaching import step_frames
    from bnma_core.viz.step_player import step_player_html

    f = step_frames(asia, n_iter=400, random_state=0, count=50)
    page = step_player_html(f, "more below")
    data = json.loads(re.search(r"const D = (\{.*?\});\n", page).group(1))
    assert data["moves"] == f["moves"] and data["note"] == "more below"
    assert set(data["positions"]) == set(f["names"])
    for label in ("ln P(order, data) before", "Acceptance probability", "Uniform draw u",
                  "Variables moved", "iteration"):
        assert label in page
    assert "log2" not in page and "->" not in page and "position_i" not in page


def test_trace_names_its_unit_and_has_one_tick_format():
    """Issue 33 item 9: the trace says which logarithm it plots; ticks have thousands
    separators and the decimals they need (as the step player's), never mixed formats."""
    import pandas as pd

    from bnma_core.viz.mcmc import SCORE_TICKS

    t = pd.DataFrame({"chain": 0, "iteration": range(3), "log_score": [-3339.0, -3338.5, -3338]})
    ln = viz.trace_figure(t, unit="ln")
    assert ln.layout.yaxis.title.text == "ln P(order, data)"
    assert ln.layout.yaxis.tickformat == SCORE_TICKS == ",.7~r"
    assert list(ln.data[0].y) == [-3339.0, -3338.5, -3338]
    t2 = t.rename(columns={"log_score": "log2_score"})
    assert viz.trace_figure(t2).layout.yaxis.title.text == "log2 P(order, data)"
    with pytest.raises(ValueError, match="unit must be one of"):
        viz.trace_figure(t, unit="log10")


def test_figures_read_without_guessing():
    """Issue 33 item 10: no crowded minor digits on the log axis, thousands separators on the
    iterations, edges written y → x, and the learning curve's shaded bands named in the
    legend."""
    from types import SimpleNamespace

    import pandas as pd

    err = viz.exact_error_figure(pd.DataFrame({"iteration": [1000, 2000],
                                               "max_abs_error": [0.3, 0.01]}))
    assert err.layout.yaxis.minorloglabels == "none" and err.layout.xaxis.tickformat == ",d"
    q = SimpleNamespace(name="tub -> asia", rhat=1.03, draws=np.zeros((4, 10)))
    fig = viz.edge_traces_figure([q, q])
    assert [a.text for a in fig.layout.annotations] == ["tub → asia (R-hat 1.030)"] * 2
    assert viz.arrows("worst tub -> asia: 1.03") == "worst tub → asia: 1.03"
    rows = [{"size": s, "repetition": r, "model": m, "log_loss": v + 0.01 * r, "accuracy": 0.5}
            for s in (25, 50) for r in range(3) for m, v in
            (("single", 0.6), ("bma", 0.55), ("true", 0.5))]
    curve = viz.learning_curve_figure(pd.DataFrame(rows), excess=True)
    assert any(t.name.startswith("shaded: 90 % interval") and t.showlegend is not False
               for t in curve.data)
