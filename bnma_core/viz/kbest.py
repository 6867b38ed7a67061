"""Tables and figures of the subbagging K-best view (DESIGN §4, §6, §7).

Everything here reads a fitted :class:`bnma_core.classifiers.kbest.SubbaggingKBest`:

* :func:`subsample_classes` — one subsample's K equivalence classes: weight w_tk, log score,
  CPDAG edges and the class's Markov blanket.
* :func:`subsample_summary` — one row per subsample (rows, classes found, top weight).
* :func:`edge_stability` — for every equivalence-class edge feature, its posterior within each
  subsample, p_t(e) = sum_k w_tk 1[e in CPDAG(G_tk)], with the mean and standard deviation over
  the subsamples (Sugahara, Aomi & Ueno, docs/specs.md §2: the structures that
  the averaged classifier P(c | x) = (1/T) sum_t sum_k w_tk P(c | x, G_tk) is made of).
* :func:`all_subsample_classes` — the classes of every subsample in one table;
  :func:`prediction_spread` — one case's averaged posterior with its spread over subsamples.
* :func:`edge_stability_figure`, :func:`subsample_posterior_figure`,
  :func:`subsample_weights_figure` — plotly figures of these (no Streamlit);
  :func:`class_weights_figure` — the weights of one list of K classes (the exact K-best view).

Edge features are features of the equivalence class, read from the CPDAG
(:attr:`bnma_core.structure.exact.ScoredStructure.cpdag`): a compelled arc is "A → B"; an
undirected CPDAG edge (the class holds members with either direction) is its own feature
"A — B", not counted for either orientation. The three features of a pair therefore sum to the
pair's link (adjacency) probability.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..markup import plain

__all__ = ["all_subsample_classes", "class_weights_figure", "edge_stability",
           "edge_stability_figure", "prediction_spread", "subsample_classes",
           "subsample_posterior_figure", "subsample_summary", "subsample_weights_figure"]

ARC = "→"
LINK = "—"
_META = ["from", "to", "type"]


def _check_fitted(model: Any) -> None:
    if not getattr(model, "subsamples_", None) or not hasattr(model, "networks_"):
        raise ValueError("Expected a fitted SubbaggingKBest (with subsamples_ and networks_).")


def variable_names(model: Any) -> list[str]:
    """Names of the model's variables by column index (features, then the class at
    ``class_index_``), as its networks carry them."""
    _check_fitted(model)
    return list(model.networks_[0][0].names)


def _names(model: Any, names: Sequence[str] | None) -> list[str]:
    out = variable_names(model) if names is None else [str(n) for n in names]
    if len(out) != len(model.subsamples_[0].structures[0].parents):
        raise ValueError(f"{len(out)} names for "
                         f"{len(model.subsamples_[0].structures[0].parents)} variables.")
    return out


def _edges(structure: Any) -> list[tuple[int, int, bool]]:
    """(u, v, directed) of a class's CPDAG, each undirected edge once (u < v)."""
    out = []
    for u, v, directed in structure.cpdag.edges(data="directed"):
        if directed:
            out.append((int(u), int(v), True))
        elif u < v:
            out.append((int(u), int(v), False))
    return sorted(out)


def _label(u: str, v: str, directed: bool) -> str:
    return f"{u} {ARC if directed else LINK} {v}"


def subsample_classes(model: Any, t: int, names: Sequence[str] | None = None) -> pd.DataFrame:
    """The K equivalence classes of subsample ``t`` (0-based), best first.

    Columns: ``rank`` (1 = best), ``weight`` (w_tk, the class's posterior normalised within
    the subsample's K), ``log score`` (log P(D_t | G_tk), BDeu), ``Markov blanket`` (of the
    class variable; the same for every member of the class), ``n edges`` and ``edges`` (the
    CPDAG: compelled arcs "A → B", undirected edges "A — B").
    """
    _check_fitted(model)
    T = len(model.subsamples_)
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 0 <= t < T:
        raise ValueError(f"t must be a subsample index 0..{T - 1} (got {t!r}).")
    nm = _names(model, names)
    sub = model.subsamples_[t]
    c = model.class_index_
    rows = []
    for r, (s, w, net) in enumerate(zip(sub.structures, sub.weights, model.networks_[t])):
        edges = _edges(s)
        rows.append({"rank": r + 1, "weight": float(w), "log score": float(s.log_score),
                     "Markov blanket": ", ".join(nm[i] for i in net.markov_blanket(c)) or
                     "(empty)",
                     "n edges": len(edges),
                     "edges": ", ".join(_label(nm[u], nm[v], d) for u, v, d in edges) or
                     "(none)"})
    return pd.DataFrame(rows)


def all_subsample_classes(model: Any, names: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`subsample_classes` of every subsample in one table, with a first column
    ``subsample`` (1-based)."""
    _check_fitted(model)
    out = pd.concat([subsample_classes(model, t, names).assign(subsample=t + 1)
                     for t in range(len(model.subsamples_))], ignore_index=True)
    return out[["subsample", *[c for c in out if c != "subsample"]]]


def prediction_spread(posteriors: np.ndarray, classes: Sequence[str],
                      average: np.ndarray | None = None) -> pd.DataFrame:
    """One case's prediction and how the subsamples disagree about it: one row per class with
    ``class``, ``averaged P`` (the model's prediction; default the mean over subsamples),
    ``min / max / sd over subsamples`` (sd with ddof = 1; 0 for one subsample).

    ``posteriors`` is (T, C), a case's rows of
    :meth:`~bnma_core.classifiers.kbest.SubbaggingKBest.subsample_posteriors`."""
    P = np.asarray(posteriors, dtype=float)
    if P.ndim != 2 or P.shape[1] != len(classes):
        raise ValueError(f"posteriors must be (T, {len(classes)}) (got {P.shape}).")
    avg = P.mean(axis=0) if average is None else np.asarray(average, dtype=float)
    return pd.DataFrame({
        "class": [str(c) for c in classes], "averaged P": avg,
        "min over subsamples": P.min(axis=0), "max over subsamples": P.max(axis=0),
        "sd over subsamples": P.std(axis=0, ddof=1) if len(P) > 1 else 0.0})


def class_weights_figure(structures: Sequence[Any], weights: Sequence[float]) -> go.Figure:
    """Bars of the posterior weights of K equivalence classes, best first (hover: the log
    score of each)."""
    w = np.asarray(weights, dtype=float)
    fig = go.Figure(go.Bar(x=[f"#{i + 1}" for i in range(len(w))], y=w,
                           hovertext=[f"log score {s.log_score:.2f}" for s in structures]))
    fig.update_layout(yaxis_title="posterior weight (within the K)", height=300,
                      margin={"t": 30}, xaxis_type="category", xaxis_title="class rank")
    return fig


def subsample_summary(model: Any) -> pd.DataFrame:
    """One row per subsample: ``subsample`` (1-based), ``rows`` (its size m), ``classes``
    (how many classes were found, at most K), ``top weight`` (w of its best class),
    ``best log score``."""
    _check_fitted(model)
    return pd.DataFrame([{"subsample": t + 1, "rows": len(s.rows), "classes": len(s.weights),
                          "top weight": float(np.max(s.weights)),
                          "best log score": float(s.structures[0].log_score)}
                         for t, s in enumerate(model.subsamples_)])


def edge_stability(model: Any, names: Sequence[str] | None = None) -> pd.DataFrame:
    """Posterior of every equivalence-class edge feature within each subsample.

    p_t(e) = sum_k w_tk 1[e in CPDAG(G_tk)] (w_tk as in
    :class:`~bnma_core.classifiers.kbest.SubbaggingKBest`), for the compelled arcs "A → B" and
    the undirected CPDAG edges "A — B" that occur in at least one class of one subsample.

    Returns
    -------
    DataFrame
        Index ``edge`` (label); columns ``from``, ``to``, ``type`` ("arc" / "undirected"),
        ``subsample 1`` .. ``subsample T`` (p_t), ``mean`` (over t) and ``sd`` (sample
        standard deviation over t, ddof = 1; 0 when T = 1). Rows sorted by mean, largest
        first (ties by label).
    """
    _check_fitted(model)
    nm = _names(model, names)
    T = len(model.subsamples_)
    prob: dict[tuple[int, int, bool], np.ndarray] = {}
    for t, sub in enumerate(model.subsamples_):
        for s, w in zip(sub.structures, sub.weights):
            for e in _edges(s):
                prob.setdefault(e, np.zeros(T))[t] += float(w)
    cols = [f"subsample {t + 1}" for t in range(T)]
    if not prob:
        return pd.DataFrame(columns=[*_META, *cols, "mean", "sd"],
                            index=pd.Index([], name="edge"))
    keys = list(prob)
    P = np.clip(np.array([prob[e] for e in keys]), 0.0, 1.0)
    frame = pd.DataFrame(P, columns=cols, index=pd.Index(
        [_label(nm[u], nm[v], d) for u, v, d in keys], name="edge"))
    frame.insert(0, "from", [nm[u] for u, _, _ in keys])
    frame.insert(1, "to", [nm[v] for _, v, _ in keys])
    frame.insert(2, "type", ["arc" if d else "undirected" for _, _, d in keys])
    frame["mean"] = P.mean(axis=1)
    frame["sd"] = P.std(axis=1, ddof=1) if T > 1 else 0.0
    frame["_label"] = frame.index
    frame = frame.sort_values(["mean", "_label"], ascending=[False, True])
    return frame.drop(columns="_label")


def _subsample_columns(table: pd.DataFrame) -> list[str]:
    return [c for c in table.columns if str(c).startswith("subsample ")]


def edge_stability_figure(table: pd.DataFrame, max_rows: int | None = 40,
                          title: str | None = "Edge stability across subsamples"
                          ) -> go.Figure:
    """Heatmap of :func:`edge_stability`: rows = edge features (sorted by mean), columns =
    subsamples, colour = p_t(e) in [0, 1]; beside it the mean over subsamples as a bar with
    ± one standard deviation.

    Parameters
    ----------
    table : DataFrame from :func:`edge_stability`
    max_rows : int or None
        Show the first ``max_rows`` rows (the most probable edges); None = all.
    title : str or None
    """
    cols = _subsample_columns(table)
    if not cols or not {"mean", "sd"} <= set(table.columns):
        raise ValueError("Expected a table from edge_stability().")
    shown = table if max_rows is None else table.head(int(max_rows))
    labels = [plain(i) for i in shown.index]
    z = shown[cols].to_numpy(dtype=float)
    xs = [c.split(" ", 1)[1] for c in cols]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.02,
                        column_widths=[0.72, 0.28],
                        subplot_titles=("P(edge | subsample)", "mean ± sd over subsamples"))
    heat = go.Heatmap(z=z, x=xs, y=labels, zmin=0.0, zmax=1.0, colorscale="Blues",
                      colorbar=dict(title=dict(text="P(edge)", side="right"), thickness=12),
                      hovertemplate="%{y}<br>subsample %{x}: %{z:.3f}<extra></extra>")
    if z.size <= 400:
        heat.update(text=np.vectorize(lambda v: f"{v:.2f}")(z) if z.size else z,
                    texttemplate="%{text}", textfont=dict(size=10))
    fig.add_trace(heat, row=1, col=1)
    fig.add_trace(go.Bar(x=shown["mean"], y=labels, orientation="h", marker_color="#1f77b4",
                         error_x=dict(type="data", array=shown["sd"].to_numpy(dtype=float),
                                      color="#444", thickness=1.2),
                         customdata=shown["sd"].to_numpy(dtype=float),
                         hovertemplate="%{y}<br>mean %{x:.3f}, sd %{customdata:.3f}"
                                       "<extra></extra>", showlegend=False), row=1, col=2)
    longest = max((len(s) for s in labels), default=4)
    fig.update_yaxes(autorange="reversed", type="category", tickmode="array", tickvals=labels,
                     ticktext=labels, tickfont=dict(size=11 if len(labels) <= 40 else 9),
                     row=1, col=1)
    fig.update_yaxes(autorange="reversed", type="category", showticklabels=False,
                     row=1, col=2)
    fig.update_xaxes(title_text="subsample", type="category", row=1, col=1)
    fig.update_xaxes(title_text="mean P(edge)", range=[0, 1.05], row=1, col=2)
    fig.update_layout(title=title, template="plotly_white",
                      height=int(np.clip(140 + 22 * len(labels), 300, 1400)),
                      margin=dict(l=20 + int(6.5 * longest), r=20, t=70 if title else 40,
                                  b=50))
    return fig


def subsample_posterior_figure(posteriors: np.ndarray, classes: Sequence[str],
                               average: np.ndarray | None = None, truth: str | None = None,
                               title: str | None = None) -> go.Figure:
    """The averaged class posterior of one case with its spread across subsamples.

    Parameters
    ----------
    posteriors : array (T, C)
        Per-subsample posteriors sum_k w_tk P(c | x, G_tk) of one case (a row of
        :meth:`SubbaggingKBest.subsample_posteriors`).
    classes : sequence of str
        The C class labels.
    average : array (C,), optional
        The averaged posterior (the model's ``predict_proba``); default the mean of
        ``posteriors`` over subsamples.
    truth : str, optional
        The case's recorded class, marked on the class axis.
    title : str, optional

    Returns
    -------
    plotly Figure: one box per class with its T subsample values as points beside it, and
    the average as a red diamond on the box.
    """
    P = np.asarray(posteriors, dtype=float)
    if P.ndim != 2 or P.shape[1] != len(classes):
        raise ValueError(f"posteriors must be (T, {len(classes)}) (got {P.shape}).")
    avg = P.mean(axis=0) if average is None else np.asarray(average, dtype=float)
    cls = [plain(c) for c in classes]
    fig = go.Figure()
    xs = np.repeat(np.asarray(cls, dtype=object), P.shape[0])
    ts = np.tile(np.arange(1, P.shape[0] + 1), len(cls))
    fig.add_trace(go.Box(x=xs, y=P.T.ravel(), boxpoints="all", jitter=0.5, pointpos=-1.6,
                         name=f"one subsample (T = {P.shape[0]})", marker=dict(size=7),
                         line=dict(color="#7f7f7f"), fillcolor="rgba(127,127,127,0.15)",
                         customdata=ts,
                         hovertemplate="%{x}: %{y:.3f} (subsample %{customdata})"
                                       "<extra></extra>"))
    fig.add_trace(go.Scatter(x=cls, y=avg, mode="markers+text", name="average (prediction)",
                             marker=dict(symbol="diamond", size=15, color="#d62728",
                                         line=dict(color="white", width=1)),
                             text=[f"{v:.3f}" for v in avg], textposition="middle right",
                             textfont=dict(size=13, color="#d62728"), cliponaxis=False,
                             hovertemplate="%{x}: average %{y:.3f}<extra></extra>"))
    ticks = [f"<b>{c}</b><br>(recorded class)" if truth is not None and c == plain(truth) else c
             for c in cls]
    fig.update_layout(title=title, template="plotly_white", height=420,
                      yaxis=dict(title="P(class | this row)", range=[-0.03, 1.03]),
                      xaxis=dict(type="category", tickfont=dict(size=13), tickmode="array",
                                 tickvals=cls, ticktext=ticks),
                      legend=dict(orientation="h", yanchor="top", y=-0.16, x=0),
                      margin=dict(l=60, r=20, t=50 if title else 20, b=90))
    return fig


def subsample_weights_figure(model: Any, title: str | None = None) -> go.Figure:
    """Stacked bars: each subsample's class weights w_tk (best class at the bottom), so one
    sees at a glance whether a subsample is dominated by one class or spread over its K."""
    _check_fitted(model)
    T = len(model.subsamples_)
    K = max(len(s.weights) for s in model.subsamples_)
    fig = go.Figure()
    xs = [str(t + 1) for t in range(T)]
    for k in range(K):
        y = [float(s.weights[k]) if k < len(s.weights) else 0.0 for s in model.subsamples_]
        score = [f"{s.structures[k].log_score:.2f}" if k < len(s.weights) else ""
                 for s in model.subsamples_]
        fig.add_trace(go.Bar(x=xs, y=y, name=f"#{k + 1}", customdata=score,
                             hovertemplate=f"subsample %{{x}}, class #{k + 1}: weight "
                                           "%{y:.3f}, log score %{customdata}<extra></extra>"))
    fig.update_layout(barmode="stack", title=title, template="plotly_white", height=300,
                      xaxis=dict(title="subsample", type="category"),
                      yaxis=dict(title="weight within the subsample", range=[0, 1.0]),
                      legend=dict(title="class rank", traceorder="normal"),
                      showlegend=K <= 12, margin=dict(l=60, r=20, t=50 if title else 20,
                                                      b=50))
    return fig
