"""Clustering: EMA-TAN (model averaging over TAN models) and its baselines."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Clustering · BNMA Studio", page_icon=":material/bubble_chart:",
                   layout="wide")


import networkx as nx
import numpy as np
import pandas as pd
from sklearn.metrics import adjusted_rand_score

from bnma_core import viz
from bnma_core.clustering import make_clusterer
from bnma_core.export import table_csv
from bnma_ui import background, cache
from bnma_ui.state import data_id, persistent, remember, require_dataset
from bnma_ui.widgets import (
    chart,
    equations,
    glossary_help,
    md_escape,
    sidebar_dataset_badge,
    what_am_i_looking_at,
)

RUN = "clustering"
STATE = "clu_run"
METHODS = {"ematan": "EMA-TAN (average over TAN models)",
           "ema": "EMA (average over naive Bayes models)",
           "emtan": "EM-TAN (one TAN learned inside EM)",
           "embnet": "EM-BNET (complete network)"}
ORDERS = {"random": "random (the paper)", "chow_liu": "learned (Chow-Liu tree)"}

sidebar_dataset_badge()
st.title("Clustering with Bayesian networks")
what_am_i_looking_at(
    "**Clustering** groups the rows without using any label. Here a hidden *cluster* "
    "variable C is added to a Bayesian network over the columns, and the EM algorithm "
    "alternates between guessing each row's cluster (E step) and re-estimating the network "
    "from those guesses.\n\n"
    "**EMA-TAN** (Santafé, Lozano & Larrañaga) does not pick one network: for a fixed order "
    "of the columns it averages over *every* tree-augmented naive Bayes model (each column "
    "may depend on the cluster, on one earlier column, on both or on neither), each weighted "
    "by how well it explains the data. The average is again a single network, so it costs "
    "about as much as one model.\n\n"
    "- **Log-likelihood traces**: one line per random start; the start with the highest final "
    "value is kept. A *collapsed* start ended with clusters that ignore the data; it is "
    "dashed.\n"
    "- **Averaged network**: arrow widths are posterior probabilities of each dependency.\n"
    "- **Cluster profiles**: how often each value occurs in each cluster.\n"
    "- If the class column is left out, the table compares classes and clusters and the "
    "adjusted Rand index (1 = same partition, 0 = chance) summarises the agreement.")
equations(
    "E step (eq. 3-4): $\\gamma_l(c) = p(C=c \\mid x^{(l)})$, expected counts "
    "$N^v_{ijk} = \\sum_l p(x_i = k, Pa^v_i = j \\mid x^{(l)})$.\n\n"
    "MA step (eq. 6, 10-12): for each column $X_i$ and candidate parent set $v$\n\n"
    "$$\\hat\\theta^v_{ijk} = \\frac{\\alpha_{ijk} + N^v_{ijk}}{\\alpha_{ij} + N^v_{ij}}, "
    "\\qquad w^v_i \\propto p_S(X_i, Pa^v_i) \\prod_j "
    "\\frac{\\Gamma(\\alpha_{ij})}{\\Gamma(\\alpha_{ij} + N^v_{ij})} \\prod_k "
    "\\frac{\\Gamma(\\alpha_{ijk} + N^v_{ijk})}{\\Gamma(\\alpha_{ijk})}$$\n\n"
    "$$\\tilde\\theta_i(x_i \\mid c, x_{<i}) = \\sum_v w^v_i\\, "
    "\\hat\\theta^v_i(x_i \\mid pa^v)$$ — the average over all $2^n n!$ TAN structures "
    "consistent with the order (Theorem 1).")

ds = require_dataset()
fingerprint = data_id(ds)  # the raw data and every setting that built them

c1, c2, c3, c4 = st.columns([3, 3, 2, 2])  # the method names and the BIC box in full
method = c1.selectbox("Method", list(METHODS), format_func=METHODS.get,
                      key=persistent("clu_method", "ematan", list(METHODS)),
                      help="The paper's method and its three baselines.")
choose_k = c2.checkbox("Number of clusters by BIC",
                       key=persistent("clu_bic", False),
                       help="Choose the number of clusters by BIC: fit every number in the range "
                            "and keep the lowest BIC.")
if choose_k:
    k_range = c2.slider("Range of clusters", 2, 10, key=persistent("clu_krange", (2, 4)))
    ks = list(range(int(k_range[0]), int(k_range[1]) + 1))
else:
    k = c2.number_input("Number of clusters", 2, 20, step=1, key=persistent("clu_k", 2))
    ks = [int(k)]
n_init = c3.number_input("Random starts", 1, 200, step=1, key=persistent("clu_starts", 10),
                         help="The paper uses 100; the best start (log-likelihood) is kept.")
seed = c4.number_input("Seed", 0, 2**31 - 1, step=1, key=persistent("clu_seed", 0),
                       help="Same seed, same starts and order, same result.")
d1, d2, d3 = st.columns(3)
use_class = d1.radio("Class column", ["compare", "include"],
                     format_func={"compare": f"leave '{md_escape(ds.class_name)}' out and "
                                             "compare",
                                  "include": f"cluster with '{md_escape(ds.class_name)}' "
                                             "too"}.get,
                     key=persistent("clu_class", "compare"),
                     help="Left out, the class is only used afterwards to judge the clusters.")
order = d2.radio("Column order π", list(ORDERS), format_func=ORDERS.get,
                 key=persistent("clu_order", "random"),
                 disabled=method not in ("ematan", "embnet"),
                 help=glossary_help("EMA-TAN averages over the models consistent with this "
                                    "order.", "Node order"))
skip_collapsed = d3.checkbox("Prefer non-collapsed starts", key=persistent("clu_skip", True),
                             help="Keep the best start whose clusters depend on the data "
                                  "(falls back to the best start if all collapsed).")
remember("clu_method", "clu_bic", "clu_k", "clu_starts", "clu_seed", "clu_class", "clu_order",
         "clu_skip", *(["clu_krange"] if choose_k else []))

b1, b2, _ = st.columns([1, 1, 10], gap="small")
active = background.current(RUN)
running = active is not None and not active.done
run = b1.button("Run", type="primary", help="Fit; the traces update while it runs.")
stop = b2.button("Stop", disabled=not running,
                 help="Stop; the starts finished so far are kept.")

params = dict(n_init=int(n_init), random_state=int(seed),
              selection="best_non_collapsed" if skip_collapsed else "best_ll")
if method in ("ematan", "embnet"):
    params["order"] = order
last = st.session_state.setdefault(STATE, {})
key = ("clustering", fingerprint, method, tuple(ks), use_class,
       tuple(sorted(params.items())))


def data_for_fit():
    if use_class == "compare":
        return ds.X, ds.arities[ds.feature_indices], ds.feature_names
    return ds.codes, ds.arities, list(ds.names)


def work(r: background.Run) -> dict:
    X, ar, _ = r.meta["data"]
    fits = {}
    for kk in r.meta["ks"]:
        def cb(ev, kk=kk):
            r.report({"k": kk, "start": ev["start"], "iteration": ev["iteration"],
                      "loglik": ev["loglik"]})
        model = make_clusterer(method, n_clusters=kk, **params)
        model.fit(X, arities=ar, callback=cb, should_stop=r.should_stop)
        fits[kk] = model
        if r.should_stop():
            break
    return fits


def draw_live(r: background.Run) -> None:
    total = len(r.meta["ks"]) * int(r.meta["n_init"])
    if not r.events:
        st.info("Starting...")
        return
    df = pd.DataFrame(list(r.events))
    cur = df[df.k == df.k.iloc[-1]]
    done = df.groupby(["k", "start"]).ngroups
    st.progress(min(1.0, max(0, done - 1) / total),
                text=f"Clustering: start {done} of {total} ({r.seconds:.0f} s)")
    note = background.busy_note(r)
    if note:
        st.caption(note)
    traces = [g.loglik.to_numpy() for _, g in cur.groupby("start")]
    st.plotly_chart(viz.loglik_traces_figure(
        traces, title=f"Log-likelihood of each start ({int(cur.k.iloc[0])} clusters)"),
        width="stretch", key="clu_live")


if stop:
    background.stop(RUN)
if run:
    last.pop("error", None)
    hit = cache.result_store().get(key)  # one read: another session may evict it meanwhile
    if hit is not None:
        last["entry"] = hit
    else:
        background.start(RUN, work, key=key,
                         meta={"data": data_for_fit(), "ks": list(ks), "n_init": int(n_init)})
        st.rerun()  # draw the page again with the run going (Stop enabled, live progress)

finished = background.finished(RUN, last)
if finished is not None and finished.result:
        entry = {"key": finished.key, "fits": finished.result, "stopped": finished.stopped,
                 "names": finished.meta["data"][2]}
        last["entry"] = entry
        if not finished.stopped:
            cache.result_store()[finished.key] = entry
background.live(RUN, draw_live, interval=1.0)
background.show_error(last)

# --- results ---------------------------------------------------------------------------------
entry = background.entry_for_data(
    last, fingerprint, message="The last run used another dataset; press Run to cluster this one.")
if entry is None:
    st.info("Choose the settings and press Run.")
    st.stop()
fits = entry["fits"]
if entry["stopped"]:
    st.warning("Stopped: the results use the starts finished so far.")
elif entry["key"] != key:
    st.caption("Showing the last run; the settings above have changed since. Press Run to "
               "update.")
if len(fits) > 1:
    bic = pd.DataFrame({"clusters": list(fits), "BIC": [m.bic() for m in fits.values()],
                        "log-likelihood": [m.log_likelihood_ for m in fits.values()],
                        "collapsed starts": [f"{m.collapsed_starts_} of {m.n_starts_}"
                                             for m in fits.values()]})
    best_k = int(bic.loc[bic.BIC.idxmin(), "clusters"])
    st.subheader("Number of clusters")
    st.dataframe(bic.round(2), hide_index=True)
    st.caption(f"Lowest BIC: {best_k} clusters (shown below).")
else:
    best_k = next(iter(fits))
model = fits[best_k]
names = entry["names"]
cnames = [f"cluster {c + 1}" for c in range(model.n_clusters)]

m = st.columns(5)
m[0].metric("Clusters", model.n_clusters)
m[1].metric("Log-likelihood", f"{model.log_likelihood_:,.1f}")
m[2].metric("BIC", f"{model.bic():,.1f}")
m[3].metric("Collapsed starts", f"{model.collapsed_starts_} of {model.n_starts_}",
            help="Starts whose clusters ended up ignoring the data (p(cluster | row) the same "
                 "for every row).")
m[4].metric("Iterations (selected start)", model.n_iter_)
if model.collapsed_:
    st.warning("The selected start is collapsed: its clusters do not depend on the data. Try "
               "more starts, 'Prefer non-collapsed starts', or another method.")

st.subheader("Log-likelihood of each start")
chart(viz.loglik_traces_figure(model.loglik_traces_, model.start_collapsed_,
                               model.best_start_), "clustering_loglik")

st.subheader("Network")
# the estimator saw codes: give its nodes x0, x1, ... the dataset's column names
cluster_node = "cluster"
while cluster_node in names:
    cluster_node += "_"
graph = nx.relabel_nodes(model.structure_, {model.class_node_: cluster_node,
                                            **{f"x{j}": n for j, n in enumerate(names)}})
chart(viz.dag_figure(graph, class_node=cluster_node, edge_weight="weight", threshold=0.05,
                     weight_label="posterior", weight_range=(0.0, 1.0)), "clustering_network")
st.caption("Arrows with posterior probability of at least 0.05; the cluster node is the red "
           "diamond." if method in ("ematan", "ema") else
           "The learned structure (EM-TAN: the tree of the selected start; EM-BNET: the "
           "complete network).")

p1, p2 = st.columns([3, 2])
states = [ds.states[ds.names.index(n)] for n in names]
chart(viz.cluster_profiles_figure(model.cluster_profiles_, names, states, cnames),
      "cluster_profiles", p1)
chart(viz.cluster_sizes_figure(model.cluster_sizes_, cnames), "cluster_sizes", p2)

if use_class == "compare":
    st.subheader(f"Clusters against '{md_escape(ds.class_name)}'")
    y = ds.y
    ok = y >= 0
    table = pd.crosstab(pd.Categorical(np.asarray(ds.classes)[y[ok]], categories=ds.classes),
                        pd.Categorical(np.asarray(cnames)[model.labels_[ok]],
                                       categories=cnames), dropna=False)
    t1, t2 = st.columns([3, 1])
    chart(viz.contingency_figure(table.to_numpy(), ds.classes, cnames), "clusters_vs_class",
          t1)
    t2.metric("Adjusted Rand index", f"{adjusted_rand_score(y[ok], model.labels_[ok]):.3f}")

out = pd.DataFrame({"row": np.arange(ds.n_rows), "cluster": np.asarray(cnames)[model.labels_]})
for c, name in enumerate(cnames):
    out[f"P({name})"] = model.responsibilities_[:, c]
st.download_button("Download the assignments (CSV)", table_csv(out, index=False),
                   file_name="clusters.csv", mime="text/csv")
