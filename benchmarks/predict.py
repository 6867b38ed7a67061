"""Scoring a file of new cases with a saved model (issue 35 item 3): ``bnma predict``'s path —
read the CSV, match and code the columns, class probabilities, the Patient page's verdict and
the structure interval per case (``bnma_core.scoring.score``) — beside ``predict_proba`` alone
on the same codes.

Run: ``.venv/bin/python benchmarks/predict.py [--rows 100000] [--method stack]``. The model is
fitted on WBC (all 699 rows, seed 1) and saved; the cases are WBC rows drawn with replacement
(seed 0), 2 % of the values blanked. Each mode runs in a fresh interpreter, so its peak resident
memory (``*_peak_rss_mb``) is its own; rows/s are per CPU second (``time.process_time``), so a
busy machine changes them little. Prints one JSON line per figure.

Measured (2 cores shared, load average ~18; ``--rows 100000 --method stack``): model file
451.5 KB, loaded in 1.74 CPU s in a fresh interpreter (0.11 s once the library is imported);
``predict_proba`` alone 2,198 rows per CPU s (45.5 s), peak 589 MB; ``bnma predict``'s path
(probabilities, verdict, structure intervals, in chunks of 5,000) 2,384 rows/s (41.9 s), peak
456 MB; with ``--interval`` (50 parameter draws) 1,650 rows/s (60.6 s), peak 488 MB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _bench import emit

CHILD = r"""
import json, resource, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from bnma_core.model_io import read_model
from bnma_core.data import read_table
from bnma_core.scoring import case_codes, score
model_path, csv_path, mode = sys.argv[1:4]
t0 = time.process_time()
mf = read_model(model_path)
load = time.process_time() - t0
frame = read_table(csv_path)
codes, _ = case_codes(mf, frame)
mf.estimator.predict_proba(codes[:50])  # kernels compiled / loaded from cache
score(mf, codes[:50])
t = time.process_time()
if mode == "predict_proba":
    mf.estimator.predict_proba(codes)
elif mode == "score":
    score(mf, codes)
else:
    score(mf, codes, interval=True, n_draws=50)
cpu = time.process_time() - t
print(json.dumps({"cpu": cpu, "load": load, "rows": len(codes),
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--method", default="stack")
    ap.add_argument("--modes", default="predict_proba,score")
    args = ap.parse_args(argv)

    import numpy as np
    import pandas as pd

    from bnma_core import load_dataset, save_model
    from bnma_core.classifiers.registry import fit_method, get_spec
    from bnma_core.datasets import bundled_path

    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        ds = load_dataset(bundled_path("wbc.csv"))
        params = {"random_state": 1} if get_spec(args.method).randomized else {}
        model = fit_method(args.method, ds, **params)
        path = save_model(model, Path(tmp) / "model.bnma", dataset=ds, method=args.method)
        emit(f"{args.method}_wbc_model_file_kb", path.stat().st_size / 1024, "KB", 1)
        raw = pd.read_csv(bundled_path("wbc.csv"), dtype=str)
        rng = np.random.default_rng(0)
        cases = raw.iloc[rng.integers(0, len(raw), args.rows)].reset_index(drop=True)
        feats = ds.feature_names
        blank = rng.random((len(cases), len(feats))) < 0.02
        values = cases[feats].to_numpy(dtype=object)
        values[blank] = ""
        cases[feats] = values
        csv = Path(tmp) / "cases.csv"
        cases.to_csv(csv, index=False)
        for mode in args.modes.split(","):
            out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(csv), mode],
                                 capture_output=True, text=True, cwd=root, check=True,
                                 env={"PYTHONPATH": str(root), "PATH": ""})
            res = json.loads(out.stdout.strip().splitlines()[-1])
            emit(f"{mode}_rows_per_cpu_s", res["rows"] / max(res["cpu"], 1e-9), "rows/s", 0)
            emit(f"{mode}_cpu_s", res["cpu"], "s", 2)
            emit(f"{mode}_peak_rss_mb", res["rss_mb"], "MB", 0)
            emit("model_load_cpu_s", res["load"], "s", 3)


if __name__ == "__main__":
    main()
