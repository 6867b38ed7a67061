"""``bnma explain --method/--interval/--shapley/--next-test/--json``: the same numbers as the
library (and the Patient page, which calls it with the same defaults)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bnma_core.cli import main
from bnma_core.datasets import bundled_path


def _run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("method", ["manb", "kdb1"])
def test_json_equals_the_library(method, capsys):
    from bnma_core import explain
    from bnma_core.classifiers.registry import fit_method
    from bnma_core.data import load_dataset

    code, out, _ = _run(["explain", "--data", "wbc", "--row", "23", "--method", method,
                         "--json"], capsys)
    assert code == 0
    got = json.loads(out)
    ds = load_dataset(bundled_path("wbc.csv"))
    pos = ds.position_of_row(23)
    rows = np.delete(np.arange(ds.n_rows), pos)
    est = fit_method(method, ds, rows)
    x = ds.X[pos]
    pred = explain.predict_with_uncertainty(est, x, 0.9, 400, ds.subset(rows), 0, codes=True)
    np.testing.assert_allclose(got["prediction"]["probability"], pred.proba[0], rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(got["prediction"]["structure_interval"],
                               pred.structure_interval[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["prediction"]["parameter_interval"],
                               pred.parameter_interval[0], rtol=0, atol=1e-12)
    shap = explain.shapley_values(est, x, seed=0, codes=True)
    contrib = got["shapley"]["contributions"]
    assert set(contrib) == set(shap.names)  # keyed by the column names
    for name, value in zip(shap.names, shap.values):
        assert abs(contrib[name]["value"] - value) <= 1e-12
    nt = explain.next_test(est, x, threshold=0.5, codes=True)
    assert [d["finding"] for d in got["next_test"]] == nt.findings == ["bare_nuclei"]
    np.testing.assert_allclose([d["voi"] for d in got["next_test"]], nt.voi, rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose([d["flip_probability"] for d in got["next_test"]],
                               nt.flip_probability, rtol=0, atol=1e-12)
    assert got["findings"]["bare_nuclei"] == "missing"
    assert got["true_class"] == "malignant" and got["seed"] == 0


def test_text_output_flags_a_coin_flip_and_explains_parts(capsys):
    code, out, _ = _run(["explain", "--data", "wbc", "--row", "23", "--method", "ukdb2",
                         "--interval", "--shapley", "--next-test"], capsys)
    assert code == 0
    assert "UNCERTAIN: benign: 0.50" in out
    assert "no parameter interval" in out  # UKDB has no parameter draws: said, not failed
    assert "Contributions to the log-odds of benign" in out
    assert "Next test unavailable" in out and "choose another method" in out


def test_next_test_prints_what_its_ranking_is_computed_under(capsys):
    """``stack`` on WBC weights UKDB, which defines no probability of findings: the next-test
    ranking is computed without it, and the text and the JSON say so (NextTest.note)."""
    from bnma_core import explain
    from bnma_core.classifiers.registry import fit_method
    from bnma_core.data import load_dataset

    ds = load_dataset(bundled_path("wbc.csv"))
    pos = ds.position_of_row(23)
    est = fit_method("stack", ds, np.delete(np.arange(ds.n_rows), pos), random_state=0)
    note = explain.next_test(est, ds.X[pos], threshold=0.5, codes=True).note
    assert note  # UKDB is weighted on WBC
    code, out, _ = _run(["explain", "--data", "wbc", "--row", "23", "--method", "stack",
                         "--next-test"], capsys)
    assert code == 0 and f"({note})" in out
    code, out, _ = _run(["explain", "--data", "wbc", "--row", "23", "--method", "stack",
                         "--next-test", "--json"], capsys)
    assert code == 0 and json.loads(out)["next_test_note"] == note


def test_bad_explain_options_are_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["explain", "--data", "wbc", "--row", "1", "--level", "2"])
    assert exc.value.code == 2
    assert "between 0 and 1" in capsys.readouterr().err
    code, _, err = _run(["explain", "--data", "wbc", "--row", "1", "--method", "nope"], capsys)
    assert code == 2 and "Unknown method 'nope'" in err and "Traceback" not in err
