"""One registry of classification methods (DESIGN §6).

Each entry maps a short name (``nb``, ``tan``, ``bma10``, ...) to a factory given as
``"module:Class"`` (imported lazily, so importing the registry is cheap), the factory's default
arguments, and a one-line plain-language description. The CLI, the Compare page and the
experiments all read this table: a method appears everywhere by being registered once here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MethodSpec:
    name: str
    factory: str  # "bnma_core.classifiers.module:ClassName"
    description: str
    defaults: dict[str, Any] = field(default_factory=dict)
    randomized: bool = False  # takes random_state

    def make(self, **overrides: Any):
        module, _, cls = self.factory.partition(":")
        klass = getattr(importlib.import_module(module), cls)
        params = {**self.defaults, **overrides}
        if not self.randomized:
            params.pop("random_state", None)
        return klass(**params)


METHODS: dict[str, MethodSpec] = {}


def register(spec: MethodSpec) -> MethodSpec:
    METHODS[spec.name] = spec
    return spec


def available_methods() -> list[str]:
    return list(METHODS)


def make_classifier(name: str, **overrides: Any):
    """A new, unfitted estimator for the method ``name`` (``overrides`` replace defaults)."""
    try:
        spec = METHODS[name]
    except KeyError:
        raise ValueError(
            f"Unknown method {name!r}; available: {', '.join(METHODS)}") from None
    return spec.make(**overrides)


def describe(name: str) -> str:
    return METHODS[name].description


# --- registrations (one block per module; keep alphabetical by module) ------------------------

# bnma_core.classifiers.manb
register(MethodSpec(
    "manb", "bnma_core.classifiers.manb:MANaiveBayes",
    "Model-averaged naive Bayes: averages all 2^N choices of which features to use, exactly, "
    "at the cost of one naive Bayes (Dash & Cooper 2002).",
    {"alpha": 1.0, "scoring": "k2", "arc_prior": 0.5}))

# bnma_core.classifiers.naive_bayes / tan / kdb
register(MethodSpec("nb", "bnma_core.classifiers.naive_bayes:NaiveBayes",
                    "Naive Bayes: every feature depends only on the class.", {"alpha": 1.0}))
register(MethodSpec("tan", "bnma_core.classifiers.tan:TAN",
                    "Tree-augmented naive Bayes: features also form a tree of strongest "
                    "dependencies (Friedman et al. 1997).", {"alpha": 1.0}))
register(MethodSpec("kdb1", "bnma_core.classifiers.kdb:KDB",
                    "k-dependence Bayes with k = 1: each feature may depend on one other "
                    "feature (Sahami 1996).", {"k": 1, "alpha": 1.0}))
register(MethodSpec("kdb2", "bnma_core.classifiers.kdb:KDB",
                    "k-dependence Bayes with k = 2: each feature may depend on two other "
                    "features (Sahami 1996).", {"k": 2, "alpha": 1.0}))
register(MethodSpec("kdb", "bnma_core.classifiers.kdb:KDB",
                    "k-dependence Bayes (k = 2; same as kdb2).", {"k": 2, "alpha": 1.0}))

# bnma_core.classifiers.order_bma (Hwang & Zhang 2005) ---------------------------------------
_MCMC_CLI = {"n_iter": 10000, "burn_in": 2000, "max_parents": 3}
register(MethodSpec(
    "fobma", "bnma_core.classifiers.order_bma:FixedOrderBMA",
    "BMA over all networks (up to 3 parents per node) consistent with one node order: the class "
    "first, then features by decreasing mutual information with the class (a heuristic order).",
    {"max_parents": 3}))
for _k in (1, 10, 30):
    register(MethodSpec(
        f"bma{_k}", "bnma_core.classifiers.order_bma:OrderMCMCBMA",
        f"BMA of Bayesian network classifiers over {_k} node order{'s' if _k > 1 else ''} "
        "sampled by order MCMC (Hwang & Zhang 2005); for speed 10,000 iterations with burn-in "
        "2,000 instead of the paper's 60,000 / 10,000.",
        {**_MCMC_CLI, "n_orders": _k}, randomized=True))
del _k

# ukdb
register(MethodSpec("ukdb", "bnma_core.classifiers.ukdb:UKDB",
                    "UKDB (k = 2): average of a network learned from all patients (domain "
                    "knowledge) and one built for each new patient (personalized knowledge)",
                    {"k": 2, "mode": "ensemble"}))
register(MethodSpec("ukdb1", "bnma_core.classifiers.ukdb:UKDB",
                    "UKDB with k = 1: each attribute depends on the class and at most one "
                    "other attribute", {"k": 1, "mode": "ensemble"}))
register(MethodSpec("ukdb2", "bnma_core.classifiers.ukdb:UKDB",
                    "UKDB with k = 2 (same as ukdb)", {"k": 2, "mode": "ensemble"}))
register(MethodSpec("ukdb_l", "bnma_core.classifiers.ukdb:UKDB",
                    "UKDB_L (k = 2): one network of the strongest dependences in the training "
                    "data (domain knowledge)", {"k": 2, "mode": "domain"}))
register(MethodSpec("ukdb_p", "bnma_core.classifiers.ukdb:UKDB",
                    "UKDB_P (k = 2): a network built for each patient from the dependences "
                    "between that patient's own values (personalized knowledge)",
                    {"k": 2, "mode": "personalized"}))

# --- bnma_core.classifiers.aode (helper "ukdb", issue 16) -----------------------------------
register(MethodSpec(
    "aode", "bnma_core.classifiers.aode:AODE",
    "Averaged one-dependence estimators: averages the networks in which each feature in turn is "
    "the parent of all others (Webb et al. 2005; the AODE users know from Weka).",
    {"frequency_limit": 1, "alpha": 1.0}))
register(MethodSpec(
    "ukdb_cv", "bnma_core.classifiers.ukdb:UKDB",
    "UKDB with k (1 or 2) chosen on the training rows by 5-fold cross-validation: the UKDB "
    "setting that was at least as accurate as KDB over the 16 data sets of issue 16.",
    {"k": (1, 2), "mode": "ensemble"}))
