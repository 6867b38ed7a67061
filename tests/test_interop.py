"""``bnma export`` (issue 35 item 5): every member network opened in pgmpy and pyAgrum gives, once
weighted as weights.json says, our averaged prediction to 1e-9 on WBC."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from bnma_core import cli, save_model
from bnma_core.classifiers.registry import fit_method

pgmpy = pytest.importorskip("pgmpy")
gum = pytest.importorskip("pyagrum")

ROWS = np.arange(0, 699, 47)  # 15 cases


def _pgmpy(path):
    """A function (class, evidence) -> {state: P(state | evidence)} of the file, in pgmpy."""
    from pgmpy.inference import VariableElimination
    from pgmpy.readwrite import BIFReader, XMLBIFReader

    reader = BIFReader(str(path)) if path.suffix == ".bif" else XMLBIFReader(str(path))
    infer = VariableElimination(reader.get_model())

    def posterior(cls, evidence):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            q = infer.query([cls], evidence=evidence, show_progress=False)
        return {str(s): float(v) for s, v in zip(q.state_names[cls], q.values)}

    return posterior


def _agrum(path):
    """The same in pyAgrum (lazy propagation)."""
    bn = gum.loadBN(str(path))
    ie = gum.LazyPropagation(bn)

    def posterior(cls, evidence):
        ie.setEvidence(evidence)
        ie.makeInference()
        return dict(zip(bn.variable(cls).labels(), ie.posterior(cls).toarray().tolist()))

    return posterior


def _combined(folder, weights, ds, tool, rows):
    cls, classes = weights["class"], weights["classes"]
    sets = ([(1.0, weights)] if weights["averaging"] != "stack" else
            [(c["weight"], c) for c in weights["components"].values()])
    out = np.zeros((len(rows), len(classes)))
    for stack_weight, s in sets:
        for file, w in s["members"].items():
            posterior = tool(folder / file)
            for r, pos in enumerate(rows):
                evidence = {f: ds.feature_states[j][c] for j, (f, c) in
                            enumerate(zip(ds.feature_names, ds.X[pos]))
                            if c >= 0 and j % 4 != r % 4}
                post = posterior(cls, evidence)
                out[r] += stack_weight * w * np.array([post[c] for c in classes])
    return out


@pytest.mark.parametrize("method, params, fmt", [
    ("kbest", {"n_best": 10, "max_parents": 2}, "bif"),  # CPTs pgmpy parses in seconds
    ("manb", {}, "xmlbif"),
    ("stack", {"candidates": ("manb", "nb"), "inner_folds": 2, "random_state": 0}, "bif"),
])
def test_members_in_pgmpy_and_pyagrum_give_our_average(method, params, fmt, wbc, tmp_path,
                                                       capsys):
    est = fit_method(method, wbc, **params)
    model = save_model(est, tmp_path / "m.bnma", dataset=wbc, method=method)
    out = tmp_path / "nets"
    assert cli.main(["export", "--model", str(model), "--format", fmt, "--out", str(out)]) == 0
    weights = json.loads((out / "weights.json").read_text())
    for tool, rows in ((_agrum, ROWS), (_pgmpy, ROWS[:2])):  # pgmpy: ~1 s per query
        X = wbc.X[rows].copy()
        for r in range(len(rows)):  # the findings left out of the evidence
            X[r, [j for j in range(X.shape[1]) if j % 4 == r % 4]] = -1
        np.testing.assert_allclose(_combined(out, weights, wbc, tool, rows),
                                   est.predict_proba(X), rtol=0, atol=1e-9)


def test_order_bma_says_why_it_cannot_be_exported(wbc, tmp_path, capsys):
    est = fit_method("bma1", wbc, n_iter=60, burn_in=10, max_parents=1, random_state=0)
    model = save_model(est, tmp_path / "m.bnma", dataset=wbc, method="bma1")
    rc = cli.main(["export", "--model", str(model), "--out", str(tmp_path / "nets")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.startswith("bnma: error: bma1 cannot be exported: order-MCMC")
    assert err.count("\n") == 0
