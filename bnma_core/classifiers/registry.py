"""One registry of classification methods (DESIGN §6).

Each entry maps a method code (``nb``, ``tan``, ``bma10``, ...) to a factory given as
``"module:Class"`` (imported lazily, so importing the registry is cheap), the factory's default
arguments, a plain-words display name (``"Order-MCMC averaging, 10 orders"``), a one-line
description, and the method's declared :class:`Capabilities` (what it does with missing values,
how many variables it takes, what it exposes).

Method codes follow one rule (DESIGN §6): ``<family>[<n>][_<variant>]`` in lower case, where
``<family>`` names the model family learned or averaged (``nb``, ``tan``, ``kdb``, ``ukdb``,
``bma``, ``ebn``, ``kbest``, ...), ``<n>`` the family's defining count where it has one (k of
KDB / UKDB, the number of orders of ``bma``) and ``_<variant>`` what differs from the family's
default (``_eap`` parameters, ``_ml`` / ``_cv`` a setting chosen on the training rows, ``_l`` /
``_p`` one part of UKDB, ``_acll`` / ``_bagging`` / ``_adaboost`` / ``_subbagging`` / ``_fixed``
the learning procedure around the family). A short code for a registered one is declared in
:data:`ALIASES` (``kdb`` means ``kdb2``); a renamed code is kept in :data:`RENAMED` and still
accepted, with a FutureWarning naming the new one, until the next release.

The CLI, the Compare page, cross-validation and the experiments all read this table: a method
appears everywhere by being registered once here, and :func:`fit_method` is the one
function that builds a registered method on a :class:`~bnma_core.data.DiscreteDataset`.

Missing-value vocabulary (DESIGN glossary; the same words in code, UI and CLI):

* dataset rows, ``missing=``: ``"keep"`` (rows with a missing value stay, coded ``-1``) or
  ``"drop"`` (such rows are removed);
* learning, :attr:`Capabilities.fit_missing`: ``"available"`` (each count uses the rows where
  its variables are observed: available-case counts), ``"em"`` (expected counts by EM), or
  ``"drop"`` (the method cannot learn from incomplete rows: they are left out of its training
  rows, and cross-validation reports how many);
* prediction, :attr:`Capabilities.predict_missing`: ``"marginalize"`` (missing values are
  summed out of the model) or ``"impute"`` (filled in before predicting).
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FIT_MISSING = ("available", "em", "drop")
PREDICT_MISSING = ("marginalize", "impute")
EXPOSES = ("dag", "edge_posteriors", "instance_structures")
MISSING_ROWS = ("keep", "drop")


@dataclass(frozen=True)
class Capabilities:
    """What a method declares it can do (read by cross-validation, the CLI and the pages).

    Attributes
    ----------
    fit_missing : {"available", "em", "drop"}
        How training rows with a missing feature value are used: available-case counts per
        family, EM expected counts, or not at all (``"drop"``: such rows are left out of this
        method's training rows). Default ``"drop"``: a method that declares nothing is not
        trusted with incomplete rows.
    predict_missing : {"marginalize", "impute"}
        How a missing value in a row to classify is handled.
    max_variables : int or None
        Largest number of variables, class included, the method accepts (None: no limit).
    multiclass : bool
        Whether more than two classes are supported.
    exposes : tuple of str
        What a fitted model offers besides predictions: ``"dag"`` (one network,
        ``structure_``), ``"edge_posteriors"`` (posterior probability of each arc),
        ``"instance_structures"`` (a network per classified row).
    """

    fit_missing: str = "drop"
    predict_missing: str = "marginalize"
    max_variables: int | None = None
    multiclass: bool = True
    exposes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.fit_missing not in FIT_MISSING:
            raise ValueError(f"fit_missing must be one of {FIT_MISSING}")
        if self.predict_missing not in PREDICT_MISSING:
            raise ValueError(f"predict_missing must be one of {PREDICT_MISSING}")
        unknown = set(self.exposes) - set(EXPOSES)
        if unknown:
            raise ValueError(f"unknown exposes entries {sorted(unknown)}; use {EXPOSES}")

    @property
    def learns_from_incomplete_rows(self) -> bool:
        return self.fit_missing != "drop"

    def describe(self) -> str:
        """One plain-language line, e.g. for the Compare page's method table."""
        fit = {"available": "learns from incomplete rows (available cases)",
               "em": "learns from incomplete rows (EM)",
               "drop": "leaves incomplete rows out of training"}[self.fit_missing]
        pred = {"marginalize": "sums missing values out when predicting",
                "impute": "fills missing values in when predicting"}[self.predict_missing]
        lim = "" if self.max_variables is None else f"; at most {self.max_variables} variables"
        return f"{fit}; {pred}{lim}"


DEFAULT_CAPABILITIES = Capabilities()


@dataclass(frozen=True)
class MethodSpec:
    """One registered method.

    Attributes
    ----------
    name : str
        The method code (module docstring: the naming rule).
    factory : str
        ``"bnma_core.classifiers.module:ClassName"``.
    description : str
        One plain-language line: what the method does and where it comes from.
    defaults : dict
        Constructor arguments of the registered configuration.
    randomized : bool
        Whether the estimator takes ``random_state``.
    capabilities : Capabilities
    test_params : dict
        Overrides giving a small, fast model (scikit-learn contract tests).
    display_name : str
        A plain-words name shown beside the code (e.g. "Order-MCMC averaging, 10 orders").
    """

    name: str
    factory: str
    description: str
    defaults: dict[str, Any] = field(default_factory=dict)
    randomized: bool = False
    capabilities: Capabilities = DEFAULT_CAPABILITIES
    test_params: dict[str, Any] = field(default_factory=dict)
    display_name: str = ""

    def factory_class(self) -> type:
        module, _, cls = self.factory.partition(":")
        return getattr(importlib.import_module(module), cls)

    def make(self, **overrides: Any):
        """A new estimator with the registered defaults and ``overrides`` (a former parameter
        name is mapped to its new name with a FutureWarning, so that it replaces the
        registered default)."""
        from .base import caller_level

        cls = self.factory_class()
        renamed = getattr(cls, "_renamed_parameters", {})
        for old in [k for k in overrides if k in renamed]:
            new = renamed[old]
            warnings.warn(f"{self.name}: the parameter {old!r} was renamed {new!r}; {old} is "
                          f"accepted until the next release. Use {new}={overrides[old]!r}.",
                          FutureWarning, stacklevel=caller_level())
            overrides[new] = overrides.pop(old)
        params = {**self.defaults, **overrides}
        if not self.randomized:
            params.pop("random_state", None)
        return cls(**params)


METHODS: dict[str, MethodSpec] = {}
"""Method code -> :class:`MethodSpec`, one entry per method (aliases and former codes are in
:data:`ALIASES` and :data:`RENAMED`)."""

ALIASES: dict[str, str] = {}
"""Declared short codes: alias -> the registered code it means (``bnma methods`` lists them)."""

RENAMED: dict[str, str] = {}
"""Former codes still accepted until the next release: old code -> new code."""


def register(spec: MethodSpec) -> MethodSpec:
    if not spec.display_name:
        raise ValueError(f"{spec.name}: a registered method needs a display_name.")
    METHODS[spec.name] = spec
    return spec


def available_methods() -> list[str]:
    """Every registered method code (without aliases and former codes)."""
    return list(METHODS)


def is_method(name: str) -> bool:
    """Whether ``name`` is a registered code, a declared alias or a former code."""
    return name in METHODS or name in ALIASES or name in RENAMED


def resolve_name(name: str) -> str:
    """The registered code ``name`` stands for: itself, the code of an alias, or the new code
    of a former one (with a FutureWarning naming it); ValueError naming the choices."""
    if name in METHODS:
        return name
    if name in ALIASES:
        return ALIASES[name]
    if name in RENAMED:
        from .base import caller_level

        new = RENAMED[name]
        warnings.warn(f"The method code {name!r} was renamed {new!r}; {name} is accepted until "
                      f"the next release.", FutureWarning, stacklevel=caller_level())
        return new
    raise ValueError(f"Unknown method {name!r}; available: {', '.join(METHODS)}")


def get_spec(name: str) -> MethodSpec:
    """The registered :class:`MethodSpec` of ``name`` (a code, an alias or a former code; see
    :func:`resolve_name`); ValueError naming the choices."""
    return METHODS[resolve_name(name)]


def make_classifier(name: str, **overrides: Any):
    """A new, unfitted estimator for the method ``name`` (``overrides`` replace defaults)."""
    return get_spec(name).make(**overrides)


def describe(name: str) -> str:
    """The one-line description of method ``name``."""
    return get_spec(name).description


def display_name(name: str) -> str:
    """The plain-words name of method ``name`` (e.g. "Order-MCMC averaging, 10 orders")."""
    return get_spec(name).display_name


def alias_meaning(name: str) -> str:
    """What an alias or former code stands for, in words ('' for a registered code)."""
    if name in ALIASES:
        target = ALIASES[name]
        return f"same as {target} ({METHODS[target].display_name})"
    if name in RENAMED:
        return f"former code of {RENAMED[name]}, accepted until the next release"
    return ""


def capabilities(method: Any) -> Capabilities:
    """Declared capabilities of a registry name or of an estimator.

    An estimator of a registered class gets that class's declaration (all entries of one class
    declare the same missing-value handling); any other estimator is trusted with incomplete
    training rows only if it says so with a true ``handles_missing_in_fit`` attribute.
    """
    if isinstance(method, str):
        return get_spec(method).capabilities
    for spec in METHODS.values():
        module, _, cls = spec.factory.partition(":")
        if type(method).__name__ == cls and type(method).__module__ == module:
            return spec.capabilities
    if getattr(method, "handles_missing_in_fit", False):
        return Capabilities(fit_missing="available")
    return DEFAULT_CAPABILITIES


def check_capabilities(method: Any, n_variables: int, n_classes: int,
                       label: str | None = None) -> None:
    """ValueError in plain words if ``method`` cannot take data of this shape (``label``
    names it in the message; default the registry name or the class name)."""
    caps = capabilities(method)
    if label is None:
        label = method if isinstance(method, str) else type(method).__name__
    if caps.max_variables is not None and n_variables > caps.max_variables:
        raise ValueError(
            f"{label} takes at most {caps.max_variables} variables (class included); this "
            f"dataset has {n_variables}. Select fewer features first.")
    if not caps.multiclass and n_classes > 2:
        raise ValueError(f"{label} handles two classes only; this class has {n_classes}.")


def training_rows(method: Any, X: np.ndarray) -> np.ndarray:
    """Indices of the rows of feature codes ``X`` that ``method`` learns from: all of them if
    it learns from incomplete rows (declared ``fit_missing``), else the complete ones."""
    X = np.asarray(X)
    if capabilities(method).learns_from_incomplete_rows:
        return np.arange(len(X))
    return np.flatnonzero(~(X < 0).any(axis=1))


def resource_limit(method: Any, dataset: Any, rows: Any = None, label: str | None = None,
                   n_models: int = 1, **params: Any) -> str:
    """Why fitting ``method`` on ``dataset`` would pass a resource guard that the estimator
    prices from the data before any fit, in plain words with the remedies; '' when it would
    not, or when the method has no such guard. The guards: the memory of the fitted models
    (``estimate_fit_bytes``, ``n_models`` of them, against
    :func:`bnma_core.limits.fit_budget_bytes`) and the estimator's own ``check_resources``
    (B-RAI's generating-tree size, ``max_ci_tests``).

    Parameters
    ----------
    method : str or estimator
        As for :func:`fit_method` (``params`` override the registered defaults).
    dataset : DiscreteDataset
    rows : array of int or bool, optional
        Training rows (default all: a conservative estimate for the folds of a
        cross-validation, which train on fewer rows).
    label : str, optional
        Names the method in the message (default the registry name or the class name).
    n_models : int
        Fitted models held at once (cross-fitting holds its K fold models).
    """
    from sklearn.base import clone

    from ..data import DataError
    from ..limits import fit_budget_bytes

    if isinstance(method, str):
        method = resolve_name(method)
        est = get_spec(method).make(**params)
    elif (getattr(method, "check_resources", None) is None
          and getattr(method, "estimate_fit_bytes", None) is None):
        return ""
    else:
        est = clone(method)
        if params:
            est.set_params(**params)
    if label is None:
        label = method if isinstance(method, str) else type(method).__name__
    price = getattr(est, "estimate_fit_bytes", None)
    if price is not None:
        n_rows = dataset.n_rows if rows is None else len(np.arange(dataset.n_rows)[rows])
        need = int(n_models) * float(price(n_rows, dataset.arities[dataset.feature_indices],
                                           len(dataset.classes)))
        budget = fit_budget_bytes()
        if need > budget:
            each = f" ({n_models} models, one per part of the data)" if n_models > 1 else ""
            return (f"{label}: its fitted models would hold about {need / 2**30:.1f} GB"
                    f"{each}, over this server's limit of {budget / 2**30:.1f} GB for one "
                    f"request. Select fewer features, or use a method for wide data such as "
                    f"naive Bayes (nb) or averaged naive Bayes (manb)"
                    + (", or learn one model of all rows" if n_models > 1 else "") + ".")
    check = getattr(est, "check_resources", None)
    if check is None:
        return ""
    idx = np.arange(dataset.n_rows) if rows is None else np.asarray(rows)
    if idx.dtype == bool:
        idx = np.flatnonzero(idx)
    idx = idx[training_rows(method if isinstance(method, str) else est, dataset.X[idx])]
    labels = np.asarray(dataset.classes, dtype=object)[dataset.y[idx]]
    try:
        check(np.ascontiguousarray(dataset.X[idx]), labels,
              arities=dataset.arities[dataset.feature_indices])
    except DataError as exc:
        return f"{label}: {exc}"
    return ""


def fit_method(method: Any, dataset: Any, rows: Any = None, *,
               progress: Callable[[dict], None] | None = None, progress_every: int = 500,
               should_stop: Callable[[], bool] | None = None, **params: Any):
    """Build a registered method (or clone an estimator) and fit it on a dataset.

    The one path from a :class:`~bnma_core.data.DiscreteDataset` to a fitted model, used by
    the CLI, the pages, cross-validation and the experiments: the model is fitted on the
    dataset's codes with the dataset's arities (every state keeps its code, also states absent
    from ``rows``), its variables carry the dataset's names and states, and its ``classes_``
    are the dataset's class labels.

    Parameters
    ----------
    method : str or estimator
        A registry name (``params`` override its defaults, e.g. ``random_state``) or an
        unfitted estimator (cloned; ``params`` are set on the clone).
    dataset : DiscreteDataset
    rows : array of int or bool, optional
        Training rows (default all). Rows with a missing feature value are left out when the
        method declares ``fit_missing="drop"``; ``model.n_train_rows_`` says how many rows it
        learned from.
    progress : callable, optional
        Streaming fit, for estimators with a ``fit_stream`` method (order MCMC): called with
        each progress event of ``fit_stream`` (for order MCMC one dict per chain every
        ``progress_every`` iterations: chain, iteration, n_iter, log2_score,
        acceptance_rate, order, spearman, iter_per_s, done) while the model is fitted on the
        same rows, with the same names and class labels as without it.
    progress_every : int, default 500
        Iterations between progress events.
    should_stop : callable, optional
        With ``progress``: checked between short chunks of the fit (about 0.1 s for order
        MCMC); when it returns True the fit ends early and the model is built from what was
        computed so far (the estimator's ``fit_stream`` says what that is).

    Returns
    -------
    The fitted estimator.

    Raises
    ------
    ValueError
        Unknown method, data the method cannot take (too many variables, multiclass), or
        ``progress`` for an estimator that cannot stream its fit.
    """
    from sklearn.base import clone

    if isinstance(method, str):
        method = resolve_name(method)
        est = get_spec(method).make(**params)
    else:
        est = clone(method)
        if params:
            est.set_params(**params)
    n_rows = dataset.n_rows
    idx = np.arange(n_rows) if rows is None else np.asarray(rows)
    if idx.dtype == bool:
        idx = np.flatnonzero(idx)
    check_capabilities(method if isinstance(method, str) else est, dataset.n_vars,
                       len(dataset.classes))
    X = dataset.X[idx]
    keep = training_rows(method if isinstance(method, str) else est, X)
    idx = idx[keep]
    labels = np.asarray(dataset.classes, dtype=object)[dataset.y[idx]]
    if progress is not None:
        _fit_streaming(est, dataset, idx, progress, progress_every, should_stop)
    elif hasattr(est, "fit_dataset"):
        est.fit_dataset(dataset, idx)
    elif "arities" in inspect.signature(est.fit).parameters:
        est.fit(np.ascontiguousarray(dataset.X[idx]), labels,
                arities=dataset.arities[dataset.feature_indices])
    else:
        est.fit(np.ascontiguousarray(dataset.X[idx]), labels)
    try:
        est.n_train_rows_ = int(len(idx))
    except AttributeError:  # pragma: no cover - estimators with __slots__
        pass
    return est


def _fit_streaming(est: Any, dataset: Any, idx: np.ndarray, progress: Callable[[dict], None],
                   every: int, should_stop: Callable[[], bool] | None) -> None:
    """:meth:`fit_dataset`'s fit through the estimator's ``fit_stream``: the same codes,
    arities, variable names and class labels, with every progress event handed to
    ``progress``."""
    import pandas as pd

    stream = getattr(est, "fit_stream", None)
    if stream is None:
        raise ValueError(f"{type(est).__name__} cannot report progress while it fits (it has "
                         "no fit_stream); fit it without progress.")
    cls_prepare = type(est)._prepare_fit

    def prepare(X: Any, y: Any, arities: Any = None) -> tuple[np.ndarray, np.ndarray]:
        # what fit_dataset sets between validating the codes and fitting: class labels,
        # variable names (read when the score table is built) and state labels
        out = cls_prepare(est, X, y, arities)
        est.classes_ = np.asarray(dataset.classes, dtype=object)[est.classes_]
        est.feature_names_in_ = np.asarray(dataset.feature_names, dtype=object)
        est.feature_states_ = [list(s) for s in dataset.feature_states]
        return out

    y = pd.Series(dataset.y[idx], name=dataset.class_name)
    est._prepare_fit = prepare  # this fit only (removed below)
    try:
        gen = stream(np.ascontiguousarray(dataset.X[idx]), y, every=int(every),
                     arities=dataset.arities[dataset.feature_indices], should_stop=should_stop)
        try:
            for event in gen:
                progress(event)
        finally:
            gen.close()  # builds the model from what was computed (also after an exception)
    finally:
        del est._prepare_fit


build = fit_method
"""Alias of :func:`fit_method`."""


# --- registrations (one block per module; keep alphabetical by module) ------------------------
# Capabilities are declared from what each class does (read the modules):
# * augmented NB family (nb, tan, kdb): counts are taken family by family on the rows where the
#   family is observed; missing test values are eliminated exactly from the factors.
# * manb: a missing feature in a labelled row is a missing leaf; its counts are the observed
#   ones (exact, Dash & Cooper section 5); EM only runs over rows without a class.
# * order methods: the score table counts available cases per family; missing test values are
#   marginalized (exactly up to max_missing_states joint states, then Monte Carlo); no variable
#   limit: beyond 64 variables (or when the full table would not fit) each node's parents come
#   from its 16 best candidates, and memory is checked before the table is built.
# * ukdb: MI / CMI and CPTs from available cases; UKDB_L marginalizes missing test values,
#   UKDB_P leaves them out of the personalized network.

_AUGMENTED = Capabilities(fit_missing="available", predict_missing="marginalize",
                          exposes=("dag",))

# bnma_core.classifiers.manb
register(MethodSpec(
    "manb", "bnma_core.classifiers.manb:MANaiveBayes",
    "Model-averaged naive Bayes: averages all 2^N choices of which features to use, exactly, "
    "at the cost of one naive Bayes (Dash & Cooper 2002).",
    {"alpha": 1.0, "scoring": "k2", "arc_prior": 0.5},
    capabilities=Capabilities(fit_missing="available", predict_missing="marginalize",
                              exposes=("dag", "edge_posteriors")),
    display_name="Model-averaged naive Bayes"))

# bnma_core.classifiers.naive_bayes / tan / kdb
register(MethodSpec("nb", "bnma_core.classifiers.naive_bayes:NaiveBayes",
                    "Naive Bayes: every feature depends only on the class.", {"alpha": 1.0},
                    capabilities=_AUGMENTED, display_name="Naive Bayes"))
register(MethodSpec("tan", "bnma_core.classifiers.tan:TAN",
                    "Tree-augmented naive Bayes: features also form a tree of strongest "
                    "dependencies (Friedman et al. 1997).", {"alpha": 1.0},
                    capabilities=_AUGMENTED, display_name="Tree-augmented naive Bayes"))
register(MethodSpec("kdb1", "bnma_core.classifiers.kdb:KDB",
                    "k-dependence Bayes with k = 1: each feature may depend on one other "
                    "feature (Sahami 1996).", {"k": 1, "alpha": 1.0}, capabilities=_AUGMENTED,
                    display_name="k-dependence Bayes, 1 feature parent"))
register(MethodSpec("kdb2", "bnma_core.classifiers.kdb:KDB",
                    "k-dependence Bayes with k = 2: each feature may depend on two other "
                    "features (Sahami 1996).", {"k": 2, "alpha": 1.0}, capabilities=_AUGMENTED,
                    display_name="k-dependence Bayes, 2 feature parents"))

# bnma_core.classifiers.order_bma (Hwang & Zhang 2005) ---------------------------------------
_ORDERS = Capabilities(fit_missing="available", predict_missing="marginalize",
                       max_variables=None, exposes=("edge_posteriors",))
_MCMC_CLI = {"n_iter": 10000, "burn_in": 2000, "max_parents": 3}
register(MethodSpec(
    "bma_fixed", "bnma_core.classifiers.order_bma:FixedOrderBMA",
    "BMA over all networks (up to 3 parents per node) consistent with one node order: the class "
    "first, then features by decreasing mutual information with the class (a heuristic order).",
    {"max_parents": 3}, capabilities=_ORDERS, test_params={"max_parents": 1},
    display_name="Averaging over all networks of one fixed order"))
for _k in (1, 10, 30):
    register(MethodSpec(
        f"bma{_k}", "bnma_core.classifiers.order_bma:OrderMCMCBMA",
        f"BMA of Bayesian network classifiers over {_k} node order{'s' if _k > 1 else ''} "
        "sampled by order MCMC (Hwang & Zhang 2005); for speed 10,000 iterations with burn-in "
        "2,000 instead of the paper's 60,000 / 10,000.",
        {**_MCMC_CLI, "n_orders": _k}, randomized=True, capabilities=_ORDERS,
        test_params={"n_iter": 60, "burn_in": 10, "n_orders": min(_k, 2), "max_parents": 1},
        display_name=f"Order-MCMC averaging, {_k} order{'s' if _k > 1 else ''}"))
del _k
for _code, _ess, _what in (
        ("bma10_bdeu", 1, "little smoothing (BDeu's usual ESS), for small tables read almost as "
                          "observed."),
        ("bma10_smooth", 20, "strong smoothing, for many-valued attributes and classes.")):
    register(MethodSpec(
        _code, "bnma_core.classifiers.order_bma:OrderMCMCBMA",
        f"bma10 with the BDeu Dirichlet prior of equivalent sample size {_ess} instead of K2: "
        + _what,
        {**_MCMC_CLI, "n_orders": 10, "scoring": "bdeu", "ess": float(_ess)}, randomized=True,
        capabilities=_ORDERS,
        test_params={"n_iter": 60, "burn_in": 10, "n_orders": 2, "max_parents": 1},
        display_name=f"Order-MCMC averaging, 10 orders, BDeu prior (ESS {_ess})"))
del _code, _ess, _what

# ukdb
_UKDB = dict(fit_missing="available", predict_missing="marginalize")
register(MethodSpec("ukdb1", "bnma_core.classifiers.ukdb:UKDB",
                    "UKDB with k = 1: each attribute depends on the class and at most one "
                    "other attribute", {"k": 1, "mode": "ensemble"},
                    capabilities=Capabilities(**_UKDB, exposes=("dag", "instance_structures")),
                    display_name="UKDB (general + per-row network), 1 feature parent"))
register(MethodSpec("ukdb2", "bnma_core.classifiers.ukdb:UKDB",
                    "UKDB (k = 2): average of a network learned from all patients (domain "
                    "knowledge) and one built for each new patient (personalized knowledge)",
                    {"k": 2, "mode": "ensemble"},
                    capabilities=Capabilities(**_UKDB, exposes=("dag", "instance_structures")),
                    display_name="UKDB (general + per-row network), 2 feature parents"))
register(MethodSpec("ukdb_l", "bnma_core.classifiers.ukdb:UKDB",
                    "UKDB_L (k = 2): one network of the strongest dependences in the training "
                    "data (domain knowledge)", {"k": 2, "mode": "domain"},
                    capabilities=Capabilities(**_UKDB, exposes=("dag",)),
                    display_name="UKDB, general network only (UKDB_L)"))
register(MethodSpec("ukdb_p", "bnma_core.classifiers.ukdb:UKDB",
                    "UKDB_P (k = 2): a network built for each patient from the dependences "
                    "between that patient's own values (personalized knowledge)",
                    {"k": 2, "mode": "personalized"},
                    capabilities=Capabilities(**_UKDB, exposes=("instance_structures",)),
                    display_name="UKDB, per-row network only (UKDB_P)"))

# --- bnma_core.classifiers.exact (exact / K-best structure learning) --------------------------
# Exact learning refuses incomplete training rows (the classifiers drop them and count them in
# n_rows_dropped_); test values are marginalised by DiscreteBN.class_posterior.
_EXACT = Capabilities(fit_missing="drop", predict_missing="marginalize", max_variables=20,
                      exposes=("dag",))
register(MethodSpec(
    "ebn", "bnma_core.classifiers.exact:ExactBN",
    "Exact Bayesian network: the globally best-scoring network over the features and the class "
    "(BDeu, found exhaustively; at most 20 variables).", {"ess": 1.0}, capabilities=_EXACT,
    display_name="Exact best network"))
register(MethodSpec(
    "eanb", "bnma_core.classifiers.exact:ExactANB",
    "Exact augmented naive Bayes: the class points to every feature and the features' own "
    "network is the best-scoring one (BDeu, exhaustive; at most 20 features).", {"ess": 1.0},
    capabilities=_EXACT, display_name="Exact augmented naive Bayes"))

# --- bnma_core.classifiers.aode and UKDB with k chosen by inner CV ----------------------------
register(MethodSpec(
    "aode", "bnma_core.classifiers.aode:AODE",
    "Averaged one-dependence estimators: averages the networks in which each feature in turn is "
    "the parent of all others (Webb et al. 2005; the AODE users know from Weka).",
    {"frequency_limit": 1, "alpha": 1.0},
    capabilities=Capabilities(fit_missing="available", predict_missing="marginalize",
                              exposes=()),
    display_name="Averaged one-dependence estimators (AODE)"))
register(MethodSpec(
    "ukdb_cv", "bnma_core.classifiers.ukdb:UKDB",
    "UKDB with k (1 or 2) chosen on the training rows by 5-fold cross-validation: the UKDB "
    "setting that was at least as accurate as KDB over the 16 data sets of docs/accuracy.md §2.",
    {"k_grid": (1, 2), "mode": "ensemble"},
    capabilities=Capabilities(**_UKDB, exposes=("dag", "instance_structures")),
    display_name="UKDB, feature parents (1 or 2) chosen by inner cross-validation"))
del _UKDB

# --- bnma_core.classifiers.kbest / ensembles / acll_tan / brai (subbagging paper) -------------
# Sugahara, Aomi & Ueno, "Bayesian network model averaging classifiers by subbagging": the
# proposed method, KBestEC100 and the Table 1 baselines with the paper's EAP parameters.
# Exact-search methods refuse incomplete training rows (dropped, counted) and the exact-search
# limits (18 variables for K > 10, else 20); aCLL-TAN, bAN_mix and B-RAI declare nothing, so
# cross-validation gives them complete rows only and says how many were dropped.
_KBEST18 = Capabilities(fit_missing="drop", predict_missing="marginalize", max_variables=18)
register(MethodSpec(
    "kbest", "bnma_core.classifiers.kbest:KBestEC",
    "K-best model averaging: averages the predictions of the 100 best-scoring network classes "
    "(BDeu), weighted by their posterior (Chen & Tian 2014); at most 18 variables.",
    {"n_best": 100, "ess": 1.0}, capabilities=_KBEST18,
    display_name="Averaging over the 100 best networks"))
register(MethodSpec(
    "kbest_subbagging", "bnma_core.classifiers.kbest:SubbaggingKBest",
    "Subbagging K-best: the 10 best network classes on each of 10 subsamples of 90% of the "
    "rows, all averaged (Sugahara, Aomi & Ueno); at most 20 variables.",
    {"n_subsamples": 10, "max_samples": 0.9, "n_best": 10, "ess": 1.0}, randomized=True,
    capabilities=_EXACT,
    display_name="Averaging over the 10 best networks of 10 subsamples (subbagging)"))
register(MethodSpec(
    "nb_eap", "bnma_core.classifiers.naive_bayes:NaiveBayes",
    "Naive Bayes with the EAP parameters of the subbagging paper (BDeu pseudo-counts, α = 1).",
    {"cpt_prior": "bdeu", "ess": 1.0}, capabilities=_AUGMENTED,
    display_name="Naive Bayes, BDeu parameters"))
register(MethodSpec(
    "tan_eap", "bnma_core.classifiers.tan:TAN",
    "Tree-augmented naive Bayes with the EAP parameters of the subbagging paper (BDeu, α = 1).",
    {"cpt_prior": "bdeu", "ess": 1.0}, capabilities=_AUGMENTED,
    display_name="Tree-augmented naive Bayes, BDeu parameters"))
register(MethodSpec(
    "tan_acll", "bnma_core.classifiers.acll_tan:ACLLTAN",
    "aCLL-TAN: the feature tree that best approximates the conditional log-likelihood "
    "(Carvalho et al. 2013; their Monte Carlo beta, pseudo-count 5), EAP parameters.",
    {"beta": "dirichlet", "n_prime": 5.0},
    display_name="Tree-augmented naive Bayes fitted for classification (aCLL-TAN)"))
register(MethodSpec(
    "ebn_bagging", "bnma_core.classifiers.ensembles:BaggingEBN",
    "Bagging of 10 exact networks, each learned on a bootstrap sample of 90% of the rows; "
    "predictions averaged. At most 20 variables.",
    {"n_estimators": 10, "max_samples": 0.9}, randomized=True, capabilities=_EXACT,
    display_name="Bagging of 10 exact best networks"))
register(MethodSpec(
    "ebn_adaboost", "bnma_core.classifiers.ensembles:AdaBoostEBN",
    "AdaBoost of 10 exact networks (weighted rows, SAMME weights). At most 20 variables.",
    {"n_estimators": 10}, capabilities=_EXACT,
    display_name="AdaBoost of 10 exact best networks"))
register(MethodSpec(
    "banmix", "bnma_core.classifiers.ensembles:BANMix",
    "bAN_mix: boosting that starts from naive Bayes and adds the next strongest feature link "
    "each round (Jing, Pavlović & Rehg 2008).", {},
    display_name="Boosted augmented naive Bayes (bAN_mix)"))
register(MethodSpec(
    "brai", "bnma_core.classifiers.brai:BRAI",
    "B-RAI: averages 100 networks sampled, in proportion to their BDeu score, from a tree of "
    "recursive-autonomy (RAI) independence tests on 3 bootstrap samples per node "
    "(Rohekar et al. 2018).",
    {"n_structures": 100, "s": 3, "significance": 0.05}, randomized=True,
    display_name="Averaging over 100 networks from bootstrapped independence tests (B-RAI)"))

# --- the Dirichlet prior chosen by marginal likelihood; stacking over families ----------------
register(MethodSpec(
    "bma10_ml", "bnma_core.classifiers.order_bma:OrderMCMCBMA",
    "bma10 with its Dirichlet prior (K2, or BDeu with equivalent sample size 0.5-20) chosen on "
    "the training rows by the marginal likelihood at the best sampled order; 7 chains.",
    {**_MCMC_CLI, "n_orders": 10, "dirichlet_grid": ("k2", 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)},
    randomized=True, capabilities=_ORDERS,
    test_params={"n_iter": 60, "burn_in": 10, "n_orders": 2, "max_parents": 1,
                 "dirichlet_grid": ("k2", 1.0)},
    display_name="Order-MCMC averaging, 10 orders, prior chosen by marginal likelihood"))
register(MethodSpec(
    "stack", "bnma_core.classifiers.stacking:PredictiveStacking",
    "Stacking of bma10 with three Dirichlet priors (K2, BDeu ESS 1 and 20; one chain's orders) "
    "and UKDB (k = 2): their class probabilities mixed with the weights that best predicted "
    "the class of each training row left out (log score; Yao et al. 2018).",
    {"candidates": ("bma10", "bma10_bdeu", "bma10_smooth", "ukdb2"), "weighting": "stacking",
     "inner_folds": 5},
    randomized=True,
    capabilities=Capabilities(fit_missing="available", predict_missing="marginalize"),
    test_params={"candidates": ("nb", "tan"), "inner_folds": 2},
    display_name="Stacking of order-MCMC averaging (three priors) and UKDB"))

# --- declared aliases and former codes ---------------------------------------------------------
ALIASES.update({"kdb": "kdb2", "ukdb": "ukdb2"})
RENAMED.update({"fobma": "bma_fixed", "subbkb": "kbest_subbagging", "acll_tan": "tan_acll",
                "bagging_ebn": "ebn_bagging", "adaboost_ebn": "ebn_adaboost"})


# --- the recommended method (docs/accuracy.md §12) ---------------------------------------------
DEFAULT_METHOD = "stack"
"""The recommended method: the default of ``bnma cv --methods`` and the method the Compare page
selects first. Stacking (Yao et al. 2018) of order-MCMC BMA over 10 orders under three Dirichlet
priors (``bma10``: K2; ``bma10_bdeu``: BDeu ESS 1; ``bma10_smooth``: BDeu ESS 20) and UKDB
(k = 2), weights from the class log score of the training rows out of sample. BMA alone
is over-confident where its posterior settles on one near-naive-Bayes network (WBC: calibration
slope 0.36), and no one Dirichlet prior suits every data set. On Weka's folds of the seven
anchor data sets the stacked predictive has a lower mean log-loss than every Weka / pyAgrum
configuration (0.456 against 0.484), is within 0.02 of the best configuration on 6 of 7 and
has the best accuracy rank; on ten further data sets its mean log-loss is 0.349 against
``bma10``'s 0.398 (lower on nine of the ten) and its accuracy .843 against .812
(``docs/accuracy.md`` §12). Its weights come from leave-one-out class posteriors in closed form
(``inner_fit="loo"``: one fit per candidate, no inner folds), and the three order averages
average over one chain's orders (``share_orders``; mean log-loss 0.450 on the anchors, 0.454
with a chain per prior): 2.0× one ``bma10`` fit on WBC, 1.9× on ALARM and 2.7× on HEPAR II
samples of 500 rows, 1.9-2.8× on zoo, vote and mushroom (``docs/accuracy.md`` §13)."""
