"""bnma_core.factors: closed-form rows with barren variables dropped (Shachter 1986) and
stacked models, against brute-force enumeration of the joint."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import brute_joint
from scipy.special import logsumexp

from bnma_core.factors import (
    FactorModel,
    class_log_posterior,
    closed_form_log_joint,
    log_joint_batch,
    stack_models,
    stacked_codes,
)


def random_model(rng: np.random.Generator, n: int, zeros: float = 0.1,
                 parents: list | None = None, cards=None) -> FactorModel:
    """A random DAG (parents among earlier nodes of a shuffled order, at most 3) with random
    CPTs, some entries exactly zero when ``zeros`` > 0; ``parents`` / ``cards`` fix the
    structure (then only the CPTs are random)."""
    if parents is None:
        perm = rng.permutation(n)
        cards = rng.integers(2, 4, n)
        parents = [[] for _ in range(n)]
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


def random_rows(rng, model, n_rows, p_missing):
    codes = rng.integers(0, model.cards, size=(n_rows, model.n_vars))
    codes[rng.random(codes.shape) < p_missing] = -1
    return codes


def brute_log_target_joint(joint, t, codes):
    """log P(t = k, observed part of each row) by summing the enumerated joint."""
    out = []
    for row in codes:
        idx: list = [slice(None)] * joint.ndim
        for v, code in enumerate(row):
            if v != t and code >= 0:
                idx[v] = slice(int(code), int(code) + 1)
        sub = joint[tuple(idx)]
        with np.errstate(divide="ignore"):
            out.append(np.log(sub.sum(axis=tuple(a for a in range(joint.ndim) if a != t)
                                      ).ravel()))
    return np.array(out).reshape(len(codes), joint.shape[t])


def _close(a, b):
    fa, fb = np.isfinite(a), np.isfinite(b)
    assert (fa == fb).all()
    np.testing.assert_allclose(a[fa], b[fa], rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_closed_form_rows_equal_brute_force_joint(seed):
    rng = np.random.default_rng(seed)
    model = random_model(rng, int(rng.integers(3, 7)))
    joint = brute_joint(model)
    codes = random_rows(rng, model, 300, float(rng.uniform(0.2, 0.8)))
    t = int(rng.integers(model.n_vars))
    rows, values = closed_form_log_joint(model, t, codes)
    assert rows.any()
    _close(values, brute_log_target_joint(joint, t, codes[rows]))
    # the rows left out really have an unobserved relevant (ancestor) variable
    for r in np.flatnonzero(~rows):
        obs = [v for v in range(model.n_vars) if codes[r, v] >= 0 and v != t]
        anc = model.ancestral_set([t, *obs])
        assert any(codes[r, v] < 0 for v in anc if v != t)


@pytest.mark.parametrize("seed", range(12))
def test_class_posterior_with_many_patterns_equals_brute_force(seed):
    """Every row a different missingness pattern (closed-form, Markov-blanket and pooled
    rows mixed); the posteriors equal enumeration of the joint."""
    rng = np.random.default_rng(100 + seed)
    model = random_model(rng, int(rng.integers(3, 7)), zeros=0.0)
    joint = brute_joint(model)
    codes = random_rows(rng, model, 200, float(rng.uniform(0.1, 0.9)))
    t = int(rng.integers(model.n_vars))
    lp = class_log_posterior(model, t, codes)
    ref = brute_log_target_joint(joint, t, codes)
    _close(lp - logsumexp(lp, axis=1, keepdims=True),
           ref - logsumexp(ref, axis=1, keepdims=True))


def test_closed_form_handles_no_rows_and_all_missing():
    rng = np.random.default_rng(5)
    model = random_model(rng, 4, zeros=0.0)
    rows, values = closed_form_log_joint(model, 0, np.zeros((0, 4), np.int64))
    assert rows.shape == (0,) and values.shape == (0, int(model.cards[0]))
    none = np.full((3, 4), -1)
    rows, values = closed_form_log_joint(model, 0, none)
    _close(values, brute_log_target_joint(brute_joint(model), 0, none[rows]))


@pytest.mark.parametrize("seed", range(6))
def test_stacked_models_equal_each_model(seed):
    rng = np.random.default_rng(200 + seed)
    first = random_model(rng, int(rng.integers(3, 6)), zeros=0.0)
    pa = [p.tolist() for p in first.parents]
    models = [first] + [random_model(rng, first.n_vars, 0.0, pa, first.cards)
                        for _ in range(3)]
    stacked = stack_models(models)
    codes = random_rows(rng, first, 60, 0.5)
    t = int(rng.integers(first.n_vars))
    M, n = len(models), len(codes)
    sc = stacked_codes(codes, M)
    lp = class_log_posterior(stacked, t, sc, min_pattern_rows=8 * M).reshape(M, n, -1)
    obs = [v for v in range(first.n_vars) if v != t]
    ev = stacked_codes(codes[:, obs], M)
    lj = log_joint_batch(stacked, t, [*obs, first.n_vars], ev).reshape(M, n, -1)
    for m, model in enumerate(models):
        ref = brute_log_target_joint(brute_joint(model), t, codes)
        _close(lj[m], ref)
        _close(lp[m] - logsumexp(lp[m], axis=1, keepdims=True),
               ref - logsumexp(ref, axis=1, keepdims=True))


def test_stack_models_refuses_different_structures():
    rng = np.random.default_rng(9)
    a = random_model(rng, 4)
    b = FactorModel(a.cards, [[] for _ in range(4)],
                    [np.full((1, int(c)), 1.0 / int(c)) for c in a.cards])
    with pytest.raises(ValueError, match="same cardinalities and parent lists"):
        stack_models([a, b])
    with pytest.raises(ValueError, match="at least one model"):
        stack_models([])
