"""The method registry: declared capabilities (checked against what each class really does) and
the one function that builds a registered method on a dataset (issue 10 items 2, 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from bnma_core.classifiers.registry import (
    EXPOSES,
    FIT_MISSING,
    METHODS,
    PREDICT_MISSING,
    Capabilities,
    MethodSpec,
    build,
    capabilities,
    check_capabilities,
    fit_method,
    make_classifier,
    training_rows,
)
from bnma_core.data import dataset_from_codes, load_dataset
from bnma_core.datasets import bundled_path
from bnma_core.evaluation import cross_validate

WBC = str(bundled_path("wbc.csv"))


def _toy(n=160, p=4, seed=0, missing=0.15):
    """Codes whose feature 0 follows the class; a share of feature values missing."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.integers(0, 3, (n, p))
    X[:, 0] = np.where(rng.random(n) < 0.8, y, rng.integers(0, 3, n))
    X[:, 1] = np.where(rng.random(n) < 0.6, X[:, 0], X[:, 1])
    Xm = X.copy()
    Xm[rng.random((n, p)) < missing] = -1
    codes = np.column_stack([Xm, y])
    return dataset_from_codes(codes, names=[f"f{j}" for j in range(p)] + ["outcome"],
                              arities=np.array([3] * p + [2]),
                              states=[["a", "b", "c"]] * p + [["no", "yes"]])


def _small(name):
    return METHODS[name].test_params


class NoMissing(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        assert (np.asarray(X) >= 0).all()
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        return np.full((len(X), len(self.classes_)), 1 / len(self.classes_))


# --- declarations ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_declares_valid_capabilities(name):
    caps = METHODS[name].capabilities
    assert caps.fit_missing in FIT_MISSING and caps.predict_missing in PREDICT_MISSING
    assert set(caps.exposes) <= set(EXPOSES)
    assert capabilities(name) is caps
    assert capabilities(make_classifier(name)).fit_missing == caps.fit_missing
    assert caps.describe()


@pytest.mark.parametrize("name", [n for n in METHODS
                                  if METHODS[n].capabilities.fit_missing != "drop"])
def test_declared_learning_from_incomplete_rows_is_true(name):
    """A method declaring available-case / EM learning really uses incomplete rows: its
    model differs from the one learned on the complete rows only, and fitting does not fail."""
    ds = _toy()
    complete = np.flatnonzero((ds.X >= 0).all(axis=1))
    assert 0 < len(complete) < ds.n_rows
    params = {**_small(name), **({"random_state": 0} if METHODS[name].randomized else {})}
    full = fit_method(name, ds, **params)
    part = fit_method(name, ds, complete, **params)
    assert full.n_train_rows_ == ds.n_rows and part.n_train_rows_ == len(complete)
    P_full, P_part = full.predict_proba(ds.X), part.predict_proba(ds.X)
    assert np.isfinite(P_full).all() and np.allclose(P_full.sum(axis=1), 1)
    assert np.abs(P_full - P_part).max() > 1e-6


@pytest.mark.parametrize("name", list(METHODS))
def test_declared_marginalization_at_prediction(name):
    """predict_missing="marginalize": a missing value gives the average of the completions
    weighted by the model's P(x_j | rest) - checked loosely: the result is a probability, it
    differs from every hard completion unless all agree, and it lies between them."""
    ds = _toy(missing=0.0)
    params = {**_small(name), **({"random_state": 0} if METHODS[name].randomized else {})}
    model = fit_method(name, ds, **params)
    x = ds.X[:1].copy()
    x[0, 0] = -1
    p = model.predict_proba(x)[0, 1]
    completions = []
    for v in range(3):
        xc = x.copy()
        xc[0, 0] = v
        completions.append(model.predict_proba(xc)[0, 1])
    assert min(completions) - 1e-9 <= p <= max(completions) + 1e-9


def test_limits_are_declared_and_refused_before_fitting():
    """Order methods have no variable limit since issue 15 (candidate parents beyond 64
    variables); exact structure search declares 20 and is refused beyond it, before any fit."""
    assert capabilities("bma10").max_variables is None
    assert capabilities("bma_fixed").max_variables is None
    assert capabilities("ebn").max_variables == 20 and capabilities("eanb").max_variables == 20
    assert capabilities("nb").max_variables is None
    with pytest.raises(ValueError, match="at most 20 variables"):
        check_capabilities("ebn", 70, 2)
    check_capabilities("bma1", 70, 2)
    check_capabilities("nb", 70, 2)
    codes = np.random.default_rng(0).integers(0, 2, (40, 30))
    wide = dataset_from_codes(codes)
    with pytest.raises(ValueError, match="ebn takes at most 20"):
        cross_validate(wide, ["nb", "ebn"], folds=2)
    with pytest.raises(ValueError, match="at most 20"):
        fit_method("ebn", wide)


def test_capabilities_of_unknown_estimators_and_validation():
    assert capabilities(NoMissing()).fit_missing == "drop"

    class Handles(NoMissing):
        handles_missing_in_fit = True

    assert capabilities(Handles()).fit_missing == "available"
    with pytest.raises(ValueError):
        Capabilities(fit_missing="maybe")
    with pytest.raises(ValueError):
        Capabilities(exposes=("everything",))
    with pytest.raises(ValueError, match="Unknown method 'nope'"):
        fit_method("nope", _toy())
    spec = MethodSpec("x", "bnma_core.classifiers.naive_bayes:NaiveBayes", "test")
    assert spec.capabilities.fit_missing == "drop"  # nothing declared: not trusted


# --- the one build function ------------------------------------------------------------------

def test_fit_method_names_states_and_labels_from_the_dataset():
    ds = load_dataset(WBC)
    model = fit_method("tan", ds, np.arange(400))
    assert list(model.feature_names_in_) == ds.feature_names
    assert model.feature_states_ == ds.feature_states
    assert list(model.classes_) == ["benign", "malignant"]
    assert set(model.structure_.nodes) == set(ds.names)
    assert set(model.predict(ds.X[400:])) <= {"benign", "malignant"}
    # the same model as fitting the codes with the dataset's arities
    ref = make_classifier("tan").fit(ds.X[:400], ds.y[:400], arities=ds.arities[:-1])
    np.testing.assert_allclose(model.predict_proba(ds.X[400:]), ref.predict_proba(ds.X[400:]))
    assert build is fit_method


def test_fit_method_keeps_states_absent_from_the_rows():
    ds = _toy(missing=0.0)
    rows = np.flatnonzero(ds.X[:, 2] != 2)
    model = fit_method("nb", ds, rows)
    assert list(model.arities_) == [3, 3, 3, 3]


def test_fit_method_drops_incomplete_rows_only_for_methods_that_say_so():
    ds = _toy()
    n_complete = int((ds.X >= 0).all(axis=1).sum())
    assert fit_method(NoMissing(), ds).n_train_rows_ == n_complete
    assert fit_method("nb", ds).n_train_rows_ == ds.n_rows
    np.testing.assert_array_equal(training_rows(NoMissing(), ds.X),
                                  np.flatnonzero((ds.X >= 0).all(axis=1)))
    assert len(training_rows("manb", ds.X)) == ds.n_rows
    mask = np.zeros(ds.n_rows, bool)
    mask[:50] = True
    assert fit_method("nb", ds, mask).n_train_rows_ == 50


def test_fit_method_params_and_seeds():
    ds = _toy(missing=0.0)
    a = fit_method("bma1", ds, random_state=3, **_small("bma1"))
    b = fit_method("bma1", ds, random_state=3, **_small("bma1"))
    np.testing.assert_array_equal(a.sampled_orders_, b.sampled_orders_)
    assert fit_method("kdb", ds, k=1).k == 1
    est = make_classifier("nb")
    fitted = fit_method(est, ds, alpha=2.0)
    assert fitted is not est and fitted.alpha == 2.0 and not hasattr(est, "classes_")


def test_ukdb_explains_with_dataset_labels():
    ds = load_dataset(WBC)
    model = fit_method("ukdb", ds, np.arange(1, ds.n_rows))
    expl = model.explain(ds.X[0])
    assert expl.classes == ["benign", "malignant"] and expl.class_name == "class"
    assert expl.instance["clump_thickness"] == ds.to_frame().iloc[0]["clump_thickness"]
    frame = pd.DataFrame([ds.to_frame().iloc[0][ds.feature_names]])
    np.testing.assert_allclose(
        model.explain(ds.codes_from_states(frame)[0]).posterior_ensemble,
        expl.posterior_ensemble)
