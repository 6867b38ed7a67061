"""Candidate expansion (BiDAG-style) and the structure-recovery experiment: boundary gains
against brute-force enumeration, an excluded true parent brought back, the classifier option,
the recovery scores on known graphs and a smoke-size run of the experiment."""

import importlib.util
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from bnma_core.classifiers.order_bma import OrderMCMCBMA
from bnma_core.scores import log_structure_prior
from bnma_core.structure.candidates import best_parent_sets, boundary_gains, expand_candidates
from bnma_core.structure.score_table import build_score_table, node_average_log_ml


def _experiment():
    spec = importlib.util.spec_from_file_location(
        "structure_recovery", ROOT / "experiments" / "structure_recovery.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _data(n_rows=400, seed=0):
    rng = np.random.default_rng(seed)
    n = 6
    codes = rng.integers(0, 2, size=(n_rows, n))
    codes[:, 2] = np.where(rng.random(n_rows) < 0.9, codes[:, 0], codes[:, 2])  # 0 -> 2
    codes[:, 3] = np.where(rng.random(n_rows) < 0.8, codes[:, 2], codes[:, 3])  # 2 -> 3
    codes[:, 5] = np.where(rng.random(n_rows) < 0.7, codes[:, 1], codes[:, 5])  # 1 -> 5
    return codes.astype(np.int32), np.full(n, 2, dtype=np.int64)


def _S(codes, ar, v, pa):
    return log_structure_prior(len(ar), len(pa), "hz") + node_average_log_ml(
        codes, v, list(pa), ar, "k2", 1.0)


def _cand_without_true_parent():
    cand = np.array([[1, 2], [0, 5], [3, 4], [1, 2], [0, 1], [1, 3]])  # 0 not among 2's
    return cand


def test_boundary_gains_brute_force():
    codes, ar = _data()
    l = 2
    t = build_score_table(codes, ar, max_parents=l, candidates=_cand_without_true_parent(),
                          prune_eps=0.0)
    orders = np.array([[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [1, 0, 4, 2, 5, 3]])
    best = best_parent_sets(t, orders)
    gain = boundary_gains(t, orders)
    n = len(ar)
    for v in range(n):
        ref_best = set()
        for o in orders:
            pred = [int(u) for u in o[: list(o).index(v)] if u in t.cand[v]]
            sets = [pa for k in range(l + 1) for pa in combinations(sorted(pred), k)]
            ref_best.add(max(sets, key=lambda pa: _S(codes, ar, v, pa)))
        assert best[v] == ref_best
        for u in range(n):
            if u == v or u in t.cand[v]:
                assert gain[u, v] == -np.inf
                continue
            ref = -np.inf
            for z in ref_best:
                bases = [list(z)] if len(z) < l else [[p for p in z if p != d] for d in z]
                for b in bases:
                    ref = max(ref, _S(codes, ar, v, sorted(b + [u])) - _S(codes, ar, v, z))
            assert gain[u, v] == pytest.approx(ref, abs=1e-9)


def test_expansion_brings_back_an_excluded_true_parent():
    codes, ar = _data()
    t = build_score_table(codes, ar, max_parents=2, candidates=_cand_without_true_parent())
    orders = np.array([np.random.default_rng(s).permutation(6) for s in range(20)])
    new, replaced = expand_candidates(t, orders)
    assert 0 in new[2] and replaced >= 1
    assert new.shape == t.cand.shape and (np.diff(new, axis=1) > 0).all()
    t2 = build_score_table(codes, ar, max_parents=2, candidates=new)
    order = np.arange(6)
    assert t2.order_log_score(order) > t.order_log_score(order) + 10
    with pytest.raises(ValueError, match="candidate-restricted"):
        expand_candidates(build_score_table(codes, ar, max_parents=2), orders)


def test_classifier_expand_rounds():
    codes, ar = _data(seed=1)
    X, y = codes[:, :5], codes[:, 5]
    kw = dict(n_iter=600, burn_in=100, n_orders=5, max_parents=2, random_state=0,
              candidates=np.vstack([_cand_without_true_parent()]))
    clf = OrderMCMCBMA(expand_rounds=2, **kw).fit(X, y)
    assert 1 <= len(clf.candidates_replaced_) <= 2
    assert 0 in clf.table_.cand[2]
    assert OrderMCMCBMA(**kw).fit(X, y).candidates_replaced_ == []
    with pytest.raises(ValueError, match="expand_rounds"):
        OrderMCMCBMA(expand_rounds=-1, **kw).fit(X, y)


def test_recovery_scores_on_known_graphs():
    recovery_scores = _experiment().recovery_scores
    parents = [[], [0], [1], [1, 0]]
    E = np.zeros((4, 4))
    for v, pa in enumerate(parents):
        E[pa, v] = 0.9
    r = recovery_scores(E, parents)
    assert r["auc_pr_arcs"] == pytest.approx(1.0) and r["auc_pr_skeleton"] == pytest.approx(1.0)
    assert r["shd_median_graph"] == 0 and r["n_true_arcs"] == 4
    rev = recovery_scores(E.T.copy(), parents)  # every arc reversed: skeleton still perfect
    assert rev["auc_pr_skeleton"] == pytest.approx(1.0) and rev["shd_median_graph"] == 4
    assert rev["auc_pr_arcs"] < 0.6


def test_structure_recovery_smoke(tmp_path):
    _experiment().main(["--networks", "asia", "--sizes", "200", "--seeds", "1", "--candidates", "3",
          "--iter-per-node", "50", "--out", str(tmp_path)])
    df = pd.read_csv(tmp_path / "results.csv")
    assert list(df.regime) == ["all parent sets", "K = 3", "K = 3 + 1 expansion"]
    assert df.auc_pr_skeleton.between(0, 1).all() and (tmp_path / "summary.csv").exists()
