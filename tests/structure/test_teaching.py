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
