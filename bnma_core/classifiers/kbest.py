"""K-best equivalence-class model averaging and its subbagged version (DESIGN §4, §6).

* :class:`KBestEC` (``kbest``): P(c | x) = sum_k w_k P(c | x, G_k, theta_k) over the K best
  Markov equivalence classes G_1..G_K under BDeu (Chen & Tian 2014), w_k = the posterior of
  G_k normalised within the K (Sugahara, Aomi & Ueno, "KBestEC100" at K = 100).
* :class:`SubbaggingKBest` (``kbest_subbagging``): the proposed method of Sugahara, Aomi & Ueno — T
  subsamples D_t of m = floor(0.9 |D|) rows drawn **without** replacement, the K best classes
  learned on each, P(c | x) = (1/T) sum_t sum_k w_tk P(c | x, G_tk, theta_tk)
  (docs/specs.md §2, steps 1-4).

Every structure comes from :func:`bnma_core.structure.exact.k_best` (one representative DAG per
class; with BDeu-EAP parameters all members of a class give the same P(c | x), docs/specs.md
§1) and is turned into a :class:`bnma_core.network.DiscreteBN` with EAP parameters
θ_ijk = (N_ijk + α/(r_i q_i)) / (N_ij + α/q_i) by
:meth:`bnma_core.structure.exact.ScoredStructure.fit_network`. A missing test value is
marginalised exactly by :meth:`bnma_core.network.DiscreteBN.class_posterior`. Structure learning
needs complete training rows (the paper removes incomplete rows); incomplete rows are dropped
and counted in ``n_rows_dropped_``. Sizes above :data:`bnma_core.structure.exact.DEFAULT_LIMITS`
are refused before any work with a :class:`~bnma_core.structure.exact.ResourceLimitError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..structure.exact import (
    ExactLimits,
    ScoredStructure,
    Stopped,
    check_limits,
    k_best,
    posterior_weights,
)
from .base import BOOLEAN, DEPRECATED, RANDOM_STATE, Interval, Options
from .exact import ExactStructureClassifier

__all__ = ["EDGE_KINDS", "KBestEC", "Subsample", "SubbaggingKBest", "edge_probabilities"]


def _weights(structures: Sequence[ScoredStructure], weighting: str) -> np.ndarray:
    """Weights of the K structures: their posterior normalised within the list (the paper's
    definition) or uniform 1/K (a diagnostic: see ``experiments/sugahara.md``)."""
    if weighting == "posterior":
        return posterior_weights(structures)
    if weighting == "uniform":
        return np.full(len(structures), 1.0 / len(structures))
    raise ValueError(f"weighting must be 'posterior' or 'uniform' (got {weighting!r}).")


class KBestEC(ExactStructureClassifier):
    """Model averaging over the K best Markov equivalence classes (KBestEC).

    P(c | x) = sum_k w_k P(c | x, G_k, theta_k), w_k = exp(S_k - max S) / sum_k' exp(S_k' - max S)
    with S_k = log P(D | G_k) (BDeu, uniform structure prior; each class counted once).

    Parameters
    ----------
    n_best : int, default 100
        Number of best equivalence classes K (the paper's KBestEC100). Fewer are used when
        fewer classes exist.
    ess : float, default 1.0
        BDeu equivalent sample size α, also the EAP pseudo-count scale α / (r_i q_i).
    max_parents : int or None, default None
        Maximum in-degree (None = unrestricted, as in the paper).
    limits : ExactLimits or None
        Size / memory thresholds (default: at most 18 variables for K > 10, 20 for K <= 10,
        12 GB); larger problems are refused with a :class:`ResourceLimitError`.
    weighting : {"posterior", "uniform"}, default "posterior"
        w_k as above (the paper's definition) or 1/K ("uniform", a diagnostic option: on
        small data BDeu puts almost all weight on the best class, see
        ``experiments/sugahara.md``).
    k : deprecated
        Former name of ``n_best`` (accepted with a FutureWarning until the next release).

    Attributes
    ----------
    structures_ : list of ScoredStructure
        The K best classes (one representative DAG each, over features 0..p-1 and the class
        at ``class_index_`` = p), best first.
    weights_ : ndarray (K,)
        Their posterior weights (sum to 1).
    networks_ : list of DiscreteBN
        Each structure with EAP parameters from the training rows.
    class_index_ : int
    n_rows_dropped_ : int
        Incomplete training rows left out.

    References
    ----------
    Chen, Y. & Tian, J. (2014). Finding the k-best equivalence classes of Bayesian network
    structures for model averaging. AAAI. Sugahara, Aomi & Ueno, Bayesian network model
    averaging classifiers by subbagging (paper 001; docs/specs.md §3.4, §4).
    """

    _parameter_constraints = {
        "n_best": [Interval("int", 1, None)],
        "ess": [Interval("real", 0, None, "neither")],
        "max_parents": [None, Interval("int", 0, None)],
        "limits": [None, ExactLimits],
        "weighting": [Options("posterior", "uniform")],
    }
    _renamed_parameters = {"k": "n_best"}

    def __init__(self, *, n_best: int = 100, ess: float = 1.0, max_parents: int | None = None,
                 limits: ExactLimits | None = None, weighting: str = "posterior",
                 k: Any = DEPRECATED) -> None:
        self.n_best = n_best
        self.ess = ess
        self.max_parents = max_parents
        self.limits = limits
        self.weighting = weighting
        self.k = k

    def _fit_codes(self, X: np.ndarray, y: np.ndarray) -> None:
        k, ess = int(self._param("n_best")), float(self.ess)
        data, ar = self._training_table(X, y)
        self.structures_ = k_best(data, ar, k, classes=True, score="bdeu", ess=ess,
                                  max_parents=self.max_parents, class_index=self.class_index_,
                                  limits=self.limits)
        self.weights_ = _weights(self.structures_, self.weighting)
        self.networks_ = [self._network(s, data, ar) for s in self.structures_]

    def _predict_log_proba_codes(self, X: np.ndarray) -> np.ndarray:
        p = np.zeros((len(X), len(self.classes_)))
        for w, post in zip(self.weights_, self._networks_posteriors(self.networks_, X)):
            p += w * post
        return self._log(p)

    def model_log_joints(self, X: Any, codes: bool = False
                         ) -> tuple[np.ndarray, np.ndarray, str]:
        """The K equivalence classes behind the average (DESIGN §15): log w_k (K,), the
        exact log P(c, x_obs | G_k, theta_k) (K, n_rows, n_classes) with missing values
        marginalised, and "posterior" (the class posteriors are averaged with weights w_k).
        ``codes=True``: ``X`` is already an array of feature codes."""
        Xc = X if codes else self._prepare_predict(X)
        return self._log(np.asarray(self.weights_)), self._networks_log_joints(
            self.networks_, Xc, self.class_index_), "posterior"

    def edge_probabilities(self, kind: str = "link") -> np.ndarray:
        """Posterior probability of every edge across the K classes (:func:`edge_probabilities`
        of ``structures_`` and ``weights_``): ``P[u, v]``, variables indexed as in
        ``structures_`` (features, then the class at ``class_index_``)."""
        if not hasattr(self, "structures_"):
            raise ValueError("Fit the model before asking for its edge probabilities.")
        return edge_probabilities(self.structures_, self.weights_, kind)


@dataclass
class Subsample:
    """One subsample of :class:`SubbaggingKBest` (for inspection and the dashboard).

    Attributes
    ----------
    rows : ndarray
        Indices of the subsample's rows in the complete training rows (no repeats).
    structures : list of ScoredStructure
        Its K best equivalence classes, best first (scores on the subsample).
    weights : ndarray
        Their posterior weights w_tk within the subsample (sum to 1).
    """

    rows: np.ndarray
    structures: list[ScoredStructure]
    weights: np.ndarray


class SubbaggingKBest(ExactStructureClassifier):
    """Subbagging K-best equivalence-class model averaging (Sugahara, Aomi & Ueno).

    From the complete training rows D draw ``n_subsamples`` = T subsamples D_t of
    m = floor(``max_samples`` · |D|) rows without replacement; on each find the K best
    equivalence classes under BDeu; predict with

        P(c | x) = (1/T) sum_t sum_k w_tk P(c | x, G_tk, theta_tk),

    w_tk the posterior of G_tk normalised within the K of subsample t, theta_tk EAP estimates
    on D_t (docs/specs.md §2, steps 1-4).

    Parameters
    ----------
    n_subsamples : int, default 10
        T (the paper's value).
    max_samples : float in (0, 1], default 0.9
        Share of the rows drawn per subsample; m = floor(max_samples · |D|), at least 1 (the
        paper's 0.9; the rounding is not stated in the paper — docs/specs.md §2 "open", floor is our
        default).
    n_best : int, default 10
        Best equivalence classes K per subsample (the paper's K = 10).
    ess : float, default 1.0
        BDeu equivalent sample size α and EAP pseudo-count scale.
    refit_on_full : bool, default False
        Estimate each structure's parameters on the full training rows instead of on its
        subsample (the paper does not say; default: on D_t, docs/specs.md §2 "open").
    max_parents : int or None, default None
    limits : ExactLimits or None
        As :class:`KBestEC`; checked once before the first subsample.
    weighting : {"posterior", "uniform"}, default "posterior"
        w_tk as above or 1/K (as :class:`KBestEC`).
    random_state : int, Generator or None
        Seed of the subsample draws (resolved in ``fit``; same seed, same model).
    subsample, k : deprecated
        Former names of ``max_samples`` and ``n_best`` (accepted with a FutureWarning until
        the next release).

    Attributes
    ----------
    subsamples_ : list of Subsample
        Per subsample: its rows, K classes and weights (for the dashboard's stability views).
    networks_ : list of list of DiscreteBN
        ``networks_[t][k]``: G_tk with its parameters.
    class_index_, n_rows_dropped_ : int
        As :class:`KBestEC`.
    stopped_ : bool
        True when a ``progress`` callback of :meth:`fit` / :meth:`fit_dataset` stopped the
        fit early: the model then averages the ``len(subsamples_)`` < T subsamples finished.

    Notes
    -----
    With ``max_samples=1.0, n_subsamples=1`` the model equals :class:`KBestEC` with the same
    ``n_best`` (tested). Time grows with T, memory does not (subsamples run one after another).

    References
    ----------
    Sugahara, S., Aomi, I. & Ueno, M. Bayesian network model averaging classifiers by
    subbagging (paper 001), §4 and the APSES definition; Chen & Tian (2014).
    """

    _parameter_constraints = {
        **KBestEC._parameter_constraints,
        "n_subsamples": [Interval("int", 1, None)],
        "max_samples": [Interval("real", 0, 1, "right")],
        "refit_on_full": [BOOLEAN],
        "random_state": [RANDOM_STATE],
    }
    _renamed_parameters = {"subsample": "max_samples", "k": "n_best"}

    def __init__(self, *, n_subsamples: int = 10, max_samples: float = 0.9, n_best: int = 10,
                 ess: float = 1.0, refit_on_full: bool = False, max_parents: int | None = None,
                 limits: ExactLimits | None = None, weighting: str = "posterior",
                 random_state: Any = None, subsample: Any = DEPRECATED,
                 k: Any = DEPRECATED) -> None:
        self.n_subsamples = n_subsamples
        self.max_samples = max_samples
        self.n_best = n_best
        self.ess = ess
        self.refit_on_full = refit_on_full
        self.max_parents = max_parents
        self.limits = limits
        self.weighting = weighting
        self.random_state = random_state
        self.subsample = subsample
        self.k = k

    def fit(self, X: Any, y: Any, arities: Any = None,
            progress: Callable[[dict], bool] | None = None) -> SubbaggingKBest:
        """Fit on feature codes/labels ``X`` and class labels ``y`` (see the base class).

        ``progress`` (optional) is called with an event dict ``{"subsample": t (0-based),
        "n_subsamples": T, "stage": one of :data:`~bnma_core.structure.exact.STAGES` or
        "done", "fraction": overall fraction done in [0, 1]}`` before each stage of each
        subsample's K-best search and after each subsample. Returning True stops the fit
        there: the finished subsamples are kept (``stopped_`` = True) and the model averages
        them; stopped before the first one finished, :class:`Stopped` is raised."""
        self._progress = progress
        try:
            return super().fit(X, y, arities)
        finally:
            self._progress = None

    def fit_dataset(self, dataset: Any, rows: Any = None,
                    progress: Callable[[dict], bool] | None = None) -> SubbaggingKBest:
        """:meth:`DiscreteBNClassifier.fit_dataset` with the ``progress`` hook of
        :meth:`fit`."""
        self._progress = progress
        try:
            return super().fit_dataset(dataset, rows)
        finally:
            self._progress = None

    def _fit_codes(self, X: np.ndarray, y: np.ndarray) -> None:
        progress = getattr(self, "_progress", None)
        T, k, ess = int(self.n_subsamples), int(self._param("n_best")), float(self.ess)
        frac = float(self._param("max_samples"))
        data, ar = self._training_table(X, y)
        n = len(data)
        m = subsample_size(n, frac)
        check_limits(data.shape[1], k, m, False, self.limits)
        rng = np.random.default_rng(self.random_state)
        self.subsamples_ = []
        self.networks_ = []
        self.stopped_ = False
        for t in range(T):
            asked = [False]  # the callback's last answer (its answer to "done" ends the loop)

            def tick(stage: str, fraction: float, t: int = t, asked: list = asked) -> bool:
                asked[0] = bool(progress({"subsample": t, "n_subsamples": T, "stage": stage,
                                          "fraction": (t + float(fraction)) / T}))
                return asked[0]

            rows = np.sort(rng.choice(n, size=m, replace=False))
            Dt = np.ascontiguousarray(data[rows])
            try:
                structs = k_best(Dt, ar, k, classes=True, score="bdeu", ess=ess,
                                 max_parents=self.max_parents, class_index=self.class_index_,
                                 limits=self.limits,
                                 progress=None if progress is None else tick)
            except Stopped:
                if not self.subsamples_:
                    raise Stopped("Stopped before the first subsample was finished.") from None
                self.stopped_ = True
                return
            self._add_subsample(rows, structs, data, Dt, ar)
            if asked[0] and t + 1 < T:  # stop asked at the end of this subsample
                self.stopped_ = True
                return

    def _add_subsample(self, rows: np.ndarray, structs: list[ScoredStructure],
                       data: np.ndarray, Dt: np.ndarray, ar: np.ndarray) -> None:
        self.subsamples_.append(Subsample(rows, structs, _weights(structs, self.weighting)))
        src = data if self.refit_on_full else Dt
        self.networks_.append([self._network(s, src, ar) for s in structs])

    def _predict_log_proba_codes(self, X: np.ndarray) -> np.ndarray:
        return self._log(np.mean(self.subsample_posteriors(X, codes=True), axis=0))

    def subsample_posteriors(self, X: Any, codes: bool = False) -> np.ndarray:
        """Per-subsample averaged posteriors sum_k w_tk P(c | x, G_tk): shape (T, n, C)
        (their mean over t is :meth:`predict_proba`; their spread is what the dashboard
        shows). ``codes=True``: ``X`` is already an array of feature codes."""
        Xc = X if codes else self._prepare_predict(X)
        out = np.zeros((len(self.subsamples_), len(Xc), len(self.classes_)))
        nets = [net for nets in self.networks_ for net in nets]
        posts = iter(self._networks_posteriors(nets, Xc))
        for t, (sub, nets) in enumerate(zip(self.subsamples_, self.networks_)):
            for w, _ in zip(sub.weights, nets):
                out[t] += w * next(posts)
        return out

    def subsample_counts(self, X: Any, y: Any) -> np.ndarray:
        """For each training row (``X``, ``y`` as given to :meth:`fit`, in the same order): in
        how many subsamples it was drawn, or -1 for a row with a missing value (learning used
        the complete rows only, and ``Subsample.rows`` numbers them among themselves)."""
        _check_subsampled(self)
        Xc = np.asarray(X)
        complete = (Xc >= 0).all(axis=1) & (np.asarray(y) >= 0)
        n_complete = int(complete.sum())
        counts = np.zeros(n_complete, dtype=np.int64)
        for sub in self.subsamples_:
            if len(sub.rows) and int(np.max(sub.rows)) >= n_complete:
                raise ValueError("X and y are not the rows this model was fitted on.")
            counts[sub.rows] += 1
        out = np.full(len(complete), -1, dtype=np.int64)
        out[complete] = counts
        return out

    def posterior_spread(self, X: Any, codes: bool = False) -> np.ndarray:
        """How much the subsamples disagree about each row of ``X``: the largest range
        (max - min over subsamples) of any class's probability in
        :meth:`subsample_posteriors`, shape (n,). The most disputed row is its argmax."""
        _check_subsampled(self)
        per = self.subsample_posteriors(X, codes=codes)  # (T, n, C)
        return (per.max(axis=0) - per.min(axis=0)).max(axis=1)

    @property
    def structures_(self) -> list[ScoredStructure]:
        """All T·K structures, subsample by subsample (for structure statistics)."""
        return [s for sub in self.subsamples_ for s in sub.structures]

    def model_log_joints(self, X: Any, codes: bool = False
                         ) -> tuple[np.ndarray, np.ndarray, str]:
        """The T·K (subsample, class) models behind the average (DESIGN §15), subsample by
        subsample: log (w_tk / T), the exact log P(c, x_obs | G_tk, theta_tk) (T·K, n_rows,
        n_classes), and "posterior". ``codes=True``: ``X`` is already feature codes."""
        Xc = X if codes else self._prepare_predict(X)
        T = len(self.subsamples_)
        lw = np.concatenate([self._log(np.asarray(s.weights) / T) for s in self.subsamples_])
        nets = [net for nets in self.networks_ for net in nets]
        return lw, self._networks_log_joints(nets, Xc, self.class_index_), "posterior"


EDGE_KINDS = ("link", "arrow")
"""What :func:`edge_probabilities` counts: a link in either direction, or a compelled arrow."""


def edge_probabilities(structures: Sequence[ScoredStructure], weights: Any,
                       kind: str = "link") -> np.ndarray:
    """Posterior probability of every edge across weighted equivalence classes.

    ``kind="link"``: P[u, v] = P[v, u] = sum_k w_k 1[u and v adjacent in G_k] (a link is
    shared by every member of a class, so it is well defined); ``kind="arrow"``:
    P[u, v] = sum_k w_k 1[u -> v is compelled in CPDAG(G_k)] (directed in the class's
    CPDAG; an undirected CPDAG edge counts for neither direction). Values are clipped to
    [0, 1] against rounding.

    Parameters
    ----------
    structures : sequence of ScoredStructure
        The classes (e.g. ``KBestEC.structures_`` or :func:`~bnma_core.structure.exact.k_best`
        with ``classes=True``).
    weights : array (K,)
        Their weights (e.g. :func:`~bnma_core.structure.exact.posterior_weights`).
    kind : {"link", "arrow"}

    Returns
    -------
    ndarray (p, p)
    """
    if kind not in EDGE_KINDS:
        raise ValueError(f"kind must be 'link' or 'arrow' (got {kind!r}).")
    w = np.asarray(weights, dtype=float)
    if len(w) != len(structures):
        raise ValueError(f"{len(w)} weights for {len(structures)} structures.")
    m = len(structures[0].parents) if len(structures) else 0
    mat = np.zeros((m, m))
    for wt, s in zip(w, structures):
        if kind == "link":
            for v, pa in enumerate(s.parents):
                for p in pa:
                    mat[p, v] += wt
                    mat[v, p] += wt
        else:
            for u, v, directed in s.cpdag.edges(data="directed"):
                if directed:
                    mat[u, v] += wt
    return np.clip(mat, 0.0, 1.0)


def _check_subsampled(model: Any) -> None:
    if not getattr(model, "subsamples_", None):
        raise ValueError("Fit the model before asking about its subsamples.")


def subsample_size(n_rows: int, fraction: float) -> int:
    """m = floor(fraction · n_rows), at least 1 (docs/specs.md §2 step 1)."""
    return max(1, int(math.floor(fraction * n_rows + 1e-9)))


def structures_of(est: Any) -> Sequence[ScoredStructure]:
    """The structures a fitted exact-family classifier averages over (for statistics)."""
    if hasattr(est, "structures_"):
        return list(est.structures_)
    if hasattr(est, "structure_"):
        return [est.structure_]
    raise ValueError(f"{type(est).__name__} has no exact structures.")
