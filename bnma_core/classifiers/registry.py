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

# --- bnma_core.classifiers.exact (exact / K-best structure learning, issue 11) ----------------
register(MethodSpec(
    "ebn", "bnma_core.classifiers.exact:ExactBN",
    "Exact Bayesian network: the globally best-scoring network over the features and the class "
    "(BDeu, found exhaustively; at most 20 variables).", {"ess": 1.0}))
register(MethodSpec(
    "eanb", "bnma_core.classifiers.exact:ExactANB",
    "Exact augmented naive Bayes: the class points to every feature and the features' own "
    "network is the best-scoring one (BDeu, exhaustive; at most 20 features).", {"ess": 1.0}))

# --- bnma_core.classifiers.kbest / ensembles / acll_tan / brai (subbagging paper, issue 12) ----
# Sugahara, Aomi & Ueno, "Bayesian network model averaging classifiers by subbagging": the
# proposed method, KBestEC100 and the Table 1 baselines with the paper's EAP parameters.
register(MethodSpec(
    "kbest", "bnma_core.classifiers.kbest:KBestEC",
    "K-best model averaging: averages the predictions of the 100 best-scoring network classes "
    "(BDeu), weighted by their posterior (Chen & Tian 2014); at most 18 variables.",
    {"k": 100, "ess": 1.0}))
register(MethodSpec(
    "subbkb", "bnma_core.classifiers.kbest:SubbaggingKBest",
    "Subbagging K-best: the 10 best network classes on each of 10 subsamples of 90% of the "
    "rows, all averaged (Sugahara, Aomi & Ueno); at most 20 variables.",
    {"n_subsamples": 10, "subsample": 0.9, "k": 10, "ess": 1.0}, randomized=True))
register(MethodSpec(
    "nb_eap", "bnma_core.classifiers.naive_bayes:NaiveBayes",
    "Naive Bayes with the EAP parameters of the subbagging paper (BDeu pseudo-counts, α = 1).",
    {"prior": "bdeu", "ess": 1.0}))
register(MethodSpec(
    "tan_eap", "bnma_core.classifiers.tan:TAN",
    "Tree-augmented naive Bayes with the EAP parameters of the subbagging paper (BDeu, α = 1).",
    {"prior": "bdeu", "ess": 1.0}))
register(MethodSpec(
    "acll_tan", "bnma_core.classifiers.acll_tan:ACLLTAN",
    "aCLL-TAN: the feature tree that best approximates the conditional log-likelihood "
    "(Carvalho et al. 2013), EAP parameters.", {"beta": 0.5, "n_prime": 0.5}))
register(MethodSpec(
    "bagging_ebn", "bnma_core.classifiers.ensembles:BaggingEBN",
    "Bagging of 10 exact networks, each learned on a bootstrap sample of 90% of the rows; "
    "predictions averaged. At most 20 variables.",
    {"n_estimators": 10, "max_samples": 0.9}, randomized=True))
register(MethodSpec(
    "adaboost_ebn", "bnma_core.classifiers.ensembles:AdaBoostEBN",
    "AdaBoost of 10 exact networks (weighted rows, SAMME weights). At most 20 variables.",
    {"n_estimators": 10}))
register(MethodSpec(
    "banmix", "bnma_core.classifiers.ensembles:BANMix",
    "bAN_mix: boosting that starts from naive Bayes and adds the next strongest feature link "
    "each round (Jing, Pavlović & Rehg 2008).", {}))
register(MethodSpec(
    "brai", "bnma_core.classifiers.brai:BRAI",
    "B-RAI: averages 100 networks sampled from a tree of bootstrapped independence tests "
    "(Rohekar et al. 2018; simplified reconstruction, see the class docstring).",
    {"n_structures": 100, "s": 3, "alpha": 0.05}, randomized=True))
