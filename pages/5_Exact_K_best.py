"""Exact & K-best structures: the best Bayesian networks of a small dataset, found exhaustively,
and the K best Markov equivalence classes with their posterior weights."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Exact & K-best · BNMA Studio", page_icon=":material/account_tree:",
                   layout="wide")

import networkx as nx
import numpy as np
import plotly.graph_objects as go

from bnma_core.structure.exact import (
    STAGES,
    ResourceLimitError,
    Stopped,
    check_limits,
    k_best,
    posterior_weights,
)
from bnma_core.viz.graphs import dag_figure, heatmap_figure
from bnma_ui import background
from bnma_ui.state import persistent, remember, require_dataset
from bnma_ui.widgets import equations, sidebar_dataset_badge, what_am_i_looking_at

STATE = "exact_run"
RUN = "exact"
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
    "networks).")

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
    "Weight of class $k$ among the K: $w_k = e^{S_k} / \\sum_{k'} e^{S_{k'}}$.")

ds = require_dataset()
fingerprint = ds.fingerprint()
names = list(ds.names)
default = [ds.class_name] + [n for n in names if n != ds.class_name][:9]

c1, c2, c3, c4 = st.columns([3, 1, 1, 1])
chosen = c1.multiselect("Variables (the class is always included)", names,
                        key=persistent("exact_vars", default),
                        help="Exact search doubles its time and memory with every variable; "
                             "the limit is 20 (18 for K above 10).")
k = c2.number_input("K (classes)", 1, 100, step=1, key=persistent("exact_k", 10),
                    help="How many of the best equivalence classes to find.")
ess = c3.number_input("α (BDeu sample size)", 0.01, 100.0, step=0.5,
                      key=persistent("exact_ess", 1.0),
                      help="Prior equivalent sample size: larger values favour denser "
                           "structures. Sugahara et al. use 1.")
mode = c4.radio("Structures", ["ebn", "eanb"], horizontal=False,
                format_func={"ebn": "free (EBN)", "eanb": "class → all (EANB)"}.get,
                key=persistent("exact_mode", "ebn"),
                help="EBN: every variable, the class included, may have any parents. EANB: "
                     "the class points to every feature and the features' structure is "
                     "searched.")
remember("exact_vars", "exact_k", "exact_ess", "exact_mode")

cols = sorted({names.index(n) for n in chosen} | {ds.class_index})
sub = ds.complete_rows()
X = np.ascontiguousarray(sub.codes[:, cols])
ar = sub.arities[cols]
cls = cols.index(ds.class_index)
augmented = mode == "eanb"
problem = None
n_dp = len(cols) - (1 if augmented else 0)
try:
    mem, secs = check_limits(n_dp, int(k), len(X), augmented)
    st.caption(f"{len(cols)} variables, {len(X):,} complete rows "
               f"({ds.n_rows - len(X):,} with missing values left out); estimated memory "
               f"{mem / 1e9:.2f} GB.")
except ResourceLimitError as exc:
    problem = str(exc)
    st.error(problem)
if len(X) == 0:
    problem = "No complete rows: every row has a missing value among these variables."
    st.error(problem)

b1, b2, _ = st.columns([1, 1, 10], gap="small")
active = background.current(RUN)
running = active is not None and not active.done
run = b1.button("Run", type="primary", disabled=problem is not None)
stop = b2.button("Stop", disabled=not running, help="Stop at the next check of the search.")
last = st.session_state.setdefault(STATE, {})
key = (fingerprint, tuple(cols), int(k), float(ess), mode)


def work(r: background.Run):
    def cb(stage, fraction):
        r.report({"stage": stage, "fraction": float(fraction)})
        return r.should_stop()
    try:
        return k_best(X, ar, int(k), classes=True, ess=float(ess), class_index=cls,
                      augmented=augmented, progress=cb)
    except Stopped:
        return None


def draw_live(r: background.Run) -> None:
    ev = r.events[-1] if r.events else {"stage": "starting", "fraction": 0.0}
    st.progress(min(max(ev["fraction"], 0.0), 1.0),
                text=f"Searching: {ev['stage']} ({r.seconds:.0f} s)")
    note = background.busy_note(r)
    if note:
        st.caption(note)


if stop:
    background.stop(RUN)
if run and problem is None:
    last.pop("error", None)
    background.start(RUN, work, key=key)
    st.rerun()  # draw the page again with the run going (Stop enabled, live progress)

finished = background.finished(RUN, last)
if finished is not None:
    last["entry"] = {"key": finished.key, "result": finished.result,
                     "stopped": finished.stopped or finished.result is None}
background.live(RUN, draw_live, interval=1.0)
background.show_error(last)

entry = last.get("entry")
if entry is not None and entry["key"][0] != fingerprint:
    entry = None
if entry is not None and entry["result"] is None:
    st.warning(f"Stopped: no result (stages: {', '.join(STAGES)}).")
elif entry is not None:
    res = entry["result"]
    _, ecols, ek, _, emode = entry["key"]
    vnames = [names[c] for c in ecols]
    cname = ds.class_name
    if entry["key"] != key:
        st.caption("Showing the last run; the settings have changed since. Press Run to "
                   "update.")
    w = posterior_weights(res)
    st.subheader(f"The {len(res)} best equivalence classes")
    bar_fig = go.Figure(go.Bar(x=[f"#{i + 1}" for i in range(len(res))], y=w,
                               hovertext=[f"log score {r.log_score:.2f}" for r in res]))
    bar_fig.update_layout(yaxis_title="posterior weight (within the K)", height=300,
                          margin={"t": 30})
    st.plotly_chart(bar_fig, width="stretch")
    m = len(vnames)
    view = st.radio("Edge probability", ["link", "arrow"], horizontal=True, key="exact_edges",
                    format_func={"link": "link (either direction)",
                                 "arrow": "compelled arrow (row → column)"}.get,
                    help="A link is shared by every network of a class, so its probability is "
                         "well defined. An arrow counts only where the whole class agrees on "
                         "its direction (a directed edge of the CPDAG).")
    mat = np.zeros((m, m))
    for wt, r in zip(w, res):
        if view == "link":
            for v, pa in enumerate(r.parents):
                for p in pa:
                    mat[p, v] += wt
                    mat[v, p] += wt
        else:
            for u, v, d in r.cpdag.edges(data="directed"):
                if d:
                    mat[u, v] += wt
    title = ("Link probability across the K classes" if view == "link"
             else "Compelled-arrow probability across the K classes (row → column)")
    st.plotly_chart(heatmap_figure(np.clip(mat, 0, 1), vnames, vnames, title, zmin=0, zmax=1,
                                   value_label="probability"), width="stretch")
    st.subheader("Classes drawn as CPDAGs")
    st.caption("An arrow drawn both ways is undirected: the class holds networks with either "
               "direction.")
    shown = st.slider("Classes to draw", 1, max(1, min(MAX_SHOWN, len(res))),
                      min(3, len(res)), key="exact_shown") if len(res) > 1 else 1
    grid = st.columns(min(shown, 3))
    for i, r in enumerate(res[:shown]):
        g = nx.relabel_nodes(r.cpdag, dict(enumerate(vnames)))
        fig = dag_figure(g, class_node=cname, edge_weight=None,
                         title=f"#{i + 1}: weight {w[i]:.3f}, log score {r.log_score:.2f}")
        grid[i % len(grid)].plotly_chart(fig, width="stretch", key=f"exact_cpdag_{i}")
