"""Smoke-size run of the ALARM reproduction (experiments/alarm_orders.py)."""

import importlib.util

import numpy as np
from conftest import ROOT


def _module():
    spec = importlib.util.spec_from_file_location("alarm_orders",
                                                  ROOT / "experiments" / "alarm_orders.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_alarm_experiment_smoke(tmp_path):
    mod = _module()
    res = mod.run(sizes=(25, 50), class_variables=("SHUNT",), n_reps=1, n_test=100,
                  n_iter=300, burn_in=100, n_orders=5, missing_pcts=(10,),
                  missing_n_train=50, out_dir=tmp_path, verbose=False, first_rep=3)
    sp, acc, miss = res["spearman"], res["accuracy"], res["missing"]
    assert len(sp) == 2 and sp["spearman"].between(-1, 1).all()
    assert set(acc["method"]) == {"1 order", "5 orders", "5 orders, mean posterior",
                                  "original order", "reversed order", "Bayes optimal"}
    assert set(sp["rep"]) == {3}
    assert acc["accuracy"].between(0, 1).all()
    assert len(miss) == 4 and (miss["missing_pct"] == 10).all()
    for f in ["spearman.csv", "accuracy.csv", "missing.csv", "fig6_spearman.html",
              "fig7_accuracy_SHUNT.html", "fig9_missing_SHUNT.html",
              "fig5_trace_SHUNT_n25.html", "summary.json"]:
        assert (tmp_path / f).exists(), f
    opt = acc[acc["method"] == "Bayes optimal"]["accuracy"]
    assert np.all(opt >= 0.8)
    merged = mod.combine([str(tmp_path), str(tmp_path)], str(tmp_path / "both"))
    assert len(merged["spearman"]) == 4 and (tmp_path / "both" / "fig6_spearman.html").exists()


def test_mask_features_counts():
    mod = _module()
    codes = np.zeros((20, 37), dtype=np.int32)
    out = mod._mask_features(codes, 5, 10, np.random.default_rng(0))
    assert ((out < 0).sum(axis=1) == 4).all() and (out[:, 5] == 0).all()
