"""Properties of every explanation, over every registered method that explains (issue 32 item 9;
DESIGN §15), checked with Hypothesis on small random data: ASIA samples and random DAGs of 3-6
variables (``bnma_core.synthetic``), 1-4 classes, and random patterns of unknown findings.

* the probabilities of a case sum to 1;
* the averaged probability lies within its models' range (averages that expose their models);
* every interval is ordered and within [0, 1] (structure, structure + parameters);
* Shapley values sum to the log-odds difference (efficiency), and the full coalition's
  log-odds is the prediction's;
* the value of information is >= 0 and equals the mutual information I(C; X_j | x_obs)
  computed by enumerating the averaged joint sum_m w_m P(c, x | m) over the complete
  completions of the case (the models' joints of complete rows, no marginalisation);
* the flip probability is in [0, 1];
* a what-if scenario that changes nothing equals the case (probability, both intervals, the
  "uncertain" flag), with parameter draws;
* with no finding known there is no conflict and no percentile;
* the same seed gives the same bytes (the fit with ``random_state``, the draws, the sampled
  Shapley values, the next-test ranking).

Each method is fitted once per drawn data set (small sizes: ``SMALL``); the number of examples
per method is ``BNMA_PROPERTY_EXAMPLES`` (default 3; the "explain-thorough" profile of the
closing note used 25).
"""

from __future__ import annotations

import itertools
import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bnma_core import explain as E
from bnma_core.classifiers.registry import METHODS
from bnma_core.explain.models import defines_joint, is_stack
from bnma_core.explain.parameters import supports_draws

EXAMPLES = int(os.environ.get("BNMA_PROPERTY_EXAMPLES", "3"))
PROPERTIES = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck))

SMALL = {
    "kbest": {"n_best": 8},
    "kbest_subbagging": {"n_subsamples": 3, "n_best": 3},
    "ebn_bagging": {"n_estimators": 3},
    "ebn_adaboost": {"n_estimators": 3},
    "banmix": {},
    "brai": {"n_structures": 8},
    "ukdb_cv": {"k_grid": (1, 2)},
    "stack": {"candidates": ("nb", "tan", "ukdb1"), "inner_folds": 2},
}
"""Overrides of the registry's ``test_params`` that keep a fit well under a second here."""

N_DRAWS = 16
TOL = 1e-9


def _methods() -> list[str]:
    seen, out = set(), []
    for name, spec in METHODS.items():
        key = (spec.factory, tuple(sorted({**spec.defaults, **spec.test_params}.items())))
        if key not in seen:
            seen.add(key)
            out.append(name)
    return out


def _make(name: str, seed: int):
    spec = METHODS[name]
    params = {**spec.test_params, **SMALL.get(name, {})}
    if spec.randomized:
        params["random_state"] = seed
    return spec.make(**params)


# ---------------------------------------------------------------------- data
@st.composite
def datasets(draw):
    """(X, y, feature arities, seed): ASIA samples or a random DAG's, 1-4 classes."""
    seed = draw(st.integers(0, 2 ** 16))
    n = draw(st.integers(24, 60))
    if draw(st.booleans()):
        from bnma_core.network import load_network

        bn = load_network("asia")
        D = bn.sample_codes(n, seed=seed).astype(np.int64)
        c = draw(st.integers(0, bn.n_vars - 1))
        feats = draw(st.lists(st.sampled_from([j for j in range(bn.n_vars) if j != c]),
                              min_size=2, max_size=5, unique=True))
        X, y, ar = D[:, feats], D[:, c], np.full(len(feats), 2)
    else:
        from bnma_core.synthetic import RandomNetwork

        p = draw(st.integers(2, 5))  # 3-6 variables
        rng = np.random.default_rng(seed)
        parents = [np.sort(rng.choice(i, size=int(rng.integers(0, min(i, 2) + 1)),
                                      replace=False)) if i else np.zeros(0, np.int64)
                   for i in range(p + 1)]
        ar = np.array([draw(st.integers(2, 3)) for _ in range(p + 1)])
        c = draw(st.integers(0, p))
        ar[c] = draw(st.integers(2, 4))
        D = RandomNetwork(parents, ar, c, seed).sample(n, seed=seed + 1).astype(np.int64)
        feats = [j for j in range(p + 1) if j != c]
        X, y, ar = D[:, feats], D[:, c], ar[feats]
    if draw(st.integers(0, 5)) == 0:  # one class only
        y = np.zeros_like(y)
    y = np.unique(y, return_inverse=True)[1]
    return X, y, np.asarray(ar, dtype=np.int64), seed


def _case(draw, X, ar):
    """A training row or random codes, with a random pattern of unknown findings."""
    if draw(st.booleans()):
        x = X[draw(st.integers(0, len(X) - 1))].copy()
    else:
        x = np.array([draw(st.integers(0, int(a) - 1)) for a in ar])
    unknown = draw(st.lists(st.booleans(), min_size=len(x), max_size=len(x)))
    x[np.asarray(unknown)] = -1
    return x.astype(np.int64)


# ---------------------------------------------------------------------- brute force
def _joint_of_complete_rows(est, R: np.ndarray) -> np.ndarray:
    """sum_m w_m P(c, r | m) / sum_m w_m of complete rows R, (K, C), from the models' own
    joints (a stack: its components that define one, weights renormalised; a hard vote: its
    members' joints)."""
    if is_stack(est):
        parts = [(w, comp) for _, w, comp in est.stack_components()
                 if w > 0 and defines_joint(comp)]
        total = sum(w for w, _ in parts)
        out = np.zeros((len(R), len(est.classes_)))
        for w, comp in parts:
            cls = np.asarray(comp.classes_, dtype=np.int64)
            out[:, cls] += w / total * _joint_of_complete_rows(comp, R)
        return out
    opts = {"voting": "soft"} if getattr(est, "voting", "soft") == "hard" else {}
    lw, lj, _ = est.model_log_joints(R, codes=True, **opts)
    w = np.exp(np.asarray(lw) - np.logaddexp.reduce(lw))
    return np.einsum("m,mkc->kc", w, np.exp(lj))


def _brute_mutual_information(est, x: np.ndarray, j: int) -> float:
    """I(C; X_j | x_obs) by enumerating the complete completions of x under the averaged
    joint."""
    U = np.flatnonzero(x < 0)
    ar = np.asarray(est.arities_)
    R = np.repeat(x[None], int(np.prod(ar[U])), axis=0)
    R[:, U] = np.array(list(itertools.product(*[range(int(ar[u])) for u in U])))
    A = _joint_of_complete_rows(est, R)
    T = np.zeros((int(ar[j]), A.shape[1]))
    np.add.at(T, R[:, j], A)
    T = T / T.sum()
    pv, pc = T.sum(axis=1), T.sum(axis=0)
    m = T > 0
    return float((T[m] * np.log(T[m] / np.outer(pv, pc)[m])).sum())


# ---------------------------------------------------------------------- the properties
def _check_prediction(pred, est):
    P = pred.proba
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=TOL)
    for iv in (pred.structure_interval, pred.parameter_interval):
        if iv is None:
            continue
        assert (iv[..., 0] <= iv[..., 1] + TOL).all(), iv
        assert (iv >= -TOL).all() and (iv <= 1 + TOL).all(), iv
    ms = pred.models
    if ms.decomposed and ms.exact:  # the average lies within its models' range
        post, w = ms.posteriors(), ms.model_weights
        for r in range(len(P)):
            on = w[:, r] > 0
            lo, hi = post[on, r].min(axis=0), post[on, r].max(axis=0)
            assert (lo - TOL <= P[r]).all() and (P[r] <= hi + TOL).all(), (lo, P[r], hi)


@pytest.mark.parametrize("name", _methods())
@PROPERTIES
@given(data=st.data())
def test_explanations_are_coherent(name, data):
    X, y, ar, seed = data.draw(datasets())
    est = _make(name, seed)
    try:
        est.fit(X, y, arities=ar)
    except ValueError as exc:  # a method's own limit, said in one sentence
        assert "\n" not in str(exc).strip()
        return
    x = _case(data.draw, X, ar)
    draws = N_DRAWS if supports_draws(est) and not is_stack(est) or is_stack(est) else 0
    try:
        pred = E.predict_with_uncertainty(est, x, n_draws=draws, train=(X, y), seed=seed,
                                          codes=True)
    except ValueError:  # no parameter draws for this method
        draws = 0
        pred = E.predict_with_uncertainty(est, x, codes=True)
    _check_prediction(pred, est)

    # an unchanged what-if is the case, with the case's draws, whatever scenario is beside it
    other = {int(data.draw(st.integers(0, len(x) - 1))): None}
    _, wi = E.what_if(est, x, [{}, other], n_draws=draws, train=(X, y), seed=seed, codes=True)
    _check_prediction(wi, est)
    for k in (0, 1):
        assert wi.proba[k].tobytes() == pred.proba[0].tobytes()
        assert wi.structure_interval[k].tobytes() == pred.structure_interval[0].tobytes()
        if draws:
            assert wi.parameter_interval[k].tobytes() == pred.parameter_interval[0].tobytes()
        assert wi.uncertain()[k] == pred.uncertain()[0]

    # Shapley: efficient, and the full coalition is the prediction
    if len(est.classes_) > 1 and (x >= 0).any():
        sh = E.shapley_values(est, x, seed=seed, codes=True)
        if np.isfinite(sh.values).all() and np.isfinite([sh.full, sh.empty]).all():
            assert sh.values.sum() == pytest.approx(sh.full - sh.empty, abs=1e-8)
            p = pred.proba[0, sh.target]
            if 1e-9 < p < 1 - 1e-9:
                assert sh.full == pytest.approx(math.log(p) - math.log1p(-p), abs=1e-6)
        else:  # a hard vote says 0 or 1: infinite log-odds, values undefined (left alone)
            assert getattr(est, "voting", "soft") == "hard"

    if not defines_joint(est):
        return
    nt = E.next_test(est, x, codes=True, threshold=data.draw(st.sampled_from([0.3, 0.5, 0.8])))
    assert (nt.voi >= 0).all(), dict(zip(nt.findings, nt.voi))
    assert ((nt.flip_probability >= 0) & (nt.flip_probability <= 1)).all()
    for j, voi, pv in zip(nt.columns, nt.voi, nt.value_probabilities):
        assert pv.sum() == pytest.approx(1.0, abs=TOL)
        assert voi == pytest.approx(_brute_mutual_information(est, x, int(j)), abs=1e-8)

    un = E.unusual_case(est, np.full_like(x, -1), train=(X, y), codes=True)
    assert un.conflict == 0.0 and un.rarer_than is None


@pytest.mark.parametrize("name", [n for n in _methods() if METHODS[n].randomized]
                         + ["manb", "kbest"])
@settings(max_examples=1, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_same_seed_gives_the_same_bytes(name, data):
    X, y, ar, seed = data.draw(datasets())
    if len(np.unique(y)) < 2:
        y = np.arange(len(y)) % 2
    x = _case(data.draw, X, ar)
    out = []
    for _ in range(2):
        est = _make(name, seed).fit(X, y, arities=ar)
        res = [est.predict_proba(X).tobytes()]
        try:
            pred = E.predict_with_uncertainty(est, x, n_draws=N_DRAWS, train=(X, y),
                                              seed=seed, codes=True)
            res.append(pred.parameter_interval.tobytes())
        except ValueError:
            pass
        if (x >= 0).sum() > 1:
            res.append(E.shapley_values(est, x, seed=seed, exact_limit=0, n_permutations=8,
                                        codes=True).values.tobytes())
        if defines_joint(est):
            res.append(E.next_test(est, x, codes=True).voi.tobytes())
        out.append(res)
    assert out[0] == out[1]
