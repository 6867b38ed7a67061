"""UKDB: the domain network and a personalized network for one patient, side by side."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="UKDB instances · BNMA Studio",
                   page_icon=":material/person_search:", layout="wide")

import dataclasses

import numpy as np
import pandas as pd

import bnma_core
from bnma_core import export, viz
from bnma_core.classifiers.registry import fit_method
from bnma_core.classifiers.ukdb import UKDB
from bnma_core.data import DataError, DiscreteDataset
from bnma_core.viz.patient import MISSING
from bnma_ui.models import strongest_arcs
from bnma_ui.state import data_id, dataset_label, persistent, remember, require_dataset
from bnma_ui.widgets import (
    chart,
    data_rows,
    equations,
    file_rows,
    md_escape,
    sidebar_dataset_badge,
    what_am_i_looking_at,
)

SOURCES = {"row": "A case from the data", "form": "Enter a patient's values"}

sidebar_dataset_badge()
st.title("UKDB: general and personalized dependencies")
what_am_i_looking_at(
    "The **unrestricted k-dependence Bayesian classifier (UKDB)** lets each feature depend on "
    "the class and on up to *k* other features. It builds two networks:\n\n"
    "- **The general network**, learned once from all training cases: a feature "
    "depends on the features it is most strongly associated with *on average* (conditional "
    "mutual information, CMI).\n"
    "- **The network for this case** (personalized), built for *this* patient: the same "
    "construction, "
    "but the association is measured at this patient's own values (local CMI, CLMI). Two "
    "features can be unrelated in general yet strongly related for values like these.\n\n"
    "Red arrows exist in only one of the two networks; grey arrows in both; blue arrows "
    "link the class. The bars show the probability of each class from each network and from "
    "their average (the UKDB prediction). The list below names the value pairs of this case "
    "whose dependence differs most from the general one.")
equations(
    "Mutual information and conditional mutual information (training data):\n\n"
    "$$I(X_i; C) = \\sum_{x_i, c} P(x_i, c) \\log \\frac{P(x_i, c)}{P(x_i) P(c)}, \\qquad "
    "I(X_i; X_j \\mid C) = \\sum P(x_i, x_j, c) \\log \\frac{P(x_i, x_j \\mid c)}"
    "{P(x_i \\mid c) P(x_j \\mid c)}$$\n\n"
    "Local versions at the instance's values $x$:\n\n"
    "$$I(x_i; C) = \\sum_c P(c \\mid x_i) \\log \\frac{P(x_i, c)}{P(x_i) P(c)}, \\qquad "
    "I(x_i; x_j \\mid C) = \\sum_c P(c \\mid x_i, x_j) \\log \\frac{P(x_i, x_j \\mid c)}"
    "{P(x_i \\mid c) P(x_j \\mid c)}$$\n\n"
    "Attributes ranked by $\\sum_{j \\ne i} I(X_i; X_j \\mid C)$; the first $k$ are parents "
    "of $C$; every other attribute takes $C$ and at most $k$ earlier-ranked attributes with "
    "the highest (local) CMI. $P(c \\mid x) \\propto P(c \\mid x_p) \\prod_{i \\notin p} "
    "P(x_i \\mid c, \\pi_i)$. The personalized network adds one pseudo case per class "
    "(this instance labelled "
    "$c$, weighted by $P_L(c \\mid x)$). Final: $P(c \\mid x) = \\tfrac12 [P_L(c \\mid x) + "
    "P_P(c \\mid x)]$, $L$ the general and $P$ the personalized network. Information is in "
    "bits (log base 2).")

ds = require_dataset()
fingerprint = data_id(ds)  # the raw data and every setting that built them


@st.cache_resource(show_spinner="Learning the domain network...", max_entries=32, ttl=1800)
def fitted_ukdb(fp: str, k: int, left_out: int | None, _ds: DiscreteDataset) -> UKDB:
    """UKDB fitted on the dataset (all rows, or all but the one at position ``left_out``)."""
    rows = np.arange(_ds.n_rows) if left_out is None else np.delete(np.arange(_ds.n_rows),
                                                                     left_out)
    return fit_method("ukdb", _ds, rows, k=k)


c1, c2 = st.columns([1, 3])
k = c1.slider("Other features each feature may depend on", 0, 4, key=persistent("ukdb_k", 2),
              help="At most this many other features per feature (0 = naive Bayes: every "
                   "feature depends on the diagnosis only).")
source = c1.radio("Which case?", list(SOURCES), format_func=SOURCES.get,
                  key=persistent("ukdb_source", "row"))
frame = ds.to_frame()
features = ds.feature_names
codes: np.ndarray | None = None
truth = None
left_out = None
with c2:
    if source == "row":
        last = int(ds.row_ids[-1])
        row = st.number_input(f"Row number in the file (0 to {last})", 0, last,
                              step=1, key=persistent("ukdb_row", int(ds.row_ids[0])),
                              help="A case from the active dataset, numbered as in the file "
                                   "and in the preview on the data page (0 = first row after "
                                   "the header).")
        hold = st.checkbox("Leave this case out of training", key=persistent("ukdb_hold", True),
                           help="Learn the networks without this case, as for a new patient.")
        try:
            pos = ds.position_of_row(int(row))
        except ValueError as exc:
            st.info(md_escape(exc) + " Choose another row.")
            st.stop()
        left_out = pos if hold else None
        codes = ds.X[pos]
        truth = ds.classes[ds.y[pos]]
        data_rows(file_rows(frame.iloc[[pos]], [row]), "case")
    else:
        st.caption("Choose each value; leave 'missing' where a value is not known. The "
                   "explanation below follows every change at once.")
        cols = st.columns(3)
        instance = {}
        for i, (f, states) in enumerate(zip(features, ds.feature_states)):
            v = cols[i % 3].selectbox(md_escape(f), [MISSING] + list(states),
                                      key=f"ukdb_form_{f}")
            instance[f] = None if v == MISSING else v
        if all(v is None for v in instance.values()):
            st.info("Choose at least one value to explain this patient.")
            st.stop()
        codes = ds.codes_from_states(pd.DataFrame([instance], columns=features))[0]
remember("ukdb_k", "ukdb_source", "ukdb_row", "ukdb_hold")

try:
    model = fitted_ukdb(fingerprint, int(k), left_out, ds)
    expl = model.explain(codes)
except (DataError, ValueError) as exc:
    st.error(md_escape(exc))
    st.stop()

st.subheader("Prediction")
p1, p2 = st.columns([2, 1])
chart(viz.posterior_bars_figure(expl), "ukdb_posteriors", p1)
verdict = viz.ukdb_verdict(expl)
best = verdict["label"]
p2.metric("Most probable class", best,
          help="The class with the highest averaged probability; 'uncertain' when the classes "
               "are too close to call or the two networks disagree.")
if verdict["uncertain"]:
    p2.warning(md_escape(verdict["warning"]))
p2.markdown(md_escape(verdict["sentence"]))
if truth is not None:
    p2.metric("True class of this case", str(truth))
p2.caption("Features the diagnosis depends on directly — general network: "
           + (md_escape(", ".join(expl.class_parents_domain)) or "none") + "; network for "
           "this case: "
           + (md_escape(", ".join(expl.class_parents_personalized)) or "none") + ".")

st.subheader("Networks")
n_feat = len(features)
n_arcs_all = max(expl.domain_graph.number_of_edges(), expl.personalized_graph.number_of_edges())
wide = n_feat > 12
n1, n2 = st.columns([1, 3])
top = max(2, n_arcs_all)
persistent("ukdb_arcs", min(12, top) if wide else top)
st.session_state["ukdb_arcs"] = min(max(1, int(st.session_state["ukdb_arcs"])), top)
shown_arcs = n1.slider(
    "Strongest dependencies shown (per network)", 1, top, key="ukdb_arcs",
    help="On a network of many variables every arrow at once is unreadable: only the "
         "strongest feature-to-feature dependencies (by CMI / CLMI) and the features they "
         "link are drawn, with the class and its parents.")
remember("ukdb_arcs")
keep = set(expl.class_parents_domain) | set(expl.class_parents_personalized)
dom = strongest_arcs(expl.domain_graph, expl.class_name, int(shown_arcs), keep)
per = strongest_arcs(expl.personalized_graph, expl.class_name, int(shown_arcs), keep)
nodes = set(dom) | set(per)
dom = strongest_arcs(expl.domain_graph, expl.class_name, int(shown_arcs), nodes)
per = strongest_arcs(expl.personalized_graph, expl.class_name, int(shown_arcs), nodes)
n2.caption(f"Drawing {len(nodes) - 1} of {n_feat} features: the class, its parents and the "
           "features joined by the strongest dependencies. Hover an arrow's middle for its "
           "value.")
shown_expl = dataclasses.replace(expl, domain_graph=dom, personalized_graph=per)
net_fig = viz.ukdb_structures_figure(shown_expl)
chart(net_fig, "ukdb_networks")

st.subheader("Where this case differs from the general pattern")
pairs = expl.differing_pairs
if len(pairs):
    n_show = min(8, len(pairs))
    for text in pairs["text"].head(n_show):
        st.markdown(f"- {md_escape(text)}")
    st.caption("CLMI: dependence of the two values for this case; CMI: average dependence of "
               "the two features over all training cases (both in bits). Largest differences "
               "first.")
    with st.expander(f"All {len(pairs)} value pairs"):
        st.dataframe(pairs.drop(columns=["text"]).round(4), hide_index=True, width="stretch")
else:
    st.caption("Fewer than two known values: no pairs to compare.")

st.subheader("Export")
r1, r2 = st.columns([1, 2])
patient_id = r1.text_input("Patient identifier (printed on the report)", key="ukdb_pid",
                           max_chars=120)
notes = r2.text_area("Notes (printed on the report)", key="ukdb_notes", height=68,
                     max_chars=2000)
case = {"data": dataset_label(), "method": "UKDB (general + per-case network)",
        "other features each feature may depend on": int(k), "most probable class": best,
        "BNMA Studio version": bnma_core.__version__,
        **{f: (v if v is not None else MISSING) for f, v in expl.instance.items()}}
probs = pd.DataFrame({"class": expl.classes, "general network": expl.posterior_domain,
                      "network for this case": expl.posterior_personalized,
                      "average (UKDB)": expl.posterior_ensemble})


def report() -> str:  # built on click only (deferred download; no Streamlit calls here)
    sections = [("Prediction", verdict["sentence"]
                 + ("\n\n" + verdict["warning"] if verdict["uncertain"] else "")),
                ("Probabilities", probs), ("Networks", net_fig)]
    if len(pairs):
        sections.append(("Where this case differs from the general pattern",
                         pairs.drop(columns=["text"])))
    return export.html_report("UKDB explanation of one case", sections, settings=case,
                              fields={"Patient identifier": patient_id, "Notes": notes},
                              figures="static")


x1 = x2 = x3 = x4 = st.container(horizontal=True)  # full labels, side by side
x1.download_button("Explanation (CSV)",
                   lambda: export.table_csv(pairs.drop(columns=["text"]), index=False),
                   "ukdb_explanation.csv", "text/csv", on_click="ignore",
                   disabled=not len(pairs),
                   help="Every pair of this case's values: CLMI, CMI and their difference.")
x2.download_button("Domain network (GraphML)", lambda: export.graph_graphml(expl.domain_graph),
                   "ukdb_domain.graphml", "application/xml", on_click="ignore",
                   help="The general network, with CMI as the arcs' 'weight'; opens in "
                        "networkx, Gephi, Cytoscape or yEd.")
x3.download_button("Personalized network (GraphML)",
                   lambda: export.graph_graphml(expl.personalized_graph),
                   "ukdb_personalized.graphml", "application/xml", on_click="ignore",
                   help="The network for this case, with CLMI as the arcs' 'weight'.")
x4.download_button("Report (HTML)", report, "ukdb_report.html", "text/html", on_click="ignore",
                   help="One self-contained page that prints on A4: this case, the "
                        "prediction, the networks and the value pairs, with the patient "
                        "identifier and notes typed above.")
st.caption("Each figure downloads itself as PNG or SVG with the buttons under it.")
