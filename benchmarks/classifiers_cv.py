"""Speed of the foundation classifiers and cross-validation.

Run: ``.venv/bin/python benchmarks/classifiers_cv.py``. Prints one JSON line per figure
(wall-clock seconds, best of 3 runs after a warm-up; the machine is shared, so treat them as
noisy). Figures: 10-fold CV of nb/tan/kdb on WBC (699 rows, the CLI's workload), the same on
5,000 rows sampled from ALARM (class BP, 36 features), and prediction with 30 % of the test
values missing (every row its own missingness pattern: exact marginalization).
"""

from __future__ import annotations

import numpy as np
from _bench import emit, timed

from bnma_core.classifiers.kdb import KDB
from bnma_core.classifiers.tan import TAN
from bnma_core.datasets import bundled_path
from bnma_core.evaluation import cross_validate
from bnma_core.network import load_network

if __name__ == "__main__":
    methods = ["nb", "tan", "kdb"]
    emit("cv10_wbc_nb_tan_kdb_s",
         timed(lambda: cross_validate(str(bundled_path("wbc.csv")), methods, folds=10)), "s")
    alarm = load_network("alarm").sample_frame(5000, 0)
    emit("cv10_alarm5000_nb_tan_kdb_s",
         timed(lambda: cross_validate(alarm, methods, folds=10, target="BP"), repeats=1), "s")
    ds = load_network("alarm").sample(5000, 0)
    rng = np.random.default_rng(0)
    X, y = ds.X, ds.y
    Xt = X[:1000].copy()
    Xt[rng.random(Xt.shape) < 0.3] = -1
    for model in (TAN(), KDB(k=2)):
        model.fit(X, y, arities=ds.arities[ds.feature_indices])
        t = timed(lambda m=model: m.predict_proba(Xt), repeats=1)
        emit(f"predict_1000_rows_30pct_missing_alarm_{type(model).__name__.lower()}_ms_per_row",
             1000 * t / len(Xt), "ms")
