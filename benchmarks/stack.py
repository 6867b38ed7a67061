"""Cost of the recommended method ``stack`` against one ``bma10`` fit, and what the way it
finds its weights changes (issue 34 item 1; docs/accuracy.md §13, DESIGN §9).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/stack.py [--quick] [--anchors]``. Prints one
JSON line per figure (``{"name", "value", "unit"}``). Times are CPU seconds of this process
(``time.process_time``: the machine is shared), each the best of ``REPEATS`` fits done
alternately in this one run, so every ratio is measured in one run:

* per data set (WBC; ALARM 500 rows, class BP, 36 features; HEPAR II 500 rows, class
  Cirrhosis, 69 features; and, when ``shared/data`` is next to the repository or
  ``BNMA_SHARED_DATA`` names it, the UCI sets vote (435 x 16, 46 % of the rows with a missing
  value), zoo (101 x 16) and mushroom (8,124 x 21, 31 % incomplete)): ``bma10`` fit,
  ``stack`` fit with its defaults (leave-one-out in closed form, one chain for the three
  priors, at most ``loo_rows`` complete and ``loo_incomplete_rows`` incomplete rows scored,
  the latter's missing values summed out once for all orders up to ``loo_missing_states``)
  and, unless ``--quick``, the variants ``unshared`` (``share_orders=False``: one chain per
  prior), ``all_rows`` (every training row scored), ``exact_held`` (``loo_missing_states=None``:
  the scored incomplete rows' missing values summed out as ``predict`` does, order by order up
  to ``max_missing_states``), ``downdate`` (closed-form inner folds)
  and ``refit`` (refitted inner folds), one fit each; the ratios to ``bma10`` (target
  <= 3); the stacking weights and their largest difference to the default's; the CPU time
  of ``stack``'s parts (candidate fits, predictions, the rest);
* ``--anchors``: ``stack``'s mean log-loss on Weka's ten folds of the seven anchor data sets
  (``bnma_core.reproduce.anchors.run_fold``; needs ``BNMA_ANCHORS`` or the shared folder)
  with its defaults (and the variants above unless ``--quick``); target <= 0.460. (The
  anchors have no missing value, so ``loo_incomplete_rows`` plays no part there.)

The last line is the 1-minute load average at the end.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
from _bench import emit

from bnma_core.classifiers.registry import fit_method
from bnma_core.data import dataset_from_codes, load_dataset
from bnma_core.datasets import bundled_path

QUICK = "--quick" in sys.argv
UCI = ("vote", "zoo", "mushroom")
"""UCI data sets of ``shared/data`` next to the repository (fetched, not copied into it)."""
REPEATS = 1 if QUICK else 3
VARIANTS = {"unshared": {"share_orders": False},
            "all_rows": {"loo_rows": None, "loo_incomplete_rows": None},
            "exact_held": {"loo_missing_states": None},
            "downdate": {"inner_fit": "downdate"}, "refit": {"inner_fit": "refit"}}
"""``stack``'s settings compared with its defaults (not with ``--quick``)."""


def _network_data(net: str, cls: str, n_rows: int):
    from bnma_core.network import load_network

    bn = load_network(net)
    D = bn.sample_codes(n_rows, seed=0)
    return dataset_from_codes(D, bn.names, bn.arities, class_index=bn.names.index(cls),
                              states=[bn.states[i] for i in range(len(bn.names))])


def _cpu(fn) -> tuple[float, object]:
    c = time.process_time()
    out = fn()
    return time.process_time() - c, out


def _parts(ds) -> dict[str, float]:
    """CPU seconds of one ``stack`` fit split by what ran: candidate fits, out-of-sample
    scores (leave-one-out passes and inner-fold predictions) and the rest."""
    from bnma_core.classifiers import stacking

    cls = stacking.PredictiveStacking
    spent = {"fit": 0.0, "predict": 0.0}
    timed = {"_fit_candidate": "fit", "_class_log_proba": "predict",
             "_loo_log_proba": "predict"}
    saved = {name: getattr(cls, name) for name in timed}

    def timer(name):
        def run(self, *a, **k):
            c = time.process_time()
            try:
                return saved[name](self, *a, **k)
            finally:
                spent[timed[name]] += time.process_time() - c
        return run

    for name in timed:
        setattr(cls, name, timer(name))
    try:
        total, _ = _cpu(lambda: fit_method("stack", ds, random_state=0))
    finally:
        for name, f in saved.items():
            setattr(cls, name, f)
    spent["other"] = total - spent["fit"] - spent["predict"]
    return spent


def cost(name: str, ds) -> None:
    fit_method("bma10", ds, random_state=0)  # compile / load the kernels
    fit_method("stack", ds, random_state=0)
    bma, stack = [], []
    for _ in range(REPEATS):
        bma.append(_cpu(lambda: fit_method("bma10", ds, random_state=0))[0])
        t, est = _cpu(lambda: fit_method("stack", ds, random_state=0))
        stack.append(t)
    b, s = min(bma), min(stack)
    emit(f"stack.{name}.bma10_cpu_s", b, "s")
    emit(f"stack.{name}.stack_cpu_s", s, "s")
    emit(f"stack.{name}.ratio", s / b, "x")
    for part, v in _parts(ds).items():
        emit(f"stack.{name}.part.{part}_cpu_s", v, "s")
    for n, w in est.weights_.items():
        emit(f"stack.{name}.weight.{n}", w, "")
    if QUICK:
        return
    for variant, params in VARIANTS.items():
        t, ref = _cpu(lambda p=params: fit_method("stack", ds, random_state=0, **p))
        emit(f"stack.{name}.{variant}_stack_cpu_s", t, "s")
        emit(f"stack.{name}.{variant}_ratio", t / b, "x")
        for n, w in ref.weights_.items():
            emit(f"stack.{name}.{variant}_weight.{n}", w, "")
        emit(f"stack.{name}.{variant}_weights_max_abs_diff",
             max(abs(est.weights_[n] - ref.weights_[n]) for n in est.weights_), "")


def anchors(variant: str, params: dict) -> None:
    from bnma_core.reproduce.anchors import DATASETS, load, run_fold

    means = []
    cpu = 0.0
    for d in DATASETS:
        folds = load(d)[3]
        recs = [run_fold("stack", d, k, params=params) for k in range(int(folds.max()) + 1)]
        ll = float(np.mean([r["log_loss"] for r in recs]))
        cpu += sum(r["cpu_seconds"] for r in recs)
        means.append(ll)
        emit(f"stack.anchors.{variant}.{d}.log_loss", ll, "nats")
    emit(f"stack.anchors.{variant}.mean_log_loss", float(np.mean(means)), "nats")
    emit(f"stack.anchors.{variant}.cpu_s", cpu, "s")


def main() -> None:
    if "--anchors" in sys.argv:
        anchors("default", {})
        for variant, params in {} if QUICK else VARIANTS.items():
            if variant != "all_rows":  # the anchors' rows are complete and < loo_rows
                anchors(variant, params)
    else:
        cost("wbc", load_dataset(bundled_path("wbc.csv")))
        cost("alarm500", _network_data("alarm", "BP", 500))
        cost("hepar2_500", _network_data("hepar2", "Cirrhosis", 500))
        shared = Path(os.environ.get("BNMA_SHARED_DATA",
                                     Path(__file__).resolve().parents[2] / "shared" / "data"))
        for name in UCI:
            if (shared / f"{name}.csv").is_file():
                cost(name, load_dataset(shared / f"{name}.csv"))
    emit("stack.load_average_1min", os.getloadavg()[0], "")


if __name__ == "__main__":
    main()
