"""Family scores (K2, BDeu, BD), structure priors, posterior-predictive CPTs and information
measures (DESIGN §3, §5).

One home per formula: the Dirichlet family log marginal likelihood and its hyperparameters are
:class:`DirichletScore` (``log_ml_counts``, ``log_marginal_likelihood``, ``local_score`` and
``dirichlet_alpha`` are thin wrappers); the posterior-predictive CPT with a named prior is
:func:`posterior_cpt`; configuration indices are
:func:`bnma_core.kernels.counting.parent_strides`.

Notation: child X_i with r_i states, parent set Pa_i with q_i configurations, counts N_ijk.
Parent configurations are indexed mixed-radix with the *first* parent varying fastest.
All probabilities are handled in log space (natural log unless a ``base`` is given).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .data import CODE_DTYPE, DataError, DiscreteDataset
from .kernels.counting import (
    count_family,
    count_family_weighted,
    log_ml_from_counts,
    log_ml_uniform_alpha,
)
from .kernels.information import local_information, pairwise_cmi

SCORES = ("k2", "bdeu", "bd")
PRIORS = ("uniform", "hz")


def _check_score(score: str, ess: float) -> None:
    if score not in SCORES:
        raise ValueError(f"Unknown score {score!r}; choose one of {', '.join(SCORES)}.")
    if not (ess > 0 and math.isfinite(ess)):
        raise ValueError(f"The equivalent sample size must be positive (got {ess}).")


def _check_prior(prior: str) -> None:
    if prior not in PRIORS:
        raise ValueError(f"Unknown structure prior {prior!r}; choose one of {', '.join(PRIORS)}.")


def _as_parents(parents: Iterable[int] | int | None) -> np.ndarray:
    if parents is None:
        return np.zeros(0, dtype=np.int64)
    if isinstance(parents, (int, np.integer)):
        return mask_to_parents(int(parents))
    return np.asarray(list(parents), dtype=np.int64)


def mask_to_parents(mask: int) -> np.ndarray:
    """Bitmask (bit v set = variable v is a parent) -> sorted parent indices."""
    out = []
    v = 0
    while mask:
        if mask & 1:
            out.append(v)
        mask >>= 1
        v += 1
    return np.asarray(out, dtype=np.int64)


def parents_to_mask(parents: Iterable[int]) -> int:
    m = 0
    for p in parents:
        m |= 1 << int(p)
    return m


MAX_DENSE_FAMILY_CELLS = 1 << 26
"""Largest (q_i, r_i) count table :func:`family_counts` allocates (512 MiB of float64)."""


def family_counts(data: np.ndarray, child: int, parents: Iterable[int] | int | None,
                  arities: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """N_ijk as a (q_i, r_i) float array (rows missing the child or a parent are skipped).

    Raises
    ------
    DataError
        The table would have more than :data:`MAX_DENSE_FAMILY_CELLS` cells (a method setting
        such as KDB's k = 8 on 10-valued attributes): refused before allocation, with the size.
    """
    data = np.ascontiguousarray(data, dtype=CODE_DTYPE)
    pa = _as_parents(parents)
    ar = np.asarray(arities, dtype=np.int64)
    cells = int(ar[child])
    for p in pa.tolist():  # Python ints: no overflow, ~1 µs (np.prod here doubled the call)
        cells *= int(ar[p])
    if cells > MAX_DENSE_FAMILY_CELLS:
        raise DataError(
            f"A probability table for variable {int(child)} with {len(pa)} parents would have "
            f"{cells:.3g} cells ({cells * 8 / 2**30:.3g} GiB), more than this library holds "
            f"({MAX_DENSE_FAMILY_CELLS:.3g} cells, 512 MiB). Use fewer parents per variable "
            "(a smaller k or max_parents) or merge the states of many-valued columns.")
    if weights is None:
        return count_family(data, int(child), pa, ar)
    return count_family_weighted(data, np.asarray(weights, dtype=np.float64), int(child), pa, ar)


def observed_family_counts(data: np.ndarray, child: int, parents: Iterable[int] | int | None,
                           arities: np.ndarray, weights: np.ndarray | None = None
                           ) -> np.ndarray:
    """N_ijk of the parent configurations j that occur, as a (q_observed, r_i) float array
    (configurations in no particular order; rows missing the child or a parent are skipped).

    What :meth:`DirichletScore.log_ml` (with ``q``) needs of a family whose full (q_i, r_i)
    table is too large to hold: a configuration never seen adds
    lgamma(a_ij) - lgamma(a_ij + 0) = 0 to the marginal likelihood."""
    data = np.asarray(data)
    pa = _as_parents(parents)
    cols = data[:, [*pa.tolist(), int(child)]].astype(np.int64)
    ok = (cols >= 0).all(axis=1)
    cols = cols[ok]
    w = np.ones(len(cols)) if weights is None else np.asarray(weights, dtype=np.float64)[ok]
    r = int(np.asarray(arities)[int(child)])
    if len(cols) == 0:
        return np.zeros((0, r))
    _, inv = np.unique(cols[:, :-1], axis=0, return_inverse=True)
    inv = inv.ravel()
    out = np.zeros((int(inv.max()) + 1, r))
    np.add.at(out, (inv, cols[:, -1]), w)
    return out


class DirichletScore:
    """Dirichlet family score: the one home of the family log marginal likelihood and of the
    Dirichlet hyperparameters a_ijk of K2, BDeu and BD (DESIGN §3).

    Shaped like pgmpy's ``StructureScore`` subclasses: the object holds the choice of prior;
    :meth:`log_ml` scores one family from its counts, :meth:`local_score` from data, and
    :meth:`alpha` gives the hyperparameters that :func:`posterior_cpt` also uses. Counts may be
    integers or fractional (weighted rows, EM expected counts): the formula only needs
    lgamma of non-negative reals.

    Parameters
    ----------
    kind : {"k2", "bdeu", "bd"}, default "bdeu"
        ``"k2"``: a_ijk = 1 (Cooper & Herskovits 1992). ``"bdeu"``: a_ijk = ess / (r_i q_i)
        (Heckerman, Geiger & Chickering 1995, the likelihood-equivalent uniform prior;
        Sugahara et al. use ess = 1). ``"bd"``: the given ``alpha``.
    ess : float, default 1.0
        Equivalent sample size of ``"bdeu"`` (ignored by the other kinds; must be positive).
    alpha : float or (q, r) array, optional
        Hyperparameters of ``"bd"`` (required for it, ignored otherwise).

    Notes
    -----
    Log marginal likelihood of one family (Heckerman et al. 1995, eq. 8; Cooper & Herskovits
    1992, eq. 20 for a_ijk = 1):

        sum_j [lgamma(a_ij) - lgamma(a_ij + N_ij)] + sum_jk [lgamma(a_ijk + N_ijk) - lgamma(a_ijk)]

    with a_ij = sum_k a_ijk and N_ij = sum_k N_ijk; configurations with N_ij = 0 contribute 0.
    Computed by the numba kernels :func:`bnma_core.kernels.counting.log_ml_uniform_alpha`
    (one value in every cell: K2, BDeu, BD with a scalar) and
    :func:`bnma_core.kernels.counting.log_ml_from_counts` (a table of hyperparameters).

    Examples
    --------
    >>> import numpy as np
    >>> s = DirichletScore("k2")
    >>> round(s.log_ml(np.array([[2.0, 1.0]])), 6)  # 1!/4! * 2! 1! = 1/12
    -2.484907
    """

    def __init__(self, kind: str = "bdeu", ess: float = 1.0,
                 alpha: np.ndarray | float | None = None) -> None:
        _check_score(kind, ess)
        bd_alpha = None
        if kind == "bd":
            if alpha is None:
                raise ValueError("score='bd' needs the Dirichlet hyperparameters alpha.")
            bd_alpha = np.asarray(alpha, dtype=np.float64)
            if not (np.isfinite(bd_alpha).all() and (bd_alpha > 0).all()):
                raise ValueError("Dirichlet hyperparameters must be positive.")
        self.kind = kind
        self.ess = float(ess)
        self._bd_alpha = bd_alpha

    def __repr__(self) -> str:
        extra = f", alpha={self._bd_alpha!r}" if self.kind == "bd" else ""
        return f"DirichletScore({self.kind!r}, ess={self.ess:g}{extra})"

    def cell_alpha(self, r: int, q: int) -> float | None:
        """The common a_ijk of a family with ``r`` states and ``q`` parent configurations, or
        None when the hyperparameters differ between cells (BD with a table)."""
        if self.kind == "k2":
            return 1.0
        if self.kind == "bdeu":
            return self.ess / (r * q)
        return float(self._bd_alpha) if self._bd_alpha.ndim == 0 else None

    def alpha(self, r: int, q: int) -> np.ndarray:
        """Hyperparameters a_ijk as a (q, r) array (K2: 1; BDeu: ess / (r q); BD: given)."""
        a = self.cell_alpha(r, q)
        if a is not None:
            return np.full((q, r), a)
        try:
            return np.broadcast_to(self._bd_alpha, (q, r)).copy()
        except ValueError:
            raise ValueError(f"BD hyperparameters of shape {self._bd_alpha.shape} do not fit "
                             f"a family table of shape ({q}, {r}).") from None

    def log_ml(self, counts: np.ndarray, q: int | None = None) -> float:
        """Log marginal likelihood of one family from its (q, r) counts N_ijk (integer or
        fractional, non-negative).

        ``q``: the family's number of parent configurations when ``counts`` holds only some of
        its rows (those observed: :func:`observed_family_counts`); the rows left out must be
        empty. K2 and BDeu only (every a_ijk equal; BDeu's a = ess / (r q) uses this q)."""
        counts = np.ascontiguousarray(counts, dtype=np.float64)
        if counts.ndim != 2:
            raise ValueError(f"counts must be a (q, r) table; got shape {counts.shape}.")
        q_rows, r = counts.shape
        q = q_rows if q is None else int(q)
        if q < q_rows:
            raise ValueError(f"q = {q} is smaller than the {q_rows} rows of counts.")
        a = self.cell_alpha(r, q)
        if a is not None:
            return float(log_ml_uniform_alpha(counts, a))
        if q != q_rows:
            raise ValueError("BD with a table of hyperparameters needs the full (q, r) counts.")
        return float(log_ml_from_counts(counts, self.alpha(r, q)))

    def local_score(self, data: np.ndarray, child: int, parents: Iterable[int] | int | None,
                    arities: np.ndarray, weights: np.ndarray | None = None) -> float:
        """log P(D_child | parents) from data codes (-1 = missing; rows missing the child or a
        parent are skipped; ``weights`` weight rows)."""
        return self.log_ml(family_counts(data, child, parents, arities, weights))

    def posterior_cpt(self, counts: np.ndarray) -> np.ndarray:
        """Posterior-predictive CPT with this score's hyperparameters (:func:`posterior_cpt`)."""
        q, r = np.shape(counts)[-2:]
        return posterior_cpt(counts, self.alpha(r, q))


def dirichlet_score(score: str | DirichletScore, ess: float = 1.0,
                    alpha: np.ndarray | float | None = None) -> DirichletScore:
    """A :class:`DirichletScore` from a name (``"k2"``, ``"bdeu"``, ``"bd"``) or the object
    itself (returned unchanged)."""
    if isinstance(score, DirichletScore):
        return score
    return DirichletScore(score, ess, alpha)


def dirichlet_alpha(score: str, r: int, q: int, ess: float = 1.0,
                    alpha: np.ndarray | float | None = None) -> np.ndarray:
    """Hyperparameters a_ijk as a (q, r) array: K2 a = 1; BDeu a = ess / (r q);
    BD: the given ``alpha`` (scalar or (q, r) array). See :meth:`DirichletScore.alpha`."""
    return DirichletScore(score, ess, alpha).alpha(r, q)


def log_ml_counts(counts: np.ndarray, score: str | DirichletScore = "k2", ess: float = 1.0,
                  alpha: np.ndarray | float | None = None) -> float:
    """Log marginal likelihood of one family from its (q, r) counts (DESIGN §3):
    sum_j [lgamma(a_ij) - lgamma(a_ij + N_ij)] + sum_jk [lgamma(a_ijk + N_ijk) - lgamma(a_ijk)].
    Integer or fractional counts; ``score`` a name or a :class:`DirichletScore`.
    """
    return dirichlet_score(score, ess, alpha).log_ml(counts)


def log_marginal_likelihood(data: np.ndarray, child: int, parents: Iterable[int] | int | None,
                            arities: np.ndarray, score: str | DirichletScore = "k2",
                            ess: float = 1.0, alpha: np.ndarray | float | None = None,
                            weights: np.ndarray | None = None) -> float:
    """log P(D_i | Pa_i) for one family: K2 (a_ijk = 1, Cooper & Herskovits 1992), BDeu
    (a_ijk = ess/(r_i q_i), Heckerman et al. 1995) or BD with the given ``alpha``."""
    return log_ml_counts(family_counts(data, child, parents, arities, weights), score, ess, alpha)


def log_structure_prior(n_vars: int, n_parents: int, prior: str = "hz") -> float:
    """log rho(X_i | Pa_i), the per-family structure prior factor (natural log).

    ``"uniform"``: 0. ``"hz"``: Hwang & Zhang (2005) eq. 13, read as the MDL code length of
    the family: log2(n) bits for the number of parents plus log2 C(n, |Pa_i|) bits for which ones,
    so rho = 2^-(log2 n + log2 C(n, |Pa_i|)) = 1 / (n C(n, |Pa_i|)), with n the number of
    variables. Larger parent sets are penalised; the empty set costs log2 n bits.
    """
    _check_prior(prior)
    if prior == "uniform":
        return 0.0
    if not 0 <= n_parents <= n_vars:
        raise ValueError("n_parents must be between 0 and n_vars")
    log_binom = math.lgamma(n_vars + 1) - math.lgamma(n_parents + 1) - math.lgamma(
        n_vars - n_parents + 1)
    return -(math.log(n_vars) + log_binom)


def local_score(data: np.ndarray, child: int, parents: Iterable[int] | int | None,
                arities: np.ndarray, score: str | DirichletScore = "k2", ess: float = 1.0,
                prior: str = "hz", n_vars: int | None = None) -> float:
    """S(X_i; Z) = log rho(X_i | Z) + log ML(X_i, Z) (DESIGN §3)."""
    pa = _as_parents(parents)
    n = len(arities) if n_vars is None else n_vars
    return log_structure_prior(n, len(pa), prior) + log_marginal_likelihood(
        data, child, pa, arities, score, ess)


CPT_PRIORS = ("bdeu", "k2", "laplace")
"""Named priors of :func:`posterior_cpt` ("laplace" is an alias of "k2")."""


def cpt_alpha(prior: str | float | np.ndarray, r: int, q: int, ess: float = 1.0
              ) -> float | np.ndarray:
    """Pseudo-counts a_ijk of a (q, r) CPT for a named prior or a given pseudo-count.

    ``"bdeu"``: ess / (r q) (with ess = 1 the EAP prior of Sugahara et al., used there for
    every classifier); ``"k2"`` and its alias ``"laplace"``: 1 (via
    :meth:`DirichletScore.cell_alpha`); a number, or an array broadcastable to (q, r): used as
    given (must be >= 0; a zero marks a padded state that does not exist).
    """
    if isinstance(prior, str):
        key = "k2" if prior == "laplace" else prior
        if key not in ("bdeu", "k2"):
            raise ValueError(f"Unknown CPT prior {prior!r}; choose one of "
                             f"{', '.join(CPT_PRIORS)} or give a pseudo-count.")
        return DirichletScore(key, ess).cell_alpha(r, q)
    if isinstance(prior, (float, int)) and not isinstance(prior, bool) \
            and math.isfinite(prior) and prior >= 0:
        return float(prior)  # the common case, without the array round trip
    try:
        if prior is None or isinstance(prior, bool):
            raise TypeError
        a = np.asarray(prior, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"prior must be one of {', '.join(CPT_PRIORS)} or a pseudo-count "
                         f"(got {prior!r}).") from None
    if not (np.isfinite(a).all() and (a >= 0).all()):
        raise ValueError(f"Pseudo-counts must be finite and >= 0 (got {prior!r}).")
    return float(a) if a.ndim == 0 else a


def posterior_cpt(counts: np.ndarray, prior: str | float | np.ndarray = 1.0,
                  ess: float = 1.0, *, alpha: float | np.ndarray | None = None) -> np.ndarray:
    """Posterior-predictive (EAP) CPT theta_ijk = (a_ijk + N_ijk) / (a_ij + N_ij).

    The one home of this formula (Heckerman et al. 1995, eq. 9; Dash & Cooper 2002, eq. 6;
    Sugahara et al., sec. 2, for the BDeu choice a_ijk = 1 / (r_i q_i)).

    Parameters
    ----------
    counts : array of shape (q, r) or (..., q, r)
        N_ijk, integer or fractional. Layout (the library's one CPT layout, as in
        :class:`bnma_core.network.DiscreteBN`): rows are parent configurations indexed mixed
        radix with the *first* parent varying fastest
        (:func:`bnma_core.kernels.counting.parent_strides`), columns are the child's states.
        Leading axes stack independent tables of the same (q, r).
    prior : {"bdeu", "k2", "laplace"} or float or array, default 1.0
        ``"bdeu"``: a_ijk = ess / (r q); ``"k2"``: a_ijk = 1; ``"laplace"``: the same as
        ``"k2"`` (the Laplace correction (N_ijk + 1) / (N_ij + r) *is* the K2 posterior mean,
        so it is an alias). A number (or an array broadcastable to ``counts``) is the
        pseudo-count a_ijk itself (>= 0; zeros mark padded states).
    ess : float, default 1.0
        Equivalent sample size of ``"bdeu"``.
    alpha : float or array, optional
        The former name of a given pseudo-count (``posterior_cpt(counts, alpha=a)`` is
        ``posterior_cpt(counts, a)``); overrides ``prior``.

    Returns
    -------
    ndarray of the shape of ``counts``; every row sums to one.
    """
    if alpha is not None:
        prior = alpha
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim < 2:
        raise ValueError(f"counts must be a (q, r) table; got shape {counts.shape}.")
    q, r = counts.shape[-2:]
    num = counts + cpt_alpha(prior, r, q, ess)
    den = num.sum(axis=-1, keepdims=True)
    if not (den > 0).all():
        raise ValueError("A CPT row has no counts and no pseudo-counts; give a positive prior.")
    return num / den


def structure_score(data: np.ndarray, parent_sets: Sequence[Iterable[int]], arities: np.ndarray,
                    score: str = "k2", ess: float = 1.0, prior: str = "uniform") -> float:
    """Sum of local scores of a whole DAG given as one parent list per variable."""
    return float(sum(local_score(data, i, pa, arities, score, ess, prior)
                     for i, pa in enumerate(parent_sets)))


class FamilyScoreCache:
    """Memoised local scores S(X_i; Z) for one data set (keyed by child and parent bitmask).

    Parameters
    ----------
    data : (n_rows, n_vars) int array of codes
    arities : (n_vars,) int array
    score : {"k2", "bdeu"} or DirichletScore
    ess : float
        BDeu equivalent sample size.
    prior : {"uniform", "hz"}
    """

    def __init__(self, data: np.ndarray, arities: np.ndarray,
                 score: str | DirichletScore = "k2", ess: float = 1.0, prior: str = "hz") -> None:
        dirichlet_score(score, ess)
        _check_prior(prior)
        self.data = np.ascontiguousarray(data, dtype=CODE_DTYPE)
        self.arities = np.asarray(arities, dtype=np.int64)
        self.score, self.ess, self.prior = score, ess, prior
        self._cache: dict[tuple[int, int], float] = {}
        self.hits = 0

    def __call__(self, child: int, parents: Iterable[int] | int | None) -> float:
        pa = _as_parents(parents)
        key = (int(child), parents_to_mask(pa))
        val = self._cache.get(key)
        if val is not None:
            self.hits += 1
            return val
        val = local_score(self.data, child, pa, self.arities, self.score, self.ess, self.prior)
        self._cache[key] = val
        return val

    def __len__(self) -> int:
        return len(self._cache)


# --------------------------------------------------------------------------------------------
# Information measures (DESIGN §5)
# --------------------------------------------------------------------------------------------


def joint_counts(data: np.ndarray, variables: Sequence[int], arities: np.ndarray,
                 weights: np.ndarray | None = None) -> np.ndarray:
    """(Weighted) contingency table of ``variables`` as an array of shape (r_v1, ..., r_vk);
    rows missing any of the variables (code -1) are skipped."""
    data = np.asarray(data)
    vs = list(variables)
    shape = tuple(int(arities[v]) for v in vs)
    sub = data[:, vs]
    ok = (sub >= 0).all(axis=1)
    idx = np.ravel_multi_index(tuple(sub[ok].T), shape) if len(vs) else np.zeros(ok.sum(), int)
    w = None if weights is None else np.asarray(weights, dtype=float)[ok]
    counts = np.bincount(idx, weights=w, minlength=int(np.prod(shape))).astype(float)
    return counts.reshape(shape)


def joint_distribution(data: np.ndarray, variables: Sequence[int], arities: np.ndarray,
                       weights: np.ndarray | None = None, smoothing: float = 0.0) -> np.ndarray:
    """Empirical joint P(X_v1, ..., X_vk) as an array of shape (r_v1, ..., r_vk).

    Rows missing any of the variables are skipped; ``weights`` weight rows (pseudo instances);
    ``smoothing`` adds a Dirichlet pseudo-count to every cell (0 = maximum likelihood).
    """
    counts = joint_counts(data, variables, arities, weights) + smoothing
    total = counts.sum()
    if total <= 0:
        raise ValueError("no complete rows for these variables")
    return counts / total


def _xlogy_ratio(p: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        t = p * (np.log(num) - np.log(den))
    return np.where(p > 0, t, 0.0)


def mutual_information(p_xy: np.ndarray, base: float = math.e) -> float:
    """I(X;Y) = sum_xy P(x,y) log [P(x,y) / (P(x) P(y))] from a 2-D joint distribution."""
    px = p_xy.sum(axis=1, keepdims=True)
    py = p_xy.sum(axis=0, keepdims=True)
    return float(_xlogy_ratio(p_xy, p_xy, px * py).sum() / math.log(base))


def conditional_mutual_information(p_xyc: np.ndarray, base: float = math.e) -> float:
    """I(X;Y|C) = sum_xyc P(x,y,c) log [P(x,y|c) / (P(x|c) P(y|c))]
    = sum P(x,y,c) log [P(x,y,c) P(c) / (P(x,c) P(y,c))], axes (x, y, c)."""
    pc = p_xyc.sum(axis=(0, 1), keepdims=True)
    pxc = p_xyc.sum(axis=1, keepdims=True)
    pyc = p_xyc.sum(axis=0, keepdims=True)
    return float(_xlogy_ratio(p_xyc, p_xyc * pc, pxc * pyc).sum() / math.log(base))


def _local_information(n_joint: np.ndarray, num: np.ndarray, den: np.ndarray,
                       base: float) -> np.ndarray:
    """sum_c (n_joint / sum_c n_joint) log(num / den) over the last axis; cells with
    n_joint = 0 contribute 0, and a value with no weight at all gives 0. The sum is the
    numba kernel :func:`bnma_core.kernels.information.local_information` (the formula's one
    home, which UKDB's per-row kernels also call)."""
    n_joint, num, den = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64)
                                              for a in (n_joint, num, den)))
    shape = n_joint.shape
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.log(num / den)
    vals = local_information(np.ascontiguousarray(n_joint).reshape(-1, shape[-1]),
                             np.ascontiguousarray(log_ratio).reshape(-1, shape[-1]))
    return vals.reshape(shape[:-1]) / math.log(base)


def local_mutual_information_counts(n_xc: np.ndarray, n_c: np.ndarray,
                                    base: float = math.e) -> np.ndarray:
    """LMI I(x; C) = sum_c P(c|x) log [P(x,c) / (P(x) P(c))] for a batch of values, from counts
    (paper 004, eq. 14; DESIGN §5). The one home of the LMI formula.

    Parameters
    ----------
    n_xc : array (..., m)
        (Weighted) counts of (x, c) at each value x of the batch.
    n_c : array (..., m)
        Class counts of the table each x comes from (N = sum_c n_c); broadcast against ``n_xc``.
        Counts or probabilities (the formula is scale-free).

    Returns
    -------
    array (...)  (0 where x has no weight)
    """
    n_xc = np.asarray(n_xc, dtype=np.float64)
    n_c = np.asarray(n_c, dtype=np.float64)
    n_x = n_xc.sum(axis=-1, keepdims=True)
    n_all = n_c.sum(axis=-1, keepdims=True)
    return _local_information(n_xc, n_xc * n_all, n_x * n_c, base)


def conditional_local_mutual_information_counts(n_xyc: np.ndarray, n_xc: np.ndarray,
                                                n_yc: np.ndarray, n_c: np.ndarray,
                                                base: float = math.e) -> np.ndarray:
    """CLMI I(x; y | C) = sum_c P(c|x,y) log [P(x,y|c) / (P(x|c) P(y|c))] for a batch of value
    pairs, from counts (paper 004, eq. 14; DESIGN §5). The one home of the CLMI formula.

    Parameters
    ----------
    n_xyc, n_xc, n_yc, n_c : arrays (..., m)
        (Weighted) counts of (x, y, c), (x, c), (y, c) and c in the table of each pair
        (counts or probabilities: the formula is scale-free).

    Returns
    -------
    array (...)  (0 where (x, y) has no weight)
    """
    n_xyc = np.asarray(n_xyc, dtype=np.float64)
    return _local_information(n_xyc, n_xyc * n_c, np.asarray(n_xc) * n_yc, base)


def local_mutual_information(p_xc: np.ndarray, x: int, base: float = math.e) -> float:
    """LMI I(x;C) = sum_c P(c|x) log [P(x,c) / (P(x) P(c))] at the value x (DESIGN §5), from
    the joint table ``p_xc`` of shape (r_x, m) (see :func:`local_mutual_information_counts`).

    Weighted by P(x) and summed over x it equals :func:`mutual_information`."""
    p_xc = np.asarray(p_xc, dtype=np.float64)
    return float(local_mutual_information_counts(p_xc[x], p_xc.sum(axis=0), base))


def conditional_local_mutual_information(p_xyc: np.ndarray, x: int, y: int,
                                         base: float = math.e) -> float:
    """CLMI I(x;y|C) = sum_c P(c|x,y) log [P(x,y|c) / (P(x|c) P(y|c))] at values (x, y), from
    the joint table ``p_xyc`` of shape (r_x, r_y, m)
    (see :func:`conditional_local_mutual_information_counts`).

    Weighted by P(x,y) and summed over (x, y) it equals :func:`conditional_mutual_information`.
    """
    p_xyc = np.asarray(p_xyc, dtype=np.float64)
    return float(conditional_local_mutual_information_counts(
        p_xyc[x, y], p_xyc[x].sum(axis=0), p_xyc[:, y].sum(axis=0), p_xyc.sum(axis=(0, 1)),
        base))


def class_mutual_informations(X: np.ndarray, y: np.ndarray, arities: np.ndarray, n_classes: int,
                              weights: np.ndarray | None = None, smoothing: float = 0.0,
                              base: float = math.e) -> np.ndarray:
    """I(X_i; C) for every feature column of ``X`` (codes, -1 missing)."""
    data = np.column_stack([X, y])
    ar = np.append(np.asarray(arities, dtype=np.int64), n_classes)
    c = data.shape[1] - 1
    return np.array([mutual_information(joint_distribution(data, [i, c], ar, weights, smoothing),
                                        base) for i in range(X.shape[1])])


def informative_features(ds: DiscreteDataset) -> pd.DataFrame:
    """Features ranked by their mutual information with the class, most informative first.

    I(X_i; C) in bits (:func:`class_mutual_informations`, each feature from the rows where it
    and the class are both known): a screen of which features carry information about the
    class before any model is fitted (the Data page's table).

    Parameters
    ----------
    ds : DiscreteDataset
        The coded data.

    Returns
    -------
    DataFrame
        Columns ``feature``, ``MI with class (bits)``, ``states``; ties keep the dataset's
        order.
    """
    mi = class_mutual_informations(ds.X, ds.y, ds.arities[ds.feature_indices],
                                   len(ds.classes), base=2.0)
    out = pd.DataFrame({"feature": ds.feature_names, "MI with class (bits)": mi,
                        "states": ds.arities[ds.feature_indices]})
    return out.sort_values("MI with class (bits)", ascending=False,
                           kind="stable").reset_index(drop=True)


def pairwise_conditional_mutual_information(X: np.ndarray, y: np.ndarray, arities: np.ndarray,
                                            n_classes: int, weights: np.ndarray | None = None,
                                            smoothing: float = 0.0,
                                            base: float = math.e) -> np.ndarray:
    """Symmetric matrix of I(X_i; X_j | C) over feature pairs (zero diagonal), each pair from the
    rows where both features and the class are observed (numba kernel; same definition as
    :func:`conditional_mutual_information` on :func:`joint_distribution`)."""
    X = np.ascontiguousarray(X, dtype=CODE_DTYPE)
    y = np.ascontiguousarray(y, dtype=CODE_DTYPE)
    w = np.ones(len(X)) if weights is None else np.asarray(weights, dtype=np.float64)
    out = pairwise_cmi(X, y, np.asarray(arities, dtype=np.int64), int(n_classes), w,
                       float(smoothing))
    return out / math.log(base)


def g2_test(data: np.ndarray, x: int, y: int, z: Sequence[int], arities: np.ndarray,
            weights: np.ndarray | None = None) -> float:
    """p-value of the G² conditional-independence test of X ⊥ Y | Z.

    G² = 2 sum_xyz N_xyz log(N_xyz N_z / (N_xz N_yz)) = 2 N · I(X; Y | Z) (in nats, on the
    empirical distribution), referred to a chi-square distribution with
    (r_x - 1)(r_y - 1) prod_{v in Z} r_v degrees of freedom (at least 1) (Spirtes, Glymour &
    Scheines 2000, §5.4.2). RAI (:func:`bnma_core.structure.rai.rai`) accepts independence
    when the p-value exceeds its significance level.

    Parameters
    ----------
    data : (N, n) int array
        Codes 0..r_i - 1; rows with a missing value (code -1) in X, Y or Z are skipped.
    x, y : int
        Columns of the two variables tested.
    z : sequence of int
        Columns of the conditioning set (empty: marginal independence).
    arities : (n,) int array
    weights : (N,) float array, optional
        Row multiplicities (e.g. counts of distinct rows); default 1 per row.

    Returns
    -------
    float
        The p-value, P(chi2_df >= G²). The statistic is counted by the numba kernel
        :func:`bnma_core.kernels.citests.g2_statistic`.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.arange(200) % 2
    >>> data = np.column_stack([a, a, (np.arange(200) // 2) % 2])
    >>> g2_test(data, 0, 1, (), [2, 2, 2]) < 1e-10      # a copy: dependent
    True
    >>> g2_test(data, 0, 2, (), [2, 2, 2]) > 0.5        # balanced, unrelated
    True
    """
    from scipy.special import chdtrc

    from .kernels.citests import g2_statistic  # loads scipy's cephes: imported when used

    data = np.ascontiguousarray(data, dtype=np.int64)
    ar = np.ascontiguousarray(arities, dtype=np.int64)
    w = (np.ones(len(data)) if weights is None
         else np.ascontiguousarray(weights, dtype=np.float64))
    x, y = int(x), int(y)
    g2 = g2_statistic(data, w, x, y, np.asarray(z, dtype=np.int64), ar)
    df = (int(ar[x]) - 1) * (int(ar[y]) - 1) * math.prod(int(ar[v]) for v in z)  # no overflow
    return float(chdtrc(float(max(df, 1)), g2))     # chi-square survival function
