"""Score tables for node-order methods (Hwang & Zhang 2005; DESIGN §3-4, §9).

Two regimes:

* **paper-faithful** (``candidates=None``): every parent set of at most ``max_parents`` variables
  drawn from all the other variables (ALARM, l = 3: 7,807 sets per node), with its local score
  S(X_i; Z) = log rho(X_i | Z) + log ML(X_i, Z). An order's node term sums the sets that fit in
  the node's predecessors.
* **candidate-restricted** (``candidates=K`` or an explicit (n, K) array, K <= 16; the approach
  of BiDAG and sumu): each node keeps K candidate parents — by default the K variables with the
  largest single-parent score gain S(X_i; {X_j}) - S(X_i; ∅) — and all their subsets of at most
  ``max_parents``; a per-node table over candidate bitmasks U holds
  log sum_{S ⊆ U} exp S(X_i; S), built once by a zeta (subset-sum) transform, so an order's node
  term is one lookup. Parent sets outside the candidates get probability zero.

Pruning: each node's sets are sorted by decreasing score; for an order the scan starts at the
best *compatible* set (score M) and stops below M + log(eps / m) (m = sets per node), so the mass
it drops is below ``eps`` times the kept mass and every node term is low by at most
log(1 + eps) <= eps (``prune_eps=0`` keeps everything). Because the empty set is always
compatible, sets below S(∅) + log(eps / m) are never scanned (``limits``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..data import CODE_DTYPE, DataError
from ..kernels.orders import (
    build_candidate_table,
    build_full_table,
    candidate_bytemap,
    node_log_sum,
    order_terms,
    sort_table,
)
from ..scores import _check_prior, log_structure_prior

SCORE_KINDS = {"k2": 0, "bdeu": 1}
DEFAULT_MAX_BYTES = 2_000_000_000
MAX_CANDIDATES = 16


@dataclass
class ScoreTable:
    """Per-node parent sets and local scores, sorted by decreasing score (numba-friendly arrays).

    Attributes
    ----------
    masks : (n, m) uint64
        Parent-set bitmasks (bit v = variable v is a parent).
    scores : (n, m) float64
        Local scores S(X_i; Z), natural log.
    limits : (n,) int64
        Entries worth scanning per node (see module docstring).
    arities : (n,) int64
    max_parents, score, prior, ess, prune_eps
        Settings the table was built with.
    log_eps_rel : float
        log(prune_eps / m), the pruning window (``-inf`` = exact).
    regime : {"full", "candidates"}
    cand : (n, K) int64
        Candidate parents per node (empty (n, 0) in the full regime).
    logsum : (n, 2^K) float64
        Zeta-transformed node terms over candidate bitmasks (empty in the full regime).
    """

    masks: np.ndarray
    scores: np.ndarray
    limits: np.ndarray
    arities: np.ndarray
    max_parents: int
    score: str
    prior: str
    ess: float
    prune_eps: float
    log_eps_rel: float
    regime: str = "full"
    cand: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    logsum: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    exps: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    bid: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    band_first: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    band_anchor: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    bytemap: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 0), dtype=np.int32))

    def kernel_args(self) -> tuple:
        """The arrays the order kernels take, in their order (masks .. bytemap)."""
        return (self.masks, self.scores, self.exps, self.bid, self.band_first,
                self.band_anchor, self.limits, self.log_eps_rel, self.regime_code,
                self.logsum, self.bytemap)

    @property
    def n_vars(self) -> int:
        return self.masks.shape[0]

    @property
    def n_sets(self) -> int:
        return self.masks.shape[1]

    @property
    def regime_code(self) -> int:
        return 0 if self.regime == "full" else 1

    @property
    def nbytes(self) -> int:
        return int(self.masks.nbytes + self.scores.nbytes + self.exps.nbytes
                   + self.bid.nbytes + self.logsum.nbytes + self.bytemap.nbytes)

    def node_log_sum(self, node: int, predecessors: int, exact: bool = False) -> float:
        """log sum_{Z ⊆ predecessors, |Z| <= l} exp S(X_node; Z) (``predecessors`` a bitmask)."""
        i = node
        lim = self.n_sets if exact else int(self.limits[i])
        return float(node_log_sum(self.masks[i], self.scores[i], self.exps[i], self.bid[i],
                                  self.band_first[i], self.band_anchor[i], lim,
                                  np.uint64(predecessors),
                                  -np.inf if exact else self.log_eps_rel))

    def order_terms(self, order: np.ndarray) -> np.ndarray:
        """Node terms of ``order`` (per position), natural log."""
        order = np.asarray(order, dtype=np.int64)
        _, terms = order_terms(order, *self.kernel_args())
        return terms

    def order_log_score(self, order: np.ndarray) -> float:
        """log P(≺, D) up to a constant = sum_i log sum_{Z ⊆ pred(i)} exp S(X_i; Z), natural log
        (uniform prior over orders; DESIGN §4)."""
        return float(self.order_terms(order).sum())


def n_parent_sets(n_others: int, max_parents: int) -> int:
    """sum_{k <= l} C(n_others, k)."""
    return sum(math.comb(n_others, k) for k in range(min(max_parents, n_others) + 1))


def _validate(codes: np.ndarray, arities: np.ndarray, max_parents: int, score: str,
              prior: str, ess: float) -> tuple[np.ndarray, np.ndarray]:
    codes = np.asarray(codes)
    if codes.ndim != 2 or codes.shape[0] == 0:
        raise DataError("The data must be a non-empty table (rows x variables) of state codes.")
    arities = np.asarray(arities, dtype=np.int64)
    n = codes.shape[1]
    if arities.shape != (n,):
        raise ValueError("arities must give one number of states per column.")
    if (arities < 1).any():
        raise ValueError("Every variable needs at least one state.")
    if (codes >= arities[None, :]).any():
        raise DataError("A state code is larger than its variable's number of states.")
    if n > 64:
        raise DataError(f"Node-order methods handle at most 64 variables (got {n}); select "
                        "features first.")
    if n < 2:
        raise DataError("Node-order methods need at least two variables.")
    if not isinstance(max_parents, (int, np.integer)) or max_parents < 0:
        raise ValueError("max_parents must be a non-negative integer.")
    if score not in SCORE_KINDS:
        raise ValueError(f"Unknown score {score!r} for score tables; choose 'k2' or 'bdeu'.")
    if not (ess > 0 and math.isfinite(ess)):
        raise ValueError(f"The equivalent sample size must be positive (got {ess}).")
    _check_prior(prior)
    return np.ascontiguousarray(codes.T, dtype=CODE_DTYPE), arities


def estimate_table_bytes(n_vars: int, n_rows: int, arities: np.ndarray, max_parents: int,
                         n_candidates: int | None = None) -> int:
    """Memory the build will need (tables + working buffers), computed before building."""
    l_eff = min(max_parents, n_vars - 1)
    top = np.sort(np.asarray(arities, dtype=np.int64))[::-1][: l_eff + 1]
    max_cells = int(np.prod(top.astype(float)))
    if n_candidates is None:
        m = n_parent_sets(n_vars - 1, l_eff)
        return int(n_vars * m * 8 * 6 + (l_eff + 2) * n_rows * 8 + max_cells * 8)
    m = n_parent_sets(n_candidates, l_eff)
    return int(n_vars * m * 8 * 6 + n_vars * (2 ** n_candidates) * 8
               + n_vars * ((n_vars + 7) // 8) * 256 * 4 + max_cells * 8)


def _log_priors(n: int, max_parents: int, prior: str) -> np.ndarray:
    return np.array([log_structure_prior(n, k, prior) for k in range(max_parents + 1)])


def select_candidates(codes: np.ndarray, arities: np.ndarray, k: int, score: str = "k2",
                      prior: str = "hz", ess: float = 1.0) -> np.ndarray:
    """K candidate parents per node: the K other variables with the largest single-parent
    score gain S(X_i; {X_j}) - S(X_i; ∅) (ties broken by column index). Returns (n, K) int64."""
    data_t, arities = _validate(codes, arities, 1, score, prior, ess)
    n = data_t.shape[0]
    k = min(int(k), n - 1)
    masks, scores = build_full_table(data_t, arities, 1, _log_priors(n, 1, prior),
                                     SCORE_KINDS[score], float(ess), n, int(
                                         np.sort(arities)[-2:].prod()))
    cand = np.empty((n, k), dtype=np.int64)
    for i in range(n):
        gain = np.full(n, -np.inf)
        for mk, sc in zip(masks[i], scores[i]):
            if mk:
                gain[int(mk).bit_length() - 1] = sc
        gain[i] = -np.inf
        order = np.lexsort((np.arange(n), -gain))
        cand[i] = np.sort(order[:k])
    return cand


def build_score_table(codes: np.ndarray, arities: np.ndarray, max_parents: int = 3,
                      score: str = "k2", prior: str = "hz", ess: float = 1.0,
                      candidates: int | np.ndarray | None = None, prune_eps: float = 1e-12,
                      max_bytes: int = DEFAULT_MAX_BYTES) -> ScoreTable:
    """Build the score table of every node (class included) from coded data.

    Parameters
    ----------
    codes : (n_rows, n_vars) int array
        State codes, -1 = missing (a family's counts skip rows missing one of its variables).
    arities : (n_vars,) int array
    max_parents : int
        Maximum in-degree l (the paper uses 3).
    score : {"k2", "bdeu"}
        K2 (a_ijk = 1, the paper's setting) or BDeu with equivalent sample size ``ess``.
    prior : {"hz", "uniform"}
        Structure prior: Hwang & Zhang eq. 13 (see :func:`bnma_core.scores.log_structure_prior`)
        or uniform.
    candidates : None, int or (n, K) int array
        None = paper-faithful (all parent sets); K = candidate-restricted with K candidates per
        node chosen by :func:`select_candidates`; an array gives them explicitly. K <= 16.
    prune_eps : float
        Relative mass a node term may drop (see module docstring); 0 = exact.
    max_bytes : int
        Refuse (ValueError) when the estimated memory exceeds this.

    Returns
    -------
    ScoreTable

    References
    ----------
    Hwang & Zhang (2005), eqs. 7, 9 and 13; Friedman & Koller (2003) for order scores.
    """
    data_t, arities = _validate(codes, arities, max_parents, score, prior, ess)
    n, n_rows = data_t.shape
    l_eff = min(int(max_parents), n - 1)
    if prune_eps < 0 or not math.isfinite(prune_eps):
        raise ValueError("prune_eps must be a finite number >= 0.")
    if candidates is not None:
        if isinstance(candidates, (int, np.integer)):
            if not 1 <= candidates <= MAX_CANDIDATES:
                raise ValueError(f"The number of candidate parents must be 1..{MAX_CANDIDATES}.")
            k = min(int(candidates), n - 1)
            cand = None
        else:
            cand = np.asarray(candidates, dtype=np.int64)
            if cand.ndim != 2 or cand.shape[0] != n or cand.shape[1] > MAX_CANDIDATES:
                raise ValueError(f"candidates must be an (n_vars, K) array with K <= "
                                 f"{MAX_CANDIDATES}.")
            for i in range(n):
                if (len(set(cand[i].tolist())) != cand.shape[1] or i in cand[i]
                        or (cand[i] < 0).any() or (cand[i] >= n).any()):
                    raise ValueError(f"Candidate parents of node {i} must be distinct other "
                                     "variables.")
            k = cand.shape[1]
        need = estimate_table_bytes(n, n_rows, arities, l_eff, k)
    else:
        need = estimate_table_bytes(n, n_rows, arities, l_eff)
    if need > max_bytes:
        raise ValueError(
            f"The score table would need about {need / 1e9:.2f} GB (limit "
            f"{max_bytes / 1e9:.2f} GB): lower max_parents, use fewer variables or the "
            "candidate-restricted regime.")
    log_prior = _log_priors(n, l_eff, prior)
    top = np.sort(arities)[::-1][: l_eff + 1]
    max_cells = int(np.prod(top))
    kind = SCORE_KINDS[score]
    if candidates is None:
        m = n_parent_sets(n - 1, l_eff)
        masks, scores = build_full_table(data_t, arities, l_eff, log_prior, kind, float(ess),
                                         m, max_cells)
        cand_arr = np.zeros((n, 0), dtype=np.int64)
        logsum = np.zeros((n, 0))
    else:
        if cand is None:
            cand = select_candidates(codes, arities, k, score, prior, ess)
        k = cand.shape[1]
        m = n_parent_sets(k, l_eff)
        masks, scores, logsum = build_candidate_table(data_t, arities, cand, l_eff, log_prior,
                                                      kind, float(ess), m, max_cells)
        cand_arr = cand
    log_eps_rel = math.log(prune_eps / m) if prune_eps > 0 else -math.inf
    masks, scores, limits, exps, bid, band_first, band_anchor = sort_table(masks, scores,
                                                                            log_eps_rel)
    bytemap = (candidate_bytemap(cand_arr, n) if candidates is not None
               else np.zeros((n, 0, 0), dtype=np.int32))
    return ScoreTable(masks, scores, limits, arities, l_eff, score, prior, float(ess),
                      float(prune_eps), log_eps_rel,
                      "full" if candidates is None else "candidates", cand_arr, logsum,
                      exps, bid, band_first, band_anchor, bytemap)
