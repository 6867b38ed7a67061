"""Naive BMA: the MAP naive Bayes versus the exact average over all naive feature sets."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Naive BMA · BNMA Studio", page_icon=":material/account_tree:",
                   layout="wide")

import networkx as nx
import numpy as np
import pandas as pd

from bnma_core import export, viz
from bnma_core.classifiers.registry import fit_method
from bnma_core.data import DataError, DiscreteDataset
from bnma_core.evaluation import aligned_proba, classification_metrics, roc_curve_points
from bnma_core.network import bif_text
from bnma_ui.models import default_positive_class, holdout_split, naive_network
from bnma_ui.state import data_id, dataset_label, persistent, remember, require_dataset
from bnma_ui.widgets import (
    chart,
    equations,
    md_escape,
    sidebar_dataset_badge,
    what_am_i_looking_at,
)

MODELS = {"map": "MAP naive Bayes", "ma": "Model-averaged naive Bayes"}

sidebar_dataset_badge()
st.title("Naive Bayes: one structure or all of them")
what_am_i_looking_at(
    "**Naive Bayes** assumes every feature depends on the class only. Usually all arrows "
    "class → feature are drawn: that is the single 'MAP' structure. But for a feature that "
    "carries no information about the class, the arrow may not belong there.\n\n"
    "Dash & Cooper (2002) average over **all 2^N naive structures** (every subset of the "
    "arrows), each weighted by how well it explains the data, and show that this average "
    "is itself a naive Bayes model with adjusted parameters θ*: each feature's "
    "class-conditional distribution is pulled towards its overall distribution by the "
    "probability that the arrow is absent.\n\n"
    "- **Arc posteriors**: the probability, given the data, that the class → feature arrow "
    "exists. Near 1: the feature clearly relates to the class; near 0: it probably does "
    "not.\n"
    "- **Parameters**: for one feature, P(value | class) under the MAP model and the "
    "average. With an arc posterior near 1 they coincide.\n"
    "- **Held-out comparison**: both models learn from the training rows and are scored on "
    "the rest; the ROC curve shows how well each ranks the positive cases.")
equations(
    "Arc posterior of feature $F_i$ (prior $p_i$, family marginal likelihoods, eq. 8):\n\n"
    "$$P(C \\to F_i \\mid D) = "
    "\\frac{p_i\\, ML^C_i}{p_i\\, ML^C_i + (1 - p_i)\\, ML^\\emptyset_i}$$"
    "\n\nModel-averaged parameters (eq. 10-12):\n\n"
    "$$\\theta^*_{ijk} = P(C \\to F_i \\mid D)\\, \\theta^C_{ijk} + "
    "\\big(1 - P(C \\to F_i \\mid D)\\big)\\, \\theta^\\emptyset_{ik}, \\qquad "
    "\\theta_{ijk} = \\frac{a_{ijk} + N_{ijk}}{a_{ij} + N_{ij}}$$\n\n"
    "Predicting with θ* in one naive network equals averaging the predictions of all "
    "$2^N$ naive structures weighted by their posterior.")

def _arc_graph() -> nx.DiGraph:
    """Class -> feature arcs weighted by their posterior (graph attributes ``role`` and
    ``weight``, DESIGN §2)."""
    g = nx.DiGraph()
    g.add_node(ds.class_name, role="class")
    for f, w in zip(ds.feature_names, ma.arc_posterior_):
        g.add_node(f, role="feature")
        g.add_edge(ds.class_name, f, weight=float(w))
    return g


ds = require_dataset()
fingerprint = data_id(ds)  # the raw data and every setting that built them


@st.cache_resource(show_spinner="Fitting both models...", max_entries=32, ttl=1800)
def fitted(fp: str, arc_prior: float, score: str, test_pct: int, seed: int,
           _ds: DiscreteDataset) -> dict:
    train, test = holdout_split(_ds, test_pct / 100, seed)
    ma = fit_method("manb", _ds, train, arc_prior=arc_prior, scoring=score)
    # arc prior 1 forces every arc: the MAP naive Bayes with the same parameter prior
    mp = fit_method("manb", _ds, train, arc_prior=1.0, scoring=score)
    # one column per class of the dataset (code order), also for a class absent from training
    proba = {"map": aligned_proba(mp, _ds.X[test], _ds.classes),
             "ma": aligned_proba(ma, _ds.X[test], _ds.classes)}
    return {"ma": ma, "map": mp, "train": train, "test": test, "proba": proba}


c1, c2, c3, c4 = st.columns(4)
arc_prior = c1.slider("Prior probability of each arc", 0.05, 0.95, step=0.05,
                      key=persistent("manb_prior", 0.5),
                      help="0.5 gives every one of the 2^N structures the same prior weight.")
score = c2.radio("Parameter prior", ["k2", "bdeu"], horizontal=True,
                 format_func={"k2": "K2", "bdeu": "BDeu"}.get, key=persistent("manb_score", "k2"),
                 help="K2 (the paper's) adds one pseudo-count per table cell; BDeu spreads a "
                      "single pseudo-case over the table.")
test_pct = c3.slider("Held-out rows (%)", 10, 50, step=5, key=persistent("manb_test", 30),
                     help="Rows kept aside to compare the two models.")
seed = c4.number_input("Seed", 0, 2**31 - 1, step=1, key=persistent("manb_seed", 0),
                       help="Fixes the train/test split.")
remember("manb_prior", "manb_score", "manb_test", "manb_seed")

try:
    res = fitted(fingerprint, float(arc_prior), score, int(test_pct), int(seed), ds)
except (DataError, ValueError) as exc:
    st.error(md_escape(exc))
    st.stop()
ma, mp = res["ma"], res["map"]
features = ds.feature_names
classes = [str(c) for c in ma.classes_]

st.subheader("Does each feature relate to the class?")
a1, a2 = st.columns([3, 2])
arc_fig = viz.arc_posterior_figure(features, ma.arc_posterior_)
chart(arc_fig, "arc_posteriors", a1)
post = pd.DataFrame({"feature": features, "P(class → feature | data)": ma.arc_posterior_})
a2.dataframe(post.sort_values("P(class → feature | data)").round(4), hide_index=True,
             width="stretch", height=min(420, 38 + 35 * len(post)))

if float(np.min(ma.arc_posterior_)) > 0.99:
    st.caption("Every arrow is practically certain here, so the average equals the MAP model. "
               "Data sampled from the ALARM network (data page) show features that are "
               "unrelated to the class.")

st.subheader("Parameters of one feature")
default = features[int(np.argmin(ma.arc_posterior_))]
feature = st.selectbox("Feature", features, key=persistent("manb_feature", default, features),
                       help="Preselected: the feature whose arrow is least certain, where the "
                            "two models differ most.")
remember("manb_feature")
i = features.index(feature)
param_fig = viz.parameter_comparison_figure(
    ma.theta_map_[i], ma.theta_star_[i], feature_name=feature, class_names=classes,
    state_names=ds.feature_states[i], theta_empty=ma.theta_empty_[i],
    arc_posterior=float(ma.arc_posterior_[i]))
chart(param_fig, "naive_parameters")

st.subheader("Held-out comparison")
test = res["test"]
y_true = ds.y[test]
rows = []
for key, name in MODELS.items():
    m = classification_metrics(y_true, res["proba"][key])
    rows.append({"model": name, "accuracy": m["accuracy"], "log-loss": m["log_loss"],
                 "AUC": m["auc"]})
h1, h2 = st.columns([1, 1])  # the table keeps all four columns at 1280 px
h1.dataframe(pd.DataFrame(rows).round(4), hide_index=True, width="stretch")
h1.caption(f"Trained on {len(res['train'])} rows, tested on {len(test)}.")
with h2:
    positive = st.selectbox("Positive class for the ROC curve", ds.classes,
                            key=persistent("manb_positive", default_positive_class(ds.classes),
                                           ds.classes),
                            help="The class whose cases the ROC curve looks for (e.g. "
                                 "'malignant'): how well each model ranks them above the "
                                 "others.")
    remember("manb_positive")
    pos = ds.classes.index(positive)
    curves = roc_curve_points(y_true == pos, {name: res["proba"][key][:, pos]
                                              for key, name in MODELS.items()})
    roc_fig = None
    if not curves:
        st.info("The held-out rows contain only one side of this class; no ROC curve.")
    else:
        roc_fig = viz.roc_curves_figure(None, None, positive_label=f"positive: {positive}",
                                        curves=curves)
        chart(roc_fig, "naive_roc")

st.subheader("Export")
heldout = pd.DataFrame(rows)
settings = {"dataset": dataset_label(), "class": ds.class_name, "arc prior": arc_prior,
            "parameter prior": score, "held-out rows (%)": test_pct, "seed": seed,
            "positive class (ROC)": positive}


def report() -> str:  # built on click only (deferred download; no Streamlit calls here)
    sections = [("Arc posteriors", arc_fig), ("Arc posteriors (table)", post),
                (f"Parameters of {feature}", param_fig), ("Held-out comparison", heldout)]
    if roc_fig is not None:
        sections.append(("ROC curves", roc_fig))
    return export.html_report("Naive Bayes: MAP vs model-averaged", sections,
                              settings=settings)


x1 = x2 = x3 = x4 = st.container(horizontal=True)  # full labels, side by side
x1.download_button("Arc posteriors (CSV)", lambda: export.table_csv(post, index=False),
                   "naive_arc_posteriors.csv", "text/csv", on_click="ignore",
                   help="P(class → feature | data) for every feature.")
x2.download_button("Averaged network (BIF)", lambda: bif_text(naive_network(ds, ma)),
                   "averaged_naive_bayes.bif", "text/plain", on_click="ignore",
                   help="One naive network with the averaged parameters θ*: it predicts as "
                        "the average over all naive structures. Opens in GeNIe, pgmpy, "
                        "bnlearn.")
x3.download_button("Averaged network (GraphML)", lambda: export.graph_graphml(_arc_graph()),
                   "averaged_naive_bayes.graphml", "application/xml", on_click="ignore",
                   help="Class → feature arcs with their posterior as 'weight'.")
x4.download_button("Report (HTML)", report, "naive_bma_report.html", "text/html",
                   on_click="ignore",
                   help="One self-contained page: settings, figures and tables.")
st.caption("Each figure downloads itself as PNG or SVG with the buttons under it.")
