"""bnma_core.comparison: Holm and Friedman on hand-computed examples, pairwise Wilcoxon over
all pairs, Demšar's ranks and critical difference equal to autorank's, the Bayesian
signed-rank test equal to baycomp's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import friedmanchisquare, wilcoxon

from bnma_core.comparison import (
    bayesian_signed_rank,
    bayesian_signed_rank_pairs,
    critical_difference,
    friedman_test,
    holm_adjust,
    mean_ranks,
    pairwise_wilcoxon,
    score_matrix,
)


def _long(wide: pd.DataFrame, block: str = "fold", metric: str = "accuracy") -> pd.DataFrame:
    return (wide.rename_axis(block).reset_index()
            .melt(id_vars=block, var_name="method", value_name=metric))


# A hand example: 4 folds, 3 methods, no ties. Ranks (1 = highest accuracy):
# fold 0: A 1, B 2, C 3; fold 1: A 2, B 1, C 3; fold 2: A 1, B 3, C 2; fold 3: A 1, B 2, C 3.
# Mean ranks A 1.25, B 2.0, C 2.75; chi2 = 12·4/(3·4)·(1.25² + 2² + 2.75² − 3·4²/4) = 4.5,
# p = exp(−4.5/2) (chi2 with 2 df); F = 3·4.5/(4·2 − 4.5) = 27/7 on (2, 6) df.
HAND = pd.DataFrame({"A": [0.90, 0.85, 0.90, 0.95], "B": [0.80, 0.86, 0.70, 0.90],
                     "C": [0.70, 0.60, 0.80, 0.85]})


def test_holm_on_a_hand_example():
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4·0.005, 3·0.01, 2·0.03, max(0.06, 1·0.04)
    np.testing.assert_allclose(holm_adjust([0.01, 0.04, 0.03, 0.005]),
                               [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(holm_adjust([0.5, np.nan, 0.6]), [1.0, np.nan, 1.0])


def test_friedman_on_a_hand_example():
    row = friedman_test(_long(HAND), "accuracy").iloc[0]
    assert row["chi2"] == pytest.approx(4.5)
    assert row["p_value"] == pytest.approx(np.exp(-2.25))
    assert row["iman_davenport_f"] == pytest.approx(27 / 7)
    assert (row["df1"], row["df2"]) == (2, 6)
    ranks = mean_ranks(_long(HAND), "accuracy")
    assert ranks["method"].tolist() == ["A", "B", "C"]
    np.testing.assert_allclose(ranks["mean_rank"], [1.25, 2.0, 2.75])


def test_friedman_with_ties_equals_scipy():
    rng = np.random.default_rng(0)
    wide = pd.DataFrame(np.round(rng.random((10, 5)), 1), columns=list("abcde"))
    row = friedman_test(_long(wide, metric="log_loss"), "log_loss").iloc[0]
    ref = friedmanchisquare(*wide.to_numpy().T)
    assert row["chi2"] == pytest.approx(ref.statistic, rel=1e-12)
    assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-10)


def test_lower_is_better_for_log_loss():
    ranks = mean_ranks(_long(HAND, metric="log_loss"), "log_loss")
    assert ranks["method"].tolist() == ["C", "B", "A"]
    with pytest.raises(ValueError, match="higher_is_better"):
        mean_ranks(_long(HAND, metric="score"), "score")


def test_pairwise_wilcoxon_covers_all_pairs_with_holm():
    rng = np.random.default_rng(1)
    wide = pd.DataFrame({"nb": 0.80 + 0.02 * rng.standard_normal(10),
                         "tan": 0.84 + 0.02 * rng.standard_normal(10),
                         "bma": 0.85 + 0.02 * rng.standard_normal(10)})
    wide["copy"] = wide["nb"]  # equal on every fold: p = 1, no winner
    tab = pairwise_wilcoxon(_long(wide), "accuracy")
    assert len(tab) == 6
    assert set(zip(tab["method_a"], tab["method_b"])) == {
        ("nb", "tan"), ("nb", "bma"), ("nb", "copy"), ("tan", "bma"), ("tan", "copy"),
        ("bma", "copy")}
    for r in tab.itertuples():
        if (r.method_a, r.method_b) == ("nb", "copy"):
            assert r.p_value == 1.0 and r.ties == 10 and r.better == ""
        else:
            ref = wilcoxon(wide[r.method_a] - wide[r.method_b]).pvalue
            assert r.p_value == pytest.approx(ref)
    np.testing.assert_allclose(tab["p_holm"], holm_adjust(tab["p_value"]))
    nb_tan = tab[(tab["method_a"] == "nb") & (tab["method_b"] == "tan")].iloc[0]
    assert nb_tan["losses"] == 10 and nb_tan["significant"] and nb_tan["better"] == "tan"


def test_missing_folds_are_named_not_silently_dropped():
    table = _long(HAND).iloc[:-1]  # C lacks its last fold
    with pytest.raises(ValueError, match=r"missing for C \(1 of 4\)"):
        score_matrix(table, "accuracy")


def _datasets(seed: int, k: int = 6, n: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    skill = np.linspace(0, 0.08, k)
    wide = pd.DataFrame(0.75 + skill + 0.03 * rng.standard_normal((n, k)),
                        columns=[f"m{j}" for j in range(k)],
                        index=[f"d{i}" for i in range(n)])
    wide.iloc[0, :2] = 0.8  # a tie
    return wide


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_critical_difference_equals_autorank(seed):
    import autorank
    from autorank._util import get_sorted_rank_groups

    wide = _datasets(seed)
    cd = critical_difference(_long(wide, "dataset"), "accuracy")
    ref = autorank.autorank(wide, alpha=0.05, verbose=False, force_mode="nonparametric")
    want = ref.rankdf["meanrank"]
    got = cd.ranks.set_index("method")["mean_rank"]
    np.testing.assert_allclose(got[want.index], want.to_numpy(dtype=float), atol=1e-12)
    assert cd.cd == pytest.approx(ref.cd, rel=2e-3)  # autorank's qsturng interpolates a table
    assert cd.friedman["p_value"].iloc[0] == pytest.approx(ref.pvalue, rel=1e-10)
    ranks, names, groups = get_sorted_rank_groups(ref, reverse=False)
    # autorank lists worst first: the same maximal groups, read from the other end
    assert {frozenset(g) for g in cd.groups} == {frozenset(names[i:j + 1]) for i, j in groups}
    assert len(cd.groups) == len(groups) >= 2
    table = cd.table()
    assert {"method", "mean_rank", "group", "cd", "friedman_p_value"} <= set(table.columns)


@pytest.mark.parametrize("rope", [0.0, 0.01, 0.02])
def test_bayesian_signed_rank_equals_baycomp(rope):
    import baycomp
    rng = np.random.default_rng(3)
    a = 0.8 + 0.05 * rng.standard_normal(9)
    b = a + rng.normal(0.0, 0.03, 9)  # differences of the rope's size: no verdict is sure
    ours = bayesian_signed_rank(a, b, rope=rope, n_samples=20_000, seed=7)
    ref = baycomp.SignedRankTest(a, b, rope, nsamples=20_000, random_state=7).probs(rope > 0)
    p_left, p_right = (ref[0], ref[2]) if rope > 0 else ref
    # left: b − a < −rope, a better (higher accuracy)
    assert ours["p_a_better"] == pytest.approx(p_left, abs=1e-4)
    assert ours["p_b_better"] == pytest.approx(p_right, abs=1e-4)
    assert sum(ours.values()) == pytest.approx(1.0)
    assert sorted(ours.values())[1] > 0.05  # two open outcomes: the test can tell apart


def test_bayesian_signed_rank_direction_and_decisions():
    wide = _datasets(4, k=3, n=15)
    wide["m2"] = wide["m0"] + 0.001  # practically equivalent to m0
    tab = bayesian_signed_rank_pairs(_long(wide, "dataset"), "accuracy", rope=0.01,
                                     n_samples=5000)
    by = tab.set_index(["method_a", "method_b"])
    assert by.loc[("m0", "m2"), "decision"] == "equivalent"
    assert by.loc[("m0", "m1"), "p_b_better"] > by.loc[("m0", "m1"), "p_a_better"]
    # the same scores as a loss: the other method is better
    loss = bayesian_signed_rank(wide["m0"], wide["m1"], rope=0.01, higher_is_better=False,
                                n_samples=5000)
    assert loss["p_a_better"] == pytest.approx(by.loc[("m0", "m1"), "p_b_better"])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=12),
       st.floats(0, 0.2), st.integers(0, 1000))
def test_bayesian_signed_rank_probabilities_sum_to_1(pairs, rope, seed):
    a, b = np.array(pairs).T
    p = bayesian_signed_rank(a, b, rope=rope, n_samples=500, seed=seed)
    assert sum(p.values()) == pytest.approx(1.0)
    assert all(0.0 <= v <= 1.0 for v in p.values())


def test_critical_difference_figure_marks_ranks_groups_and_cd():
    from bnma_core.viz import critical_difference_figure

    cd = critical_difference(_long(_datasets(0), "dataset"), "accuracy")
    fig = critical_difference_figure(cd)
    texts = [a.text for a in fig.layout.annotations]
    for name, rank in zip(cd.ranks["method"], cd.ranks["mean_rank"]):
        assert f"{name} ({rank:.2f})" in texts
    assert any(t.startswith(f"CD = {cd.cd:.2f}") for t in texts)
    group_bars = [s for s in fig.layout.shapes if s.line.width == 5]
    assert len(group_bars) == len(cd.groups)
    markers = sorted(t.x[0] for t in fig.data)
    np.testing.assert_allclose(markers, sorted(cd.ranks["mean_rank"]))


# ---- issue 36 item 3: linear memory, same numbers -------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 7, 40, 150])
@pytest.mark.parametrize("rope", [0.0, 0.01, 0.02])
def test_signed_rank_draws_equal_baycomps_matrix_to_1e9(n, rope, monkeypatch):
    """The O(N)-memory double sum gives baycomp's draws (its N × N matrix) to 1e-9 with the
    same seed, also when sums fall exactly on ±2·rope (scores on a 0.01 grid) and when the
    Dirichlet weights come in several blocks."""
    import baycomp

    from bnma_core import comparison

    monkeypatch.setattr(comparison, "DRAW_BLOCK_CELLS", 3 * (n + 1))  # many small blocks
    rng = np.random.default_rng(n)
    a = np.round(0.8 + 0.05 * rng.standard_normal(n), 2)
    b = np.round(a + rng.normal(0.0, 0.03, n), 2)
    ref = baycomp.SignedRankTest.sample(a, b, rope, nsamples=2000, random_state=11)
    ours = comparison._signed_rank_samples([b - a], rope, 0.5, 2000, 11)[0]
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-9)
    probs = bayesian_signed_rank(a, b, rope=rope, n_samples=2000, seed=11)
    winners = np.bincount(np.argmax(ref, axis=1), minlength=3) / 2000
    assert probs["p_a_better"] == winners[0] and probs["p_b_better"] == winners[2]


def test_signed_rank_memory_does_not_grow_with_the_square_of_the_data_sets():
    """3,000 data sets: the N × N matrix alone would be 72 MB (the old code peaked at 290 MB
    with 300 draws); the blocks of draws keep the peak far below it."""
    import tracemalloc

    rng = np.random.default_rng(0)
    n = 3000
    a = rng.random(n)
    b = a + rng.normal(0.0, 0.02, n)
    tracemalloc.start()
    try:
        bayesian_signed_rank(a, b, rope=0.01, n_samples=300, seed=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < (n + 1) ** 2 * 8 / 2


def _groups_by_scan(ranks: np.ndarray, cd: float) -> list[tuple[int, int]]:
    """The former O(k²) double loop (autorank's get_sorted_rank_groups)."""
    out, cur_max = [], -1
    for i in range(len(ranks)):
        last = None
        for j in range(i + 1, len(ranks)):
            if abs(ranks[i] - ranks[j]) <= cd:
                last = j
        if last is not None and last > cur_max:
            cur_max = last
            out.append((i, last))
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(1, 30, allow_nan=False), min_size=1, max_size=40),
       st.floats(0, 10, allow_nan=False), st.booleans())
def test_critical_difference_groups_equal_the_pairwise_scan(values, cd, on_grid):
    """The binary-search groups are the double loop's, ties and exact distances included."""
    from bnma_core.comparison import _group_labels, _groups

    ranks = np.sort(np.round(values, 1) if on_grid else np.asarray(values))
    spans = _groups([str(i) for i in range(len(ranks))], ranks, cd)
    assert spans == _groups_by_scan(ranks, cd)
    labels = _group_labels(spans, len(ranks))
    for r, lab in enumerate(labels):
        members = [g + 1 for g, (i, j) in enumerate(spans) if i <= r <= j]
        if len(members) <= 4:
            assert lab == ";".join(map(str, members))
        else:
            assert lab == f"{members[0]}-{members[-1]}"


def test_critical_difference_of_many_methods_is_quick():
    """8,000 methods over 3 data sets: one pass of ranks and binary searches (about 1.5 CPU s;
    the pairwise scan took 3 CPU s at 5,000 methods and 70 at 20,000)."""
    import time

    rng = np.random.default_rng(0)
    k = 8000
    tab = pd.DataFrame({"dataset": np.repeat(["d0", "d1", "d2"], k),
                        "method": np.tile([f"m{i}" for i in range(k)], 3),
                        "accuracy": rng.uniform(0.6, 0.9, 3 * k).round(3)})
    t0 = time.process_time()
    cd = critical_difference(tab, "accuracy")
    assert time.process_time() - t0 < 5.0
    assert len(cd.ranks) == k and cd.groups


def test_critical_difference_figure_draws_the_50_best_and_says_so():
    """issue 36 item 3: 10,000 methods made a 6.7 MB chart that hung the browser; the figure
    draws the best MAX_CD_METHODS, at most 20 axis ticks, and names how many it left out."""
    from bnma_core.viz import critical_difference_figure
    from bnma_core.viz.calibration import MAX_CD_METHODS

    k = 2000
    rng = np.random.default_rng(1)
    wide = pd.DataFrame(rng.uniform(0.6, 0.9, (3, k)), columns=[f"m{j}" for j in range(k)],
                        index=["d0", "d1", "d2"])
    cd = critical_difference(_long(wide, "dataset"), "accuracy")
    fig = critical_difference_figure(cd)
    assert len(fig.data) == MAX_CD_METHODS
    best = set(cd.ranks["method"].head(MAX_CD_METHODS))
    assert {t.name for t in fig.data} == best
    ticks = [a for a in fig.layout.annotations if a.text.isdigit()]
    assert 2 <= len(ticks) <= 21
    assert f"the {MAX_CD_METHODS} best of {k} methods" in fig.layout.title.text
    assert len(fig.to_json()) < 100_000


def test_the_compare_scores_benchmark_runs():
    """Smoke test of benchmarks/compare_scores.py (issue 36 item 3's measurements)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "compare_scores.py"
    spec = importlib.util.spec_from_file_location("compare_scores", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = bench.main(["--sets", "30", "--methods", "60"])
    assert [(r["kind"], r["n"]) for r in out] == [("sets", 30), ("methods", 60)]
    assert all(r["cpu_s"] >= 0 and r["chart_json_bytes"] > 0 for r in out)
