"""A fitted average as networks other tools read (DESIGN §17): each member network of the model
as a BIF or XMLBIF file and ``weights.json`` saying how to combine them (``bnma export``).

``weights.json``::

    {"method": "kbest", "class": "class", "averaging": "posterior",
     "members": {"member_000.bif": 0.41, ...}}

``averaging`` says how the members' answers combine: ``"posterior"`` — P(c | x) =
Σ_m w_m P(c | x, m) (K-best, B-RAI, bagging); ``"joint"`` — P(c | x) ∝ Σ_m w_m P(c, x | m),
i.e. each member's posterior weighted by w_m P(x_obs | m) (order-MCMC BMA with its default
``combine="joint"``: one network per kept order, :func:`_order_networks`); ``"single"`` — one
network (naive Bayes, TAN, KDB, the exact networks, and MA-NB, whose average over all 2^N
feature sets collapses exactly into one naive Bayes with θ*_i(x | c) = ρ_i θ^C_i(x | c) +
(1 − ρ_i) θ^∅_i(x), Dash & Cooper 2002 eq. 10-12); ``"stack"`` — a stack's ``components``,
each with its stacking weight and its own members, combined as Σ_k w_k P_k(c | x). A method
whose members are not a fixed set of networks says so in one sentence
(:func:`member_networks`): UKDB and AODE build their networks per case; order-MCMC BMA whose
per-order networks would exceed :data:`EXPORT_MAX_CELLS` CPT cells says so with the numbers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

EXPORT_MAX_CELLS = 2_000_000
"""The most CPT cells the networks of an order average may have together (about 40 MB of BIF
text); beyond it :func:`member_networks` refuses with the numbers."""

FORMATS = {"bif": ".bif", "xmlbif": ".bifxml"}
"""File suffix per format (``.bifxml``: the suffix pyAgrum reads XMLBIF by)."""


@dataclass
class Members:
    """The networks behind a fitted model and how they combine (module docstring)."""

    averaging: str
    networks: list = field(default_factory=list)
    weights: list = field(default_factory=list)
    components: list = field(default_factory=list)  # (name, weight, Members) of a stack


def _names_states(est: Any) -> tuple[list[str], list[list[str]]]:
    names, cname = est._variable_names()
    states = [[str(s) for s in st] for st in est.feature_states_]
    return names + [cname], states + [[str(c) for c in est.classes_]]


def _as_bn(est: Any, parents: list, cpts: list, name: str) -> Any:
    from .network import DiscreteBN

    names, states = _names_states(est)
    return DiscreteBN(names, states, parents, cpts, name=name)


def _order_unions(est: Any) -> tuple[np.ndarray, np.ndarray, list]:
    """The distinct kept orders of an order average, their weights (share of the kept orders)
    and, per order and node, the parent sets its eq. 9 sum reads with their window weights
    exp(S − M) (:func:`bnma_core.kernels.orders._window`, the pruning window the predictions
    use): ``[[(sets, weights), ...per node], ...per order]``."""
    from .kernels.orders import _node_pred, _window, order_positions

    orders, counts = np.unique(np.asarray(est._orders_, dtype=np.int64), axis=0,
                               return_counts=True)
    tab = est.table_
    arrays = tab.arrays()
    m = tab.masks.shape[1]
    idx, w = np.empty(m, dtype=np.int64), np.empty(m)
    windows = []
    for order in orders:
        pos = order_positions(order)
        per_node = []
        for v in range(len(order)):
            cnt = _window(tab.masks[v], tab.scores[v], tab.limits[v],
                          _node_pred(arrays, order, pos, v), tab.log_eps_rel, idx, w)
            per_node.append(([tab.parents(v, int(k)) for k in idx[:cnt]], w[:cnt].copy()))
        windows.append(per_node)
    return orders, counts / counts.sum(), windows


def _order_networks(est: Any, label: str) -> Members:
    """Order-MCMC BMA as one network per kept order (DESIGN §4, §17): under one order eq. 9 is
    prod_v sum_{Z ⊆ pred(v)} w_v(Z) θ̂(x_v | z) / sum_Z w_v(Z), a product of per-node mixtures,
    i.e. the network whose node v has as parents the union U_v of its sets of nonzero weight
    and, for each configuration u of U_v, the CPT row sum_Z w_v(Z) θ̂(x_v | u_Z) / sum_Z w_v(Z)
    (θ̂ the posterior-predictive CPT of the score's Dirichlet prior,
    :func:`bnma_core.kernels.orders.family_cpt`). The kept orders combine as the model's
    ``combine`` says: ``"joint"`` (P(c | x) ∝ sum_t w_t P(c, x_obs | net_t)) or
    ``"posterior"``. Refused in one sentence when the networks together would have more than
    :data:`EXPORT_MAX_CELLS` CPT cells."""
    from .kernels.orders import family_cpt

    orders, weights, windows = _order_unions(est)
    tab = est.table_
    ar = np.asarray(tab.arities, dtype=np.int64)
    unions = [[sorted(set().union(*map(set, sets))) for sets, _ in per_node]
              for per_node in windows]
    cells = [[int(ar[v]) * int(np.prod(ar[u])) for v, u in enumerate(us)] for us in unions]
    total = sum(map(sum, cells))
    if total > EXPORT_MAX_CELLS:
        t, v = max(((t, v) for t in range(len(cells)) for v in range(len(cells[t]))),
                   key=lambda tv: cells[tv[0]][tv[1]])
        names, _ = _names_states(est)
        raise ValueError(
            f"within each order it averages every consistent network, which makes one network "
            f"per order whose node has as parents every parent of its averaged sets: here "
            f"{total:,} CPT cells in all (the largest, {names[v]}'s with "
            f"{len(unions[t][v])} parents: {cells[t][v]:,}; limit {EXPORT_MAX_CELLS:,} in "
            "all). Refit "
            "with max_parents=1 (or 2 on few-valued data), or export kbest or manb.")
    score_kind = tab.score_kind
    nets = []
    for t, per_node in enumerate(windows):
        cpts = []
        for v, (sets, w) in enumerate(per_node):
            union = unions[t][v]
            r = int(ar[v])
            # the configurations of U_v, first parent fastest (DiscreteBN's row layout)
            config = (np.indices(tuple(ar[union][::-1])).reshape(len(union), -1)[::-1]
                      if union else np.zeros((0, 1), dtype=np.int64))
            row = np.zeros((config.shape[1], r))
            for pa, we in zip(sets, w):
                pa_arr = np.asarray(pa, dtype=np.int64)
                st = np.cumprod(np.r_[1, ar[pa_arr]])[:-1].astype(np.int64)
                q = int(np.prod(ar[pa_arr]))
                a = 1.0 if score_kind == 0 else float(tab.ess) / (r * q)
                cpt = family_cpt(tab.data_t, tab.weights, v, pa_arr, st, q, r, a).reshape(q, r)
                j = sum((config[union.index(u)] * s for u, s in zip(pa, st)),
                        np.zeros(config.shape[1], dtype=np.int64))
                row += we * cpt[j]
            cpts.append(row / w.sum())
        nets.append(_as_bn(est, unions[t], cpts, f"{label}_order_{t:03d}"))
    combine = "joint" if getattr(est, "combine", "joint") == "joint" else "posterior"
    return Members(combine, nets, [float(x) for x in weights])


def _renamed(m: Members, names: list[str], states: list[list[str]]) -> Members:
    """``m`` with every network's variables named ``names`` / ``states`` (a stack's components
    are fitted on codes and name their features x0, x1, ...)."""
    from .network import DiscreteBN

    nets = [bn if bn.names == names else
            DiscreteBN(names, states, bn.parents, bn.cpts, name=bn.name) for bn in m.networks]
    comps = [(n, w, _renamed(c, names, states)) for n, w, c in m.components]
    return Members(m.averaging, nets, m.weights, comps)


def member_networks(est: Any, label: str = "model") -> Members:
    """The member networks of ``est`` (variables: the features, then the class) with their
    weights; ValueError in one sentence for a model whose members are not a fixed set of
    networks."""
    kind = type(est).__name__
    if hasattr(est, "stack_components"):
        names, states = _names_states(est)
        comps = []
        for name, weight, sub in est.stack_components():
            try:
                comps.append((name, float(weight),
                              _renamed(member_networks(sub, name), names, states)))
            except ValueError as exc:
                raise ValueError(f"The stack's component {name} cannot be exported: {exc}") \
                    from None
        return Members("stack", components=comps)
    if kind in ("OrderMCMCBMA", "FixedOrderBMA"):
        return _order_networks(est, label)
    if kind == "UKDB" or kind == "AODE":
        raise ValueError(f"{kind} builds its networks for each case (or averages one per "
                         "feature as super-parent with case-dependent counts), so it has no "
                         "fixed set of member networks.")
    if kind == "MANaiveBayes":
        p = len(est.arc_posterior_)
        rho = np.asarray(est.arc_posterior_, dtype=float)
        cpts = []
        for i in range(p):
            r = len(est.theta_empty_[i])
            theta_c = np.exp(est._log_theta_map[i, :r, :]).T          # (classes, r)
            mixed = rho[i] * theta_c + (1 - rho[i]) * np.asarray(est.theta_empty_[i])[None, :]
            cpts.append(mixed / mixed.sum(axis=1, keepdims=True))
        prior = np.exp(est._log_prior - np.logaddexp.reduce(est._log_prior))
        return Members("single", [_as_bn(est, [[p]] * p + [[]], cpts + [prior[None, :]],
                                         label)], [1.0])
    if hasattr(est, "cpts_") and hasattr(est, "feature_parents_"):  # NB, TAN, KDB, aCLL-TAN
        fm = est._factor_model()
        return Members("single", [_as_bn(est, [list(map(int, pa)) for pa in fm.parents],
                                         list(fm.cpts), label)], [1.0])
    nets = getattr(est, "networks_", None)
    if getattr(est, "network_", None) is not None and nets is None:
        return Members("single", [est.network_], [1.0])
    if nets is not None and getattr(est, "weights_", None) is not None:
        return Members("posterior", list(nets), [float(w) for w in est.weights_])
    if nets is not None and getattr(est, "estimator_weights_", None) is not None:
        if getattr(est, "voting", "soft") != "soft":
            raise ValueError(f"{kind} votes (hard voting): its answer is not a weighted "
                             "average of the members' probabilities.")
        w = np.asarray(est.estimator_weights_, dtype=float)
        return Members("posterior", list(nets), list(w / w.sum()))
    raise ValueError(f"{kind} has no member networks to export.")


def _write(bn: Any, path: Path, fmt: str) -> None:
    """BIF as :func:`~bnma_core.network.bif.write_bif` writes it; XMLBIF 0.3 without its
    inline DTD, which pyAgrum's reader does not accept (pgmpy and ours read both)."""
    import re

    from .network.bif import write_bif
    from .network.xmlbif import xmlbif_text

    if fmt == "bif":
        write_bif(bn, path)
    else:
        text = re.sub(r"<!DOCTYPE BIF \[.*?\]>\s*", "", xmlbif_text(bn), count=1, flags=re.S)
        path.write_text(text, encoding="utf-8")


def export_members(est: Any, folder: str | Path, fmt: str = "bif", method: str = "") -> dict:
    """Write each member network of ``est`` into ``folder`` as BIF or XMLBIF, and
    ``weights.json``; returns the content of ``weights.json``.

    Raises
    ------
    ValueError
        An unknown format, or a model without a fixed set of member networks
        (:func:`member_networks`).
    """
    if fmt not in FORMATS:
        raise ValueError(f"Unknown format {fmt!r}; use bif or xmlbif.")
    members = member_networks(est, method or "model")
    folder = Path(folder)
    folder.mkdir(exist_ok=True)
    names, _ = _names_states(est)

    def write_set(m: Members, prefix: str) -> dict:
        files = {}
        for k, (bn, w) in enumerate(zip(m.networks, m.weights)):
            file = f"{prefix}member_{k:03d}{FORMATS[fmt]}"
            _write(bn, folder / file, fmt)
            files[file] = w
        return {"averaging": m.averaging, "members": files}

    out: dict[str, Any] = {"method": method, "class": names[-1],
                           "classes": [str(c) for c in est.classes_], "format": fmt}
    if members.averaging == "stack":
        out["averaging"] = "stack"
        out["components"] = {name: {"weight": w, **write_set(m, f"{name}_")}
                             for name, w, m in members.components}
    else:
        out.update(write_set(members, ""))
    (folder / "weights.json").write_text(json.dumps(out, indent=1), encoding="utf-8")
    return out
