"""Compare classification methods by stratified cross-validation on the active dataset."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Compare methods · BNMA Studio",
                   page_icon=":material/compare_arrows:", layout="wide")

import time

import pandas as pd

from bnma_core import export, viz
from bnma_core.classifiers.registry import DEFAULT_METHOD, METHODS
from bnma_core.comparison import friedman_test, pairwise_wilcoxon
from bnma_core.cv_summary import (
    DATASET_METRICS,
    MAX_SCORE_DATASETS,
    MAX_SCORE_METHODS,
    anchor_scores,
    calibration_views,
    common_decision_curve,
    duration_words,
    fold_status,
    identical_predictions,
    interval_table,
    max_pair_methods,
    over_datasets,
    per_fold_intervals,
    read_scores_table,
    time_left,
)
from bnma_core.evaluation import HIGHER_IS_BETTER, cross_validate, roc_curves, summarize
from bnma_core.scores import informative_features
from bnma_core.validation import external_validation_report
from bnma_core.viz.calibration import MAX_CD_METHODS
from bnma_ui import background, model_files
from bnma_ui.cache import content_hash, resource_limit, result_store
from bnma_ui.models import default_positive_class, method_limits
from bnma_ui.state import data_id, dataset_label, persistent, remember, require_dataset
from bnma_ui.widgets import (
    chart,
    equations,
    glossary_help,
    md_escape,
    method_label,
    sidebar_dataset_badge,
    what_am_i_looking_at,
)

PREFERRED = ["nb", "tan", "kdb2", "manb", "ukdb2", "bma_fixed", "bma1"]
METRICS = {"accuracy": "accuracy", "auc": "ROC AUC", "log_loss": "log-loss",
           "brier": "Brier score"}
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
    "- **Brier score**: mean squared distance between the probabilities and the true "
    "class (0 = perfect, lower is better).\n"
    "- **Calibration**: do the probabilities mean what they say? Of the rows given 80 %, "
    "about 80 % should be of the class. The reliability diagram draws this; slope < 1 means "
    "over-confident probabilities.\n"
    "- **Decision curve**: the net benefit of acting on the probabilities at each threshold, "
    "against treating everyone or no one (two classes).\n"
    "- **Friedman and pairwise tests**: do the methods' ranks over folds differ, and which "
    "pairs? The pairwise p-values are corrected for the number of pairs (Holm); with few "
    "folds no test can reach small p-values.\n\n"
    "Numeric columns are re-grouped on each training part only, so the test rows never "
    "influence the model. Every method trains on the same rows, incomplete ones included "
    "(the 'training rows' column says how many each used).")
equations(
    "Fold $f$ with test rows $T_f$ and a model trained on the other rows:\n\n"
    "$$\\text{accuracy}_f = \\frac{1}{|T_f|}\\sum_{i \\in T_f} "
    "[\\arg\\max_c P(c \\mid x_i) = y_i], \\qquad "
    "\\text{log-loss}_f = -\\frac{1}{|T_f|}\\sum_{i \\in T_f} \\ln P(y_i \\mid x_i)$$\n\n"
    "The table pools all out-of-fold rows: $\\text{Brier} = \\frac{1}{n}\\sum_i "
    "\\sum_c (P(c \\mid x_i) - [y_i = c])^2$, 95 % intervals: Wilson for the accuracy, "
    "bootstrap over rows for log-loss and Brier, DeLong for the AUC (Newcombe's score "
    "interval where DeLong's variance is 0, as for an AUC of 1). Calibration slope $b$ and "
    "intercept $a$: "
    "$\\operatorname{logit} P(y = 1) = a + b \\operatorname{logit} p$. Net benefit at "
    "threshold $t$: $\\text{TP}/n - \\text{FP}/n \\cdot t/(1-t)$. The Wilcoxon signed-rank "
    "statistic ranks the absolute per-fold differences $d_f = a_f - b_f$ of a pair (zeros "
    "dropped) and sums the ranks of the positive ones; Holm multiplies the i-th smallest of "
    "m p-values by m - i + 1.")



def _model_report_builder():
    """The model report of a finished run (:func:`bnma_core.report.build_model_report`), or
    None where this version of the library has none."""
    try:
        from bnma_core.report import build_model_report
    except ImportError:
        return None
    return build_model_report


ds = require_dataset()
names = list(METHODS)
default = list(dict.fromkeys(m for m in [DEFAULT_METHOD, *PREFERRED] if m in METHODS))[:5]
limits = method_limits(ds)


def _limit(name: str) -> str:
    """Why ``name`` cannot run on the active dataset ('' if it can)."""
    return limits.get(name, "")


with st.expander("Available methods"):
    st.dataframe(pd.DataFrame({
        "Method": [method_label(m) for m in names],
        "What it does": [METHODS[m].description for m in names],
        "Missing values": [METHODS[m].capabilities.describe() for m in names],
        "On this dataset": [_limit(m) or "can run" for m in names]}),
        hide_index=True, width="stretch")

methods = st.multiselect(  # the full width: methods are named in words
    "Methods", names, key=persistent("cmp_methods", default), format_func=method_label,
    help="The classifiers to compare; open 'Available methods' above for what each does. "
         "The order-MCMC methods (bma…) are much slower than the others.")
c2, c3, _ = st.columns([1, 1, 3])
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
    events = list(r.events)
    ev = events[-1] if events else None
    done = ev["done"] if ev else 0
    what = f" (last: {ev['what']})" if ev else ""
    fits, before = [], r.started
    for e in events:  # each fit's wall-clock seconds, from the times the fits finished
        fits.append((e.get("method", ""), e.get("t", before) - before))
        before = e.get("t", before)
    left, rough = (time_left(fits, r.meta["methods"], r.meta["folds"],
                             running_for=time.time() - before)
                   if "methods" in r.meta else (None, True))  # a run started by older code
    eta = (" — estimating the time left..." if left is None else
           f" — about {duration_words(left)} left"
           + (" (rough until every method has run a fold)" if rough else ""))
    st.progress(min(done / total, 1.0),
                text=f"Cross-validation running: {done} of {total} fits done{what}, "
                     f"{r.seconds:.0f} s{eta}")
    note = background.busy_note(r)
    if note:
        st.caption(note)


def start_run() -> None:
    methods_run, n_folds, seed_run = list(runnable), int(folds), int(seed)

    def work(r: background.Run):
        def progress(done, total, method, fold):
            r.report({"done": done, "total": total, "what": f"{method}, fold {fold + 1}",
                      "method": method, "t": time.time()})
        return cross_validate(ds, methods_run, folds=n_folds, seed=seed_run, progress=progress,
                              should_stop=r.should_stop, return_proba=True)

    background.start(RUN, work, key=key, meta={"total": len(methods_run) * n_folds,
                                               "methods": methods_run, "folds": n_folds})


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
    results, preds = entry["results"], entry["preds"]
    run_methods, n_folds = list(entry["key"][2]), int(entry["key"][3])
    derived = entry.setdefault("derived", {})  # computed once per run (the entry is shared)

    def once(name, compute):
        if name not in derived:
            derived[name] = compute()
        return derived[name]

    status = fold_status(results, run_methods, n_folds)
    partial = {m: f"{d} of {n_folds} folds" for m, d, ok in
               zip(status["method"], status["folds_done"], status["complete"]) if d and not ok}
    if entry["stopped"]:
        st.warning(f"Stopped early: {len(results)} of {entry['total']} fits finished. Each "
                   "method's numbers use only its finished folds; methods that did not finish "
                   "every fold are greyed in the figures and left out of the tests over folds, "
                   "as their numbers are not comparable with the others'.")
        st.dataframe(pd.DataFrame({
            "Method": [method_label(m) for m in status["method"]],
            "folds finished": [f"{d} of {n_folds}" for d in status["folds_done"]],
            "which folds": status["folds"],
            "shown": ["yes" if ok else ("greyed (partial)" if d else "no: no fold finished")
                      for d, ok in zip(status["folds_done"], status["complete"])]}),
            hide_index=True, width="stretch")
    elif entry["key"] != key:
        st.caption("Showing the last run; the settings above have changed since. "
                   "Press Run to update.")
    summary = summarize(results)
    shown = [m for m in status["method"] if m in preds.proba]
    complete = [m for m in shown if m not in partial]
    intervals = once("intervals", lambda: interval_table(preds, results, seed=0))

    def with_note(m: str) -> str:
        return method_label(m) + (f" — {partial[m]}" if m in partial else "")

    def ci(col: str) -> list[str]:
        return [f"{e:.3f} ({lo:.2f}–{hi:.2f})" if pd.notna(lo) else f"{e:.3f}"
                for e, lo, hi in zip(intervals[col], intervals[f"{col}_lower"],
                                     intervals[f"{col}_upper"])]

    by_method = summary.set_index("method")
    # short headers, the words in help: every column in view at 1280 px (issue 33 item 7)
    table = pd.DataFrame({
        "Method": [with_note(m) for m in intervals["method"]],
        "Accuracy": ci("accuracy"),
        "Log-loss": ci("log_loss"),
        "Brier": ci("brier"),
        "AUC": ci("auc"),
        "AUC folds": [f"{by_method.loc[m, 'auc_mean']:.3f}" for m in intervals["method"]],
        "Fit s": [round(float(by_method.loc[m, "fit_time_s_mean"]), 2)
                  for m in intervals["method"]],
    })
    cc = st.column_config
    st.subheader("Results")
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "Method": cc.TextColumn("Method", width=180,
                                help="What each method does: 'Available methods' above. "
                                     "Training rows per fold: the per-fold table."),
        "Accuracy": cc.TextColumn(help="Share of rows whose most probable class is the true "
                                       "one, pooled over folds, with its 95 % interval."),
        "Log-loss": cc.TextColumn(help="Mean of −ln P(true class), pooled over folds, with "
                                       "its 95 % interval (lower is better)."),
        "Brier": cc.TextColumn(help="Brier score, pooled over folds, with its 95 % interval "
                                    "(lower is better)."),
        "AUC": cc.TextColumn(help="AUC of all out-of-fold rows ranked together (the ROC "
                                  "curves' AUC), with its 95 % interval."),
        "AUC folds": cc.TextColumn(help="Mean over folds of each test fold's own AUC."),
        "Fit s": cc.NumberColumn(help="Seconds per fit (one fold), on this shared server."),
    })
    st.caption("Pooled over folds: every row is predicted once by a model that did not see it, "
               "and the metric is computed over all these rows. 95 % intervals: Wilson "
               "(accuracy; never [1, 1] from a finite sample), bootstrap over rows (log-loss, "
               "Brier; on each metric's own scale, so a log-loss interval never goes below 0) "
               "and DeLong (AUC; Newcombe's score interval where DeLong's is a point, e.g. an "
               "AUC of 1). *AUC pooled* ranks all rows together and is the AUC of the ROC "
               "curves below; *AUC mean over folds* averages each test fold's own AUC, so the "
               "two differ a little.")
    with st.expander("Per fold"):
        per_fold = results.assign(method=results["method"].map(method_label))
        st.dataframe(per_fold, hide_index=True, width="stretch")
        fold_ci = once("per_fold_ci", lambda: per_fold_intervals(preds, seed=0))
        if fold_ci is not None:
            st.caption("Each fold's metrics with 95 % intervals (Wilson for the accuracy, "
                       "bootstrap over the fold's rows for log-loss and Brier, DeLong or "
                       "Newcombe for the AUC: the 'interval' column says which).")
            st.dataframe(fold_ci.assign(method=fold_ci["method"].map(method_label)),
                         hide_index=True, width="stretch")
    dropped = summary[summary["n_train_dropped_mean"] > 0]
    if len(dropped):
        st.caption("Could not learn from rows with missing values, so trained on fewer rows: "
                   + ", ".join(f"{m} ({d:.0f} rows per fold left out)" for m, d in
                               zip(dropped["method"], dropped["n_train_dropped_mean"])) + ".")
    for group in once("identical", lambda: identical_predictions(preds.proba)):
        st.info(
            "Identical predictions: " + " and ".join(md_escape(method_label(m)) for m in group)
            + " gave the same probabilities on every row, to every digit. This is not a bug: "
            "an averaging method predicts like a single model when its posterior puts "
            "(nearly) all its weight on that model, e.g. when one network, or one set of "
            "features, explains the data far better than every other, as on WBC. Then "
            "averaging cannot change the answer, and the cheaper method suffices here.")
    metric = st.radio("Metric", list(METRICS), format_func=METRICS.get, horizontal=True,
                      key=persistent("cmp_metric", "accuracy"),
                      help=glossary_help("The bar is the estimate pooled over folds, the "
                                         "whisker its 95 % interval.",
                                         "Held-out accuracy, AUC, log-loss"))
    bar_fig = viz.interval_bar_figure(
        intervals, metric, labels={m: method_label(m) for m in intervals["method"]},
        partial=partial)
    chart(bar_fig, f"compare_{metric}")
    classes = list(preds.classes)
    positive = st.selectbox(
        "Positive class (ROC, calibration, decision curve)", classes,
        key=persistent("cmp_positive", default_positive_class(classes), classes),
        help="The class whose cases the ROC curve looks for, e.g. 'malignant': "
             "sensitivity is the share of these cases found. With two classes the area "
             "is the same either way; the curve is drawn for this class.")
    remember("cmp_positive")
    curves = roc_curves(preds, positive=positive)
    roc_fig = None
    if curves:
        if len(curves) <= 4:
            roc_fig = viz.roc_figure({with_note(m): c for m, c in curves.items()},
                                     title=f"ROC: {positive} (pooled over folds)",
                                     auc_label="pooled AUC")
            chart(roc_fig, "compare_roc", st.columns([3, 2])[0])
        else:  # one panel per method: nine curves on one plot cannot be told apart
            roc_fig = viz.roc_small_multiples(
                curves, labels={m: with_note(m) for m in curves}, columns=3,
                title=f"ROC: {positive} (pooled over folds; one panel per method, the "
                      "others grey)")
            chart(roc_fig, "compare_roc")

    # ----- calibration and clinical utility -----
    st.subheader("Calibration")
    target_options = classes if len(classes) == 2 else ["top-label", *classes]
    if len(classes) == 2:
        cal_target = positive
    else:
        cal_target = st.selectbox(
            "Calibration of", target_options,
            key=persistent("cmp_cal_target", "top-label", target_options),
            help="Top-label: is the most probable class right as often as its probability "
                 "says? Or one class against the rest.")
        remember("cmp_cal_target")
    cal_positive = None if cal_target == "top-label" else cal_target
    persistent("cmp_cal_methods", shown[:3], None)
    this_run = (entry["key"], len(results), bool(entry["stopped"]))
    if st.session_state.get("cmp_cal_run") != this_run:  # a choice made for another run
        st.session_state["cmp_cal_methods"] = shown[:3]   # (e.g. before Stop) starts afresh
        st.session_state["cmp_cal_run"] = this_run
    st.session_state["cmp_cal_methods"] = [m for m in st.session_state["cmp_cal_methods"]
                                           if m in shown]
    cal_methods = st.multiselect(
        "Methods in the reliability diagram", shown, key="cmp_cal_methods",
        format_func=method_label,
        help="Each curve has its consistency band; more than three overlap.")
    cal_methods = [m for m in cal_methods if m in shown]
    remember("cmp_cal_methods")
    cal = once(("calibration", cal_target),
               lambda: calibration_views(preds, shown, cal_positive))
    rel_curves, rel_decomp, event = cal["curves"], cal["decomposition"], cal["event"]
    cal_table = cal["table"]
    rel_fig = None
    if cal_methods:
        rel_fig = viz.reliability_figure(
            {with_note(m): rel_curves[m] for m in cal_methods},
            {with_note(m): rel_decomp[m] for m in cal_methods},
            title=f"Reliability diagram (CORP): {event}", forecast_label=event)
        chart(rel_fig, "compare_reliability", st.columns([3, 2])[0])

    def wald(par: str) -> list[str]:
        return [f"{e:.2f} ({lo:.2f}–{hi:.2f})" for e, lo, hi in
                zip(cal_table[par], cal_table[f"{par}_lower"], cal_table[f"{par}_upper"])]

    cc = st.column_config
    st.dataframe(pd.DataFrame({  # six columns across the page: every header in view
        "Method": cal_table["method"].map(with_note), "Intercept": wald("intercept"),
        "Slope": wald("slope"), "Miscalibration": cal_table["miscalibration"].round(4),
        "Discrimination": cal_table["discrimination"].round(4),
        "Uncertainty": cal_table["uncertainty"].round(4)}),
        hide_index=True, width="stretch", column_config={
            "Method": cc.TextColumn(width=180),
            "Intercept": cc.TextColumn(help="Calibration intercept with its 95 % Wald "
                                            "interval: ideal 0; < 0: probabilities too high "
                                            "on average."),
            "Slope": cc.TextColumn(help="Calibration slope with its 95 % Wald interval: "
                                        "ideal 1; < 1: too extreme, over-confident."),
            "Miscalibration": cc.NumberColumn(help="CORP decomposition of the Brier score: "
                                                   "the part due to miscalibration (0 = "
                                                   "calibrated)."),
            "Discrimination": cc.NumberColumn(help="CORP: the part of the uncertainty the "
                                                   "forecasts resolve (higher is better)."),
            "Uncertainty": cc.NumberColumn(help="CORP: the Brier score of always forecasting "
                                                "the event's rate.")})
    st.caption("Calibration intercept (ideal 0; < 0: probabilities too high on average) and "
               "slope (ideal 1; < 1: too extreme, over-confident) by logistic "
               "recalibration, with 95 % Wald intervals, pooled over folds; the Brier score "
               "is miscalibration − discrimination + uncertainty. The curve of a calibrated "
               "method stays in its grey consistency band (90 %). The CSV has every number.")
    dca_fig = None
    dca = None
    if len(classes) == 2:
        st.subheader("Decision curve")
        dca_methods = complete or shown
        dca = once(("dca", positive), lambda: common_decision_curve(preds, dca_methods, positive))
        dca_fig = viz.decision_curve_figure(
            dca.assign(model=dca["model"].map(lambda m: method_label(m) if m in METHODS
                                              else m)),
            title=f"Decision curve: treating when P({positive}) ≥ threshold",
            positive=positive)
        chart(dca_fig, "compare_decision_curve")
        st.caption("Net benefit = true positives − false positives × t / (1 − t), per row "
                   "(Vickers & Elkin 2006): a method is useful at threshold t where its curve "
                   "lies above both *treat all* and *treat none*."
                   + (" Methods with unfinished folds are left out." if partial and complete
                      else ""))

    # ----- tests over folds -----
    test_metric = metric if metric in results.columns else "log_loss"
    tests = {}
    st.subheader("Do the methods differ? (tests over folds)")
    if metric != test_metric:
        st.caption(f"The per-fold table has no {METRICS[metric]}; the tests use log-loss.")
    on_all = results[results["method"].isin(complete)]
    if len(complete) < 2:
        st.caption("Tests over folds need two methods that finished every fold.")
    else:
        if len(complete) >= 3:
            fried = friedman_test(on_all, test_metric)
            tests["Friedman test"] = fried
            f = fried.iloc[0]
            st.markdown(f"**Friedman test** over {int(f['n_blocks'])} folds and "
                        f"{int(f['n_methods'])} methods ({METRICS[test_metric]}): "
                        f"χ² = {f['chi2']:.2f}, p = {f['p_value']:.3g}; Iman-Davenport F = "
                        f"{f['iman_davenport_f']:.2f}, p = {f['p_value_f']:.3g}.")
        pairs = pairwise_wilcoxon(on_all, test_metric)
        tests["Pairwise Wilcoxon tests (Holm)"] = pairs
        better = "higher" if HIGHER_IS_BETTER.get(test_metric, True) else "lower"
        cc = st.column_config
        st.dataframe(pd.DataFrame({  # the verdict first; Statistic and pairs in the CSV
            "Method A": pairs["method_a"].map(method_label),
            "Method B": pairs["method_b"].map(method_label),
            "p (Holm)": pairs["p_holm"].map(lambda p: f"{p:.3g}"),
            "Better (5 %)": [method_label(m) if sig else "neither" for m, sig in
                             zip(pairs["better"], pairs["significant"])],
            "Mean A − B": pairs["mean_diff"].map(lambda d: f"{d:+.4f}"),
            "W / T / L": [f"{w} / {t} / {lo}" for w, t, lo in
                          zip(pairs["wins"], pairs["ties"], pairs["losses"])],
            "p": pairs["p_value"].map(lambda p: f"{p:.3g}")}),
            hide_index=True, width="stretch", column_config={
                "Method A": cc.TextColumn(width=150), "Method B": cc.TextColumn(width=150),
                "p (Holm)": cc.TextColumn(help="The pair's p-value, Holm-corrected for the "
                                               "number of pairs."),
                "Better (5 %)": cc.TextColumn(width=150, help="Significant at 5 % (p (Holm) "
                                              "≤ 0.05): the method with more wins; else "
                                              "neither."),
                "Mean A − B": cc.TextColumn(help="Mean over folds of A's score minus B's."),
                "W / T / L": cc.TextColumn(help="Folds where A wins against, ties with, "
                                                "loses to B."),
                "p": cc.TextColumn(help="The Wilcoxon signed-rank p-value before the "
                                        "correction (two-sided).")})
        st.caption(f"Every pair of methods, Wilcoxon signed-rank test over folds, p-values "
                   f"Holm-corrected for the {len(pairs)} pairs ({better} "
                   f"{METRICS[test_metric]} is better). With few folds no test can reach "
                   "small p-values; folds share training rows, so the tests are optimistic.")
        if partial:
            st.caption("Left out (not every fold finished): "
                       + ", ".join(md_escape(method_label(m)) for m in partial) + ".")
    remember("cmp_metric")
    settings = {"dataset": dataset_label(), "class": ds.class_name, "rows": ds.n_rows,
                "features": ", ".join(ds.feature_names), "methods": ", ".join(shown),
                "folds": entry["key"][3], "seed": entry["key"][4],
                "positive class": positive, "stopped early": entry["stopped"]}

    def report() -> str:  # built on click only (deferred download; no Streamlit calls here)
        sections = [("Results (pooled over folds, 95 % intervals)", table),
                    (f"{METRICS[metric]} by method", bar_fig)]
        if roc_fig is not None:
            sections.append(("ROC curves", roc_fig))
        if rel_fig is not None:
            sections.append(("Reliability diagram", rel_fig))
        sections.append(("Calibration intercept and slope", cal_table))
        if dca_fig is not None:
            sections.append(("Decision curve", dca_fig))
        sections += list(tests.items())
        sections.append(("Per-fold results", results))
        return export.html_report("Compare methods", sections, settings=settings)

    box = st.container(horizontal=True)  # full labels, side by side
    box.download_button("Per-fold results (CSV)", lambda: export.table_csv(results, index=False),
                        "bnma_compare_results.csv", "text/csv", on_click="ignore",
                        help="One row per method and fold: accuracy, AUC, log-loss, times.")
    box.download_button("Metrics with intervals (CSV)",
                        lambda: export.table_csv(intervals, index=False),
                        "bnma_compare_intervals.csv", "text/csv", on_click="ignore",
                        help="Per method: each metric pooled over folds with its 95 % "
                             "interval, and the mean over folds of the AUC.")
    box.download_button("Calibration (CSV)", lambda: export.table_csv(cal_table, index=False),
                        "bnma_compare_calibration.csv", "text/csv", on_click="ignore",
                        help="Calibration intercept and slope with intervals per method.")
    for name, tab in tests.items():
        slug = "friedman" if name.startswith("Friedman") else "pairwise_holm"
        box.download_button(f"{name} (CSV)", lambda tab=tab: export.table_csv(tab, index=False),
                            f"bnma_compare_{slug}.csv", "text/csv", on_click="ignore")
    if hasattr(preds, "table"):
        box.download_button("Out-of-fold predictions (CSV)",
                            lambda: export.table_csv(preds.table(), index=False),
                            "bnma_compare_predictions.csv", "text/csv", on_click="ignore",
                            help="Row, fold, method, true class and one probability column "
                                 "per class.")
    box.download_button("Report (HTML)", report, "bnma_compare_report.html", "text/html",
                        on_click="ignore",
                        help="One self-contained page: settings, tables and figures of this "
                             "comparison.")
    model_report = _model_report_builder()
    if model_report is not None and not entry["stopped"]:
        source = dataset_label()  # read now: the deferred download runs outside the session
        box.download_button(
            "Model report (HTML)",
            lambda: model_report(ds, results, preds, source=source, methods=shown,
                                 positive=positive, structures=False),
            "bnma_model_report.html", "text/html", on_click="ignore",
            help="The TRIPOD+AI-ordered report of this cross-validation: data, missing "
                 "values, discretization per fold, methods and settings, discrimination and "
                 "calibration with intervals, decision curve.")
    st.caption("Each figure downloads itself as PNG or SVG with the buttons under it.")

# ----- over several data sets (a table of scores: the anchors or the user's own) -----
st.subheader("Compare over data sets")


@st.cache_data(max_entries=16, ttl=1800, show_spinner="Reading the table of scores...")
def _scores_from_upload(_raw: bytes, digest: str) -> tuple[pd.DataFrame | None, str]:
    """:func:`read_scores_table` once per file content (``digest``): (table, '') or
    (None, why it was refused)."""
    try:
        return read_scores_table(_raw), ""
    except ValueError as exc:
        return None, str(exc)


@st.cache_data(max_entries=16, ttl=1800, show_spinner="Ranking the methods...")
def _ranks_over_sets(_scores: pd.DataFrame, digest: str, metric: str):
    """Mean ranks and critical difference (:func:`over_datasets`), once per table content and
    score: (result, '') or (None, the sentence of the refusal)."""
    try:
        return over_datasets(_scores, metric, pair_methods=[]), ""
    except ValueError as exc:
        return None, str(exc)


@st.cache_data(max_entries=32, ttl=1800, show_spinner="Bayesian signed-rank tests...")
def _pairs_over_sets(_scores: pd.DataFrame, digest: str, metric: str, picked: tuple,
                     rope: float) -> pd.DataFrame:
    """The Bayesian signed-rank test of every pair of ``picked``, once per table content,
    score, methods and region of practical equivalence."""
    return over_datasets(_scores, metric, pair_methods=list(picked), rope=rope,
                         ranks=False)["pairs"]


if st.toggle("Compare methods over several data sets", key=persistent("cmp_sets", False),
             help="Demšar's critical-difference diagram and the Bayesian signed-rank test, "
                  "from one score per method and data set: the anchors (Weka and pyAgrum on "
                  "seven data sets) or a table of your own."):
    remember("cmp_sets")
    anchors_tab = anchor_scores()
    sources = (["The anchors (Weka and pyAgrum, seven data sets)"] if anchors_tab is not None
               else []) + ["My own table (CSV)"]
    source = st.radio("Scores from", sources, horizontal=True, key="cmp_sets_source")
    scores = anchors_tab if source.startswith("The anchors") else None
    digest = "anchors"
    if scores is None:
        up = st.file_uploader(
            "Table of scores", type=["csv"], key="cmp_sets_file",
            help="Columns: dataset, method and one or more of accuracy, log_loss, brier, auc; "
                 f"one row per data set and method; at most {MAX_SCORE_DATASETS:,} data sets "
                 f"and {MAX_SCORE_METHODS:,} methods.")
        if up is not None:
            raw = up.getvalue()
            digest = content_hash(raw)
            scores, why = _scores_from_upload(raw, digest)
            if why:
                st.error(md_escape(why))
    if scores is not None:
        cols = [c for c in DATASET_METRICS if c in scores.columns and scores[c].notna().any()]
        s1, s2 = st.columns([2, 1])
        set_metric = s1.radio("Score", cols, format_func=lambda c: METRICS.get(c, c),
                              horizontal=True, key="cmp_sets_metric")
        rope = s2.number_input("Region of practical equivalence (±)", 0.0, 1.0, 0.01,
                               step=0.005, format="%.3f", key="cmp_sets_rope",
                               help="Differences smaller than this count as equivalent in "
                                    "the Bayesian test (in the score's units).")
        full, why = _ranks_over_sets(scores, digest, set_metric)
        if why:
            st.error(md_escape(why))
        cd = None if full is None else full["cd"]
        left = [] if full is None else full["left_out"]
        if cd is not None:
            chart(viz.critical_difference_figure(cd), f"compare_cd_{set_metric}")
            cd_table = cd.table()
            if len(cd_table) > MAX_CD_METHODS:
                st.caption(f"The diagram draws the {MAX_CD_METHODS} best of "
                           f"{len(cd_table):,} methods; the table below ranks them all.")
            with st.expander(f"Mean ranks of all {len(cd_table):,} methods",
                             expanded=len(cd_table) > MAX_CD_METHODS):
                st.dataframe(cd_table[["method", "mean_rank", "mean", "group"]].rename(
                    columns={"method": "Method", "mean_rank": "Mean rank", "mean": "Mean score",
                             "group": "Groups"}), hide_index=True, width="stretch")
            if left:
                st.caption("Left out (no score on every data set): "
                           + ", ".join(md_escape(m) for m in left[:20])
                           + (f" and {len(left) - 20:,} more" if len(left) > 20 else "") + ".")
            ranked = cd.ranks["method"].tolist()
            most = max_pair_methods(int(cd.ranks["n_blocks"].iloc[0]))
            kept = st.session_state.get("cmp_sets_pairs")
            if kept is not None:  # a choice made for another table: its methods and limit
                st.session_state["cmp_sets_pairs"] = [m for m in kept if m in ranked][:most]
            picked = st.multiselect("Methods for the Bayesian signed-rank test", ranked,
                                    default=ranked[:min(4, most)], key="cmp_sets_pairs",
                                    max_selections=most,
                                    help="Every pair of the chosen methods (k methods, "
                                         f"k(k-1)/2 pairs; at most {most} methods over "
                                         "this many data sets).")
            picked = picked[:most]
            box = st.container(horizontal=True)
            box.download_button("Critical difference (CSV)",
                                lambda: export.table_csv(cd_table, index=False),
                                "bnma_compare_critical_difference.csv", "text/csv",
                                on_click="ignore")
            if len(picked) >= 2:
                bayes = _pairs_over_sets(scores, digest, set_metric, tuple(picked), float(rope))
                st.dataframe(bayes, hide_index=True, width="stretch")
                st.caption("Probability that A is better, that the two are equivalent (within "
                           "the region of practical equivalence), or that B is better "
                           "(Benavoli et al. 2017); a decision needs 95 %.")
                box.download_button("Bayesian signed-rank (CSV)",
                                    lambda: export.table_csv(bayes, index=False),
                                    "bnma_compare_bayesian_signed_rank.csv", "text/csv",
                                    on_click="ignore")

# ----- model files: save a compared method's model, validate a loaded one (DESIGN §17) -----
st.subheader("Model file")
mc1, mc2 = st.columns(2)
if entry is not None and len(entry["results"]) and not entry["stopped"]:
    saved_preds, saved_seed = entry["preds"], int(entry["key"][4])
    save_method = mc1.selectbox("Method to save", list(saved_preds.proba), format_func=method_label,
                               key="cmp_save_method")
    mc1.download_button(
        "Save this method's model (.bnma)",
        lambda m=save_method: model_files.comparison_model_bytes(ds, m, saved_seed, saved_preds),
        file_name=f"{save_method}.bnma", mime="application/zip", on_click="ignore",
        key="cmp_save_model",
        help=f"{method_label(save_method)} fitted on all {ds.n_rows:,} rows with seed "
             f"{saved_seed}, with this comparison's out-of-fold predictions (the development "
             "column of an external validation); bnma predict, bnma report --model and the "
             "Patient page read it.")
else:
    mc1.caption("Run a comparison to completion to save one of its methods' models.")
upload = mc2.file_uploader("Load a saved model to validate it on the active data", type=["bnma"],
                          key="cmp_model_upload")
if upload is None:
    st.session_state.pop("_model_file_cmp", None)
    st.session_state.pop("_model_file_cmp_metrics", None)
else:
    loaded, problem = model_files.held_upload(upload, "_model_file_cmp")
    if loaded is None:
        st.error(md_escape(problem))
    else:
        why = model_files.compatibility(loaded, ds)
        vbox = st.container(border=True)  # its provenance beside its predictions only
        vbox.caption(md_escape(model_files.provenance(loaded.info)))
        if why:
            vbox.warning(md_escape(why))
        else:
            vbox.markdown(f"**External validation on {md_escape(dataset_label())}** "
                         f"({ds.n_rows:,} rows; pooled, 95 % intervals)")
            vkey = (st.session_state["_model_file_cmp"][0], fingerprint)
            held = st.session_state.get("_model_file_cmp_metrics")
            if held is None or held[0] != vkey:  # once per model file and data, this session
                held = (vkey, *model_files.external_validation(loaded, ds, seed=0))
                st.session_state["_model_file_cmp_metrics"] = held
            vbox.dataframe(held[1], width="stretch")
            if loaded.info.get("data_fingerprint") == ds.fingerprint():
                vbox.info("The model was fitted on these very data, so the validation column "
                          "is its apparent (in-sample) performance; load other data with the "
                          "same columns on the Data page to validate it externally.")
            chart(held[2], "external_validation_reliability", vbox,
                  key="cmp_validation_reliability")
            vmf, vframe = model_files.validation_inputs(loaded, ds)
            vsource = dataset_label()  # read now: the deferred download runs outside the session
            vbox.download_button(
                "External validation report (HTML)",
                lambda: external_validation_report(vmf, vframe, source=vsource),
                f"bnma_external_validation_{loaded.info.get('method') or 'model'}.html",
                "text/html", on_click="ignore", key="cmp_validation_report",
                help="The page bnma report --model writes: provenance, discrimination, "
                     "calibration and reliability beside the development out-of-fold "
                     "figures, decision curve, case mix.")
