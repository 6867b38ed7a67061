"""One meaning per parameter name (DESIGN §10, parameter glossary): keyword-only constructors,
one declared constraint table per estimator, former names accepted with a FutureWarning, and
the registries' one naming rule with declared aliases and former codes."""

from __future__ import annotations

import inspect
import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from bnma_core.classifiers.base import DEPRECATED, Interval, Options, check_parameter
from bnma_core.classifiers.registry import (
    ALIASES,
    METHODS,
    RENAMED,
    alias_meaning,
    available_methods,
    display_name,
    get_spec,
    is_method,
    make_classifier,
    resolve_name,
)


def _data(n=60, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (n, p))
    y = (X[:, 0] + rng.integers(0, 2, n)) % 2
    return X, y


def _classes():
    from bnma_core.clustering import CLUSTERERS

    return sorted({get_spec(n).factory_class() for n in METHODS}
                  | {s.factory for s in CLUSTERERS.values()}, key=lambda c: c.__name__)


@pytest.mark.parametrize("cls", _classes(), ids=lambda c: c.__name__)
def test_constructors_are_keyword_only_with_one_constraint_table(cls):
    params = inspect.signature(cls.__init__).parameters
    kinds = {p.kind for name, p in params.items() if name != "self"}
    assert kinds == {inspect.Parameter.KEYWORD_ONLY}
    with pytest.raises(TypeError):
        cls(1.0)
    former = set(getattr(cls, "_renamed_parameters", {}))
    assert all(params[old].default == DEPRECATED for old in former)
    assert set(cls._parameter_constraints) == set(params) - {"self"} - former


# (class, former name, new name, value) for every renamed parameter
RENAMES = [
    ("nb", "prior", "cpt_prior", "bdeu"),
    ("tan", "prior", "cpt_prior", "bdeu"),
    ("kdb2", "prior", "cpt_prior", "bdeu"),
    ("tan_acll", "prior", "cpt_prior", "k2"),
    ("bma_fixed", "prior", "structure_prior", "uniform"),
    ("bma_fixed", "missing", "predict_missing", "impute"),
    ("bma1", "prior", "structure_prior", "uniform"),
    ("aode", "missing", "predict_missing", "skip"),
    ("manb", "missing", "fit_missing", "available"),
    ("kbest", "k", "n_best", 3),
    ("kbest_subbagging", "k", "n_best", 2),
    ("kbest_subbagging", "subsample", "max_samples", 0.8),
    ("brai", "alpha", "significance", 0.1),
    ("ukdb2", "cv_folds", "inner_folds", 3),
]


def _small(name):
    return {"bma1": {"n_iter": 60, "burn_in": 10, "max_parents": 1},
            "bma_fixed": {"max_parents": 1},
            "kbest_subbagging": {"n_subsamples": 2}, "brai": {"n_structures": 5}}.get(name, {})


@pytest.mark.parametrize("name, old, new, value", RENAMES, ids=lambda v: str(v))
def test_former_parameter_names_warn_and_give_the_same_model(name, old, new, value):
    X, y = _data()
    Xt = X.copy()
    Xt[::7, 1] = -1
    seed = {"random_state": 0}
    cls = get_spec(name).factory_class()
    assert cls._renamed_parameters[old] == new
    est = cls(**{**_small(name), **seed, old: value}) if "random_state" in \
        inspect.signature(cls).parameters else cls(**{**_small(name), old: value})
    assert est.get_params()[old] == value and est.get_params()[new] == \
        inspect.signature(cls).parameters[new].default
    assert clone(est).get_params()[old] == value
    with pytest.warns(FutureWarning, match=f"'{old}' was renamed '{new}'.*Use {new}="):
        got = est.fit(X, y).predict_proba(Xt)
    ref = clone(est).set_params(**{old: DEPRECATED, new: value})
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        np.testing.assert_array_equal(ref.fit(X, y).predict_proba(Xt), got)
    both = clone(est).set_params(**{new: value})
    with pytest.raises(ValueError, match=f"give {new} only"):
        both.fit(X, y)


def test_registry_overrides_with_a_former_name_replace_the_registered_default():
    """``make_classifier("nb_eap", prior="k2")`` means cpt_prior="k2" (the registered default
    cpt_prior="bdeu" would otherwise collide with it)."""
    with pytest.warns(FutureWarning, match="'prior' was renamed 'cpt_prior'"):
        est = make_classifier("nb_eap", prior="k2")
    assert est.cpt_prior == "k2" and est.prior == DEPRECATED


def test_a_sequence_as_ukdb_k_is_taken_as_k_grid():
    X, y = _data(n=80)
    with pytest.warns(FutureWarning, match=r"now goes in k_grid.*k_grid=\(1, 2\)"):
        old = make_classifier("ukdb2", k=(1, 2)).fit(X, y)
    new = make_classifier("ukdb_cv").fit(X, y)
    assert old.k_ == new.k_ and old.k_scores_ == new.k_scores_
    np.testing.assert_array_equal(old.predict_proba(X), new.predict_proba(X))


@pytest.mark.parametrize("name, params, message", [
    ("nb", {"alpha": -1}, "alpha must be a positive number (got -1)."),
    ("nb", {"alpha": float("inf")}, "alpha must be a positive number (got inf)."),
    ("kdb2", {"k": True}, "k must be a non-negative integer (got True)."),
    ("kbest", {"n_best": 0}, "n_best must be a positive integer (got 0)."),
    ("ebn_bagging", {"max_samples": 1.5}, "max_samples must be a number in (0, 1] (got 1.5)."),
    ("brai", {"significance": 1.0}, "significance must be a number in (0, 1) (got 1.0)."),
    ("bma1", {"predict_missing": "drop"},
     "predict_missing must be one of 'marginalize', 'impute' (got 'drop')."),
    ("tan", {"cpt_prior": "x"},
     "cpt_prior must be None, one of 'bdeu', 'k2', 'laplace' or a positive number (got 'x')."),
    ("ukdb2", {"k_grid": (1, -1)},
     "k_grid must be None or a non-empty sequence of integers >= 0 (got (1, -1))."),
])
def test_bad_values_are_refused_from_the_table_in_one_sentence(name, params, message):
    X, y = _data()
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        make_classifier(name, **params).fit(X, y)


def test_check_parameter_describes_every_alternative():
    check_parameter("x", 3, [Interval("int", 1, None)])
    with pytest.raises(ValueError, match=r"^x must be None, one of 'a' or an integer >= 2 "):
        check_parameter("x", 1, [None, Options("a"), Interval("int", 2, None)])


# --- the method registry: one naming rule, declared aliases, former codes ---------------------
CODE = re.compile(r"^[a-z]+[0-9]*(_[a-z]+)?$")


def test_every_code_follows_the_rule_and_has_a_display_name():
    for name, spec in METHODS.items():
        assert CODE.match(name), name
        assert spec.display_name and spec.display_name != name, name
    names = [s.display_name for s in METHODS.values()]
    assert len(set(names)) == len(names)
    assert display_name("bma10") == "Order-MCMC averaging, 10 orders"


def test_aliases_are_declared_and_resolve_silently():
    assert ALIASES == {"kdb": "kdb2", "ukdb": "ukdb2"}
    assert not set(ALIASES) & set(METHODS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for alias, target in ALIASES.items():
            assert resolve_name(alias) == target and get_spec(alias) is METHODS[target]
            assert is_method(alias) and alias not in available_methods()
    assert alias_meaning("kdb") == "same as kdb2 (k-dependence Bayes, 2 feature parents)"


@pytest.mark.parametrize("old, new", sorted(RENAMED.items()))
def test_former_codes_work_with_a_warning_naming_the_new_one(old, new):
    assert new in METHODS and CODE.match(new) and old not in METHODS
    with pytest.warns(FutureWarning, match=f"'{old}' was renamed '{new}'"):
        assert get_spec(old) is METHODS[new]
    with pytest.warns(FutureWarning):
        est = make_classifier(old)
    assert type(est) is METHODS[new].factory_class()
    assert is_method(old) and "accepted until the next release" in alias_meaning(old)


def test_bnma_methods_shows_display_names_aliases_and_former_codes(capsys):
    from bnma_core.cli import main

    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^bma10 +Order-MCMC averaging, 10 orders$", out, re.M)
    assert re.search(r"^kdb +same as kdb2 \(k-dependence Bayes, 2 feature parents\)$", out, re.M)
    assert re.search(r"^fobma +now bma_fixed$", out, re.M)


# --- the other registries take the same shape ---------------------------------------------------
def test_clustering_papers_and_experiment_methods_have_the_method_registry_shape():
    from bnma_core.clustering import CLUSTERERS, get_clusterer_spec
    from bnma_core.reproduce.anchors import EXTRA_METHODS, get_method_spec, make_method
    from bnma_core.reproduce.papers import PAPERS, get_paper_spec

    for registry, get in ((CLUSTERERS, get_clusterer_spec), (PAPERS, get_paper_spec),
                          (EXTRA_METHODS, get_method_spec)):
        for name, spec in registry.items():
            assert spec.name == name and spec.factory and spec.description
            assert spec.display_name
            assert get(name) is spec
        with pytest.raises(ValueError, match="nope"):
            get("nope")
    assert get_paper_spec("hwang2005").display_name == "Hwang & Zhang (2005)"
    assert get_paper_spec("hwang2005").load().TITLE.startswith("Hwang & Zhang")
    assert make_method("cvselect", seed=3).get_params()["weighting"] == "select-accuracy"
