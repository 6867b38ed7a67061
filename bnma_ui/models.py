"""Glue between a :class:`DiscreteDataset` and the pages: held-out splits, typed orders.

Models are built with :func:`bnma_core.classifiers.registry.fit_method` (the one build
function): they are fitted on the dataset's codes with its arities and already carry the
dataset's variable names, state labels and class labels. :func:`name_map` and the relabelling
helpers remain for models fitted on bare code arrays (the order-MCMC page's streamed fit,
``fit_stream``), whose variables are named ``x0, x1, ...``; for a model from ``fit_method``
the map is the identity.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from bnma_core.data import DiscreteDataset


def method_limits(ds: DiscreteDataset, methods: Sequence[str] | None = None) -> dict[str, str]:
    """Why each registered method (or each of ``methods``) cannot run on ``ds``, in plain
    words; methods that can run are left out (:func:`~bnma_core.classifiers.registry.
    check_capabilities`, the methods' declared limits)."""
    from bnma_core.classifiers.registry import METHODS, check_capabilities

    out = {}
    for name in (METHODS if methods is None else methods):
        try:
            check_capabilities(name, ds.n_vars, len(ds.classes))
        except ValueError as exc:
            out[name] = str(exc)
    return out


def default_positive_class(classes: Sequence[str]) -> str:
    """The class a ROC curve looks for by default: one that reads as 'the condition' (malignant,
    positive, yes, true, disease, sick, present, 1), else the second class."""
    for w in ("malignant", "positive", "yes", "true", "disease", "sick", "present", "1"):
        for c in classes:
            if str(c).lower() == w:
                return c
    return classes[min(1, len(classes) - 1)]


def naive_network(ds: DiscreteDataset, model, averaged: bool = True):
    """A fitted model-averaged naive Bayes (``manb``) as a :class:`~bnma_core.network.
    DiscreteBN` (class -> every feature), for BIF export: with ``averaged`` the CPTs are the
    averaged parameters θ* (Dash & Cooper 2002, eq. 10-12: one naive network that predicts as
    the average over all 2^N naive structures), else the MAP naive Bayes's."""
    from bnma_core.network import DiscreteBN

    classes = [str(c) for c in ds.classes]
    thetas = model.theta_star_ if averaged else model.theta_map_
    names = list(ds.feature_names) + [ds.class_name]
    states = [list(s) for s in ds.feature_states] + [classes]
    p = len(ds.feature_names)
    parents = [[p]] * p + [[]]
    cpts = [np.asarray(t, dtype=float) for t in thetas] + [
        np.asarray(model.class_prior_, dtype=float)[None, :]]
    return DiscreteBN(names, states, parents, cpts,
                      name="averaged_naive_bayes" if averaged else "map_naive_bayes")


def strongest_arcs(graph: nx.DiGraph, class_node: str, n_arcs: int | None,
                   keep: set | None = None) -> nx.DiGraph:
    """``graph`` with only its ``n_arcs`` strongest feature -> feature arcs (attribute
    ``weight``, by absolute value; None = all) and the class's arcs, restricted to the class
    and the features those arcs touch (plus ``keep``): the class's neighbourhood, readable on
    networks of 37-70 variables."""
    feat = [(a, b, abs(float(d.get("weight", 0.0)))) for a, b, d in graph.edges(data=True)
            if class_node not in (a, b)]
    feat.sort(key=lambda e: -e[2])
    shown = {(a, b) for a, b, _ in (feat if n_arcs is None else feat[:n_arcs])}
    nodes = {class_node} | set(keep or ()) | {x for e in shown for x in e}
    out = graph.subgraph(nodes).copy()
    out.remove_edges_from([(a, b) for a, b in list(out.edges)
                           if class_node not in (a, b) and (a, b) not in shown])
    return out


def feature_arities(ds: DiscreteDataset) -> np.ndarray:
    return ds.arities[ds.feature_indices]


def class_series(ds: DiscreteDataset, rows: np.ndarray | None = None) -> pd.Series:
    """Class codes named after the class column (estimators use the name for the class node)."""
    y = ds.y if rows is None else ds.y[rows]
    return pd.Series(y, name=ds.class_name)


def name_map(model_names: Sequence[str], ds: DiscreteDataset) -> dict[str, str]:
    """Estimator variable names (features first, class last) -> dataset names."""
    names = list(ds.feature_names) + [ds.class_name]
    if len(model_names) != len(names):
        raise ValueError("the model and the dataset have different variables")
    return {str(m): n for m, n in zip(model_names, names)}


def relabel_graph(graph: nx.DiGraph, mapping: dict[str, str]) -> nx.DiGraph:
    return nx.relabel_nodes(graph, mapping, copy=True)


def relabel_frame(df: pd.DataFrame, mapping: dict[str, str]) -> pd.DataFrame:
    out = df.rename(index=mapping, columns=mapping)
    out.index.name, out.columns.name = df.index.name, df.columns.name
    return out


def model_index(ds: DiscreteDataset, names: Sequence[str]) -> list[int]:
    """Dataset variable names -> estimator indices (features 0..p-1 in dataset order, class p)."""
    feats = {n: j for j, n in enumerate(ds.feature_names)}
    p = len(feats)
    out = []
    for n in names:
        if n == ds.class_name:
            out.append(p)
        elif n in feats:
            out.append(feats[n])
        else:
            raise ValueError(f"{n!r} is not a variable of the dataset")
    return out


def parse_order(text: str, ds: DiscreteDataset) -> list[str]:
    """A typed order (names separated by commas, spaces or new lines) checked against the
    dataset: every variable, class included, exactly once. Raises ValueError with a plain
    message."""
    tokens = [t for t in text.replace(",", " ").replace(";", " ").split() if t]
    names = list(ds.names)
    unknown = [t for t in tokens if t not in names]
    if unknown:
        raise ValueError("Not variables of this dataset: " + ", ".join(unknown[:10]) + ".")
    repeated = sorted({t for t in tokens if tokens.count(t) > 1})
    if repeated:
        raise ValueError("Listed more than once: " + ", ".join(repeated) + ".")
    missing = [n for n in names if n not in tokens]
    if missing:
        raise ValueError("The order must list every variable, the class included; missing: "
                         + ", ".join(missing[:10]) + ("..." if len(missing) > 10 else "") + ".")
    return tokens


def holdout_split(ds: DiscreteDataset, test_fraction: float, seed: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (train, test), stratified by class when every class has two rows."""
    rows = np.arange(ds.n_rows)
    counts = np.bincount(ds.y[ds.y >= 0])
    strat = ds.y if counts[counts > 0].min() >= 2 else None
    tr, te = train_test_split(rows, test_size=test_fraction, random_state=seed, stratify=strat)
    return np.sort(tr), np.sort(te)


def accuracy(model, proba: np.ndarray, y_true: np.ndarray) -> float:
    """Share of rows whose most probable class (``model.classes_`` order) is ``y_true``."""
    pred = np.asarray(model.classes_)[np.argmax(proba, axis=1)]
    return float(np.mean(pred == y_true))
