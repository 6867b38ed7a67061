"""Candidate parents for the order methods beyond the paper's regime (DESIGN §4).

* **Choice from the data** (:func:`bnma_core.structure.score_table.select_candidates`, the
  default): the K variables with the largest single-parent score gain S(X_i; {X_j}) -
  S(X_i; ∅) — a Bayes-factor screening, as the candidate sets of BiDAG and sumu.
* **Expansion where the sample meets the boundary** (:func:`expand_candidates`, after the
  iterative search-space expansion of BiDAG; Kuipers, Suter & Moffa 2022, "Efficient sampling
  and structure learning of Bayesian networks", JCGS 31(3)): given orders sampled on a
  candidate table, take each node's best parent set Z* under each sampled order; score every
  non-candidate u with Z* ∪ {u} (or, when |Z*| = l, with u replacing one member of Z*); a u
  whose best such set beats S(X_i; Z*) would carry posterior mass that the candidate
  restriction forbids (the sample presses on the boundary), so it enters the node's
  candidates, replacing candidates that carry no edge posterior mass (below ``keep_min``). K
  stays fixed (the tables are (n, 2^K)); the table is then rebuilt and the chains rerun
  (``OrderMCMCBMA(expand_rounds=...)``).
"""

from __future__ import annotations

import numpy as np

from ..kernels.orders import extended_set_scores, family_local_ml
from ..scores import log_structure_prior
from .score_table import SCORE_KINDS, ScoreTable


def best_parent_sets(table: ScoreTable, orders: np.ndarray) -> list[set[tuple[int, ...]]]:
    """Per node, the distinct best parent sets (variable indices) compatible with each order:
    the first compatible entry of the node's score-sorted sets."""
    n = table.n_vars
    out: list[set[tuple[int, ...]]] = [set() for _ in range(n)]
    for order in np.asarray(orders, dtype=np.int64):
        pos = np.empty(n, dtype=np.int64)
        pos[order] = np.arange(n)
        for v in range(n):
            if table.regime == "candidates":
                bits = pos[table.cand[v]] < pos[v]
                pred = np.uint64(int((bits * (1 << np.arange(len(bits)))).sum()))
            else:
                pred = np.uint64(sum(1 << int(u) for u in order[: pos[v]]))
            ok = np.nonzero((table.masks[v] & ~pred) == 0)[0]
            out[v].add(tuple(table.parents(v, int(ok[0]))))
    return out


def boundary_gains(table: ScoreTable, orders: np.ndarray) -> np.ndarray:
    """gain[u, v] = max over the best sets Z* of v (:func:`best_parent_sets`) of
    S(X_v; Z* ∪ {u}) - S(X_v; Z*) (Z* with one member replaced by u when |Z*| = l), for every
    non-candidate u of v; -inf for candidates and v itself. Positive = u would improve v's best
    parent set under a sampled order. Counted from the table's training rows."""
    n = table.n_vars
    data = np.ascontiguousarray(table.data_t.T)
    w = table.weights.astype(np.float64)
    kind = SCORE_KINDS[table.score]
    l = table.max_parents
    gain = np.full((n, n), -np.inf)
    best = best_parent_sets(table, orders)
    for v in range(n):
        inside = set(int(u) for u in table.cand[v]) | {v}
        others = np.array([u for u in range(n) if u not in inside], dtype=np.int64)
        if not len(others):
            continue
        for z in best[v]:
            s_z = _score(data, w, table, v, list(z))
            bases = [list(z)] if len(z) < l else [[p for p in z if p != d] for d in z]
            for base in bases:
                prior = log_structure_prior(n, len(base) + 1, table.prior)
                s = extended_set_scores(data, w, table.arities, v,
                                        np.array(base, dtype=np.int64), others, prior, kind,
                                        float(table.ess))
                gain[others, v] = np.maximum(gain[others, v], s - s_z)
    return gain


def _score(data: np.ndarray, w: np.ndarray, table: ScoreTable, v: int, pa: list[int]
           ) -> float:
    """S(X_v; pa) as the table scores it (structure prior + node-average log-ML)."""
    return (log_structure_prior(table.n_vars, len(pa), table.prior)
            + float(family_local_ml(data, w, table.arities, v, np.array(pa, dtype=np.int64),
                                    SCORE_KINDS[table.score], float(table.ess))))


def expand_candidates(table: ScoreTable, orders: np.ndarray,
                      edge_posterior: np.ndarray | None = None, keep_min: float = 0.01
                      ) -> tuple[np.ndarray, int]:
    """New (n, K) candidate array after one expansion round (see the module docstring) and the
    number of candidates replaced. ``edge_posterior[u, v]`` (P(u -> v | D), averaged over the
    sampled orders) ranks the current candidates; computed from ``orders`` when omitted."""
    if table.regime != "candidates":
        raise ValueError("Candidate expansion needs a candidate-restricted score table.")
    n, K = table.cand.shape
    orders = np.asarray(orders, dtype=np.int64)
    if edge_posterior is None:
        edge_posterior = sum(table.edge_probabilities(o, 0)[0] for o in orders) / len(orders)
    gain = boundary_gains(table, orders)
    new = table.cand.copy()
    replaced = 0
    for v in range(n):
        cur = [int(u) for u in table.cand[v]]
        used = sorted(cur, key=lambda u: -edge_posterior[u, v])
        keep = [u for u in used if edge_posterior[u, v] >= keep_min]
        spare = [u for u in used if edge_posterior[u, v] < keep_min]
        enter = [int(u) for u in np.argsort(-gain[:, v], kind="stable") if gain[u, v] > 0]
        enter = enter[: K - len(keep)]
        chosen = keep + enter + spare[: K - len(keep) - len(enter)]
        replaced += len(enter)
        new[v] = np.sort(np.array(chosen, dtype=np.int64))
    return new, replaced
