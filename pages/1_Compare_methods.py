"""Compare classification methods by stratified cross-validation on the active dataset."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Compare methods · BNMA Studio",
                   page_icon=":material/compare_arrows:", layout="wide")

import pandas as pd

from bnma_core import export, viz
from bnma_core.classifiers.registry import DEFAULT_METHOD, METHODS
from bnma_core.data import informative_features
from bnma_core.evaluation import (
    HIGHER_IS_BETTER,
    cross_validate,
    roc_curves,
    summarize,
    wilcoxon_against,
)
from bnma_ui import background
from bnma_ui.cache import resource_limit, result_store
from bnma_ui.models import default_positive_class, method_limits
from bnma_ui.state import data_id, dataset_label, persistent, remember, require_dataset
from bnma_ui.widgets import (
    chart,
    equations,
    md_escape,
    sidebar_dataset_badge,
    what_am_i_looking_at,
)

PREFERRED = ["nb", "tan", "kdb2", "manb", "ukdb", "fobma", "bma1"]
METRICS = {"accuracy": "accuracy", "auc": "ROC AUC", "log_loss": "log-loss"}
STATE = "cmp_run"

sidebar_dataset_badge()
st.title("Compare methods")
what_am_i_looking_at(
    "Each method learns a classifier from part of the data and is tested on the rest. In "
    "**k-fold cross-validation** the rows are split into k parts of similar class balance; "
    "every part serves once as the test set while the other k-1 parts train the model, so "
    "every row is predicted once by a model that never saw it.\n\n"
    "- **Accuracy**: share of test rows whose most probable class is the true one.\n"
    "- **AUC** (area under the ROC curve): how well the predicted probabilities rank the "
    "cases of one class above the others (0.5 = chance, 1 = perfect).\n"
    "- **Log-loss**: average surprise at the true class (lower is better); it punishes "
    "confident mistakes.\n"
    "- **Wilcoxon test**: are the per-fold differences to the baseline consistently on one "
    "side? A small p-value (say < 0.05) suggests a real difference; with few folds the test "
    "cannot reach small p-values.\n\n"
    "Numeric columns are re-grouped on each training part only, so the test rows never "
    "influence the model. Every method trains on the same rows, incomplete ones included "
    "(the 'training rows' column says how many each used).")
equations(
    "Fold $f$ with test rows $T_f$ and a model trained on the other rows:\n\n"
    "$$\\text{accuracy}_f = \\frac{1}{|T_f|}\\sum_{i \\in T_f} "
    "[\\arg\\max_c P(c \\mid x_i) = y_i], \\qquad "
    "\\text{log-loss}_f = -\\frac{1}{|T_f|}\\sum_{i \\in T_f} \\ln P(y_i \\mid x_i)$$\n\n"
    "The table shows mean ± standard deviation over folds. The Wilcoxon signed-rank "
    "statistic ranks the absolute per-fold differences $d_f = m_f - b_f$ (zeros dropped) and "
    "sums the ranks of the positive ones.")



def _mean_sd(summary: pd.DataFrame, metric: str) -> list[str]:
    """'mean ± sd' over folds (the mean alone with a single fold)."""
    return [f"{m:.3f} ± {s:.3f}" if pd.notna(s) else f"{m:.3f}"
            for m, s in zip(summary[f"{metric}_mean"], summary[f"{metric}_std"])]


ds = require_dataset()
names = list(METHODS)
default = list(dict.fromkeys(m for m in [DEFAULT_METHOD, *PREFERRED] if m in METHODS))[:5]
limits = method_limits(ds)


def _limit(name: str) -> str:
    """Why ``name`` cannot run on the active dataset ('' if it can)."""
    return limits.get(name, "")


with st.expander("Available methods"):
    st.dataframe(pd.DataFrame({
        "method": names,
        "what it does": [METHODS[m].description for m in names],
        "missing values": [METHODS[m].capabilities.describe() for m in names],
        "on this dataset": [_limit(m) or "can run" for m in names]}),
        hide_index=True, width="stretch")

c1, c2, c3 = st.columns([3, 1, 1])
methods = c1.multiselect(
    "Methods", names, key=persistent("cmp_methods", default),
    help="Short names of the classifiers; open 'Available methods' above for what each does. "
         "The order-MCMC methods (bma…) are much slower than the others.")
folds = c2.slider("Folds (k)", 2, 20, key=persistent("cmp_folds", 5),
                  help="More folds = larger training parts and more pairs for the test, but "
                       "more fits (methods × k).")
seed = c3.number_input("Seed", 0, 2**31 - 1, step=1, key=persistent("cmp_seed", 1),
                       help="Fixes the split into folds (and the random choices of randomized "
                            "methods): the same seed gives the same result.")
remember("cmp_methods", "cmp_folds", "cmp_seed")
blocked = {m: _limit(m) for m in methods if _limit(m)}
too_wide = [m for m, why in blocked.items() if "variables" in why]
if too_wide:  # the remedy: compare every method on the k features most informative of the class
    caps = [METHODS[m].capabilities.max_variables for m in too_wide]
    k_max = max(1, min(c for c in caps if c is not None) - 1)
    st.warning(f"{', '.join(too_wide)} cannot take {ds.n_vars} variables. You can compare "
               "every chosen method on the features that tell most about the class (or "
               "choose them yourself on the Data page, under 'Use fewer features').")
    r1, r2 = st.columns([2, 1])
    reduce = r1.toggle("Compare on the k most informative features",
                       key=persistent("cmp_reduce", False),
                       help="Ranked by mutual information with the class. Every method then "
                            "uses the same features, so the comparison stays fair.")
    k_top = min(k_max, len(ds.feature_names))
    persistent("cmp_k", min(20, k_top))
    st.session_state["cmp_k"] = min(max(1, int(st.session_state["cmp_k"])), k_top)
    k_feat = r2.number_input("k", 1, k_top, step=1, key="cmp_k", disabled=not reduce)
    remember("cmp_reduce", "cmp_k")
    if reduce:
        ranking = informative_features(ds)
        chosen = ranking["feature"].head(int(k_feat)).tolist()
        ds = ds.select_features(chosen)
        with st.expander(f"The {len(chosen)} features used"):
            st.dataframe(ranking.head(int(k_feat)).round(4), hide_index=True, width="stretch")
        limits = method_limits(ds)
        blocked = {m: _limit(m) for m in methods if _limit(m)}
for m in methods:      # data-dependent guards (B-RAI's tree size), priced before a run
    if m not in blocked:
        why = resource_limit(ds, data_id(ds), m)
        if why:
            blocked[m] = why
if blocked:
    st.warning("Left out of the comparison (limits of the method): "
               + md_escape(" ".join(blocked.values())))
runnable = [m for m in methods if m not in blocked]
fingerprint = data_id(ds)  # the raw data and every setting that built them

RUN = "compare"
b1, b2, _ = st.columns([1, 1, 10], gap="small")
active = background.current(RUN)
running = active is not None and not active.done
run = b1.button("Run", type="primary", disabled=not runnable,
                help="Cross-validate the chosen methods on the active dataset.")
stop = b2.button("Stop", disabled=not running,
                 help="Stop after the fit in progress; the finished folds are kept.")

last = st.session_state.setdefault(STATE, {})  # {"entry": last finished or stopped run}
key = ("compare", fingerprint, tuple(runnable), int(folds), int(seed))


def draw_live(r: background.Run) -> None:
    """Progress of a running comparison (called from a fragment about once a second)."""
    total = r.meta["total"]
    ev = r.events[-1] if r.events else None
    done = ev["done"] if ev else 0
    what = f" (last: {ev['what']})" if ev else ""
    st.progress(min(done / total, 1.0),
                text=f"Cross-validation running: {done} of {total} fits done{what}, "
                     f"{r.seconds:.0f} s")
    note = background.busy_note(r)
    if note:
        st.caption(note)


def start_run() -> None:
    methods_run, n_folds, seed_run = list(runnable), int(folds), int(seed)

    def work(r: background.Run):
        def progress(done, total, method, fold):
            r.report({"done": done, "total": total, "what": f"{method}, fold {fold + 1}"})
        return cross_validate(ds, methods_run, folds=n_folds, seed=seed_run, progress=progress,
                              should_stop=r.should_stop, return_proba=True)

    background.start(RUN, work, key=key, meta={"total": len(methods_run) * n_folds})


if stop:
    background.stop(RUN)
if run:
    hit = result_store().get(key)  # one read: another session may evict it meanwhile
    if hit is not None:
        last["entry"] = hit
    else:
        last.pop("error", None)
        start_run()
        st.rerun()  # draw the page again with the run going (Stop enabled, live progress)

finished = background.finished(RUN, last)
if finished is not None and finished.result is not None:
    results, preds = finished.result
    total = finished.meta["total"]
    entry = {"key": finished.key, "results": results, "preds": preds, "total": total,
             "stopped": finished.stopped or len(results) < total}
    last["entry"] = entry
    if not entry["stopped"]:
        result_store()[finished.key] = entry
    elif not len(results):
        st.warning("Stopped before the first fit finished: no results to show.")
background.show_error(last)
background.live(RUN, draw_live, interval=1.0)

entry = background.entry_for_data(
    last, fingerprint, message="The last comparison was run on another dataset; press Run to "
                               "compare on this one.")
if entry is not None and len(entry["results"]):
    results = entry["results"]
    if entry["stopped"]:
        st.warning(f"Stopped early: {len(results)} of {entry['total']} fits finished. "
                   "The table uses the finished folds only.")
    elif entry["key"] != key:
        st.caption("Showing the last run; the settings above have changed since. "
                   "Press Run to update.")
    summary = summarize(results)
    table = pd.DataFrame({
        "method": summary["method"],
        "folds": summary["folds"],
        "accuracy": _mean_sd(summary, "accuracy"),
        "AUC": _mean_sd(summary, "auc"),
        "log-loss": _mean_sd(summary, "log_loss"),
        "training rows per fold": summary["n_train_mean"].round(1),
        "fit time per fold (s)": summary["fit_time_s_mean"].round(3),
        "what it does": [METHODS[m].description if m in METHODS else ""
                         for m in summary["method"]],
    })
    st.subheader("Results")
    st.dataframe(table, hide_index=True, width="stretch")
    dropped = summary[summary["n_train_dropped_mean"] > 0]
    if len(dropped):
        st.caption("Could not learn from rows with missing values, so trained on fewer rows: "
                   + ", ".join(f"{m} ({d:.0f} rows per fold left out)" for m, d in
                               zip(dropped["method"], dropped["n_train_dropped_mean"])) + ".")
    left, right = st.columns(2)
    with left:
        metric = st.radio("Metric", list(METRICS), format_func=METRICS.get, horizontal=True,
                          key=persistent("cmp_metric", "accuracy"),
                          help="The bar height is the mean over folds; the whisker one "
                               "standard deviation.")
        bar_fig = viz.accuracy_bar_figure(summary, metric=metric)
        chart(bar_fig, f"compare_{metric}")
    with right:
        classes = list(entry["preds"].classes)
        positive = st.selectbox(
            "Positive class (for the ROC curve)", classes,
            key=persistent("cmp_positive", default_positive_class(classes), classes),
            help="The class whose cases the ROC curve looks for, e.g. 'malignant': "
                 "sensitivity is the share of these cases found. With two classes the area "
                 "is the same either way; the curve is drawn for this class.")
        remember("cmp_positive")
        curves = roc_curves(entry["preds"], positive=positive)
        roc_fig = None
        if curves:
            roc_fig = viz.roc_figure(curves, title=f"ROC: {positive} (pooled over folds)")
            chart(roc_fig, "compare_roc")
    done_methods = list(dict.fromkeys(results["method"]))
    test = None
    if len(done_methods) > 1:
        st.subheader("Paired Wilcoxon signed-rank test")
        baseline = st.selectbox(
            "Baseline", done_methods, key=persistent("cmp_baseline", done_methods[0],
                                                     done_methods),
            help="Every other method is compared with this one, fold by fold.")
        test = wilcoxon_against(results, baseline, metric)
        test = test.rename(columns={"mean_diff": f"mean difference in {METRICS[metric]}",
                                    "p_value": "p-value"})
        st.dataframe(test, hide_index=True, width="stretch")
        better = "higher" if HIGHER_IS_BETTER.get(metric, True) else "lower"
        st.caption(f"Wins / ties / losses count the folds where the method beat, tied or lost "
                   f"to the baseline ({better} {METRICS[metric]} is better).")
        remember("cmp_baseline")
    remember("cmp_metric")
    settings = {"dataset": dataset_label(), "class": ds.class_name, "rows": ds.n_rows,
                "features": ", ".join(ds.feature_names), "methods": ", ".join(done_methods),
                "folds": entry["key"][3], "seed": entry["key"][4],
                "positive class (ROC)": positive, "stopped early": entry["stopped"]}
    wilcoxon = test

    def report() -> str:  # built on click only (deferred download; no Streamlit calls here)
        sections = [("Results (mean ± sd over folds)", table),
                    (f"{METRICS[metric]} by method", bar_fig)]
        if roc_fig is not None:
            sections.append(("ROC curves", roc_fig))
        if wilcoxon is not None:
            sections.append(("Paired Wilcoxon signed-rank test", wilcoxon))
        sections.append(("Per-fold results", results))
        return export.html_report("Compare methods", sections, settings=settings)

    x1 = x2 = x3 = st.container(horizontal=True)  # full labels, side by side
    x1.download_button("Per-fold results (CSV)", lambda: export.table_csv(results, index=False),
                       "bnma_compare_results.csv", "text/csv", on_click="ignore",
                       help="One row per method and fold: accuracy, AUC, log-loss, times.")
    x2.download_button("Summary (CSV)", lambda: export.table_csv(summary, index=False),
                       "bnma_compare_summary.csv", "text/csv", on_click="ignore",
                       help="Mean and standard deviation over folds per method.")
    x3.download_button("Report (HTML)", report, "bnma_compare_report.html", "text/html",
                       on_click="ignore",
                       help="One self-contained page: settings, tables and figures of this "
                            "comparison.")
    st.caption("Each figure downloads itself as PNG or SVG with the buttons under it.")
