"""Explanations sized before they run (DESIGN §15, Budget): chunked exact Shapley values equal
the one-pass sum, the plan degrades (sampled, fewer draws) or refuses with a sentence, naive
Bayes and MA-NB take the closed form, and one explanation's peak memory stays bounded."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bnma_core import explain as E
from bnma_core.classifiers.kbest import KBestEC
from bnma_core.classifiers.manb import MANaiveBayes
from bnma_core.classifiers.naive_bayes import NaiveBayes
from bnma_core.classifiers.order_bma import FixedOrderBMA
from bnma_core.classifiers.tan import TAN
from bnma_core.explain.budget import row_costs, rows_per_chunk
from bnma_core.explain.shapley import _coalition_weights
from bnma_core.limits import INPUT_RANGES, Budget, explain_budget

ROOT = Path(__file__).resolve().parents[2]


def _data(p: int, n: int = 200, classes: int = 2, seed: int = 0):
    """The shape of the issue's upload: n rows x p features with values 0-2."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (n, p))
    y = (X[:, :3].sum(axis=1) + rng.integers(0, 3, n)) % classes if classes > 2 else \
        (X[:, :3].sum(axis=1) + rng.integers(0, 3, n) > 4).astype(int)
    return X, y, np.full(p, 3)


def _one_pass_shapley(est, x, target):
    """The definition: phi_i = sum_{S without i} w(|S|) [v(S + i) - v(S)] over every coalition
    at once (no chunks)."""
    F = np.flatnonzero(x >= 0)
    N = len(F)
    masks = np.arange(2 ** N)
    keep = ((masks[:, None] >> np.arange(N)) & 1).astype(bool)
    rows = np.repeat(x[None], len(masks), axis=0)
    sub = rows[:, F]
    sub[~keep] = -1
    rows[:, F] = sub
    p = est.predict_proba(rows)[:, target]
    v = np.log(p) - np.log1p(-p)
    wt = _coalition_weights(N)
    size = keep.sum(axis=1)
    out = np.empty(N)
    for i in range(N):
        without = masks[~keep[:, i]]
        out[i] = (v[without | (1 << i)] - v[without]) @ wt[size[without]]
    return out


@pytest.fixture(scope="module")
def small():
    X, y, ar = _data(7, n=150)
    return {"tan": TAN().fit(X, y, arities=ar),
            "bma": FixedOrderBMA(max_parents=2).fit(X, y, arities=ar),
            "kbest": KBestEC(n_best=6).fit(X[:, :5], y, arities=ar[:5])}, X


@pytest.mark.parametrize("name", ["tan", "bma", "kbest"])
def test_chunked_exact_shapley_equals_the_one_pass_sum(small, name):
    models, X = small
    est = models[name]
    x = X[3, :est.n_features_in_].astype(np.int64)
    x[1] = -1
    whole = E.shapley_values(est, x, codes=True, chunk_rows=10 ** 6)
    assert whole.exact
    np.testing.assert_allclose(whole.values, _one_pass_shapley(est, x, whole.target),
                               atol=1e-12)
    for chunk in (1, 3, 17):
        part = E.shapley_values(est, x, codes=True, chunk_rows=chunk)
        np.testing.assert_allclose(part.values, whole.values, atol=1e-12)
        if whole.model_values is not None:
            np.testing.assert_allclose(part.model_values, whole.model_values, atol=1e-12)
    assert whole.values.sum() == pytest.approx(whole.full - whole.empty, abs=1e-10)


def test_chunked_sampled_shapley_equals_one_chunk(small):
    est = small[0]["tan"]
    x = small[1][5].astype(np.int64)
    a = E.shapley_values(est, x, codes=True, exact_limit=0, n_permutations=40, seed=2,
                         chunk_rows=10 ** 6)
    b = E.shapley_values(est, x, codes=True, exact_limit=0, n_permutations=40, seed=2,
                         chunk_rows=9)
    np.testing.assert_allclose(b.values, a.values, atol=1e-12)
    np.testing.assert_allclose(b.standard_error, a.standard_error, atol=1e-12)
    assert b.values.sum() == pytest.approx(b.full - b.empty, abs=1e-10)


def test_rows_per_chunk_follows_the_memory_budget(small):
    est = small[0]["bma"]
    x = small[1][0].astype(np.int64)
    big = rows_per_chunk(est, x, Budget(1024, 10))
    tiny = rows_per_chunk(est, x, Budget(16, 10))
    assert 1 <= tiny < big
    worst = row_costs(est, np.full((1, len(x)), -1), models=True)[1][0]
    assert tiny * worst <= 16 * 2 ** 20 / 4


# ---------------------------------------------------------------------- the plan
def test_plan_degrades_beyond_sixteen_findings_and_refuses_with_the_remedy():
    X, y, ar = _data(18)
    est = TAN().fit(X, y, arities=ar)
    x = X[0].astype(np.int64)
    budget = Budget(256, 5)
    few = x.copy()
    few[6:] = -1
    plan = E.plan_explanation(est, few, codes=True, budget=budget, train=(X, y))
    assert plan.parts["shapley"].mode == "exact" and not plan.sentences
    plan = E.plan_explanation(est, x, codes=True, budget=budget, train=(X, y))
    sh = plan.parts["shapley"]
    assert sh.mode == "sampled" and 16 <= sh.options["n_permutations"] <= 256
    assert sh.seconds <= budget.cpu_seconds
    x17 = x.copy()
    x17[17] = -1
    plan17 = E.plan_explanation(est, x17, codes=True, budget=budget)
    assert plan17.parts["shapley"].mode == "sampled" and not plan17.sentences  # as asked
    fewer = E.plan_explanation(est, x17, codes=True, budget=Budget(256, 0.3))
    P = fewer.options("shapley")["n_permutations"]
    assert fewer.parts["shapley"].mode == "sampled" and 16 <= P < 256
    assert fewer.sentences == [fewer.parts["shapley"].sentence]
    assert f"estimated from {P} random orders" in fewer.sentences[0]
    assert "256 random orders would take about" in fewer.sentences[0]
    res = E.shapley_values(est, x17, codes=True, **fewer.options("shapley"))
    assert not res.exact and res.n_permutations == P
    twelve = x.copy()
    twelve[12:] = -1
    cost = E.plan_explanation(est, twelve, codes=True, parts=("shapley",)).parts["shapley"]
    assert cost.mode == "exact"
    cheaper = E.plan_explanation(est, twelve, codes=True, parts=("shapley",),
                                 budget=Budget(256, 0.2 * cost.full_seconds))
    assert cheaper.parts["shapley"].mode == "sampled"
    assert "all 4,096 combinations of the 12 findings" in cheaper.sentences[0]
    refused = E.plan_explanation(est, x, codes=True, budget=Budget(256, 0.001))
    assert refused.refused("shapley").startswith("The contributions of the 18 findings are not")
    assert "naive Bayes or MA-NB" in refused.refused("shapley")
    assert refused.seconds <= 0.001


def test_plan_reduces_draws_and_drops_the_percentile():
    X, y, ar = _data(10)
    est = TAN().fit(X, y, arities=ar)
    x = X[0].astype(np.int64)
    x[:6] = -1
    full = E.plan_explanation(est, x, codes=True, n_draws=400, train=(X, y),
                              budget=Budget(256, 1e4))
    assert full.options("draws") == {"n_draws": 400} and not full.sentences
    tight = full.parts["draws"].full_seconds * 0.5 / 0.2
    plan = E.plan_explanation(est, x, codes=True, n_draws=400, train=(X, y),
                              budget=Budget(256, tight), parts=("draws",))
    assert plan.parts["draws"].mode == "full"
    plan = E.plan_explanation(est, x, codes=True, n_draws=4000, train=(X, y),
                              budget=Budget(256, tight), parts=("draws",))
    k = plan.options("draws")["n_draws"]
    assert plan.parts["draws"].mode == "reduced" and 40 <= k < 4000
    assert f"uses {k:,} draws instead of 4,000" in plan.sentences[0]
    with pytest.raises(ValueError, match="number of parameter draws must be between"):
        E.plan_explanation(est, x, codes=True, n_draws=100_000_000)


def test_budget_is_a_server_setting(monkeypatch):
    monkeypatch.delenv("BNMA_EXPLAIN_BUDGET_MB", raising=False)
    monkeypatch.delenv("BNMA_EXPLAIN_BUDGET_CPU_S", raising=False)
    default = explain_budget()
    monkeypatch.setenv("BNMA_EXPLAIN_BUDGET_CPU_S", "2.5")
    monkeypatch.setenv("BNMA_EXPLAIN_BUDGET_MB", "64")
    assert explain_budget() == Budget(64, 2.5) != default
    monkeypatch.setenv("BNMA_EXPLAIN_BUDGET_MB", "lots")
    with pytest.raises(ValueError, match="BNMA_EXPLAIN_BUDGET_MB must be a number"):
        explain_budget()


# ---------------------------------------------------------------------- closed forms
def test_naive_bayes_closed_form_is_the_weight_of_evidence_at_1500_features():
    X, y, ar = _data(1500, n=120)
    nb = NaiveBayes().fit(X, y, arities=ar)
    x = X[0].astype(np.int64)
    x[::7] = -1
    sh = E.shapley_values(nb, x, codes=True)
    assert sh.exact
    t, o = sh.target, 1 - sh.target
    woe = [math.log(nb.cpts_[j][t, x[j]] / nb.cpts_[j][o, x[j]]) for j in sh.findings]
    np.testing.assert_allclose(sh.values, woe, atol=1e-10)
    lj = nb._predict_log_proba_codes(x[None].astype(np.int32))[0]  # saturated: log space
    assert sh.full == pytest.approx(lj[t] - lj[o], abs=1e-8)
    plan = E.plan_explanation(nb, x, codes=True, budget=Budget(256, 1))
    assert plan.parts["shapley"].mode == "closed form" and not plan.sentences


@pytest.mark.parametrize("classes", [2, 3])
def test_manb_closed_form_equals_the_coalitions(classes):
    X, y, ar = _data(6, classes=classes, seed=1)
    est = MANaiveBayes().fit(X, y, arities=ar)
    x = X[4].astype(np.int64)
    x[2] = -1
    fast = E.shapley_values(est, x, codes=True)
    slow = E.shapley_values(est, x, codes=True, closed_form=False)
    np.testing.assert_allclose(fast.values, slow.values, atol=1e-10)
    assert fast.full == pytest.approx(slow.full, abs=1e-10)
    np.testing.assert_allclose(fast.model_values, slow.model_values, atol=1e-9)
    np.testing.assert_allclose(fast.model_sd, slow.model_sd, atol=1e-9)
    sampled = E.shapley_values(est, x, codes=True, exact_limit=0, n_permutations=300, seed=1)
    assert sampled.values.sum() == pytest.approx(sampled.full - sampled.empty, abs=1e-9)
    if classes == 2:
        assert sampled.exact  # the weight of evidence needs no sampling
    else:
        assert (np.abs(sampled.values - slow.values) <= 5 * sampled.standard_error + 1e-9).all()


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2 ** 31 - 1), st.integers(3, 5))
def test_additive_closed_form_matches_coalitions_for_any_case(seed, classes):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (60, 5))
    y = rng.integers(0, classes, 60)
    y[:classes] = np.arange(classes)
    est = NaiveBayes().fit(X, y, arities=np.full(5, 3))
    x = rng.integers(-1, 3, 5)
    fast = E.shapley_values(est, x, codes=True)
    slow = E.shapley_values(est, x, codes=True, closed_form=False)
    np.testing.assert_allclose(fast.values, slow.values, atol=1e-9)


def test_wide_manb_is_linear_in_the_features():
    X, y, ar = _data(1000, n=100)
    est = MANaiveBayes().fit(X, y, arities=ar)
    x = X[1].astype(np.int64)
    sh = E.shapley_values(est, x, codes=True)
    assert sh.exact and len(sh.values) == 1000
    assert sh.values.sum() == pytest.approx(sh.full - sh.empty, abs=1e-8)
    lj = est._predict_log_proba_codes(x[None].astype(np.int32))[0]
    assert sh.full == pytest.approx(lj[sh.target] - lj[1 - sh.target], abs=1e-8)


# ---------------------------------------------------------------------- peak memory
def test_a_sixteen_feature_explanation_stays_within_its_memory():
    """The issue's upload (200 x 16, values 0-2) with order BMA, explained as the Patient page
    does, in a fresh process: the explanation adds less than 300 MB to the peak and keeps to
    its CPU budget (before: over 8 GB)."""
    code = textwrap.dedent("""
        import json, resource, time
        import numpy as np
        from bnma_core import explain as E
        from bnma_core.classifiers.order_bma import FixedOrderBMA
        rng = np.random.default_rng(0)
        X = rng.integers(0, 3, (200, 16))
        y = (X[:, :3].sum(1) + rng.integers(0, 3, 200) > 4).astype(int)
        est = FixedOrderBMA(max_parents=2).fit(X, y, arities=np.full(16, 3))
        x = X[0].astype(np.int64)
        E.shapley_values(est, x, codes=True, exact_limit=0, n_permutations=2)  # warm-up
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t = time.process_time()
        plan = E.plan_explanation(est, x, codes=True, train=(X, y))
        res = E.shapley_values(est, x, codes=True, **plan.options("shapley"))
        pred = E.predict_with_uncertainty(est, x, codes=True, train=(X, y),
                                          **plan.options("draws"))
        E.unusual_case(est, x, codes=True, **plan.options("unusual"))
        print(json.dumps({"cpu": time.process_time() - t, "exact": bool(res.exact),
                          "budget": plan.budget.cpu_seconds, "planned": plan.seconds,
                          "grew_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                      - before) / 1024}))
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BNMA_EXPLAIN_BUDGET_CPU_S": "2"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["grew_mb"] < 300, got
    assert not got["exact"] and got["planned"] <= got["budget"] + 1e-9
    assert got["cpu"] < 4 * got["budget"], got


def test_draws_range_is_the_cli_limit():
    r = INPUT_RANGES["draws"]
    assert r.low == 2 and r.high == 20_000 and r.default == 400


def test_cli_explain_keeps_to_the_page_limit_and_the_budget(capsys, monkeypatch):
    from bnma_core.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["explain", "--data", "wbc", "--row", "1", "--draws", "100000000", "--interval"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "The number of parameter draws must be between 2 and 20,000 (got 100,000,000)." \
        in err and "Traceback" not in err
    monkeypatch.setenv("BNMA_EXPLAIN_BUDGET_CPU_S", "0.1")
    assert main(["explain", "--data", "wbc", "--row", "1", "--method", "tan", "--json",
                 "--draws", "20000"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["budget"]["budget"]["cpu_seconds"] == 0.1
    assert got["budget"]["parts"]["draws"]["mode"] in ("reduced", "refused")
    assert any("draws" in s for s in got["budget_notes"])
    assert got["prediction"].get("n_draws", 0) < 20000


# ---------------------------------------------------------------------- issue 36.6
def test_forty_features_order_bma_explains_without_negative_dimensions():
    """A row with many unknown findings under order BMA with 40 ternary features: a node's
    possible parents have 3^40 joint states, which overflowed int64 in the barren-aware
    kernel ("negative dimensions not allowed" on the Patient page's Why and unusual case)."""
    X, y, ar = _data(40)
    est = FixedOrderBMA(max_parents=2).fit(X, y, arities=ar)
    x = X[0].astype(np.int64)
    un = E.unusual_case(est, x, codes=True)
    assert np.isfinite(un.conflict)
    sh = E.shapley_values(est, x, codes=True, exact_limit=0, n_permutations=2)
    assert np.isfinite(sh.values).all()
    assert sh.values.sum() == pytest.approx(sh.full - sh.empty, abs=1e-8)


def test_exact_edge_posteriors_refuse_1025_variables_with_the_limit_sentence():
    from bnma_core.structure.exact import MAX_EDGE_VARS, ResourceLimitError, edge_posteriors

    for n in (MAX_EDGE_VARS + 20, 1025, 4000):
        with pytest.raises(ResourceLimitError, match=f"at most {MAX_EDGE_VARS} variables"):
            edge_posteriors(np.zeros((5, n), dtype=np.int32), [2] * n)
    with pytest.raises(ResourceLimitError, match="more than 1,000 TB"):
        edge_posteriors(np.zeros((5, 1025), dtype=np.int32), [2] * 1025)
