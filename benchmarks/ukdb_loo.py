"""UKDB (k = 2) inside ``stack``: fit cost, and leave-one-out log scores without refits against
the inner 5-fold CV they replace (issue 34 item 1; DESIGN §5, §9).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/ukdb_loo.py [--quick]``. Prints one JSON line
per figure (``{"name", "value", "unit"}``); times are CPU seconds of this process
(``time.process_time``; the machine is shared), each the best of ``REPEATS`` runs in this one
process. Per data set (WBC; ALARM 500 rows, class BP; HEPAR II 500 rows, class Cirrhosis):

* ``<set>_fit_s``: one UKDB fit on all rows;
* ``<set>_loo_s``: :meth:`UKDB.loo_log_proba` alone after that fit (exact leave-one-out);
* ``<set>_inner_cv_s``: what ``stack`` spends on UKDB with inner refits: 5 inner-fold fits and
  their predictions (the split of ``stack`` with ``random_state=0``) plus the fit on all rows;
* ``<set>_inner_loo_s``: one fit on all rows plus :meth:`UKDB.loo_log_proba` of every row
  (exact: UKDB_L's structure the one D_{-i} gives); ``_inner_loo_full_s`` / ``_elpd_loo_full``
  the same with ``domain_structure="full"`` (the full fit's structure kept);
* ``<set>_loo_minus_cv_mean`` / ``_mean_abs``: the per-row log score of the true class (floored
  as in ``stack``) by LOO minus by the inner 5-fold CV, mean and mean absolute (nats);
  ``<set>_elpd_cv`` / ``_elpd_loo``: their sums;
* ``<set>_elpd_exact_loo``: exact leave-one-out by n plain refits (once);
  ``_loo_minus_exact_max_abs``: ``loo_log_proba`` against it (rounding only);
  ``_loo_full_minus_exact_mean`` / ``_mean_abs``: what keeping UKDB_L's structure of the full
  fit changes; ``_exact_structure_rows``: the share of rows whose refit learns that structure.

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


def _best(fn, repeats: int = REPEATS) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeats):
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


def _loo_only(X, y, ar, repeats: int = REPEATS) -> float:
    """CPU seconds of :meth:`UKDB.loo_log_proba` alone on a fresh fit, best of ``repeats``."""
    best = np.inf
    for _ in range(repeats):
        est = UKDB(k=2).fit(X, y, arities=ar)
        yc = np.searchsorted(est.classes_, y)
        c = time.process_time()
        est.loo_log_proba(X, yc)
        best = min(best, time.process_time() - c)
    return best


def _inner_loo(X, y, ar, domain_structure: str = "refit") -> np.ndarray:
    est = UKDB(k=2).fit(X, y, arities=ar)
    lpc = est.loo_log_proba(X, np.searchsorted(est.classes_, y), domain_structure)
    out = np.full((len(y), int(y.max()) + 1), -np.inf)
    out[:, est.classes_] = lpc
    return np.maximum(out[np.arange(len(y)), y], LOG_FLOOR)


def _exact_loo(X, y, ar) -> tuple[np.ndarray, float]:
    """Per-row log score of the true class by n refits without the row, and the share of rows
    whose refit learns the full fit's UKDB_L structure."""
    full = UKDB(k=2).fit(X, y, arities=ar).domain_structure_
    lp = np.zeros(len(y))
    same = 0
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        est = UKDB(k=2).fit(X[keep], y[keep], arities=ar)
        st = est.domain_structure_
        same += (st.order, st.class_parents, st.parents) == (full.order, full.class_parents,
                                                             full.parents)
        out = np.full(int(y.max()) + 1, -np.inf)
        out[est.classes_] = est.predict_log_proba(X[i:i + 1])[0]
        lp[i] = max(out[y[i]], LOG_FLOOR)
    return lp, same / len(y)


def _one(name: str, ds, repeats: int = REPEATS, exact: bool = True) -> dict[str, float]:
    """Every figure of one data set (emitted and returned)."""
    from sklearn.model_selection import StratifiedKFold

    out: dict[str, float] = {}

    def put(key: str, value: float, unit: str) -> None:
        out[key] = float(value)
        emit(f"{name}_{key}", value, unit)

    X, y = ds.X, ds.y
    ar = np.asarray(ds.arities)[ds.feature_indices]
    UKDB(k=2).fit(X, y, arities=ar)  # numba compilation / cache load
    put("fit_s", _best(lambda: UKDB(k=2).fit(X, y, arities=ar), repeats)[0], "CPU s")
    if hasattr(UKDB, "loo_log_proba"):
        put("loo_s", _loo_only(X, y, ar, repeats), "CPU s")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The least populated class")
        splits = list(StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
                      .split(np.zeros(len(y)), y))
    t_cv, lp_cv = _best(lambda: _inner_cv(X, y, ar, splits), repeats)
    put("inner_cv_s", t_cv, "CPU s")
    put("elpd_cv", lp_cv.sum(), "nats")
    if not hasattr(UKDB, "loo_log_proba"):
        return out
    t_loo, lp_loo = _best(lambda: _inner_loo(X, y, ar), repeats)
    put("inner_loo_s", t_loo, "CPU s")
    put("elpd_loo", lp_loo.sum(), "nats")
    put("loo_minus_cv_mean", (lp_loo - lp_cv).mean(), "nats")
    put("loo_minus_cv_mean_abs", np.abs(lp_loo - lp_cv).mean(), "nats")
    t_full, lp_full = _best(lambda: _inner_loo(X, y, ar, "full"), repeats)
    put("inner_loo_full_s", t_full, "CPU s")
    put("elpd_loo_full", lp_full.sum(), "nats")
    if exact:
        lp_ex, same = _exact_loo(X, y, ar)
        put("elpd_exact_loo", lp_ex.sum(), "nats")
        put("loo_minus_exact_max_abs", np.abs(lp_loo - lp_ex).max(), "nats")
        put("loo_full_minus_exact_mean", (lp_full - lp_ex).mean(), "nats")
        put("loo_full_minus_exact_mean_abs", np.abs(lp_full - lp_ex).mean(), "nats")
        put("exact_structure_rows", same, "share")
    return out


def main() -> None:
    for name, ds in _sets():
        _one(name, ds)
    emit("load_average_1min", os.getloadavg()[0], "")


if __name__ == "__main__":
    main()
