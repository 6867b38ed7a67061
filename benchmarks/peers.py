"""Speed against the peers users would pick, in one process on the same data (issue 15, part 4).

Each figure is printed as one JSON line with our seconds, the peer's seconds and the ratio
``ours / peer`` (below 1: we are faster):

* naive Bayes and TAN fit + predict on ALARM samples (class CATECHOL): scikit-learn
  ``CategoricalNB`` (NB only) and pyAgrum ``BNClassifier``; naive Bayes on 500 wide features
  against ``CategoricalNB``;
* forward sampling of ALARM: pgmpy ``BayesianModelSampling`` and pyAgrum ``BNDatabaseGenerator``;
* BDeu local scores of every family with up to two parents of 8 ALARM variables: pgmpy ``BDeu``;
* exact single-query posteriors on ALARM with evidence: pyAgrum ``LazyPropagation``.

The peers (pgmpy, pyAgrum) are development requirements only; a missing peer is reported as
``{"skipped": ...}``. Timings: best of 3 after a warm-up call (numba compilation and the peers'
caches excluded). Run: ``.venv/bin/python benchmarks/peers.py``.
"""

from __future__ import annotations

import itertools
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _bench import timed

from bnma_core.classifiers.naive_bayes import NaiveBayes
from bnma_core.classifiers.tan import TAN
from bnma_core.network import load_network
from bnma_core.network.bif import bif_text
from bnma_core.scores import DirichletScore

CLASS = "CATECHOL"


def report(name: str, ours: float, peer: str, theirs: float | None, note: str = "") -> None:
    out = {"name": name, "ours_s": round(ours, 5), "peer": peer}
    if theirs is None:
        out["skipped"] = note or f"{peer} is not installed"
    else:
        out.update(peer_s=round(theirs, 5), ours_over_peer=round(ours / theirs, 4))
        if note:
            out["note"] = note
    print(json.dumps(out), flush=True)


def peer_time(fn: Callable[[], object], repeats: int = 3) -> float | None:
    try:
        return timed(fn, repeats)
    except ImportError:
        return None


def classifiers(bn, n_train: int = 5000, n_test: int = 5000) -> None:
    """NB / TAN fit + predict_proba on codes; the peers get the same rows."""
    import pandas as pd

    ds = bn.sample(n_train + n_test, seed=0, class_variable=CLASS)
    X, y = ds.X, ds.y
    ar = ds.arities[ds.feature_indices]
    Xtr, ytr, Xte = X[:n_train], y[:n_train], X[n_train:]

    def ours(cls):
        return lambda: cls().fit(Xtr, ytr, arities=ar).predict_proba(Xte)

    def sk_nb():
        from sklearn.naive_bayes import CategoricalNB

        CategoricalNB(alpha=1.0, min_categories=ar).fit(Xtr, ytr).predict_proba(Xte)

    names = [f"f{i}" for i in range(X.shape[1])]
    ftr = pd.DataFrame(Xtr, columns=names).astype(str)
    fte = pd.DataFrame(Xte, columns=names).astype(str)

    def agrum(method: str):
        def run():
            from pyagrum.skbn import createBNClassifier

            clf = createBNClassifier(learningMethod=method, prior="Smoothing", priorWeight=1.0)
            clf.fit(ftr, pd.Series(ytr.astype(str), name="class"))
            clf.predict_proba(fte)
        return run

    t_nb, t_tan = timed(ours(NaiveBayes)), timed(ours(TAN))
    size = f"alarm_{n_train}x{X.shape[1]}"
    report(f"nb_fit_predict_{size}", t_nb, "sklearn.CategoricalNB", peer_time(sk_nb))
    report(f"nb_fit_predict_{size}", t_nb, "pyagrum.BNClassifier", peer_time(agrum("NaiveBayes")))
    report(f"tan_fit_predict_{size}", t_tan, "pyagrum.BNClassifier", peer_time(agrum("TAN")))


def classifiers_wide(n_train: int = 5000, n_test: int = 5000, n_features: int = 500) -> None:
    """Naive Bayes fit + predict_proba on 500 wide features (random 2-4 states, 3 classes,
    each feature shifted by the class) against scikit-learn's CategoricalNB; the predicted
    probabilities are compared too (they differ only by the class prior: ours is smoothed,
    (1 + N_c) / (|C| + N), CategoricalNB's is N_c / N)."""
    from sklearn.naive_bayes import CategoricalNB

    rng = np.random.default_rng(0)
    ar = rng.integers(2, 5, n_features)
    y = rng.integers(0, 3, n_train + n_test).astype(np.int32)
    X = ((rng.random((n_train + n_test, n_features)) * ar + y[:, None]) % ar).astype(np.int32)
    Xtr, ytr, Xte = X[:n_train], y[:n_train], X[n_train:]
    ours = timed(lambda: NaiveBayes().fit(Xtr, ytr, arities=ar).predict_proba(Xte))
    theirs = peer_time(lambda: CategoricalNB(alpha=1.0, min_categories=ar).fit(
        Xtr, ytr).predict_proba(Xte))
    report(f"nb_fit_predict_wide_{n_train}x{n_features}", ours, "sklearn.CategoricalNB",
           theirs)


def sampling(bn, bif_path: Path, n: int = 20_000) -> None:
    ours = timed(lambda: bn.sample_codes(n, seed=0))

    def pgmpy_sample():
        from pgmpy.sampling import BayesianModelSampling

        model = _pgmpy_model(bif_path)
        BayesianModelSampling(model).forward_sample(size=n, show_progress=False)

    def agrum_sample():
        import pyagrum as gum

        g = gum.BNDatabaseGenerator(_agrum_bn(bif_path))
        g.drawSamples(n)
        g.to_pandas()

    report(f"sample_alarm_{n}", ours, "pgmpy.BayesianModelSampling", peer_time(pgmpy_sample, 1))
    report(f"sample_alarm_{n}", ours, "pyagrum.BNDatabaseGenerator", peer_time(agrum_sample))


def bdeu_scores(bn, n: int = 5000, n_vars: int = 8, max_parents: int = 2) -> None:
    import pandas as pd

    codes = bn.sample_codes(n, seed=2)[:, :n_vars]
    ar = bn.arities[:n_vars].astype(np.int64)
    fams = [(v, pa) for v in range(n_vars) for k in range(max_parents + 1)
            for pa in itertools.combinations([u for u in range(n_vars) if u != v], k)]
    score = DirichletScore("bdeu", 1.0)
    ours = timed(lambda: [score.local_score(codes, v, list(pa), ar) for v, pa in fams])
    df = pd.DataFrame(codes, columns=[f"x{i}" for i in range(n_vars)])

    def pgmpy_scores():
        from pgmpy.estimators import BDeu

        s = BDeu(df, equivalent_sample_size=1.0)
        for v, pa in fams:
            s.local_score(f"x{v}", [f"x{u}" for u in pa])

    theirs = peer_time(pgmpy_scores, 1)
    report(f"bdeu_{len(fams)}_families_{n}_rows", ours, "pgmpy.BDeu", theirs)
    if theirs is not None:  # same numbers, not only faster
        from pgmpy.estimators import BDeu

        s = BDeu(df, equivalent_sample_size=1.0)
        diff = max(abs(score.local_score(codes, v, list(pa), ar)
                       - s.local_score(f"x{v}", [f"x{u}" for u in pa])) for v, pa in fams[:20])
        print(json.dumps({"name": "bdeu_max_abs_difference_vs_pgmpy", "value": diff}))


def posteriors(bn, bif_path: Path, n_queries: int = 200) -> None:
    rng = np.random.default_rng(3)
    codes = bn.sample_codes(n_queries, seed=4)
    t = bn.index(CLASS)
    ev_vars = [v for v in range(bn.n_vars) if v != t]
    queries = []
    for row in codes:
        obs = rng.choice(ev_vars, size=6, replace=False)
        queries.append({bn.names[v]: bn.states[v][row[v]] for v in obs})

    def ours():
        for q in queries:
            bn.posterior(CLASS, q)

    def agrum():
        import pyagrum as gum

        model = _agrum_bn(bif_path)
        ie = gum.LazyPropagation(model)
        for q in queries:
            ie.setEvidence(q)
            ie.makeInference()
            ie.posterior(CLASS)

    report(f"posterior_alarm_{n_queries}_queries_6_evidence", timed(ours),
           "pyagrum.LazyPropagation", peer_time(agrum))


_CACHE: dict = {}


def _pgmpy_model(path: Path):
    if "pgmpy" not in _CACHE:
        from pgmpy.readwrite import BIFReader

        _CACHE["pgmpy"] = BIFReader(str(path)).get_model()
    return _CACHE["pgmpy"]


def _agrum_bn(path: Path):
    if "agrum" not in _CACHE:
        import pyagrum as gum

        _CACHE["agrum"] = gum.loadBN(str(path))
    return _CACHE["agrum"]


def main() -> None:
    t0 = time.perf_counter()
    bn = load_network("alarm")
    with tempfile.TemporaryDirectory() as tmp:
        bif_path = Path(tmp) / "alarm.bif"
        bif_path.write_text(bif_text(bn))
        classifiers(bn)
        classifiers_wide()
        sampling(bn, bif_path)
        bdeu_scores(bn)
        posteriors(bn, bif_path)
    print(json.dumps({"name": "peers_total_s", "value": round(time.perf_counter() - t0, 1)}))


if __name__ == "__main__":
    main()
