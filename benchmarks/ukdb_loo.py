"""UKDB (k = 2) inside ``stack``: fit cost, and leave-one-out log scores without refits against
the inner 5-fold CV they replace (issue 34 item 1; DESIGN §5, §9).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/ukdb_loo.py [--quick]``. Prints one JSON line
per figure (``{"name", "value", "unit"}``); times are CPU seconds of this process
(``time.process_time``; the machine is shared), each the best of ``REPEATS`` runs in this one
process. Per data set (WBC; ALARM 500 rows, class BP; HEPAR II 500 rows, class Cirrhosis):

* ``<set>_fit_s``: one UKDB fit on all rows;
* ``<set>_inner_cv_s``: what ``stack`` spends on UKDB with inner refits: 5 inner-fold fits and
  their predictions (the split of ``stack`` with ``random_state=0``) plus the fit on all rows;
* ``<set>_inner_loo_s``: one fit on all rows plus :meth:`UKDB.loo_log_proba` of every row;
* ``<set>_loo_minus_cv_mean`` / ``_mean_abs``: the per-row log score of the true class (floored
  as in ``stack``) by LOO minus by the inner 5-fold CV, mean and mean absolute (nats);
  ``<set>_elpd_cv`` / ``_elpd_loo``: their sums.

The last line is the 1-minute load average at the end.
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np
from _bench import emit
from stack import _network_data

from bnma_core.classifiers.stacking import LOG_FLOOR
from bnma_core.classifiers.ukdb import UKDB
from bnma_core.data import load_dataset
from bnma_core.datasets import bundled_path

QUICK = "--quick" in sys.argv
REPEATS = 1 if QUICK else 3
N_ROWS = 120 if QUICK else 500


def _sets():
    yield "wbc", load_dataset(bundled_path("wbc.csv"))
    yield "alarm", _network_data("alarm", "BP", N_ROWS)
    yield "hepar2", _network_data("hepar2", "Cirrhosis", N_ROWS)


def _best(fn) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(REPEATS):
        c = time.process_time()
        out = fn()
        best = min(best, time.process_time() - c)
    return best, out


def _inner_cv(X, y, ar, splits) -> np.ndarray:
    """Per-row log score of the true class by refitting on every inner fold (and the fit on all
    rows that ``stack`` keeps)."""
    lp = np.zeros(len(y))
    for tr, te in splits:
        est = UKDB(k=2).fit(X[tr], y[tr], arities=ar)
        out = np.full((len(te), int(y.max()) + 1), -np.inf)
        out[:, est.classes_] = est.predict_log_proba(X[te])
        lp[te] = np.maximum(out[np.arange(len(te)), y[te]], LOG_FLOOR)
    UKDB(k=2).fit(X, y, arities=ar)
    return lp


def _inner_loo(X, y, ar) -> np.ndarray:
    est = UKDB(k=2).fit(X, y, arities=ar)
    lpc = est.loo_log_proba(X, np.searchsorted(est.classes_, y))
    out = np.full((len(y), int(y.max()) + 1), -np.inf)
    out[:, est.classes_] = lpc
    return np.maximum(out[np.arange(len(y)), y], LOG_FLOOR)


def _one(name: str, ds) -> None:
    from sklearn.model_selection import StratifiedKFold

    X, y = ds.X, ds.y
    ar = np.asarray(ds.arities)[ds.feature_indices]
    UKDB(k=2).fit(X, y, arities=ar)  # numba compilation / cache load
    t_fit, _ = _best(lambda: UKDB(k=2).fit(X, y, arities=ar))
    emit(f"{name}_fit_s", t_fit, "CPU s")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The least populated class")
        splits = list(StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
                      .split(np.zeros(len(y)), y))
    t_cv, lp_cv = _best(lambda: _inner_cv(X, y, ar, splits))
    emit(f"{name}_inner_cv_s", t_cv, "CPU s")
    emit(f"{name}_elpd_cv", lp_cv.sum(), "nats")
    if not hasattr(UKDB, "loo_log_proba"):
        return
    t_loo, lp_loo = _best(lambda: _inner_loo(X, y, ar))
    emit(f"{name}_inner_loo_s", t_loo, "CPU s")
    emit(f"{name}_elpd_loo", lp_loo.sum(), "nats")
    emit(f"{name}_loo_minus_cv_mean", (lp_loo - lp_cv).mean(), "nats")
    emit(f"{name}_loo_minus_cv_mean_abs", np.abs(lp_loo - lp_cv).mean(), "nats")


def main() -> None:
    for name, ds in _sets():
        _one(name, ds)
    emit("load_average_1min", os.getloadavg()[0], "")


if __name__ == "__main__":
    main()
