"""Order MCMC: sample node orders live, then average Bayesian network classifiers over them."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Order MCMC · BNMA Studio", page_icon=":material/timeline:",
                   layout="wide")

import numpy as np
import pandas as pd

from bnma_core import export, viz
from bnma_core.classifiers.order_bma import OrderMCMCBMA
from bnma_core.classifiers.registry import fit_method
from bnma_core.limits import Range
from bnma_core.structure.diagnostics import MIN_CHAINS, RHAT_MAX, kept_orders_diagnostics
from bnma_core.structure.distance import structure_difference
from bnma_ui import background, cache
from bnma_ui.models import (
    holdout_split,
    model_index,
    parse_order,
)
from bnma_ui.state import data_id, dataset_network, persistent, remember, require_dataset
from bnma_ui.widgets import (
    chart,
    equations,
    md_escape,
    sidebar_dataset_badge,
    what_am_i_looking_at,
)

STATE = "mcmc_run"
RUN = "mcmc"
STOP_CLICKED = "mcmc_stop_clicked"
METHOD = "bma30"  # the registry's order-MCMC averaging; every setting below overrides it
ITERATIONS = Range(10, 500_000, 10_000, "number of iterations")
BURN_IN = Range(0, 499_990, 2_000, "burn-in")
ORDERS = Range(1, 200, 30, "number of orders kept per chain")
N_ORDERS_SHOWN = (1, 5, 10, 30)
HELD_OUT_COLUMNS = {"n_orders": "orders averaged", "accuracy": "accuracy"}
REFERENCES = {"none": "No reference order", "network": "The true network's order",
              "typed": "Type an order"}

sidebar_dataset_badge()
st.title("Order MCMC: averaging over node orders")
what_am_i_looking_at(
    "A Bayesian network needs a **structure**: which variables depend on which. If we fix an "
    "**order** of the variables (parents always come earlier), the predictions of *all* "
    "structures consistent with that order, each weighted by how well it explains the data, "
    "can be added up exactly. Hwang & Zhang (2005) go one step further: they sample many "
    "plausible orders with a Markov chain (MCMC) and average over them too.\n\n"
    "- **Trace**: the score of the current order at each step, one line per chain. It climbs "
    "and then wanders around a plateau; the first steps (burn-in) are discarded. Chains that "
    "end on the same plateau are a good sign.\n"
    "- **Spearman correlation**: how similar the sampled order is to a reference order "
    "(1 = identical, 0 = unrelated), e.g. the order of the network the data were drawn "
    "from.\n"
    "- **Averaged network**: each arrow's width and colour show its posterior probability "
    "(the share of weight of all averaged structures that contain it). The class is the red "
    "diamond; orange nodes are probably in its **Markov blanket** (the variables that "
    "matter for predicting it).\n"
    "- **R-hat and ESS** (ArviZ's definitions, Vehtari et al. 2021): the rank-normalised "
    "R-hat compares the chains; at most 1.01 when they agree (at least 4 chains). The "
    "effective sample size (ESS) says how many independent draws the chains are worth.\n"
    "- **True network and SHD**: when the data were sampled from a bundled network, it is "
    "drawn, and the structural Hamming distance counts the arcs the averaged network "
    "misses, adds or reverses.\n"
    "- **Held-out accuracy**: the model is trained on part of the rows and tested on the "
    "rest, averaging over 1, 5, 10 or 30 sampled orders (the paper's Fig. 7-8).")
equations(
    "Given an order $\\prec$, with local scores $S(X_i; Z) = \\log \\rho(X_i \\mid Z) + "
    "\\log ML(X_i, Z)$ over parent sets $Z \\subseteq \\mathrm{pred}_\\prec(i)$, $|Z| \\le l$ "
    "(Hwang & Zhang eq. 9):\n\n"
    "$$P(U \\mid D, \\prec) = \\prod_i \\frac{\\sum_{Z} e^{S(X_i; Z)}\\, "
    "\\hat\\theta(x_i \\mid z)}{\\sum_Z e^{S(X_i; Z)}}$$\n\n"
    "Order posterior (uniform prior over orders): $P(\\prec \\mid D) \\propto \\prod_i "
    "\\sum_{Z \\subseteq \\mathrm{pred}(i)} e^{S(X_i; Z)}$. Metropolis-Hastings swaps two "
    "positions and accepts with $\\min\\{1, P(\\prec' \\mid D) / P(\\prec_t \\mid D)\\}$. "
    "Averaging $T$ kept orders (eq. 11):\n\n"
    "$$P(U \\mid D) \\approx \\frac{1}{T} \\sum_{t=1}^{T} P(U \\mid D, \\prec_t), \\qquad "
    "P(Y \\to X \\mid D, \\prec) = \\frac{\\sum_{Z \\ni Y} e^{S(X; Z)}}{\\sum_Z e^{S(X; Z)}}$$"
    "\n\nK2: $\\log ML = \\sum_j [\\ln\\Gamma(r_i) - \\ln\\Gamma(r_i + N_{ij})] + "
    "\\sum_{jk} \\ln\\Gamma(1 + N_{ijk})$. Structure prior (eq. 13, MDL reading): "
    "$\\rho(Z) \\propto 2^{-(\\log_2 n + \\log_2 \\binom{n}{|Z|})}$.")

cache.start_warmup()
ds = require_dataset()
fingerprint = data_id(ds)  # the raw data and every setting that built them
network = dataset_network()

# --- controls --------------------------------------------------------------------------------
c1, c2, c3, c4 = st.columns(4)
# no min / max on these fields: the browser would turn an out-of-range value red and keep
# the old one, so that Run ran a value the user no longer saw; the page checks them instead
n_iter = c1.number_input(
    "Iterations", step=1000, key=persistent("mcmc_iter", ITERATIONS.default),
    help=f"Steps of each chain, {ITERATIONS.low:,} to {ITERATIONS.high:,}. The paper uses "
         "60,000; a few thousand show the idea. Single moves: the Teach page.")
burn_in = c1.number_input(
    "Burn-in", step=500, key=persistent("mcmc_burn", BURN_IN.default),
    help="First steps thrown away while the chain climbs to good orders.")
n_orders = c2.number_input(
    "Orders kept per chain", step=1, key=persistent("mcmc_orders", ORDERS.default),
    help=f"Evenly spaced orders after burn-in that are averaged (paper: 30; "
         f"{ORDERS.low} to {ORDERS.high}). The convergence diagnostics of the edges use "
         "them too (at least 8).")
max_parents = c2.slider(
    "Max parents", 1, 4, key=persistent("mcmc_parents", 3),
    help="Largest number of parents of a variable (paper: 3). 4 is slow with many "
         "variables.")
prior = c3.radio("Structure prior", ["hz", "uniform"], horizontal=True,
                 format_func={"hz": "Hwang-Zhang", "uniform": "uniform"}.get,
                 key=persistent("mcmc_prior", "hz"),
                 help="Hwang-Zhang's prior favours fewer parents; uniform treats every parent "
                      "set alike.")
score = c3.radio("Score", ["k2", "bdeu"], horizontal=True,
                 format_func={"k2": "K2", "bdeu": "BDeu"}.get, key=persistent("mcmc_score", "k2"),
                 help="How well a variable's parents explain it: K2 (paper) or BDeu (a prior "
                      "sample size of 1 spread over the table).")
n_chains = c4.slider("Chains", 1, 8, key=persistent("mcmc_chains", MIN_CHAINS),
                     help="Independent chains from different random starts; agreement between "
                          f"them suggests the sampler has converged. The diagnostics (R-hat, "
                          f"ESS) need at least {MIN_CHAINS}.")
seed = c4.number_input("Seed", 0, 2**31 - 1, step=1, key=persistent("mcmc_seed", 0),
                       help="Same seed, same chains and same train/test split.")
d1, d2 = st.columns([1, 3])
test_pct = d1.slider("Held-out rows (%)", 10, 50, step=5, key=persistent("mcmc_test", 30),
                     help="Rows kept aside to measure accuracy; the chains see only the rest.")
ref_options = ["none", "network", "typed"] if network else ["none", "typed"]
ref_kind = d2.radio("Reference order (for the Spearman correlation)", ref_options,
                    format_func=REFERENCES.get, horizontal=True,
                    key=persistent("mcmc_ref", "network" if network else "none", ref_options),
                    help="Compare the sampled orders with a known order, e.g. a topological "
                         "order of the network the data came from.")
ref_names: list[str] | None = None
problem = None
if ref_kind == "network" and network:
    bn = cache.network(network)
    ref_names = [bn.names[i] for i in bn.topological_order()]
    d2.caption(f"Topological order of {network}: " + ", ".join(ref_names[:12])
               + (" ..." if len(ref_names) > 12 else ""))
elif ref_kind == "typed":
    text = d2.text_area("Order (variable names separated by commas)",
                        key=persistent("mcmc_ref_text", ", ".join(ds.names)),
                        help="Every variable, the class included, exactly once; parents "
                             "before children.")
    try:
        ref_names = parse_order(text, ds)
    except ValueError as exc:
        problem = str(exc)
remember("mcmc_iter", "mcmc_burn", "mcmc_orders", "mcmc_parents", "mcmc_prior", "mcmc_score",
         "mcmc_chains", "mcmc_seed", "mcmc_test", "mcmc_ref", "mcmc_ref_text")
if problem:
    st.error(md_escape(problem))
number_problem = (ITERATIONS.problem(n_iter) if n_iter is not None else
                  f"Type the {ITERATIONS.name} ({ITERATIONS.low:,} to {ITERATIONS.high:,}).")
if not number_problem:
    number_problem = (BURN_IN.problem(burn_in) if burn_in is not None else
                      "Type the burn-in (0 for none).")
if not number_problem and burn_in >= n_iter:
    number_problem = (f"The burn-in ({burn_in:,}) must be shorter than the number of "
                      f"iterations ({n_iter:,}): lower the burn-in or run more iterations.")
if not number_problem:
    number_problem = (ORDERS.problem(n_orders) if n_orders is not None else
                      f"Type the {ORDERS.name} ({ORDERS.low} to {ORDERS.high}).")
if number_problem:
    st.error(md_escape(number_problem) + " Run is off until it is fixed.")
    problem = problem or number_problem

if ds.n_vars > 64:
    st.caption(f"{ds.n_vars} variables: beyond 64, each variable's parents are chosen among its "
               "16 most promising candidates (the largest single-parent score gains), so the "
               "score table stays small.")
b1, b2, _ = st.columns([1, 1, 10], gap="small")
if st.session_state.pop(STOP_CLICKED, False):
    background.stop(RUN)  # before the buttons are drawn: Stop is then off at once
active = background.current(RUN)
running = active is not None and not active.done
run = b1.button("Run", type="primary", disabled=problem is not None,
                help="Start the chains; the figures update while they run.")
b2.button("Stop", disabled=not running, on_click=st.session_state.__setitem__,
          args=(STOP_CLICKED, True),
          help="Stop the chains; the orders kept so far are averaged. Off when no run is "
               "going on.")

params = (dict(n_iter=int(n_iter), burn_in=int(burn_in), n_orders=int(n_orders),
               max_parents=int(max_parents), structure_prior=prior, scoring=score,
               n_chains=int(n_chains), random_state=int(seed))
          if not number_problem else {})
last = st.session_state.setdefault(STATE, {})  # {"entry": last finished or stopped run}
key = ("mcmc", fingerprint, tuple(sorted(params.items())), int(test_pct),
       tuple(ref_names) if ref_names else None)


def focus_after_burn_in(fig, trace: pd.DataFrame, burn: int, extra: float | None = None):
    """Zoom the score axis on the iterations after burn-in (the climb would flatten them)."""
    after = trace.loc[trace["iteration"] > burn, "log2_score"]
    if len(after) < 2:
        return fig
    lo, hi = float(after.min()), float(after.max())
    if extra is not None:
        lo, hi = min(lo, extra), max(hi, extra)
    pad = 0.15 * (hi - lo) if hi > lo else 1.0
    fig.update_yaxes(range=[lo - pad, hi + pad])
    return fig


def draw_live(r: background.Run) -> None:
    """Progress of a running chain set (called from a fragment about once a second)."""
    n_total, burn = r.meta["n_iter"], r.meta["burn_in"]
    if not r.events:
        st.info("Compiling the numba kernels (once after installing; cached on disk), then "
                "building the score table..." if cache.compiling() else
                "Building the score table and starting the chains...")
        return
    events = pd.DataFrame(list(r.events))
    last_ev = events.groupby("chain").tail(1)
    done = int(last_ev["iteration"].min())
    st.progress(min(done / n_total, 1.0),
                text=f"Order MCMC running: {done:,} of {n_total:,} iterations per chain "
                     f"({r.seconds:.0f} s)")
    note = background.busy_note(r)
    if note:
        st.caption(note)
    cols = st.columns(4)
    cols[0].metric(f"Iterations per chain (of {n_total:,})", f"{done:,}")
    cols[1].metric("Acceptance rate", f"{last_ev['acceptance_rate'].mean():.1%}")
    cols[2].metric("Iterations per second", f"{last_ev['iter_per_s'].sum():,.0f}")
    sp = last_ev["spearman"].dropna()
    cols[3].metric("Spearman with reference", f"{sp.mean():.2f}" if len(sp) else "—")
    t1, t2 = st.columns(2)
    fig = viz.trace_figure(events, burn_in=burn, title="log2 score of the current order")
    t1.plotly_chart(focus_after_burn_in(fig, events, burn), width="stretch",
                    key="mcmc_live_trace")
    if events["spearman"].notna().any():
        t2.plotly_chart(viz.rank_correlation_figure(events[events["spearman"].notna()]),
                        width="stretch", key="mcmc_live_spearman")


def start_run() -> None:
    train, test = holdout_split(ds, int(test_pct) / 100, int(seed))
    every = int(np.clip(int(n_iter) // 150, 20, 2000))
    fields = ("chain", "iteration", "log2_score", "acceptance_rate", "spearman", "iter_per_s")

    def work(r: background.Run) -> OrderMCMCBMA:
        # the library's one fitting path; Stop is checked every ~0.1 s of chains and the
        # model is built from the orders kept so far
        return fit_method(METHOD, ds, train, progress=lambda ev: r.report(
                              {k: ev[k] for k in fields}),
                          progress_every=every, should_stop=r.should_stop,
                          reference_order=ref_names, **params)

    background.start(RUN, work, key=key,
                     meta={"train": train, "test": test, "reference": ref_names,
                           "n_iter": int(n_iter), "burn_in": int(burn_in)})


if run and problem is None:
    last.pop("error", None)
    hit = cache.result_store().get(key)  # one read: another session may evict it meanwhile
    if hit is not None:
        last["entry"] = hit
    else:
        start_run()
        st.rerun()  # draw the page again with the run going (Stop enabled, live progress)

finished = background.finished(RUN, last)
model = finished.result if finished is not None else None
if model is not None and hasattr(model, "edge_graph_"):
    entry = {"key": finished.key, "model": model, "train": finished.meta["train"],
             "test": finished.meta["test"], "reference": finished.meta["reference"],
             "stopped": finished.stopped or model.iterations_done_ < finished.meta["n_iter"]}
    try:
        entry["diagnostics"] = kept_orders_diagnostics(model, n_least=4)
        # the page draws the log score's rank counts; its draws are the model's trace_ again
        # (up to 16 MB for 4 x 500,000 iterations): not kept twice
        entry["diagnostics"].log_score.draws = np.zeros((0, 0))
    except ValueError as exc:  # fewer than 4 chains, or too few draws: said on the page
        entry["diagnostics"] = str(exc)
    last["entry"] = entry
    if not entry["stopped"]:
        cache.result_store()[finished.key] = entry
background.live(RUN, draw_live, interval=1.0)
background.show_error(last)

# --- results ---------------------------------------------------------------------------------
entry = background.entry_for_data(
    last, fingerprint, message="The last run used another dataset; press Run to sample orders "
                               "for this one.")
if entry is not None:
    model = entry["model"]
    if entry["stopped"]:
        st.warning(f"Stopped after {model.iterations_done_:,} iterations per chain: the "
                   f"averages below use the {len(model.sampled_orders_)} order(s) kept so far.")
    elif entry["key"] != key:
        st.caption("Showing the last run; the settings above have changed since. Press Run "
                   "to update.")
    st.subheader("Chains")
    diag = entry.get("diagnostics")
    m = st.columns([1, 1, 1.3, 1.3, 1])
    m[0].metric("Iterations per chain", f"{model.iterations_done_:,}")
    m[1].metric("Acceptance rate", f"{model.acceptance_rate_:.1%}")
    rhat = diag.log_score.rhat if not isinstance(diag, str | None) else model.rhat_
    m[2].metric("Rank-normalised R-hat",
                "—" if not np.isfinite(rhat) else f"{rhat:.3f}",
                help=f"ArviZ's rank-normalised split R-hat (Vehtari et al. 2021) of the order "
                     f"log score after burn-in: at most {RHAT_MAX} when the chains agree.")
    m[3].metric("ESS bulk / tail",
                "—" if isinstance(diag, str | None) else
                f"{diag.log_score.ess_bulk:,.0f} / {diag.log_score.ess_tail:,.0f}",
                help="Effective sample size of the order log score (ArviZ): how many "
                     "independent draws the chains are "
                     "worth, for the centre (bulk) and the 5 % / 95 % quantiles (tail). "
                     "At least 400 is the usual target.")
    m[4].metric("Orders averaged", len(model.sampled_orders_))
    if isinstance(diag, str):
        st.info(md_escape(diag) + " The R-hat shown compares the chains that ran; the verdict "
                f"needs at least {MIN_CHAINS} chains.")
    elif diag is not None:
        (st.success if diag.converged else st.warning)(md_escape(diag.verdict))
        with st.expander("Convergence diagnostics: edges, rank plots, two-runs concordance"):
            st.caption(
                f"Thresholds: R-hat ≤ {diag.rhat_max} and bulk and tail ESS ≥ "
                f"{diag.ess_min:.0f} (Vehtari et al. 2021). Edge traces: each chain's "
                f"{diag.n_edge_draws} kept orders after burn-in, P(edge | data, order). "
                "Edges whose trace hardly moves are 'settled' and not judged.")
            e1, e2 = st.columns(2)
            chart(viz.rank_plot_figure(diag.log_score, "Rank plot of the log score"),
                  "rank_plot_log_score", e1)
            chart(viz.concordance_figure(diag.concordance), "two_runs_concordance", e2)
            chart(viz.autocorrelation_figure(diag.log_score, "Autocorrelation of the log score"),
                  "log_score_autocorrelation")
            if diag.least_converged:
                chart(viz.edge_traces_figure(diag.least_converged), "least_converged_edges")
            table = diag.edges[~diag.edges["settled"]].sort_values("rhat", ascending=False)
            st.dataframe(table.drop(columns=["settled"]).round(4), hide_index=True,
                         width="stretch", height=240)
    trace = model.trace_
    burn = entry["key"][2]
    burn = dict(burn)["burn_in"]
    t1, t2 = st.columns(2) if "spearman" in trace else (st.container(), None)
    ref_log2 = None
    if entry["reference"]:
        ref_order = np.asarray(model_index(ds, entry["reference"]), dtype=np.int64)
        ref_log2 = model.table_.order_log_score(ref_order) / np.log(2.0)
    with t1:
        fig = viz.trace_figure(trace, reference_log2=ref_log2, burn_in=burn)
        chart(focus_after_burn_in(fig, trace, burn, ref_log2), "order_mcmc_trace")
        if ref_log2 is not None:
            st.caption("Dashed line: the score of the reference order. On a finite sample the "
                       "true network's order need not be the best-scoring one. The axis is "
                       "zoomed on the iterations after burn-in.")
    if t2 is not None:
        with t2:
            chart(viz.rank_correlation_figure(trace), "order_mcmc_spearman")

    st.subheader("Averaged network")
    g1, g2, g3 = st.columns([2, 1, 3])
    threshold = g1.slider("Show edges with posterior at least", 0.05, 1.0, step=0.05,
                          key=persistent("mcmc_threshold", 0.5),
                          help="Hide arrows the averaged models rarely contain.")
    layout = g2.radio("Layout", ["layered", "spring"], key=persistent("mcmc_layout", "layered"),
                      help="Layered: parents left of children. Spring: related variables "
                           "close together.")
    mb_prob = model.markov_blanket_probability_
    mb = [n for n, p in mb_prob.items() if p >= 0.5]
    g3.caption("Red diamond: the class. Orange: variables with P(in the class's Markov "
               "blanket) ≥ 0.5 — " + (", ".join(mb) if mb else "none") + ".")
    remember("mcmc_threshold", "mcmc_layout")
    graph = model.edge_graph_
    chart(viz.dag_figure(graph, class_node=ds.class_name, highlight_nodes=mb,
                         threshold=threshold, layout=layout, weight_label="P(edge | data)",
                         weight_range=(0.0, 1.0)), "averaged_network")
    true_sections: list = []
    if network:
        st.subheader(f"The true network ({network.upper()})")
        true_graph = cache.network(network).graph.subgraph(ds.names).copy()
        diff = structure_difference(graph, true_graph, threshold=0.5)
        shown = structure_difference(graph, true_graph, threshold=threshold - 1e-9)
        s1, s2, s3 = st.columns(3)
        s1.metric("SHD, averaged network (P > 0.5)", diff.shd,
                  help="Structural Hamming distance to the network the data were sampled "
                       "from: arcs missing, extra or reversed, each pair of variables "
                       "counted once (Tsamardinos et al. 2006).")
        s2.metric("missing / extra / reversed",
                  f"{len(diff.missing)} / {len(diff.extra)} / {len(diff.reversed)}")
        s3.metric(f"SHD, arcs shown (P ≥ {threshold:.2f})", shown.shd)
        if len(ds.names) < cache.network(network).n_vars:
            st.caption("The data keep only some of the network's variables: the true network "
                       "drawn is its part over these variables (arcs through a left-out "
                       "variable are not drawn).")
        st.caption("The network the rows were drawn from. Orange arrows: arcs the averaged "
                   "network (P > 0.5) misses or reverses. On a finite sample the data cannot "
                   "tell some directions apart, so a few reversals are expected.")
        true_fig = viz.dag_figure(true_graph, class_node=ds.class_name, edge_weight=None,
                                  layout=layout, highlight_edges=diff.missing + diff.reversed,
                                  title=f"True {network.upper()} network")
        chart(true_fig, "true_network")
        true_sections = [("True network", true_fig), (
            "Structural Hamming distance",
            f"SHD of the averaged network (arcs with P > 0.5) to the true {network.upper()} "
            f"network: {diff.shd} ({len(diff.missing)} missing, {len(diff.extra)} extra, "
            f"{len(diff.reversed)} reversed).")]
    with st.expander("Edge posterior heatmap and Markov-blanket probabilities"):
        h1, h2 = st.columns([3, 2])
        chart(viz.edge_posterior_heatmap(model.edge_posterior_),
              "edge_posterior_heatmap", h1)
        # every value visible beside its bar in either theme: a plain column would be pushed
        # out of this narrow table by the names (the values looked missing)
        mb_table = (mb_prob.sort_values(ascending=False).rename("P(in Markov blanket)")
                    .rename_axis("variable").reset_index())
        h2.dataframe(mb_table, hide_index=True, width="stretch", column_config={
            "variable": st.column_config.TextColumn("variable", width="medium"),
            "P(in Markov blanket)": st.column_config.ProgressColumn(
                "P(in MB)", min_value=0.0, max_value=1.0, format="%.3f",
                help="Posterior probability that the variable is in the class's Markov "
                     "blanket (its parents, children and the children's other parents).")})

    st.subheader("Held-out accuracy")
    if "accuracy" not in entry:
        with st.spinner("Classifying the held-out rows..."):
            T = len(model.sampled_orders_)
            ns = [n for n in N_ORDERS_SHOWN if n <= T] or [T]
            test = entry["test"]
            probs = model.predict_proba_n_orders(ds.X[test], ns)
            entry["accuracy"] = pd.DataFrame({
                "method": "order-MCMC BMA", "n_orders": list(probs),
                "accuracy": [float(np.mean(model.classes_[p.argmax(axis=1)]
                                           == np.asarray(ds.classes, dtype=object)[ds.y[test]]))
                             for p in probs.values()]})
    acc = entry["accuracy"]
    a1, a2 = st.columns([2, 1])
    fig = viz.orders_accuracy_figure(acc, x="n_orders", title="Accuracy on held-out rows by "
                                                              "number of averaged orders")
    fig.update_yaxes(range=[max(0.0, float(acc["accuracy"].min()) - 0.1), 1.0])
    fig.update_xaxes(title=HELD_OUT_COLUMNS["n_orders"])
    chart(fig, "heldout_accuracy", a1)
    a2.dataframe(acc[["n_orders", "accuracy"]].round(4).rename(columns=HELD_OUT_COLUMNS),
                 hide_index=True, width="stretch")
    a2.caption(f"Trained on {len(entry['train'])} rows, tested on {len(entry['test'])}. "
               "With T kept orders, n orders means every (T/n)-th one.")

    st.subheader("Export")
    edge_table = model.edge_posterior_
    settings = {**dict(entry["key"][2]), "held-out share (%)": entry["key"][3],
                "dataset": ds.fingerprint()[:12], "rows (train / test)":
                f"{len(entry['train'])} / {len(entry['test'])}",
                "iterations done per chain": model.iterations_done_,
                "stopped early": entry["stopped"],
                "rank-normalised R-hat (log score)": f"{rhat:.3f}",
                "verdict": diag.verdict if not isinstance(diag, str | None) else diag}
    trace_fig = focus_after_burn_in(viz.trace_figure(trace, reference_log2=ref_log2,
                                                     burn_in=burn), trace, burn, ref_log2)
    dag_fig = viz.dag_figure(graph, class_node=ds.class_name, highlight_nodes=mb,
                             threshold=threshold, layout=layout, weight_label="P(edge | data)",
                             weight_range=(0.0, 1.0))

    def report() -> str:  # built on click only (deferred download; no Streamlit calls here)
        return export.html_report(
            "Order-MCMC model averaging", settings=settings,
            sections=[("Trace", trace_fig), ("Averaged network", dag_fig), *true_sections,
                      ("Markov-blanket probabilities", mb_prob.sort_values(ascending=False)),
                      ("Edge posteriors", edge_table),
                      ("Held-out accuracy",
                       acc[["n_orders", "accuracy"]].rename(columns=HELD_OUT_COLUMNS))])

    x1 = x2 = x3 = x4 = st.container(horizontal=True)  # full labels, side by side
    x1.download_button("Edge posteriors (CSV)", lambda: export.table_csv(edge_table),
                       "edge_posteriors.csv", "text/csv", on_click="ignore",
                       help="P(row variable -> column variable | data), averaged over the "
                            "kept orders.")
    x2.download_button("Averaged network (GraphML)", lambda: export.graph_graphml(graph),
                       "averaged_network.graphml", "application/xml", on_click="ignore",
                       help="Every arc with its posterior as the 'weight' attribute; opens in "
                            "networkx, Gephi, Cytoscape or yEd.")
    x3.download_button("Markov blanket (CSV)",
                       lambda: export.table_csv(mb_prob.rename("P(in Markov blanket)")),
                       "markov_blanket.csv", "text/csv", on_click="ignore")
    x4.download_button("Report (HTML)", report, "order_mcmc_report.html", "text/html",
                       on_click="ignore",
                       help="One self-contained page: settings, figures and tables of this run.")
    st.caption("Each figure downloads itself as PNG or SVG with the buttons under it.")
