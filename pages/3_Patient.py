"""Patient: one case under the averaged model — how likely, how sure, which findings drive it,
what if a finding were different, which test to do next, and whether the case is unusual
(``bnma_core.explain``, DESIGN §15)."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Patient · BNMA Studio", page_icon=":material/stethoscope:",
                   layout="wide")

import dataclasses
import re
import time

import numpy as np
import pandas as pd

import bnma_core
from bnma_core import explain, viz
from bnma_core.classifiers.registry import DEFAULT_METHOD, display_name, fit_method, get_spec
from bnma_core.crossfit import CrossFit
from bnma_core.data import DataError
from bnma_core.limits import INPUT_RANGES
from bnma_core.viz.patient import MISSING
from bnma_ui import background, cache, model_files
from bnma_ui.models import method_limits, strongest_arcs
from bnma_ui.state import data_id, dataset_label, persistent, remember, require_dataset
from bnma_ui.widgets import (
    chart,
    equations,
    md_code,
    md_escape,
    sidebar_dataset_badge,
    what_am_i_looking_at,
)

RUN = "patient_fit"
MODELS_KEY = "_patient_models"  # (fingerprint, method, seed, kind) -> model or CrossFit
RESULTS_KEY = "_patient_results"  # (model key, case codes, what) -> explanation
KEEP_MODELS = 4
N_DRAWS = 400  # parameter draws of the wider interval (seeded: the page's seed)
N_FOLDS = 10  # cross-fitting folds of "Leave this case out of training"
NO_CHANGE = "(no change)"
METHOD_CHOICES = [DEFAULT_METHOD, "manb", "bma30", "kbest", "kbest_subbagging", "aode",
                  "ebn_bagging", "nb", "tan", "kdb2", "ukdb2"]
SOURCES = {"row": "A case from the data", "form": "Enter a patient's values"}
PLAIN_NAME = re.compile(r"[A-Za-z0-9]+(?:[_ .-][A-Za-z0-9]+)*")
"""A name that Markdown shows as written (underscores inside words form no emphasis)."""


def widget_label(name: str) -> str:
    """A widget label that screen readers read as the name itself: escaped only when Markdown
    would change it (the label is also the widget's aria-label, backslashes and all)."""
    return name if PLAIN_NAME.fullmatch(name) else md_escape(name)


sidebar_dataset_badge()
st.title("Patient: how likely, how sure, and why")
what_am_i_looking_at(
    "This page explains **one case** — a row of the data or a patient whose values you enter "
    "(leave a value *missing* when it is not known).\n\n"
    "- **How likely and how sure.** Model averaging lets many plausible networks vote. The bar "
    "shows the averaged probability of each class; the thick whisker spans 90 % of the "
    "averaged networks (*structure interval*: how much the networks disagree), the thin one "
    "adds the uncertainty of each network's own numbers (*parameter uncertainty*). A case "
    "near 50 : 50 is marked **uncertain** — it is not a diagnosis either way.\n"
    "- **Why.** Each finding's contribution (its *Shapley value*): how much knowing it moves "
    "the odds of the predicted class, from 'nothing known' to 'this case'. Green supports "
    "the predicted class, red speaks against it; the whisker shows how much the averaged "
    "networks disagree about that finding.\n"
    "- **What if.** Change, add or clear a finding and see the new probability, up to three "
    "scenarios side by side.\n"
    "- **Which test next.** For each finding not yet known: how much learning it would "
    "settle the question on average (*value of information*) and the chance that it would "
    "change the decision.\n"
    "- **Is this case unusual.** A combination of findings rarer than almost every training "
    "case is a reason to distrust any number the model gives.")
equations(
    "Averaged prediction over models $m$ with weights $\\pi_m(x)$: "
    "$P(c \\mid x) = \\sum_m \\pi_m(x) P(c \\mid x, m)$; the structure interval is the "
    "weighted 5 % and 95 % quantiles of $P(c \\mid x, m)$.\n\n"
    "Shapley value of finding $i$ for the log-odds $v(S) = \\log \\frac{P(\\hat c \\mid x_S)}"
    "{1 - P(\\hat c \\mid x_S)}$, a left-out finding summed out (Shapley 1953; Štrumbelj & "
    "Kononenko 2014):\n\n"
    "$$\\varphi_i = \\sum_{S \\subseteq F \\setminus \\{i\\}} \\frac{|S|!\\,(N-|S|-1)!}{N!}"
    "\\,[v(S \\cup \\{i\\}) - v(S)], \\qquad \\sum_i \\varphi_i = v(F) - v(\\varnothing)$$\n\n"
    "Value of information of an unknown finding $X_j$ (Howard 1966): "
    "$\\mathrm{VOI}_j = H(C \\mid x) - \\sum_v P(v \\mid x)\\, H(C \\mid x, v)"
    " = I(C; X_j \\mid x) \\ge 0$, every term under one joint model of the findings: "
    "$P(c, x) = \\sum_m w_m P(c, x \\mid m)$, each model $m$ weighted by its weight $w_m$ "
    "from the training data and, once findings are known, by how well it predicts them.\n\n"
    "Conflict (Jensen, Chamberlain, Nordahl & Jensen 1991): "
    "$\\mathrm{conf}(x) = \\sum_i \\log P(x_i) - \\log P(x)$; > 0 when the findings fit "
    "together worse than independent ones would.")

ds = require_dataset()
fingerprint = data_id(ds)
features = list(ds.feature_names)
limits = method_limits(ds, METHOD_CHOICES)
choices = [m for m in METHOD_CHOICES if m not in limits]
if not choices:
    st.error("No explaining method can take this dataset: " + md_escape(
        "; ".join(f"{m}: {why}" for m, why in limits.items())))
    st.stop()

# --- the case and the method --------------------------------------------------------------------
left, right = st.columns([1, 2], gap="large")
with left:
    method = st.selectbox(
        "Method", choices, format_func=display_name,
        key=persistent("pt_method", choices[0], choices),
        help="How the networks are learned and averaged. The first is the recommended one.")
    source = st.radio("Which case?", list(SOURCES), format_func=SOURCES.get,
                      key=persistent("pt_source", "row"))
    pos = None
    truth = None
    if source == "row":
        last = int(ds.row_ids[-1])
        row = st.number_input(f"Row number in the file (0 to {last})", 0, last, step=1,
                              key=persistent("pt_row", int(ds.row_ids[0])),
                              help="A case of the active data, numbered as on the Data page "
                                   "(0 = first row after the header).")
        hold = st.checkbox("Leave this case out of training", key=persistent("pt_hold", True),
                           help="Learn the networks without this case, as for a new patient: "
                                "the data are split into 10 parts and a model is learned "
                                "without each part, once; this case is explained by the "
                                "model that did not see its part.")
        try:
            pos = ds.position_of_row(int(row))
        except ValueError as exc:
            st.info(md_escape(exc) + " Choose another row.")
            st.stop()
        truth = str(ds.classes[ds.y[pos]]) if ds.y[pos] >= 0 else None
    seed = st.number_input(
        "Seed", INPUT_RANGES["seed"].low, INPUT_RANGES["seed"].high, step=1,
        key=persistent("pt_seed", INPUT_RANGES["seed"].default),
        help="Seed of every random step behind these numbers (the learning of randomized "
             "methods, the split into parts, the parameter draws): the same seed gives the same "
             "numbers, here, in the case report and with `bnma explain --seed`.")
    remember("pt_method", "pt_source", "pt_row", "pt_hold", "pt_seed")

with right:
    st.markdown("**Findings** — change any value; *missing* means not known. The results "
                "below follow every change at once.")
    base = ds.X[pos] if pos is not None else np.full(len(features), -1)
    tag = f"row{int(ds.row_ids[pos])}" if pos is not None else "form"
    cols = st.columns(3)
    findings: dict[str, str | None] = {}
    for j, (f, states) in enumerate(zip(features, ds.feature_states)):
        options = [MISSING] + [str(s) for s in states]
        start = 0 if base[j] < 0 else int(base[j]) + 1
        picked = cols[j % 3].selectbox(widget_label(f), options, index=start,
                                       key=f"pt_{tag}_{j}")
        findings[f] = None if picked == MISSING else picked
    codes = ds.codes_from_states(pd.DataFrame([findings], columns=features))[0]
    changed = [f for j, f in enumerate(features) if codes[j] != base[j]]
    if pos is not None and changed:
        st.caption("Changed from the file's row: " + ", ".join(md_code(f) for f in changed)
                   + ". The true class below is the unchanged row's.")

# --- the page's sections, drawn in this order; their inputs exist before the model is learned,
# so they keep their values while a fit runs ------------------------------------------------------
status_box = st.container()
prob_box, why_box, whatif_box, next_box, report_box = (st.container() for _ in range(5))
with whatif_box:
    st.subheader("What if")
    st.caption("Change one finding per scenario (or set it to missing); the scenarios are "
               "computed together with the case.")
    scen_cols = st.columns(3)
    scenarios, names = [], ["this case"]
    for s, col in enumerate(scen_cols):
        f = col.selectbox(f"Scenario {s + 1}: change", [NO_CHANGE] + features,
                          key=persistent(f"pt_wi_f{s}", NO_CHANGE, [NO_CHANGE] + features))
        remember(f"pt_wi_f{s}")
        if f == NO_CHANGE:
            continue
        j = features.index(f)
        options = [MISSING] + [str(v) for v in ds.feature_states[j]]
        v = col.selectbox(f"Scenario {s + 1}: new value", options,
                          key=persistent(f"pt_wi_v{s}_{j}", MISSING, options))
        remember(f"pt_wi_v{s}_{j}")
        scenarios.append({f: None if v == MISSING else v})
        names.append(f"{f} = {v}")
with next_box:
    st.subheader("Which test next")
    threshold = st.slider("Decision threshold: act on the predicted class when its probability "
                          "is at least", 0.05, 0.95, key=persistent("pt_threshold", 0.5),
                          step=0.05, help="The chance that a test changes the decision refers "
                                          "to this threshold.")
    remember("pt_threshold")
with report_box:
    st.subheader("Case report")
    r1, r2 = st.columns([1, 2])
    patient_id = r1.text_input("Patient identifier (printed on the report)",
                               key=persistent("pt_id", ""), max_chars=120)
    notes = r2.text_area("Notes (printed on the report)", key=persistent("pt_notes", ""),
                         height=68, max_chars=2000)
    remember("pt_id", "pt_notes")

# --- fitting (in the background: order and K-best methods take seconds to minutes) -------------
# A row left out of training is explained by cross-fitting (bnma_core.crossfit): K fold models
# per (data, method, seed), fitted once, the fold of the row on the screen first; a new row
# then costs nothing. A typed case, or a row kept in training, uses the model of all rows.
kind = "crossfit" if source == "row" and hold else "full"
mkey = (fingerprint, method, int(seed), kind)
models = st.session_state.setdefault(MODELS_KEY, {})
state = st.session_state.setdefault("_patient_run_state", {})
randomized = get_spec(method).randomized
full_key = (fingerprint, method, int(seed), "full")  # the model of all rows is the one saved
full_model = models.get(full_key) or cache.result_store().get(("patient",) + full_key)
with status_box:  # save this model, or load a saved one and explain with it (DESIGN §17)
    loaded = model_files.panel(ds, full_model, method, "pt")
    if full_model is None and loaded is None:
        st.caption("To save the model of all rows, untick 'Leave this case out of training' "
                   "(the saved model learns from every row).")
if loaded is not None:  # explained as a model of all rows: no parts, no fit
    kind = "full"
    mkey = ("loaded", id(loaded))
    models.pop(mkey, None)
    models[mkey] = loaded.estimator  # the newest entry: never the one a finished fit evicts
if mkey not in models:
    hit = cache.result_store().get(("patient",) + mkey)
    if hit is not None:
        models[mkey] = hit
    elif kind == "crossfit":  # planned now, filled by the run (fold by fold)
        models[mkey] = CrossFit.plan(ds, method, n_folds=N_FOLDS, seed=int(seed))
    cache.evict_oldest(models, KEEP_MODELS, keep=mkey)
fitted = models.get(mkey)


def work(r: background.Run):
    meta = r.meta
    if meta["kind"] == "full":
        r.report({"stage": "fitting"})
        return fit_method(meta["method"], meta["ds"], random_state=meta["seed"])
    return meta["crossfit"].fit(meta["ds"], want=lambda: meta.get("want"), progress=r.report,
                                should_stop=r.should_stop)


def draw_live(r: background.Run) -> None:
    cf = r.meta.get("crossfit")
    if cf is None:
        st.progress(0.5, text=f"Learning {display_name(r.meta['method'])} from "
                              f"{ds.n_rows:,} cases ({r.seconds:.0f} s)")
    else:
        if pos is not None and cf.model_for(pos) is not None and model_missing:
            st.rerun()  # this case's model is ready: show it, the other folds go on
        st.progress(cf.n_fitted / cf.n_folds,
                    text=f"Learning {display_name(r.meta['method'])} without each part of the "
                         f"data: {cf.n_fitted} of {cf.n_folds} models ({r.seconds:.0f} s)")
    note = background.busy_note(r)
    if note:
        st.caption(note)


done = background.finished(RUN, state)
if done is not None and done.result is not None:
    if done.key[-1] == "full" and not done.stopped:
        models[done.key] = done.result
        cache.result_store()[("patient",) + done.key] = done.result
    elif done.key[-1] == "crossfit" and done.result.complete:  # shared once every fold is in
        cache.result_store()[("patient",) + done.key] = done.result
fitted = models.get(mkey)
model_missing = fitted is None or (kind == "crossfit" and fitted.model_for(pos) is None)
incomplete = kind == "crossfit" and fitted is not None and not fitted.complete
active = background.current(RUN)
ours = active is not None and not active.done and active.key == mkey
if active is not None and active.done and active.error is not None and active.key == mkey:
    state["failed_for"] = mkey  # shown below; not started again until the input changes
if ours and kind == "crossfit" and pos is not None:
    active.meta["want"] = fitted.fold_of(pos)  # this case's fold next
if (model_missing or incomplete) and not ours and mkey not in (state.get("stopped_for"),
                                                                state.get("failed_for")):
    # priced from the data's shape before anything is fitted: the models it would keep
    why = cache.resource_limit(ds, fingerprint, method,
                               fitted.n_folds if kind == "crossfit" else 1)
    if why:
        status_box.error(md_escape(why))
        st.stop()
    state.pop("error", None)
    background.start(RUN, work, key=mkey, meta={
        "method": method, "ds": ds, "seed": int(seed), "kind": kind, "crossfit": fitted,
        "want": None if pos is None or kind == "full" else fitted.fold_of(pos)})
    st.rerun()
if model_missing:
    with status_box:
        if state.get("stopped_for") == mkey:
            st.info("Stopped. Press Learn to learn this method for this case, or choose a "
                    "faster method.")
            if st.button("Learn", type="primary"):
                state.pop("stopped_for")
                st.rerun()
            st.stop()
        if state.get("failed_for") == mkey:
            background.show_error(state)
            st.stop()
        if st.button("Stop", help="Stop learning; choose a faster method or another case."):
            state["stopped_for"] = mkey
            background.stop(RUN, timeout=0.5, force_after=background.FORCE_SECONDS)
            st.rerun()
        background.live(RUN, draw_live, interval=1.0)
        background.show_error(state)
    st.stop()
if ours:  # the other fold models are still being learned: say so, quietly
    with status_box:
        background.live(RUN, draw_live, interval=1.0)
if kind == "crossfit":
    fold = fitted.fold_of(pos)
    model = fitted.models[fold]
    train_rows = fitted.train_rows(fold)
    status_box.caption(md_escape(fitted.describe(pos)))
else:
    fold = None
    model = fitted
    train_rows = np.arange(ds.n_rows)
background.show_error(state)

# --- the explanations (cached per model and case: reruns of unchanged findings are free) -------
results = st.session_state.setdefault(RESULTS_KEY, {})
if len(results) > 256:
    results.clear()
train = ds.subset(train_rows) if loaded is None else loaded.train


def cached(what: str, compute):
    k = (mkey + (fold,), tuple(int(c) for c in codes), what)
    if k not in results:
        try:
            results[k] = compute()
        except (ValueError, DataError) as exc:
            results[k] = exc
    return results[k]


# each part sized against the server's explanation budget before it runs (DESIGN §15, Budget)
plan = cached("plan", lambda: explain.plan_explanation(model, codes, n_draws=N_DRAWS,
                                                       train=train, codes=True))
if isinstance(plan, Exception):  # a server setting out of range
    st.error(md_escape(plan))
    st.stop()


def planned(part: str, compute, key: str | None = None):
    """``compute`` as the plan allows; a refused part's sentence stands for its result."""
    return ValueError(plan.refused(part)) if plan.refused(part) else cached(key or part, compute)


case_draws = plan.options("draws")["n_draws"]  # the case's and its scenarios' draws


def predict():
    try:
        return explain.predict_with_uncertainty(
            model, codes, n_draws=case_draws, train=train,
            seed=int(seed), codes=True)
    except ValueError:  # no parameter draws for this method: the structure interval only
        return explain.predict_with_uncertainty(model, codes, codes=True)


t0 = time.perf_counter()
pred = cached("prediction", predict)
if isinstance(pred, Exception):
    st.error(md_escape(pred))
    st.stop()
verdict = viz.verdict(pred)
shap = planned("shapley", lambda: explain.shapley_values(model, codes, seed=int(seed), codes=True,
                                                          **plan.options("shapley")))
unusual = planned("unusual", lambda: explain.unusual_case(model, codes, codes=True,
                                                          **plan.options("unusual")))

is_ukdb = method.startswith("ukdb") and hasattr(model, "explain")
expl = None
if is_ukdb:
    expl = cached("ukdb", lambda: model.explain(codes))
    if isinstance(expl, Exception):
        expl = None
    else:  # UKDB's two networks: the sentence and the flag name both
        verdict = viz.ukdb_verdict(expl)
prob_box.subheader("How likely, and how sure")
if loaded is not None:
    prob_box.caption(md_escape(model_files.provenance(loaded.info)))
p1, p2 = prob_box.columns([2, 1], gap="large")
chart(viz.probability_figure(pred), "patient_probability", p1)
with p2:
    if verdict["uncertain"]:
        st.metric("Most probable class", "uncertain",
                  help="The classes are too close to call, or the averaged networks disagree "
                       "about which is more probable.")
        st.warning(md_escape(verdict["warning"]))
    else:
        st.metric("Most probable class", verdict["label"],
                  help="The class with the highest averaged probability (see the sentence "
                       "below for how sure).")
    st.markdown(md_escape(verdict["sentence"]) + ".")
    if verdict.get("note"):
        st.caption(md_escape(verdict["note"]))
    if truth is not None:
        st.metric("True class of this row", truth)
    if isinstance(unusual, Exception):
        st.caption(md_escape(unusual))
    elif viz.unusual_sentence(unusual):
        text = viz.unusual_sentence(unusual)
        if unusual.rarer_than is not None and unusual.rarer_than >= viz.RARE:
            st.warning(text + " Treat any number above with caution: the models have seen "
                              "almost nothing like it.")
        else:
            st.caption(text)

for part, step in plan.parts.items():  # what the budget changed (refusals: in their section)
    if step.sentence and (part == "draws" or not step.refused):
        prob_box.caption(md_escape(step.sentence))
why_box.subheader("Why: what each finding contributes")
values = {f: findings[f] for f in features}
w1, w2 = why_box.columns(2, gap="large") if expl is not None else (why_box.container(), None)
if isinstance(shap, Exception):
    w1.caption(md_escape(shap))
elif not len(shap.names):
    w1.info("No finding is known: nothing contributes yet. Enter a value above.")
else:
    chart(viz.contributions_figure(shap, values, pred.classes), "patient_contributions", w1)
    w1.caption("Log-odds: 0 means even odds, each +0.7 roughly doubles the odds of the predicted "
               "class. Steps sum from 'no finding known' to 'this case'."
               + ("" if shap.exact else f" Estimated from {shap.n_permutations} random orders "
                  "of the findings."))
if expl is not None:
    keep = set(expl.class_parents_domain) | set(expl.class_parents_personalized)
    dom = strongest_arcs(expl.domain_graph, expl.class_name, 12, keep)
    per = strongest_arcs(expl.personalized_graph, expl.class_name, 12, keep)
    shown = dataclasses.replace(expl, domain_graph=dom, personalized_graph=per)
    chart(viz.ukdb_structures_figure(shown), "patient_ukdb_networks", w2)
    w2.caption("The same case explained by UKDB's own networks: which findings depend on "
               "which in general (top) and for values like this patient's (bottom).")

# --- what if --------------------------------------------------------------------------------------
t_wi = time.perf_counter()
res_wi = cached(  # judged as the case is: the same draws, seed and "uncertain" rule
    f"what_if {scenarios!r}",
    lambda: explain.what_if(model, codes, scenarios,
                            n_draws=case_draws if pred.parameter_interval is not None else 0,
                            train=train, seed=int(seed), codes=True))
if isinstance(res_wi, Exception):
    st.error(md_escape(res_wi))
    wi = None
else:
    sc_wi, wi = res_wi
ms_wi = 1000 * (time.perf_counter() - t_wi)


def scenario_verdict(k: int) -> dict:
    """Row k of the what-if (0 = the case) in the words and by the rule of the case's."""
    if expl is not None:  # UKDB: its two networks, as for the case
        try:
            return viz.ukdb_verdict(model.explain(sc_wi[k - 1].codes if k else codes))
        except ValueError:
            pass
    return viz.verdict(wi, k)


if wi is not None and scenarios:
    chart(viz.scenarios_figure(wi, names), "patient_what_if", whatif_box)
    for k in range(1, len(names)):
        v = scenario_verdict(k)
        whatif_box.markdown(f"- **{md_escape(names[k])}**: {md_escape(v['sentence'])}"
                            + (" — uncertain" if v["uncertain"] else ""))
    whatif_box.caption(f"Computed in {ms_wi:.0f} ms.")
elif wi is not None:
    whatif_box.caption("Choose a finding in a scenario to compare.")

# --- which test next ----------------------------------------------------------------------------
target = int(pred.predicted[0])
nt = planned("next_test", lambda: explain.next_test(model, codes, threshold=float(threshold),
                                                    target=target, codes=True),
             f"next_test_{threshold:.2f}")
table = None
if isinstance(nt, Exception):
    next_box.caption(md_escape(nt))
elif not len(nt.findings):
    next_box.caption("Every finding is known: there is nothing left to test.")
else:
    table = viz.next_test_table(nt)
    next_box.dataframe(table, hide_index=True, width="stretch")
    next_box.caption("Best first. 'Uncertainty it removes' is the value of information as a "
                     "share of the present uncertainty about the class (its entropy).")
    if nt.note:
        next_box.caption(md_escape(nt.note))

# --- report ---------------------------------------------------------------------------------------
settings = {"data": dataset_label(), "method": display_name(method), "method code": method,
            "case": f"row {int(ds.row_ids[pos])} of the file" if pos is not None
            else "entered by hand",
            "trained on": f"{len(train_rows):,} cases"
            + (f" (without part {fold + 1} of {fitted.n_folds}, this case's)"
               if fold is not None else ""),
            "seed of the fit": int(seed) if randomized else "none (the method is not random)",
            "seed of the parameter draws": int(seed),
            "parameter draws": case_draws if pred.parameter_interval is not None else 0,
            "BNMA Studio version": bnma_core.__version__}


def report() -> str:  # built on click only (deferred download; no Streamlit calls here)
    return viz.case_report(  # the same builder as `bnma explain --report`
        pred, values, settings, None if isinstance(shap, Exception) else shap,
        None if isinstance(unusual, Exception) else unusual, table, identifier=patient_id,
        notes=notes, next_note="" if isinstance(nt, Exception) else nt.note)


report_box.download_button(
    "Case report (HTML, prints on one A4 page)", report, "case_report.html", "text/html",
    on_click="ignore", type="primary",
    help="The findings, the prediction with its intervals, the contributions and the next "
         "tests, with the data, method, seed and version. Open it in a browser and print it; "
         "the identifier and notes fields can still be edited there. Building it takes a few "
         "seconds (the figures are drawn as images).")
report_box.caption(f"Explained in {1000 * (time.perf_counter() - t0):.0f} ms on the server.")
