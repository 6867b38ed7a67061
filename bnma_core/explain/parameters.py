"""Structure + parameter uncertainty: class posteriors with CPTs drawn from their Dirichlet
posteriors (DESIGN §15).

Each model m of an average (:mod:`bnma_core.explain.models`) is a *group*: a way to draw a
network G (fixed for an equivalence class or a member; drawn within the order for order BMA,
G ~ P(G | D, ≺) = prod_v P(Pa_v | D, ≺); drawn as a feature set S ~ P(S | D) for MA-NB) with
Dirichlet posterior concentrations a_ijk + N_ijk for its CPTs (the same prior and counts as the
estimator's posterior-mean CPTs). A draw is (G, theta), theta_ij ~ Dirichlet(a_ij + N_ij)
independently per family and parent configuration.

The interval describes P(c | x, G, theta) under the posterior given the training data and the
case's findings, p(m, G, theta | D, x) = pi_m(x) p(G, theta | m, D, x): groups are drawn in
proportion to pi_m(x) (their weight in the average), and within a group each draw is weighted
by its likelihood of the findings, P(x_obs | G, theta) (self-normalised importance weights;
E[P(c, x | G, theta)] = P(c, x | G) for posterior-mean CPTs). The weighted mean of the draws
therefore converges to the averaged prediction; the (1 - level)/2 and (1 + level)/2 weighted
quantiles are the structure + parameter interval.

A stack draws per component: component k receives a share w_k of the draws (its weight in the
mixture) and draws its own models as above; a component without parameter draws (UKDB, a voting
ensemble) counts as fixed — its models' class posteriors enter with their weights w_k pi_km(x)
and no parameter uncertainty (``DrawResult.fixed`` names them).

Complete rows draw only the CPT rows they use (one Dirichlet row per family and class value);
rows with missing findings draw whole CPTs and eliminate exactly
(:meth:`bnma_core.classifiers.base.DiscreteBNClassifier._factor_log_joint`).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..factors import FactorModel
from ..scores import cpt_alpha, family_counts
from .models import lse

__all__ = ["DrawResult", "parameter_draws", "supports_draws", "training_codes"]

Sampler = Callable[[np.random.Generator, int], list]
"""A model's draws: (rng, k) -> [(network with concentrations, number of draws), ...]."""

N_DRAWS = 400
"""Default number of (structure, parameter) draws."""

_ORDER_GROUPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

MAX_COMPLETIONS = 4096
"""Most joint states of a row's hidden ancestors summed by enumeration inside the vectorised
draws; more are eliminated draw by draw."""

MAX_CELLS = 2 ** 22
"""Largest draws x completed rows x classes block of the vectorised draws."""


@dataclass(frozen=True)
class DrawResult:
    """Class posteriors of the draws and their weights for each row.

    Attributes
    ----------
    posteriors : (D, n, C) float
        P(c | x_obs, G_d, theta_d).
    weights : (D, n) float
        Normalised per row (columns sum to 1).
    n_draws : int
    effective_draws : (n,) float
        Kish's effective sample size 1 / sum_d w_d^2 of each row.
    fixed : tuple of str
        A stack's components counted as fixed (no parameter draws; module docstring).
    """

    posteriors: np.ndarray
    weights: np.ndarray
    fixed: tuple = ()

    @property
    def n_draws(self) -> int:
        return int(self.posteriors.shape[0])

    @property
    def effective_draws(self) -> np.ndarray:
        return 1.0 / np.maximum((self.weights ** 2).sum(axis=0), 1e-300)

    def mean(self) -> np.ndarray:
        """Weighted mean of the draws' posteriors, (n, C)."""
        return np.einsum("dn,dnc->nc", self.weights, self.posteriors)

    def standard_error(self) -> np.ndarray:
        """Monte Carlo standard error of :meth:`mean`, sqrt(sum_d w_d^2 (p_d - mean)^2)
        (the delta-method error of a self-normalised estimate), (n, C)."""
        d = self.posteriors - self.mean()[None]
        return np.sqrt(np.einsum("dn,dnc->nc", self.weights ** 2, d ** 2))


# ---------------------------------------------------------------------- training data
def training_codes(est: Any, train: Any) -> tuple[np.ndarray, np.ndarray]:
    """(feature codes (n, p) int64, class indices into ``est.classes_``) of the rows the
    estimator was fitted on: a :class:`~bnma_core.data.DiscreteDataset` (all its rows) or a
    pair (X, y) as passed to ``fit``."""
    if hasattr(train, "X") and hasattr(train, "classes"):
        X = np.asarray(train.X, dtype=np.int64)
        labels = np.asarray(train.classes, dtype=object)[np.asarray(train.y)]
    else:
        try:
            X, labels = train
        except (TypeError, ValueError):
            raise ValueError("train must be the dataset the model was fitted on or a pair "
                             "(X, y) of its training rows.") from None
        X = np.asarray(est._prepare_predict(X), dtype=np.int64)
        labels = np.asarray(labels, dtype=object)
    index = {str(c): k for k, c in enumerate(est.classes_)}
    try:
        y = np.array([index[str(v)] for v in labels], dtype=np.int64)
    except KeyError as e:
        raise ValueError(f"The training rows hold a class {e.args[0]!r} the model does not "
                         "know; pass the rows it was fitted on.") from None
    if len(y) != len(X):
        raise ValueError(f"train has {len(X)} rows but {len(y)} class labels.")
    return X, y


# ------------------------------------------------ networks with concentrations
@dataclass
class _Net:
    """A network over features 0..p-1 and the class p with Dirichlet concentrations."""

    parents: list[list[int]]
    conc: list[np.ndarray]          # (q_i, r_i)


def _conc(data: np.ndarray, ar: np.ndarray, i: int, pa: list[int], prior: Any, ess: float,
          weights: np.ndarray | None = None, cache: dict | None = None) -> np.ndarray:
    key = (i, tuple(pa))
    if cache is not None and key in cache:
        return cache[key]
    n = family_counts(data, i, pa, ar, weights)
    q, r = n.shape
    out = n + cpt_alpha(prior, r, q, ess)
    if cache is not None:
        cache[key] = out
    return out


def _fixed(parents: list[list[int]], data: np.ndarray, ar: np.ndarray, prior: Any, ess: float,
           weights: np.ndarray | None = None) -> Sampler:
    net = _Net(parents, [_conc(data, ar, i, pa, prior, ess, weights)
                         for i, pa in enumerate(parents)])
    return _constant(net)


def _groups(est: Any, train: Any) -> tuple[list[Sampler], np.ndarray]:
    """One sampler per model of :func:`~bnma_core.explain.models.model_set` (or one for the
    whole average: MA-NB) and the arities (features, then the class)."""
    name = type(est).__name__
    C = len(est.classes_)
    ar = np.append(np.asarray(est.arities_, dtype=np.int64), C)
    p = len(ar) - 1
    if name in ("OrderMCMCBMA", "FixedOrderBMA"):
        return _order_groups(est), ar
    if train is None:
        raise ValueError(f"{name}: parameter draws need the training rows (train=...): the "
                         "Dirichlet posteriors are counted from them.")
    X, y = training_codes(est, train)
    data = np.ascontiguousarray(np.column_stack([X, y]), dtype=np.int32)
    if hasattr(est, "feature_parents_"):  # NB, TAN, KDB
        from ..classifiers.augmented import resolve_cpt_prior

        prior, ess = resolve_cpt_prior(est._param("cpt_prior"), est._param("alpha"),
                                       est._param("ess"))
        parents = [[p, *pa] for pa in est.feature_parents_] + [[]]
        return [_fixed(parents, data, ar, prior, ess)], ar
    if name == "MANaiveBayes":
        return [_manb_group(est, data, ar)], ar
    if name in ("KBestEC", "SubbaggingKBest", "BaggingEBN"):
        complete = np.ascontiguousarray(data[(data >= 0).all(axis=1)])
        ess = float(est._param("ess"))
        if name == "KBestEC":
            return [_fixed([list(pa) for pa in s.parents], complete, ar, "bdeu", ess)
                    for s in est.structures_], ar
        if name == "SubbaggingKBest":
            out = []
            for sub in est.subsamples_:
                src = complete if est.refit_on_full else complete[sub.rows]
                out += [_fixed([list(pa) for pa in s.parents], src, ar, "bdeu", ess)
                        for s in sub.structures]
            return out, ar
        if est.voting != "soft":
            raise ValueError("Parameter draws need averaged class posteriors; this model votes "
                             "(voting='hard'). Use voting='soft'.")
        out = []
        for s, rows in zip(est.members_, est.samples_):
            w = np.bincount(np.asarray(rows), minlength=len(complete)).astype(float)
            out.append(_fixed([list(pa) for pa in s.parents], complete, ar, "bdeu", ess, w))
        return out, ar
    if name == "AODE":
        a = float(est._param("alpha"))
        out = []
        for i in range(p):
            parents = [[p, i] if j != i else [p] for j in range(p)] + [[]]
            conc = [_conc(data, ar, j, pa, a, 1.0) for j, pa in enumerate(parents[:p])]
            # the joint (c, x_i) Dirichlet splits into P(c) and P(x_i | c) (neutrality)
            conc.append(conc[i].sum(axis=1)[None, :])
            out.append(_constant(_Net(parents, conc)))
        nb = [[p]] * p + [[]]
        out.append(_fixed(nb, data, ar, a, 1.0))
        return out, ar
    raise ValueError(f"{name} does not support parameter draws (supported: naive Bayes, TAN, "
                     "KDB, MA-NB, order BMA, K-best, subbagging, bagging, AODE).")


def _constant(net: _Net) -> Sampler:
    return lambda rng, k: [(net, k)]


def _manb_group(est: Any, data: np.ndarray, ar: np.ndarray) -> Sampler:
    """Feature set S ~ P(S | D) (independent arcs, eq. 13), then the naive network of S."""
    p = len(ar) - 1
    score = est._score()
    C = int(ar[p])
    with_c = [family_counts(data, i, [p], ar) + score.cell_alpha(int(ar[i]), C)
              for i in range(p)]
    without = [family_counts(data, i, [], ar) + score.cell_alpha(int(ar[i]), 1)
               for i in range(p)]
    cls = family_counts(data, p, [], ar) + score.cell_alpha(C, 1)
    arc = np.asarray(est.arc_posterior_, dtype=float)

    def draw(rng: np.random.Generator, k: int) -> list[tuple[_Net, int]]:
        sets, counts = np.unique(rng.random((k, p)) < arc[None, :], axis=0, return_counts=True)
        return [(_Net([[p] if s[i] else [] for i in range(p)] + [[]],
                      [with_c[i] if s[i] else without[i] for i in range(p)] + [cls]), int(c))
                for s, c in zip(sets, counts)]
    return draw


def _order_groups(est: Any) -> list[Sampler]:
    """Per kept order: parent sets Pa_v ~ P(Pa_v | D, ≺) ∝ exp S(v; Pa_v) among the sets of
    the score table inside v's predecessors, CPT concentrations from the table's rows.
    Built once per fitted model (kept outside the estimator until it is refitted)."""
    tab = est.table_
    cached = _ORDER_GROUPS.get(est)
    if cached is not None and cached[0] is tab:
        return cached[1]
    n = tab.n_vars
    data = np.ascontiguousarray(tab.data_t.T)
    weights = np.asarray(tab.weights, dtype=float)
    ar = np.asarray(tab.arities, dtype=np.int64)
    sets = []
    for v in range(n):
        ok = np.flatnonzero(np.isfinite(tab.scores[v]))
        pas = [tab.parents(v, int(k)) for k in ok]
        member = np.zeros((len(pas), n), dtype=bool)
        for k, pa in enumerate(pas):
            member[k, pa] = True
        sets.append((pas, tab.scores[v][ok], member))
    cache: dict = {}
    groups = []
    for order in np.asarray(est._orders_):
        pos = np.empty(n, dtype=np.int64)
        pos[order] = np.arange(n)
        choices = []
        for v in range(n):
            pas, sc, member = sets[v]
            keep = np.flatnonzero(~(member & (pos >= pos[v])[None, :]).any(axis=1))
            cdf = np.cumsum(np.exp(sc[keep] - sc[keep].max()))
            choices.append(([pas[k] for k in keep], cdf / cdf[-1]))

        def draw(rng: np.random.Generator, k: int, choices: list = choices
                 ) -> list[tuple[_Net, int]]:
            u = rng.random((k, n))
            idx = np.column_stack([np.minimum(np.searchsorted(cdf, u[:, v], side="right"),
                                              len(pas) - 1)
                                   for v, (pas, cdf) in enumerate(choices)])
            picks, counts = _unique_rows(idx, [len(pas) for pas, _ in choices])
            out = []
            for pick, c in zip(picks, counts):
                parents = [choices[v][0][int(pick[v])] for v in range(n)]
                out.append((_Net(parents, [_conc(data, ar, v, pa, tab.score, float(tab.ess),
                                                 weights, cache)
                                           for v, pa in enumerate(parents)]), int(c)))
            return out
        groups.append(draw)
    _ORDER_GROUPS[est] = (tab, groups)
    return groups


def _unique_rows(idx: np.ndarray, bases: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(idx, axis=0, return_counts=True)`` of rows of digits (column v below
    ``bases[v]``): the rows read as one mixed-radix integer each, the first column most
    significant, so in the same (lexicographic) order; by ``np.unique(axis=0)`` when that
    integer would not fit in 63 bits."""
    if math.prod(bases) >= 2 ** 62:
        return np.unique(idx, axis=0, return_counts=True)
    key = np.zeros(len(idx), dtype=np.int64)
    for v, b in enumerate(bases):
        key = key * b + idx[:, v]
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    return idx[first], counts


# ---------------------------------------------------------------------- joints of the draws
def _dirichlet(rng: np.random.Generator, conc: np.ndarray) -> np.ndarray:
    g = rng.standard_gamma(conc)
    s = g.sum(axis=-1, keepdims=True)
    return g / np.where(s > 0, s, 1.0)


def _ancestral(parents: list[list[int]], nodes: np.ndarray) -> np.ndarray:
    """Boolean mask of ``nodes`` and their ancestors."""
    seen = np.zeros(len(parents), dtype=bool)
    stack = [int(v) for v in nodes]
    while stack:
        v = stack.pop()
        if not seen[v]:
            seen[v] = True
            stack.extend(parents[v])
    return seen


def _draws_log_joint(net: _Net, ar: np.ndarray, codes: np.ndarray, k: int,
                     rng: np.random.Generator) -> np.ndarray:
    """log P(c, x_obs | G, theta_d) for k CPT draws theta_d of one structure: (k, n, C).
    ``codes`` (n, p + 1), class column ignored.

    Families outside the ancestral set of the findings and the class are barren (they sum
    to one) and are not drawn. Only the CPT rows the rows use are drawn (vectorised over the
    draws); unobserved ancestors are summed over their joint states (up to
    :data:`MAX_COMPLETIONS`; beyond, whole CPTs are drawn and the hidden variables eliminated
    exactly, draw by draw)."""
    from ..classifiers.base import DiscreteBNClassifier

    n, V = codes.shape
    t = V - 1
    C = int(ar[t])
    out = np.empty((k, n, C))
    observed = codes >= 0
    observed[:, t] = True
    if n == 1:  # one case (np.unique(axis=0) costs more than the draws of a small network)
        patterns, inverse = observed, np.zeros(1, dtype=np.int64)
    else:
        patterns, inverse = np.unique(observed, axis=0, return_inverse=True)
        inverse = inverse.ravel()
    for g, pat in enumerate(patterns):
        rows = np.flatnonzero(inverse == g)
        anc = _ancestral(net.parents, np.flatnonzero(pat))
        hidden = np.flatnonzero(anc & ~pat)
        n_fill = math.prod(int(a) for a in ar[hidden])  # Python ints: 3^40 fits
        if n_fill > MAX_COMPLETIONS:  # many hidden states: exact elimination per draw
            sub = codes[rows].copy()
            sub[:, t] = -1
            for d in range(k):
                model = FactorModel(ar, net.parents, [_dirichlet(rng, c) for c in net.conc])
                out[d, rows] = DiscreteBNClassifier._factor_log_joint(model, t, sub)
            continue
        # hidden ancestors summed over their joint states: every completion is a row of one
        # vectorised pass, so a draw's CPT rows are shared by all completions
        block = np.repeat(codes[rows], n_fill, axis=0)
        if len(hidden):
            fills = np.indices(tuple(ar[hidden])).reshape(len(hidden), -1).T
            block[:, hidden] = np.tile(fills, (len(rows), 1))
        step = max(1, MAX_CELLS // (len(block) * C))
        for d in range(0, k, step):
            kk = min(step, k - d)
            lj = _complete_log_joint(net, ar, block, np.flatnonzero(anc), kk, rng)
            out[d:d + kk, rows] = lse(lj.reshape(kk, len(rows), n_fill, C),
                                                      axis=2)
    return out


def _complete_log_joint(net: _Net, ar: np.ndarray, codes: np.ndarray, families: np.ndarray,
                        k: int, rng: np.random.Generator) -> np.ndarray:
    """sum over ``families`` of log theta_i(x_i | pa_i) for complete rows and every class
    value, for k draws of the CPT rows used: (k, n, C)."""
    t = codes.shape[1] - 1
    C = int(ar[t])
    X3 = np.repeat(codes[:, None, :], C, axis=1)
    X3[:, :, t] = np.arange(C)[None, :]
    acc = np.zeros((k,) + X3.shape[:2])
    rows = []  # per family: the CPT rows used (ascending) and each cell's place among them
    for i in families:
        pa, conc = net.parents[i], net.conc[i]
        j = np.zeros(X3.shape[:2], dtype=np.int64)
        stride = 1
        for u in pa:
            j += X3[:, :, u] * stride
            stride *= int(ar[u])
        mark = np.zeros(len(conc), dtype=bool)
        mark[j] = True
        rows.append((conc[np.flatnonzero(mark)], (np.cumsum(mark) - 1)[j]))
    # every family's Dirichlet rows from one gamma call: the family-by-family draws in their
    # order (the generator draws element by element), normalised as _dirichlet does
    g = rng.standard_gamma(np.concatenate(
        [np.broadcast_to(c, (k,) + c.shape).ravel() for c, _ in rows])) if rows else None
    o = 0
    for i, (c, inv) in zip(families, rows):
        gi = g[o:o + k * c.size].reshape((k,) + c.shape)
        o += k * c.size
        s = gi.sum(axis=-1, keepdims=True)
        theta = gi / np.where(s > 0, s, 1.0)
        acc += np.log(theta[:, inv, X3[:, :, i]])
    return acc


def supports_draws(est: Any) -> bool:
    """``est`` has Dirichlet parameter draws (:func:`parameter_draws`; a stack through its
    components)."""
    name = type(est).__name__
    if name == "BaggingEBN":
        return est.voting == "soft"
    return hasattr(est, "stack_components") or hasattr(est, "feature_parents_") or name in (
        "OrderMCMCBMA", "FixedOrderBMA", "MANaiveBayes", "KBestEC", "SubbaggingKBest", "AODE")


def _stack_draws(est: Any, codes: np.ndarray, models: Any, train: Any, n_draws: int,
                 rng: np.random.Generator) -> DrawResult:
    """Draws of a stack (module docstring): n_draws shared among the components with draws in
    proportion to w_k (largest remainders, at least 2 each); the fixed components' models
    enter as themselves."""
    from ..classifiers.registry import training_rows
    from .models import is_stack, model_set

    if models is None or not models.parts:
        models = model_set(est, codes, codes=True)
    parts = list(models.parts)
    drawn = [p for p in parts if supports_draws(p.estimator) and not is_stack(p.estimator)]
    fixed = [p for p in parts if p not in drawn]
    if drawn and train is None and any(type(p.estimator).__name__ not in
                                       ("OrderMCMCBMA", "FixedOrderBMA") for p in drawn):
        raise ValueError("Parameter draws of this stack need the training rows (train=...): "
                         "its components' Dirichlet posteriors are counted from them.")
    Xt = yt = None
    if train is not None:
        Xt, yt = training_codes(est, train)
    n = len(codes)
    C = len(est.classes_)
    counts = draw_counts([p.weight for p in drawn], n_draws)
    post, wts = [], []
    for p, k in zip(drawn, counts):
        sub_train = None
        if Xt is not None:
            rows = training_rows(p.name, Xt)
            sub_train = _Rows(Xt[rows], yt[rows], np.arange(C))
        res = parameter_draws(p.estimator, codes, p.models.model_weights, sub_train, int(k),
                              rng)
        cls = np.asarray(p.estimator.classes_, dtype=np.int64)
        P = np.zeros((res.n_draws, n, C))
        P[:, :, cls] = res.posteriors
        post.append(P)
        wts.append(p.weight * res.weights)
    for p in fixed:
        post.append(p.models.posteriors())
        wts.append(p.weight * p.models.model_weights)
    W = np.concatenate(wts)
    z = W.sum(axis=0, keepdims=True)
    return DrawResult(np.nan_to_num(np.concatenate(post)), W / np.where(z > 0, z, 1.0),
                      tuple(p.name for p in fixed))


def draw_counts(shares: Any, n_draws: int) -> np.ndarray:
    """How many of ``n_draws`` parameter draws each component of a stack gets: proportional
    to its weight (largest remainders), at least 2 each, and ``n_draws`` in all whenever
    ``n_draws`` allows 2 per component (the minimum is taken from the largest counts), so
    the draws reported are the draws asked for."""
    share = np.asarray(shares, dtype=float)
    if not len(share):
        return np.zeros(0, dtype=int)
    share = share / share.sum()
    counts = np.floor(share * n_draws).astype(int)
    for k in np.argsort(-(share * n_draws - counts), kind="stable")[:n_draws - counts.sum()]:
        counts[k] += 1
    counts = np.maximum(counts, 2)
    while counts.sum() > n_draws and counts.max() > 2:
        counts[int(np.argmax(counts))] -= 1
    return counts


@dataclass(frozen=True)
class _Rows:
    """Training rows as :func:`training_codes` reads a dataset (codes, class indices)."""

    X: np.ndarray
    y: np.ndarray
    classes: np.ndarray


def parameter_draws(est: Any, codes: np.ndarray, model_weights: np.ndarray,
                    train: Any = None, n_draws: int = N_DRAWS, seed: Any = 0,
                    models: Any = None) -> DrawResult:
    """Draws of (model, structure, CPTs) and their class posteriors for feature codes.

    Parameters
    ----------
    est : fitted estimator
    codes : (n, p) int array
        Feature codes (-1 = missing).
    model_weights : (M, n) float
        pi_m(x) of :class:`~bnma_core.explain.models.ModelSet` (groups are drawn in
        proportion to their mean over the rows; MA-NB draws its feature sets itself).
    train : DiscreteDataset or (X, y), optional
        The training rows (needed by every method but order BMA, whose score table keeps
        them).
    n_draws : int
    seed : int or Generator
    models : ModelSet, optional
        A stack's flattened :class:`~bnma_core.explain.models.ModelSet` of ``codes`` (its
        components' weights; computed when not given).

    Returns
    -------
    DrawResult
    """
    if int(n_draws) < 2:
        raise ValueError("n_draws must be at least 2.")
    rng = np.random.default_rng(seed)
    codes = np.asarray(codes, dtype=np.int64)
    if hasattr(est, "stack_components"):
        return _stack_draws(est, codes, models, train, int(n_draws), rng)
    groups, ar = _groups(est, train)
    n = len(codes)
    full = np.column_stack([codes, np.full(n, -1)])
    pi = np.asarray(model_weights, dtype=float)
    if len(groups) == 1:
        pi = np.ones((1, n))
    elif pi.shape[0] != len(groups):
        raise ValueError(f"model_weights has {pi.shape[0]} models; the estimator has "
                         f"{len(groups)}.")
    q = pi.mean(axis=1)
    counts = rng.multinomial(int(n_draws), q / q.sum())
    post, logw = [], []
    for g in np.flatnonzero(counts):
        lj = np.concatenate([_draws_log_joint(net, ar, full, kk, rng)
                             for net, kk in groups[g](rng, int(counts[g]))])  # (k, n, C)
        ev = lse(lj, axis=2)                      # (k, n)
        with np.errstate(invalid="ignore", divide="ignore"):
            post.append(np.exp(lj - ev[:, :, None]))
            # within the group: likelihood weights; across groups: pi_g(x)
            lw = ev - lse(ev, axis=0, keepdims=True) + np.log(pi[g])[None, :]
        logw.append(lw)
    P = np.nan_to_num(np.concatenate(post))
    LW = np.concatenate(logw)
    z = lse(LW, axis=0, keepdims=True)
    with np.errstate(invalid="ignore"):
        W = np.exp(LW - z)
    return DrawResult(P, np.where(np.isfinite(W), W, 0.0))
