"""``bnma export`` (issue 35 item 5): every member network opened in pgmpy and pyAgrum gives, once
weighted as weights.json says, our averaged prediction to 1e-9 on WBC (and, for order-MCMC
averaging, on an ASIA sample)."""

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


def _hidden(r, j):
    """Feature j left out of the evidence of the r-th case (every third case complete)."""
    return r % 3 != 0 and j % 4 == r % 4


def _pgmpy(path):
    """A function (class, evidence) -> ({state: P(state | evidence)}, P(evidence)) of the file,
    in pgmpy (P(evidence): variable elimination on the network's factors, which pgmpy leaves
    unnormalised for a Markov network)."""
    from pgmpy.inference import VariableElimination
    from pgmpy.readwrite import BIFReader, XMLBIFReader

    reader = BIFReader(str(path)) if path.suffix == ".bif" else XMLBIFReader(str(path))
    infer = VariableElimination(reader.get_model().to_markov_model())

    def posterior(cls, evidence):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            q = infer.query([cls], evidence=evidence, show_progress=False)
        total = float(q.values.sum())
        return ({str(s): float(v) / total for s, v in zip(q.state_names[cls], q.values)},
                total)

    return posterior


def _agrum(path):
    """The same in pyAgrum (lazy propagation)."""
    bn = gum.loadBN(str(path))
    ie = gum.LazyPropagation(bn)

    def posterior(cls, evidence):
        ie.setEvidence(evidence)
        ie.makeInference()
        return (dict(zip(bn.variable(cls).labels(), ie.posterior(cls).toarray().tolist())),
                ie.evidenceProbability())

    return posterior


def _combined(folder, weights, ds, tool, rows):
    """The class probabilities of ``rows`` from the exported files alone, combined as
    weights.json says: ``posterior`` sum_m w_m P(c | x, m); ``joint`` (order averaging)
    sum_m w_m P(c, x | m) normalised over c; a stack per component."""
    cls, classes = weights["class"], weights["classes"]
    sets = ([(1.0, weights)] if weights["averaging"] != "stack" else
            [(c["weight"], c) for c in weights["components"].values()])
    out = np.zeros((len(rows), len(classes)))
    for stack_weight, s in sets:
        part = np.zeros_like(out)
        for file, w in s["members"].items():
            posterior = tool(folder / file)
            for r, pos in enumerate(rows):
                evidence = {f: ds.feature_states[j][c] for j, (f, c) in
                            enumerate(zip(ds.feature_names, ds.X[pos]))
                            if c >= 0 and not _hidden(r, j)}
                post, p_evidence = posterior(cls, evidence)
                part[r] += w * np.array([post[c] for c in classes]) * (
                    p_evidence if s["averaging"] == "joint" else 1.0)
        if s["averaging"] == "joint":
            part /= part.sum(axis=1, keepdims=True)
        out += stack_weight * part
    return out


def _hide(X):
    X = X.copy()
    for r in range(len(X)):
        X[r, [j for j in range(X.shape[1]) if _hidden(r, j)]] = -1
    return X


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
        np.testing.assert_allclose(_combined(out, weights, wbc, tool, rows),
                                   est.predict_proba(_hide(wbc.X[rows])), rtol=0, atol=1e-9)


@pytest.fixture(scope="module")
def asia_sample(small_networks):
    """1,000 cases sampled from ASIA (seed 0), class ``dysp``."""
    from bnma_core.data import dataset_from_codes

    bn = small_networks["asia"]
    codes = bn.sample_codes(1000, seed=0)
    c = bn.names.index("dysp")
    keep = [j for j in range(bn.n_vars) if j != c] + [c]
    return dataset_from_codes(codes[:, keep], [bn.names[j] for j in keep],
                              np.array([len(bn.states[j]) for j in keep]),
                              states=[bn.states[j] for j in keep])


@pytest.mark.parametrize("data, params, fmt", [
    ("wbc", {"max_parents": 1}, "xmlbif"),
    ("asia", {"max_parents": 3}, "xmlbif"),
    ("asia", {"max_parents": 3, "combine": "posterior"}, "xmlbif"),
])
def test_order_bma_as_one_network_per_order(data, params, fmt, wbc, asia_sample, tmp_path):
    """bma10: under each kept order eq. 9 is one network (node v's parents: the union of its
    averaged parent sets, CPT rows the weighted mixture); the networks' joints, weighted as
    weights.json says ("joint"; "posterior" with ``combine="posterior"``), give our class
    probabilities for complete cases and cases with findings left out (marginalized exactly,
    never by Monte Carlo here). XMLBIF: pyAgrum 3.3.1's BIF reader keeps about 8 significant
    digits of a probability (0.9870466804988676 read as 0.98704665899), 2e-9 to 6e-9 off here."""
    ds = wbc if data == "wbc" else asia_sample
    est = fit_method("bma10", ds, n_iter=1000, burn_in=200, random_state=0, **params)
    model = save_model(est, tmp_path / "m.bnma", dataset=ds, method="bma10")
    out = tmp_path / "nets"
    assert cli.main(["export", "--model", str(model), "--format", fmt, "--out", str(out)]) == 0
    weights = json.loads((out / "weights.json").read_text())
    assert weights["averaging"] == params.get("combine", "joint") and len(weights["members"]) > 1
    assert sum(weights["members"].values()) == pytest.approx(1.0, abs=1e-12)
    rows = np.arange(0, len(ds.X), len(ds.X) // 15)[:15]
    X = _hide(ds.X[rows])
    assert (est.missing_value_paths(X, codes=True) != "monte_carlo").all()
    for tool, rr in ((_agrum, rows), (_pgmpy, rows[:3])):
        np.testing.assert_allclose(_combined(out, weights, ds, tool, rr),
                                   est.predict_proba(X[:len(rr)]), rtol=0, atol=1e-9)


def test_order_bma_too_large_says_so_with_numbers(wbc, tmp_path, capsys):
    est = fit_method("bma10", wbc, n_iter=300, burn_in=50, max_parents=3, random_state=0)
    model = save_model(est, tmp_path / "m.bnma", dataset=wbc, method="bma10")
    rc = cli.main(["export", "--model", str(model), "--out", str(tmp_path / "nets")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.startswith("bnma: error: bma10 cannot be exported: within each order")
    assert "CPT cells in all" in err and "parents: " in err and "max_parents=1" in err
    assert err.count("\n") == 0
