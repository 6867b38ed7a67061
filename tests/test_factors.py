"""bnma_core.factors: the one exact missing-value elimination, against brute-force enumeration."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import brute_joint
from scipy.special import logsumexp

from bnma_core.classifiers.kdb import KDB
from bnma_core.classifiers.naive_bayes import NaiveBayes
from bnma_core.classifiers.tan import TAN
from bnma_core.factors import (
    Factor,
    FactorModel,
    class_log_posterior,
    eliminate,
    log_joint_batch,
    min_fill_order,
    product,
    sum_out,
)
from bnma_core.network import DiscreteBN


# ------------------------------------------------------------------------------ helpers
def random_model(rng: np.random.Generator, n: int, zeros: float = 0.1) -> FactorModel:
    """A random DAG (parents among earlier nodes of a shuffled order, at most 3) with random
    CPTs, some entries exactly zero when ``zeros`` > 0."""
    perm = rng.permutation(n)
    cards = rng.integers(2, 4, n)
    parents: list[list[int]] = [[] for _ in range(n)]
    for k in range(n):
        m = int(rng.integers(0, min(3, k) + 1))
        if m:
            parents[perm[k]] = [int(v) for v in rng.choice(perm[:k], m, replace=False)]
    cpts = []
    for i in range(n):
        q = int(np.prod([cards[p] for p in parents[i]]))
        c = rng.dirichlet(np.ones(cards[i]), q)
        c[rng.random(c.shape) < zeros] = 0.0
        c[c.sum(axis=1) == 0, 0] = 1.0
        cpts.append(c / c.sum(axis=1, keepdims=True))
    return FactorModel(cards, parents, cpts)




def brute_target_joint(joint: np.ndarray, t: int, row: np.ndarray) -> np.ndarray:
    """P(t = k, observed part of ``row``) for every k (the target column is ignored)."""
    idx: list = [slice(None)] * joint.ndim
    for v, code in enumerate(row):
        if v != t and code >= 0:
            idx[v] = slice(int(code), int(code) + 1)
    sub = joint[tuple(idx)]
    return sub.sum(axis=tuple(a for a in range(joint.ndim) if a != t)).ravel()


def random_codes(rng: np.random.Generator, model: FactorModel, n_rows: int,
                 missing: float) -> np.ndarray:
    codes = np.column_stack([rng.integers(0, c, n_rows) for c in model.cards])
    codes[rng.random(codes.shape) < missing] = -1
    return codes


# ------------------------------------------------------------------------------ oracles
@pytest.mark.parametrize("seed", range(6))
def test_log_joint_equals_enumeration_random_networks(seed):
    """log P(t, x_obs) for random networks and random missing patterns, exact to 1e-12, for
    every batching choice (per pattern, pooled soft evidence, one-row blocks, enumeration)."""
    rng = np.random.default_rng(seed)
    model = random_model(rng, int(rng.integers(4, 8)))
    joint = brute_joint(model)
    codes = random_codes(rng, model, 40, missing=0.4)
    codes[:12] = codes[0]  # one pattern with enough rows to be solved on its own
    for t in range(model.n_vars):
        expect = np.array([brute_target_joint(joint, t, r) for r in codes])
        obs = [v for v in range(model.n_vars) if v != t]
        ev = codes[:, obs]
        for opts in ({}, {"chunk_cells": 1}, {"enumeration_limit": 10**9}):
            got = log_joint_batch(model, t, obs, ev, **opts)
            np.testing.assert_allclose(np.exp(got), expect, atol=1e-12, rtol=0)
        possible = expect.sum(axis=1) > 0
        post = expect[possible] / expect[possible].sum(axis=1, keepdims=True)
        for opts in ({}, {"min_pattern_rows": 1}, {"min_pattern_rows": 10**9},
                     {"chunk_cells": 1, "enumeration_limit": 10**9}):
            lp = class_log_posterior(model, t, codes, **opts)
            assert not np.isnan(lp).any()  # impossible rows: -inf, or P(t | blanket)
            got = np.exp(lp[possible] - logsumexp(lp[possible], axis=1, keepdims=True))
            np.testing.assert_allclose(got, post, atol=1e-12, rtol=0)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 6), missing=st.floats(0.0, 1.0))
def test_class_posterior_equals_enumeration_hypothesis(seed, n, missing):
    rng = np.random.default_rng(seed)
    model = random_model(rng, n, zeros=0.0)
    joint = brute_joint(model)
    codes = random_codes(rng, model, 10, missing)
    t = int(rng.integers(0, n))
    lp = class_log_posterior(model, t, codes, min_pattern_rows=3)
    expect = np.array([brute_target_joint(joint, t, r) for r in codes])
    got = np.exp(lp - logsumexp(lp, axis=1, keepdims=True))
    np.testing.assert_allclose(got, expect / expect.sum(axis=1, keepdims=True), atol=1e-12)


def test_underflow_is_recomputed_in_log_space():
    """300 observed children whose likelihoods pull the hidden parent both ways: the product
    underflows in linear arithmetic; the result must still be the exact log value."""
    n_children = 300
    cards = [2, 2] + [2] * n_children
    parents = [[], []] + [[1, 0]] * n_children
    cpts = [np.array([[0.3, 0.7]]), np.array([[0.6, 0.4]])]
    for k in range(n_children):
        good = 0 if k % 2 == 0 else 1  # half favour H = 0, half H = 1
        rows = []
        for t in range(2):
            for h in range(2):  # row j = h + 2 t (first parent, H, fastest)
                p0 = (0.9 - 0.2 * t) if h == good else 1e-3 * (1 + t)
                rows.append([p0, 1 - p0])
        cpts.append(np.array(rows))
    model = FactorModel(cards, parents, cpts)
    codes = np.zeros((1, len(cards)), dtype=np.int64)
    codes[0, :2] = -1
    expect = np.empty(2)
    for t in range(2):
        per_h = []
        for h in range(2):
            s = np.log(cpts[0][0, t]) + np.log(cpts[1][0, h])
            s += sum(np.log(cpts[2 + k][h + 2 * t, 0]) for k in range(n_children))
            per_h.append(s)
        expect[t] = logsumexp(per_h)
    assert expect.max() < -700  # far below the smallest positive float64 when exponentiated
    got = log_joint_batch(model, 0, list(range(1, len(cards))), codes[:, 1:])
    np.testing.assert_allclose(got[0], expect, rtol=1e-12)
    lp = class_log_posterior(model, 0, codes)
    np.testing.assert_allclose(lp[0] - logsumexp(lp[0]), expect - logsumexp(expect), atol=1e-9)


# ------------------------------------------------------------------------------ factor algebra
def random_factors(rng: np.random.Generator, n_vars: int, n_factors: int, batch: int | None
                   ) -> tuple[list[Factor], list[int]]:
    cards = [int(c) for c in rng.integers(1, 4, n_vars)]
    factors = []
    for _ in range(n_factors):
        k = int(rng.integers(0, min(3, n_vars) + 1))
        scope = tuple(int(v) for v in rng.choice(n_vars, k, replace=False))
        batched = batch is not None and bool(rng.random() < 0.5)
        shape = ((batch,) if batched else ()) + tuple(cards[v] for v in scope)
        table = np.asarray(rng.normal(size=shape), dtype=np.float64)
        table[rng.random(shape) < 0.1] = -np.inf
        factors.append(Factor(scope, table, batched))
    return factors, cards


def dense(f: Factor, n_vars: int, cards: list[int], batch: int | None) -> np.ndarray:
    """The factor as a dense log array over every variable (row axis first when batched)."""
    lead = 1 if f.batched else 0
    letters = "abcdefgh"
    src = ("z" if f.batched else "") + "".join(letters[v] for v in f.scope)
    dst = ("z" if f.batched else "") + "".join(letters[v] for v in sorted(f.scope))
    t = np.einsum(f"{src}->{dst}", f.log_table) if f.scope else f.log_table
    shape = list(t.shape[:lead]) + [cards[v] if v in f.scope else 1 for v in range(n_vars)]
    t = t.reshape(shape)
    if batch is not None and not f.batched:
        t = t[None]
    return t


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_vars=st.integers(1, 5), n_factors=st.integers(1, 5),
       batched=st.booleans())
def test_eliminate_equals_dense_logsumexp(seed, n_vars, n_factors, batched):
    """eliminate(factors, keep) = logsumexp over the other variables of the dense log-product,
    for any elimination order; product / sum_out agree with the dense arrays too."""
    rng = np.random.default_rng(seed)
    batch = 3 if batched else None
    factors, cards = random_factors(rng, n_vars, n_factors, batch)
    scope = sorted({v for f in factors for v in f.scope})
    if not scope:
        return
    b = batch if any(f.batched for f in factors) else None
    lead = 1 if b else 0
    total = sum(dense(f, n_vars, cards, b) for f in factors)
    keep = [v for v in scope if rng.random() < 0.4]
    drop = tuple(lead + v for v in range(n_vars) if v not in keep)
    with np.errstate(divide="ignore"):
        expect = logsumexp(total, axis=drop) if drop else total
    expect = np.reshape(expect, tuple(np.shape(total)[:lead]) + tuple(cards[v] for v in keep))
    hidden = [v for v in scope if v not in keep]
    for order in (None, hidden[::-1]):
        got = eliminate(factors, keep, order=order)
        assert got.scope == tuple(keep)
        np.testing.assert_allclose(got.log_table, expect, rtol=1e-10, atol=1e-12)
    ref = sum_out(product(factors), hidden)
    assert sorted(ref.scope) == keep
    np.testing.assert_allclose(np.broadcast_to(dense(ref, n_vars, cards, b), np.shape(total)
                                               if not drop else np.shape(
                                                   dense(ref, n_vars, cards, b))),
                               dense(eliminate(factors, keep), n_vars, cards, b),
                               rtol=1e-10, atol=1e-12)


def test_min_fill_order_on_a_chain_and_a_star():
    # chain 0-1-2-3: eliminating an end never adds fill; ties broken by the smaller index
    assert min_fill_order([0, 1, 2, 3], [(0, 1), (1, 2), (2, 3)], [2, 2, 2, 2]) == [0, 1, 2, 3]
    # star around 0 with leaves 1..3: leaves first (no fill), the hub last
    assert min_fill_order([0, 1, 2, 3], [(0, 1), (0, 2), (0, 3)], [2] * 4)[-1] in (0, 3)
    assert min_fill_order([0, 1, 2, 3], [(0, 1), (0, 2), (0, 3)], [2] * 4)[0] == 1


def test_eliminate_and_model_bad_input():
    f = Factor((0, 1), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="no factor mentions"):
        eliminate([f], keep=[5])
    with pytest.raises(ValueError, match="order must list"):
        eliminate([f], keep=[0], order=[0, 1])
    with pytest.raises(ValueError, match="different numbers of rows"):
        eliminate([Factor((0,), np.zeros((4, 2)), True), Factor((0,), np.zeros((5, 2)), True)])
    with pytest.raises(ValueError, match="cycle"):
        FactorModel([2, 2], [[1], [0]], [np.full((2, 2), 0.5)] * 2)
    with pytest.raises(ValueError, match="shape"):
        FactorModel([2, 2], [[], [0]], [[0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(ValueError, match="negative"):
        FactorModel([2], [[]], [[1.5, -0.5]])
    with pytest.raises(ValueError, match="outside"):
        FactorModel([2], [[3]], [[0.5, 0.5]])
    with pytest.raises(ValueError, match="one entry per variable"):
        FactorModel([2, 2], [[]], [[0.5, 0.5]])
    model = FactorModel([2, 2], [[], [0]], [[0.5, 0.5], [[0.9, 0.1], [0.2, 0.8]]])
    with pytest.raises(ValueError, match="shape"):
        log_joint_batch(model, 0, [1], np.zeros((3, 2), dtype=int))
    with pytest.raises(ValueError, match="also an evidence"):
        log_joint_batch(model, 0, [0], np.zeros((3, 1), dtype=int))
    with pytest.raises(ValueError, match="state indices"):
        class_log_posterior(model, 0, np.array([[0, 2]]))
    with pytest.raises(ValueError, match="shape"):
        class_log_posterior(model, 0, np.array([0, 1]))
    with pytest.raises(ValueError, match="not in the factor's scope"):
        sum_out(Factor((0,), np.zeros(2)), [1])


# ------------------------------------------------------------------------------ one path
@pytest.mark.parametrize("make", [NaiveBayes, TAN, lambda: KDB(k=2)])
def test_classifier_and_network_share_the_elimination(make):
    """A fitted NB / TAN / KDB written as a DiscreteBN gives the same class posteriors with
    missing test values through DiscreteBN.class_posterior as through predict_proba."""
    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, (200, 5)).astype(np.int32)
    y = ((X[:, 0] + X[:, 1] + rng.integers(0, 2, 200)) % 2).astype(np.int32)
    model = make().fit(X, y, arities=[3] * 5)
    p = X.shape[1]
    names = [f"x{i}" for i in range(p)] + ["C"]
    states = [["0", "1", "2"]] * p + [["0", "1"]]
    parents = [[p, *pa] for pa in model.feature_parents_] + [[]]
    bn = DiscreteBN(names, states, parents, [*model.cpts_, model.class_prior_[None, :]])
    Xt = rng.integers(0, 3, (60, p)).astype(np.int32)
    Xt[rng.random(Xt.shape) < 0.35] = -1
    codes = np.column_stack([Xt, np.full(len(Xt), -1)])
    np.testing.assert_allclose(model.predict_proba(Xt), bn.class_posterior(p, codes),
                               atol=1e-12, rtol=0)
