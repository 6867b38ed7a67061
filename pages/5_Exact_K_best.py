"""Exact & K-best structures: the best Bayesian networks of a small dataset, found exhaustively,
and the K best Markov equivalence classes with their posterior weights (DESIGN §4).

Two views: "Exact & K-best" (the K best classes of the complete rows) and "Subbagging"
(:class:`bnma_core.classifiers.kbest.SubbaggingKBest`, Sugahara, Aomi & Ueno: the K best classes
of each of T subsamples; per-subsample classes, edge stability across subsamples and the
averaged prediction of one row, figures from :mod:`bnma_core.viz.kbest`). Both run through
:mod:`bnma_ui.background` and check the exact search's limits before a run."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Exact & K-best · BNMA Studio", page_icon=":material/account_tree:",
                   layout="wide")

import networkx as nx
import numpy as np

from bnma_core import export
from bnma_core.classifiers.kbest import edge_probabilities, subsample_size
from bnma_core.classifiers.registry import check_capabilities, get_spec
from bnma_core.scores import informative_features
from bnma_core.structure.exact import (
    DEFAULT_LIMITS,
    STAGES,
    ResourceLimitError,
    Stopped,
    check_limits,
    k_best,
    posterior_weights,
)
from bnma_core.viz import kbest as viz_kbest
from bnma_core.viz.graphs import dag_figure, heatmap_figure
from bnma_ui import background, cache
from bnma_ui.state import data_id, persistent, remember, require_dataset
from bnma_ui.widgets import (
    chart,
    equations,
    file_rows,
    glossary_help,
    md_escape,
    sidebar_dataset_badge,
    what_am_i_looking_at,
)

STATE = "exact_run"
RUN = "exact"
SUB_STATE = "subbag_run"
SUB_RUN = "subbag"
SUBBAG = "kbest_subbagging"  # registry code of SubbaggingKBest
MAX_SHOWN = 6

sidebar_dataset_badge()
st.title("Exact & K-best structures")
what_am_i_looking_at(
    "A Bayesian network's **structure** says which variables depend directly on which. With up "
    "to about 20 variables the best-scoring structure can be found **exactly**, by checking "
    "every possibility in a clever order (dynamic programming over subsets of variables), "
    "instead of searching greedily.\n\n"
    "Several structures often explain the data almost equally well, and some cannot be told "
    "apart by any data at all: X → Y and Y → X say the same thing about which values go "
    "together. Structures that make exactly the same independence claims form a **Markov "
    "equivalence class**; they share the same links and the same 'colliders' (A → C ← B with "
    "A and B not linked). A class is drawn as one graph where an arrow that every member "
    "shares is directed and a link whose direction the data cannot decide is shown in both "
    "directions.\n\n"
    "- **Weights**: each class's posterior probability, normalised over the K classes shown "
    "(BDeu score, uniform prior over classes).\n"
    "- **Link probability**: for each pair of variables, the total weight of the classes in "
    "which they are linked.\n"
    "- **Stop** takes effect between the three stages (local scores, best parent sets, "
    "networks).\n\n"
    "**Subbagging** (Sugahara, Aomi & Ueno) repeats the K-best search on T **subsamples**: "
    "each draws a share of the rows (the paper: 90%) without replacement. Each gives its own "
    "K classes and weights; the classifier averages the predictions of all of them. The view shows "
    "each subsample's classes, how **stable** each edge is from one subsample to the next "
    "(an edge found in every subsample is well supported by the data; one that comes and "
    "goes depends on a few rows), and, for one row, the averaged prediction with the spread "
    "of the subsamples' predictions. Stop keeps the subsamples finished so far.")

equations(
    "BDeu score of a variable $X_i$ with parents $Pa_i$ ($q_i$ parent configurations, "
    "$r_i$ states, counts $N_{ijk}$, $\\alpha_{ijk} = \\alpha / (r_i q_i)$):\n\n"
    "$$s(i, Pa_i) = \\sum_j \\Big[\\ln\\Gamma(\\tfrac{\\alpha}{q_i}) - "
    "\\ln\\Gamma(\\tfrac{\\alpha}{q_i} + N_{ij})\\Big] + \\sum_{jk} "
    "\\Big[\\ln\\Gamma(\\alpha_{ijk} + N_{ijk}) - \\ln\\Gamma(\\alpha_{ijk})\\Big]$$\n\n"
    "Best parent set of $v$ inside a candidate set $W$ and best network on a subset $W$ "
    "(Silander & Myllymäki 2006); the K-best versions keep sorted lists of K entries "
    "(Tian, He & Ram 2010) and, for classes, skip entries equivalent to one already kept "
    "(Chen & Tian 2014):\n\n"
    "$$bps_v(W) = \\max\\big(s(v, W), \\max_{u \\in W} bps_v(W \\setminus u)\\big), \\qquad "
    "best(W) = \\max_{s \\in W} \\big[best(W \\setminus s) + bps_s(W \\setminus s)\\big]$$\n\n"
    "Weight of class $k$ among the K: $w_k = e^{S_k} / \\sum_{k'} e^{S_{k'}}$.\n\n"
    "Subbagging (T subsamples $D_t$ of $m = \\lfloor 0.9 |D| \\rfloor$ rows, the K best "
    "classes $G_{t1..tK}$ of each, weights $w_{tk}$ within subsample $t$, EAP parameters "
    "$\\theta_{tk}$ on $D_t$):\n\n"
    "$$P(c \\mid x) = \\frac{1}{T} \\sum_{t=1}^{T} \\sum_{k=1}^{K} w_{tk}\\, "
    "P(c \\mid x, G_{tk}, \\theta_{tk})$$\n\n"
    "Edge stability: the posterior of an edge feature $e$ (a compelled arrow or an "
    "undirected edge of the CPDAG) within subsample $t$ is "
    "$p_t(e) = \\sum_k w_{tk}\\, 1[e \\in \\mathrm{CPDAG}(G_{tk})]$; the heatmap shows "
    "$p_t(e)$, the bars its mean and standard deviation over $t$.")

ds = require_dataset()
fingerprint = data_id(ds)  # the raw data and every setting that built them
names = list(ds.names)
default = [ds.class_name] + [n for n in names if n != ds.class_name][:9]

view = st.radio("View", ["kbest", "subbagging"], horizontal=True,
                key=persistent("exact_view", "kbest"),
                format_func={"kbest": "Exact & K-best (one search on the complete rows)",
                             "subbagging": "Subbagging (K best on each of T subsamples)"}.get,
                help="Subbagging (Sugahara, Aomi & Ueno) repeats the K-best search on T "
                     "subsamples of the rows drawn without replacement and averages all "
                     "T × K classes; its views show how stable the structures are.")
remember("exact_view")


def _keep_most_informative(n_keep: int) -> None:
    """The remedy for too many variables: the class and the n_keep - 1 features with the
    largest mutual information with the class (the ranking of the Data page)."""
    ranking = informative_features(ds)["feature"].tolist()
    st.session_state["exact_vars"] = [ds.class_name] + ranking[: max(1, n_keep - 1)]
    remember("exact_vars")


def too_wide_remedy(n_vars: int, k_value: int) -> None:
    """Say the variable limit of the exact search and offer the remedy (called before a run,
    where the limit is shown)."""
    limit = DEFAULT_LIMITS.max_vars_k10 if k_value <= 10 else DEFAULT_LIMITS.max_vars_k100
    if n_vars <= limit:
        return
    st.button(f"Keep the {limit} variables most informative about the class",
              on_click=_keep_most_informative, args=(limit,), key="exact_remedy",
              help="The class and the features with the largest mutual information with it "
                   "(the ranking of the Data page, 'Use fewer features', which can also "
                   "restrict every page to chosen features).")


c1, c2, c3 = st.columns([4, 1, 1])
chosen = c1.multiselect("Variables (the class is always included)", names,
                        key=persistent("exact_vars", default),
                        help="Exact search doubles its time and memory with every variable; "
                             "the limit is 20 (18 for K above 10).")
k = c2.number_input("K (classes)", 1, 100, step=1, key=persistent("exact_k", 10),
                    help=glossary_help("How many of the best equivalence classes to find "
                                       "(per subsample in the subbagging view; the paper "
                                       "uses 10 there).", "Equivalence class (CPDAG)"))
ess = c3.number_input("α (BDeu sample size)", 0.01, 100.0, step=0.5,
                      key=persistent("exact_ess", 1.0),
                      help=glossary_help("Prior equivalent sample size: larger values "
                                         "favour denser structures. Sugahara et al. use 1.",
                                         "Marginal likelihood (K2, BDeu)"))
remember("exact_vars", "exact_k", "exact_ess")


def _size(n_bytes: float) -> str:
    return f"{n_bytes / 1e9:.2f} GB" if n_bytes >= 1e8 else f"{max(n_bytes / 1e6, 0.1):.1f} MB"


def _kbest_problem(cols: list[int], X: np.ndarray, augmented: bool) -> str | None:
    """Check the exact search's limits and the complete rows before a run: say the size (or
    the problem, with the remedy) and return the problem, None if the run can go."""
    problem = None
    n_dp = len(cols) - (1 if augmented else 0)
    try:
        mem, secs = check_limits(n_dp, int(k), len(X), augmented)
        st.caption(f"{len(cols)} variables, {len(X):,} complete rows "
                   f"({ds.n_rows - len(X):,} with missing values left out); estimated memory "
                   f"{_size(mem)}.")
    except ResourceLimitError as exc:
        problem = str(exc)
        st.error(md_escape(problem))
        too_wide_remedy(len(cols), int(k))
    if len(X) == 0:
        problem = "No complete rows: every row has a missing value among these variables."
        st.error(problem)
    return problem


def _kbest_work(X: np.ndarray, ar: np.ndarray, k_value, ess_value, cls: int, augmented: bool):
    """The background work of a K-best run (no Streamlit calls): the K best classes, None if
    stopped."""

    def work(r: background.Run):
        def cb(stage, fraction):
            r.report({"stage": stage, "fraction": float(fraction)})
            return r.should_stop()
        try:
            return k_best(X, ar, int(k_value), classes=True, ess=float(ess_value),
                          class_index=cls, augmented=augmented, progress=cb)
        except Stopped:
            return None

    return work


def _kbest_draw_live(r: background.Run) -> None:
    """The live progress of a K-best run."""
    ev = r.events[-1] if r.events else {"stage": "starting", "fraction": 0.0}
    st.progress(min(max(ev["fraction"], 0.0), 1.0),
                text=f"Searching: {ev['stage']} ({r.seconds:.0f} s)")
    note = background.busy_note(r)
    if note:
        st.caption(note)


def kbest_view() -> None:
    """The K best classes of the complete rows."""
    cols = sorted({names.index(n) for n in chosen} | {ds.class_index})
    sub = ds.complete_rows()
    X = np.ascontiguousarray(sub.codes[:, cols])
    ar = sub.arities[cols]
    cls = cols.index(ds.class_index)
    mode = st.radio("Structures", ["ebn", "eanb"], horizontal=True,
                    format_func={"ebn": "free (EBN)", "eanb": "class → all (EANB)"}.get,
                    key=persistent("exact_mode", "ebn"),
                    help="EBN: every variable, the class included, may have any parents. "
                         "EANB: the class points to every feature and the features' structure "
                         "is searched.")
    remember("exact_mode")
    augmented = mode == "eanb"
    problem = _kbest_problem(cols, X, augmented)

    b1, b2, _ = st.columns([1, 1, 10], gap="small")
    active = background.current(RUN)
    running = active is not None and not active.done
    run = b1.button("Run", type="primary", disabled=problem is not None)
    stop = b2.button("Stop", disabled=not running, help="Stop at the next check of the search.")
    last = st.session_state.setdefault(STATE, {})
    key = (fingerprint, tuple(cols), int(k), float(ess), mode)

    if stop:
        background.stop(RUN)
    if run and problem is None:
        last.pop("error", None)
        background.start(RUN, _kbest_work(X, ar, k, ess, cls, augmented), key=key)
        st.rerun()  # draw the page again with the run going (Stop enabled, live progress)

    finished = background.finished(RUN, last)
    if finished is not None:
        last["entry"] = {"key": finished.key, "result": finished.result,
                         "stopped": finished.stopped or finished.result is None}
    background.live(RUN, _kbest_draw_live, interval=1.0)
    background.show_error(last)

    entry = background.entry_for_data(last, fingerprint, at=0)
    if entry is not None and entry["result"] is None:
        st.warning(f"Stopped: no result (stages: {', '.join(STAGES)}).")
    elif entry is not None:
        _show_kbest(entry, key)


def _show_kbest(entry: dict, key: tuple) -> None:
    """The weights, the edge probabilities and the CPDAGs of a finished K-best run."""
    res = entry["result"]
    _, ecols, ek, _, emode = entry["key"]
    vnames = [names[c] for c in ecols]
    cname = ds.class_name
    if entry["key"] != key:
        st.caption("Showing the last run; the settings have changed since. Press Run to "
                   "update.")
    w = posterior_weights(res)
    st.subheader(f"The {len(res)} best equivalence classes")
    chart(viz_kbest.class_weights_figure(res, w), "kbest_weights")
    _kbest_edge_heatmap(res, w, vnames)
    _kbest_cpdags(res, w, vnames, cname)


def _kbest_edge_heatmap(res: list, w, vnames: list[str]) -> None:
    """The link (or compelled-arrow) probability of every pair across the K classes."""
    view = st.radio("Edge probability", ["link", "arrow"], horizontal=True, key="exact_edges",
                    format_func={"link": "link (either direction)",
                                 "arrow": "compelled arrow (row → column)"}.get,
                    help="A link is shared by every network of a class, so its probability is "
                         "well defined. An arrow counts only where the whole class agrees on "
                         "its direction (a directed edge of the CPDAG).")
    mat = edge_probabilities(res, w, view)
    title = ("Link probability across the K classes" if view == "link"
             else "Compelled-arrow probability across the K classes (row → column)")
    chart(heatmap_figure(mat, vnames, vnames, title, zmin=0, zmax=1,
                         value_label="probability"), f"kbest_edges_{view}")


MAIN_WIDTH = 880
"""Width in pixels of the page's main column at 1280 px (the laptop of the browser tests)."""


def _kbest_cpdags(res: list, w, vnames: list[str], cname: str) -> None:
    """The first few classes drawn as CPDAGs."""
    st.subheader("Classes drawn as CPDAGs")
    st.caption("An arrow drawn both ways is undirected: the class holds networks with either "
               "direction.")
    shown = st.slider("Classes to draw", 1, max(1, min(MAX_SHOWN, len(res))),
                      min(3, len(res)), key="exact_shown") if len(res) > 1 else 1
    figs = [dag_figure(nx.relabel_nodes(r.cpdag, dict(enumerate(vnames))), class_node=cname,
                       edge_weight=None,
                       title=f"#{i + 1}: weight {w[i]:.3f}, log score {r.log_score:.2f}")
            for i, r in enumerate(res[:shown])]
    # as many side by side as fit at their own width: a drawing squeezed into a narrow column
    # keeps its 11 px labels, which then cover the arrows and each other
    widest = max(f.layout.width or MAIN_WIDTH for f in figs)
    grid = st.columns(max(1, min(shown, 3, MAIN_WIDTH // widest)))
    for i, fig in enumerate(figs):
        grid[i % len(grid)].plotly_chart(fig, width="stretch", key=f"exact_cpdag_{i}")


def _subbagging_settings() -> tuple:
    """The subbagging settings (T, share of rows, seed)."""
    s1, s2, s3, _ = st.columns([1, 1, 1, 3])
    n_sub = s1.number_input("T (subsamples)", 1, 100, step=1, key=persistent("subb_T", 10),
                            help="How many subsamples; each gets its own K-best search "
                                 "(the paper uses 10). Time grows with T.")
    frac = s2.slider("Rows per subsample", 0.5, 1.0, step=0.05,
                     key=persistent("subb_frac", 0.9),
                     help="Share of the complete rows drawn, without replacement, for each "
                          "subsample (the paper uses 0.9).")
    seed = s3.number_input("Seed", 0, 2**31 - 1, step=1, key=persistent("subb_seed", 0),
                           help="Same seed, same subsamples and the same result.")
    remember("subb_T", "subb_frac", "subb_seed")
    return n_sub, frac, seed


def _subbagging_problem(features: list[str], n_sub, frac) -> tuple:
    """Check the limits before a subbagging run: say the size (or the problem, with the
    remedy); return (problem or None, the selected dataset or None)."""
    problem = None
    sel = None
    if not features:
        problem = "Choose at least one feature besides the class."
    else:
        sel = ds.select_features([n for n in ds.feature_names if n in features])
        n_complete = int((sel.codes >= 0).all(axis=1).sum())
        m = subsample_size(n_complete, float(frac))
        try:
            mem, secs = check_limits(sel.n_vars, int(k), m)
            check_capabilities(SUBBAG, sel.n_vars, len(sel.classes), label="Subbagging")
        except ResourceLimitError as exc:
            problem = (f"Subbagging runs the exact K-best search on every subsample: "
                       f"{exc}".replace(", or use EANB", ""))  # no EANB variant here
        except ValueError as exc:
            problem = str(exc)
        else:
            if n_complete == 0:
                problem = ("No complete rows: every row has a missing value among these "
                           "variables.")
            else:
                st.caption(
                    f"{sel.n_vars} variables; {int(n_sub)} subsamples of {m:,} of the "
                    f"{n_complete:,} complete rows ({sel.n_rows - n_complete:,} with missing "
                    f"values left out of learning); estimated memory {_size(mem)}, "
                    f"time about {max(secs, 0.05) * int(n_sub):.1f} s (more while numba "
                    "compiles once).")
    if problem:
        st.error(md_escape(problem))
        too_wide_remedy(len(chosen) if ds.class_name in chosen else len(chosen) + 1, int(k))
    return problem, sel


def _subbagging_work(n_sub, frac, k_value, ess_value, seed):
    """The background work of a subbagging run (no Streamlit calls): the fitted model, None if
    stopped before the first subsample."""

    def work(r: background.Run):
        est = get_spec(SUBBAG).make(n_subsamples=int(n_sub), max_samples=float(frac),
                                    n_best=int(k_value), ess=float(ess_value),
                                    random_state=int(seed))

        def progress(ev: dict) -> bool:
            r.report(ev)
            return r.should_stop()
        try:
            return est.fit_dataset(r.meta["data"], progress=progress)
        except Stopped:
            return None

    return work


def _subbagging_draw_live(n_sub):
    """The live progress of a subbagging run of ``n_sub`` subsamples."""

    def draw_live(r: background.Run) -> None:
        ev = r.events[-1] if r.events else {"subsample": 0, "n_subsamples": int(n_sub),
                                            "stage": "starting", "fraction": 0.0}
        done = sum(1 for e in r.events if e["stage"] == "done")
        st.progress(min(max(ev["fraction"], 0.0), 1.0),
                    text=f"Subsample {min(ev['subsample'] + 1, ev['n_subsamples'])} of "
                         f"{ev['n_subsamples']}: {ev['stage']} ({done} finished, "
                         f"{r.seconds:.0f} s)")
        note = background.busy_note(r)
        if note:
            st.caption(note)

    return draw_live


def subbagging_view() -> None:
    """Subbagging K-best (Sugahara, Aomi & Ueno): per-subsample classes, edge
    stability across subsamples and the averaged prediction of one row."""
    n_sub, frac, seed = _subbagging_settings()

    features = [n for n in chosen if n != ds.class_name]
    problem, sel = _subbagging_problem(features, n_sub, frac)

    b1, b2, _ = st.columns([1, 1, 10], gap="small")
    active = background.current(SUB_RUN)
    running = active is not None and not active.done
    run = b1.button("Run", type="primary", disabled=problem is not None, key="subb_run_btn",
                    help="Draw the subsamples and find the K best classes of each.")
    stop = b2.button("Stop", disabled=not running, key="subb_stop_btn",
                     help="Stop after the current stage; the finished subsamples are kept "
                          "and averaged.")
    last = st.session_state.setdefault(SUB_STATE, {})
    key = (fingerprint, tuple(features), int(k), float(ess), int(n_sub), float(frac),
           int(seed))

    if stop:
        background.stop(SUB_RUN)
    store = cache.result_store()  # same data and settings: the same (seeded) result
    if run and problem is None:
        last.pop("error", None)
        hit = store.get(("subbag", key))  # one read: another session may evict it meanwhile
        if hit is not None:
            last["entry"] = hit
        else:
            background.start(SUB_RUN, _subbagging_work(n_sub, frac, k, ess, seed), key=key,
                             meta={"data": sel})
            st.rerun()

    finished = background.finished(SUB_RUN, last)
    if finished is not None:
        last["entry"] = {"key": finished.key, "model": finished.result,
                         "data": finished.meta["data"], "n_subsamples": finished.key[4],
                         "stopped": finished.stopped or finished.result is None
                         or finished.result.stopped_}
        if not last["entry"]["stopped"]:
            store[("subbag", finished.key)] = last["entry"]
    background.live(SUB_RUN, _subbagging_draw_live(n_sub), interval=1.0)
    background.show_error(last)

    entry = background.entry_for_data(last, fingerprint, at=0)
    if entry is None:
        return
    if entry["model"] is None:
        st.warning("Stopped before the first subsample was finished: no result. Press Run "
                   "again (a lower T or K is quicker).")
        return
    show_subbagging(entry, key)


def show_subbagging(entry: dict, key: tuple) -> None:
    """The three views and the exports of a fitted (possibly stopped) subbagging run."""
    model, data = entry["model"], entry["data"]
    T_run, done = entry["n_subsamples"], len(model.subsamples_)
    vnames = viz_kbest.variable_names(model)
    cname = vnames[model.class_index_]
    if entry["stopped"]:
        st.warning(f"Stopped after {done} of {T_run} subsamples: everything below averages "
                   f"the {done} finished.")
    elif entry["key"] != key:
        st.caption("Showing the last run; the settings have changed since. Press Run to "
                   "update.")
    _, efeat, ek, eess, _, efrac, eseed = entry["key"]
    m = st.columns(4)
    m[0].metric("Subsamples averaged", f"{done} of {T_run}")
    m[1].metric("Rows per subsample", f"{len(model.subsamples_[0].rows):,}")
    m[2].metric("Classes per subsample (K)", ek)
    m[3].metric("Incomplete rows left out", f"{model.n_rows_dropped_:,}",
                help="Exact structure learning needs complete rows; predictions still "
                     "handle missing values (summed out).")

    # 1. per subsample ---------------------------------------------------------------------
    weights_fig, summary = _subbagging_per_subsample(model, done, vnames, cname)
    # 2. edge stability ---------------------------------------------------------------------
    table, stability_fig = _subbagging_stability(model)
    # 3. prediction for one row -------------------------------------------------------------
    row, prediction_fig, pred_table = _subbagging_prediction(model, data, done)

    # 4. exports -----------------------------------------------------------------------------
    st.subheader("Export")
    settings = {"dataset": fingerprint[:12], "features": ", ".join(efeat),
                "class": cname, "K (classes per subsample)": ek, "α (BDeu)": eess,
                "T (subsamples)": T_run, "subsamples finished": done,
                "rows per subsample": len(model.subsamples_[0].rows),
                "share of rows": efrac, "seed": eseed, "stopped early": entry["stopped"],
                "incomplete rows left out": model.n_rows_dropped_}
    all_classes = viz_kbest.all_subsample_classes(model)
    report = _subbagging_report(settings, weights_fig, summary, all_classes, table,
                                stability_fig, row, prediction_fig, pred_table)

    x1, x2, x3 = st.columns(3)
    x1.download_button("Edge stability (CSV)", lambda: export.table_csv(table),
                       "edge_stability.csv", "text/csv", on_click="ignore",
                       help="Per edge feature: its posterior in each subsample, the mean and "
                            "the standard deviation.")
    x2.download_button("Classes of every subsample (CSV)",
                       lambda: export.table_csv(all_classes, index=False),
                       "subsample_classes.csv", "text/csv", on_click="ignore")
    x3.download_button("Report (HTML)", report, "subbagging_report.html", "text/html",
                       on_click="ignore",
                       help="One self-contained page: settings, figures and tables of this "
                            "run.")
    st.caption("Each chart's toolbar (top right of a chart) also downloads it as SVG.")


def _subbagging_per_subsample(model, done: int, vnames: list[str], cname: str) -> tuple:
    """View 1: the weights of every subsample's classes, the classes of one subsample and one
    of them drawn; return (the weights figure, the summary table) for the exports."""
    st.subheader("Per subsample: its K best classes")
    weights_fig = viz_kbest.subsample_weights_figure(
        model, title="Weights of each subsample's classes (best class at the bottom)")
    chart(weights_fig, "subbagging_weights")
    summary = viz_kbest.subsample_summary(model)
    with st.expander("All subsamples: rows, classes found, weight of the best class"):
        st.dataframe(summary, hide_index=True, width="stretch",
                     column_config={"top weight": st.column_config.NumberColumn(format="%.3f"),
                                    "best log score": st.column_config.NumberColumn(
                                        format="%.2f")})
    p1, _ = st.columns([1, 3])
    t = p1.selectbox("Subsample", list(range(done)), format_func=lambda i: f"{i + 1} of "
                     f"{done}", key="subb_show_t",
                     help="The classes found on this subsample, best first.")
    classes_tab = viz_kbest.subsample_classes(model, int(t))
    st.dataframe(classes_tab, hide_index=True, width="stretch",
                 height=min(38 + 35 * len(classes_tab), 400),
                 column_config={
                     "weight": st.column_config.ProgressColumn(
                         "weight", min_value=0.0, max_value=1.0, format="%.3f",
                         help="Posterior of the class normalised within the subsample's K."),
                     "log score": st.column_config.NumberColumn(format="%.2f"),
                     "edges": st.column_config.TextColumn(
                         "CPDAG edges", width="large",
                         help="A → B: every network of the class has this arrow; A — B: "
                              "the class holds networks with either direction."),
                     "Markov blanket": st.column_config.TextColumn(
                         f"Markov blanket of {cname}", width="medium",
                         help="Parents, children and the children's other parents of the "
                              "class: the variables its prediction depends on.")})
    sub = model.subsamples_[int(t)]
    r1, r2 = st.columns([1, 3])
    rank = r1.selectbox("Draw class", list(range(len(sub.structures))),
                        format_func=lambda i: f"#{i + 1} (weight {sub.weights[i]:.3f})",
                        key="subb_show_rank")
    s = sub.structures[int(rank)]
    g = nx.relabel_nodes(s.cpdag, dict(enumerate(vnames)))
    chart(dag_figure(g, class_node=cname, edge_weight=None,
                     title=f"Subsample {int(t) + 1}, class #{int(rank) + 1}: "
                           f"weight {sub.weights[int(rank)]:.3f}, log score "
                           f"{s.log_score:.2f}"),
          "subbagging_class", r2, key="subb_cpdag")
    r1.caption("An arrow drawn both ways is an undirected CPDAG edge: the class holds "
               "networks with either direction.")
    return weights_fig, summary


def _subbagging_stability(model) -> tuple:
    """View 2: edge stability across subsamples; return (the table, the figure or None)."""
    st.subheader("Edge stability across subsamples")
    table = viz_kbest.edge_stability(model)
    n_rows = len(table)
    e1, e2 = st.columns([1, 3])
    shown = e1.slider("Edges shown (most probable first)", 1, max(1, n_rows),
                      min(30, max(1, n_rows)), key="subb_edges_shown",
                      disabled=n_rows <= 1) if n_rows > 1 else n_rows
    e2.caption("Each cell: the edge's posterior within one subsample, the total weight of "
               "that subsample's K classes whose CPDAG contains it. Edges are features of "
               "the equivalence class: A → B is a compelled arrow; an undirected CPDAG edge "
               "A — B (direction not identifiable) is its own row and is not counted for "
               "either arrow, so the three rows of a pair add up to its link probability. "
               "Right: mean over subsamples ± one standard deviation (a stable edge has a "
               "short bar of spread).")
    if n_rows == 0:
        st.info("No class of any subsample has an edge: every variable was found "
                "independent of the others.")
        stability_fig = None
    else:
        stability_fig = viz_kbest.edge_stability_figure(
            table, max_rows=int(shown),
            title=f"Edge posterior per subsample ({min(int(shown), n_rows)} of {n_rows} edges)")
        chart(stability_fig, "edge_stability")
    with st.expander("Edge stability table"):
        st.dataframe(table.round(4), width="stretch")
    return table, stability_fig


def _subbagging_prediction(model, data, done: int) -> tuple:
    """View 3: the averaged prediction of one row with the spread of the subsamples'
    predictions; return (the row, the figure or None, the table or None)."""
    st.subheader("Averaged prediction for one row")
    first, last_id = int(data.row_ids[0]), int(data.row_ids[-1])
    q1, q2 = st.columns([1, 3])
    row = q1.number_input(f"Row number in the file (0 to {last_id})", 0, last_id,
                          step=1, key=persistent("subb_row", first),
                          help="A case of the active dataset, numbered as in the file and the "
                               "Data page's preview (0 = first row after the header).")
    q1.button("Most disputed row", key="subb_row_spread",
              on_click=_most_variable_row, args=(model, data),
              help="The row where the subsamples' predictions disagree most (largest range "
                   "of a class probability across subsamples).")
    remember("subb_row")
    try:
        pos = data.position_of_row(int(row))
    except ValueError as exc:
        q2.info(md_escape(exc) + " Choose another row.")
        pos = None
    if pos is None:
        return row, None, None
    q2.dataframe(file_rows(data.to_frame().iloc[[pos]], [row]), width="stretch")
    x = data.X[[pos]]
    per = model.subsample_posteriors(x)[:, 0, :]
    avg = model.predict_proba(x)[0]
    labels = [str(c) for c in model.classes_]
    truth = data.classes[data.y[pos]] if data.y[pos] >= 0 else None
    missing = [n for n, c in zip(data.feature_names, x[0]) if c < 0]
    inside = _subsamples_with_row(model, data, pos)
    prediction_fig = viz_kbest.subsample_posterior_figure(
        per, labels, avg, truth=truth,
        title=f"Row {int(row)}: P(class) averaged over {done} subsamples × their K "
              "classes")
    f1, f2 = st.columns([3, 2])
    chart(prediction_fig, "subbagging_prediction", f1)
    pred_table = viz_kbest.prediction_spread(per, labels, avg)
    f2.dataframe(pred_table, hide_index=True, width="stretch", column_config={
        c: st.column_config.NumberColumn(c.replace(" over subsamples", ""), format="%.4f",
                                         help=f"{c} (one value per subsample)")
        for c in pred_table.columns[2:]} | {
        "averaged P": st.column_config.NumberColumn(format="%.4f")})
    f2.caption(
        f"Predicted: **{md_escape(labels[int(np.argmax(avg))])}**"
        + (f" (recorded: {md_escape(truth)})" if truth is not None else "") + ". Each grey point "
        "is one subsample's prediction (its K classes weighted); the red diamond is "
        "their average, the model's prediction. "
        + (f"Missing in this row, summed out exactly: {md_escape(', '.join(missing))}. "
           if missing else "")
        + (f"This row was among the training rows of {inside} of the {done} "
           "subsamples." if inside is not None else
           "This row has a missing value, so no subsample learned from it."))
    return row, prediction_fig, pred_table


def _subbagging_report(settings: dict, weights_fig, summary, all_classes, table,
                       stability_fig, row, prediction_fig, pred_table):
    """The HTML report of a subbagging run, as a callable built on click only (no Streamlit
    calls there)."""

    def report() -> str:  # built on click only (no Streamlit calls here)
        sections = [("Per-subsample class weights", weights_fig),
                    ("Subsamples", summary), ("Classes of every subsample", all_classes)]
        if stability_fig is not None:
            sections += [("Edge stability across subsamples", viz_kbest.edge_stability_figure(
                table, max_rows=None))]
        sections += [("Edge stability table", table)]
        if prediction_fig is not None:
            sections += [(f"Averaged prediction for row {int(row)}", prediction_fig),
                         ("Prediction spread", pred_table)]
        return export.html_report("Subbagging K-best model averaging", sections=sections,
                                  settings=settings)

    return report


def _most_variable_row(model, data) -> None:
    """Set the row input to the file row whose class posterior varies most across the
    subsamples (largest max - min over subsamples of any class's probability)."""
    spread = model.posterior_spread(data.X)
    st.session_state["subb_row"] = int(data.row_ids[int(np.argmax(spread))])
    remember("subb_row")


def _subsamples_with_row(model, data, pos: int) -> int | None:
    """In how many subsamples the dataset row at ``pos`` was a training row (None if it is
    incomplete: learning used complete rows only, numbered among them)."""
    count = int(model.subsample_counts(data.X, data.y)[pos])
    return None if count < 0 else count


if view == "kbest":
    kbest_view()
else:
    subbagging_view()
