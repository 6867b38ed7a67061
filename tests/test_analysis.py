"""APSES, structure statistics, Wilcoxon over data sets and the Hommel adjustment."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from bnma_core.analysis import (
    apses,
    class_parent_count,
    compare_over_datasets,
    hommel,
    markov_blanket_size,
    random_dag,
    structure_statistics,
    wilcoxon_over_datasets,
    win_draw_loss,
)
from bnma_core.structure.exact import ScoredStructure

TABLE1 = ROOT / "bnma_core" / "reproduce" / "tables" / "sugahara_table1.csv"  # the paper's


def _simes_closed_testing(p):
    """Hommel-adjusted p by definition: max over index sets containing i of the Simes p."""
    n = len(p)
    out = np.zeros(n)
    for size in range(1, n + 1):
        for idx in combinations(range(n), size):
            q = np.sort(np.asarray(p)[list(idx)])
            simes = min(size * q[j] / (j + 1) for j in range(size))
            for i in idx:
                out[i] = max(out[i], simes)
    return np.minimum(out, 1.0)


def test_hommel_hand_computed():
    # sorted .01 .03 .04; Simes: all three .03, pairs .02 .02 .04 -> .03 .04 .04
    np.testing.assert_allclose(hommel([0.01, 0.04, 0.03]), [0.03, 0.04, 0.04])
    np.testing.assert_allclose(hommel([0.5]), [0.5])
    np.testing.assert_allclose(hommel([0.02, 0.02]), [0.02, 0.02])
    with pytest.raises(ValueError, match="p-values in"):
        hommel([0.2, 1.5])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=6))
def test_hommel_equals_closed_testing_with_simes(p):
    np.testing.assert_allclose(hommel(p), _simes_closed_testing(p), atol=1e-12)


@pytest.fixture(scope="module")
def table1():
    df = pd.read_csv(TABLE1).dropna(subset=["no"])
    num = [c for c in df.columns if c not in ("dataset", "file")]
    return df.assign(**{c: pd.to_numeric(df[c]) for c in num})


@pytest.mark.parametrize("method,expected", [
    ("tan", 0.0033), ("acll_tan", 0.0093), ("ebn", 0.0025), ("banmix", 0.0140),
    ("adaboost_ebn", 0.0397), ("b_rai", 0.0003), ("bagging_ebn", 0.0627), ("eanb", 0.149),
    ("kbestec100", 0.698), ("nb", 0.0032)])
def test_wilcoxon_variant_reproduces_the_recomputed_table1_p_values(table1, method, expected):
    p = wilcoxon_over_datasets(table1["proposed"], table1[method])
    assert p == pytest.approx(expected, abs=5e-5 if expected < 0.1 else 5e-4)


def test_apses_p_value_is_the_one_sided_test(table1):
    p = wilcoxon_over_datasets(table1["apses_proposed"], table1["apses_kbestec100"], "less")
    assert p == pytest.approx(0.00012, abs=1e-5)
    assert wilcoxon_over_datasets([1, 2], [1, 2]) == 1.0


def test_compare_over_datasets_counts_and_adjusts(table1):
    df = table1.set_index("dataset")[["proposed", "ebn", "tan", "kbestec100"]]
    out = compare_over_datasets(df, "proposed").set_index("method")
    w, d, loss = win_draw_loss(df["proposed"], df["ebn"])
    assert (out.loc["ebn", ["wins", "draws", "losses"]].tolist() == [w, d, loss])
    assert w + d + loss == 26
    np.testing.assert_allclose(out["p_hommel"], hommel(out["p_wilcoxon"].to_numpy()))
    assert (out["p_hommel"] >= out["p_wilcoxon"] - 1e-15).all()


def test_structure_statistics():
    # class 3; 0 -> 3, 3 -> 1, 2 -> 1 : parents {0}, children {1}, spouse {2}
    pa = ((), (2, 3), (), (0,))
    assert class_parent_count(pa, 3) == 1
    assert markov_blanket_size(pa, 3) == 3
    s = [ScoredStructure.from_parents(0.0, pa), ScoredStructure.from_parents(0.0, [()] * 4)]
    st_ = structure_statistics(s, 3)
    assert st_["class_parents"] == 0.5 and st_["markov_blanket"] == 1.5


def test_random_dag_is_acyclic_and_seeded():
    import networkx as nx
    rng = np.random.default_rng(0)
    for _ in range(20):
        pa = random_dag(6, rng)
        g = nx.DiGraph([(p, v) for v, ps in enumerate(pa) for p in ps])
        assert nx.is_directed_acyclic_graph(g)
    assert random_dag(5, np.random.default_rng(3)) == random_dag(5, np.random.default_rng(3))


def test_apses_bounds_seed_and_sample_size():
    rng = np.random.default_rng(0)
    ar = np.array([2, 2, 2, 2])
    big = rng.integers(0, 2, size=(2000, 4))
    big[:, 1] = big[:, 0]
    small = big[:12]
    a1 = apses(small, ar, random_state=5)
    assert a1 == apses(small, ar, random_state=5)
    assert 0.0 <= a1 <= 0.5
    assert apses(big, ar, random_state=5) < a1
    sub = apses([small[:10], small[2:]], ar, random_state=5)
    assert 0.0 <= sub <= 0.5
    with pytest.raises(ValueError, match="at least 2"):
        apses(small, ar, n_structures=1)
