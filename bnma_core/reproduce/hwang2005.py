"""Hwang & Zhang (2005), ALARM order MCMC (Figs. 6, 7, 9), as a grid of cells for
:mod:`bnma_core.reproduce`.

One cell = one (class variable, training size, repetition) of ``experiments/alarm_orders.py``:
a training sample of ALARM (seeded by size and repetition, redrawn while the class has one
value), order MCMC (K2, Hwang-Zhang prior eq. 13, max in-degree 3, random swap, start = reversed
topological order), BMA accuracy on one fixed test set over 1 / 5 / 10 / 30 kept orders (eq. 11),
over the original and the reversed order (eq. 9) and the Bayes-optimal ceiling, the mean
Spearman correlation of the post-burn-in orders with ALARM's topological order (Fig. 6), and at
one training size the accuracy with 5 / 10 / 20 % of the test features removed (Fig. 9).
"""

from __future__ import annotations

import math
import time
from functools import lru_cache

import numpy as np
import pandas as pd

from bnma_core.classifiers.order_bma import FixedOrderBMA, OrderMCMCBMA
from bnma_core.structure.orders import LOG2E

CLASS_VARIABLES = ("CATECHOL", "SHUNT")
SIZES = (25, 50, 100, 500, 1000)
N_ORDERS_COMPARED = (1, 5, 10, 30)
MISSING_PCTS = (5, 10, 20)
PAPER = {
    "fig6_mean_spearman": "< 0.1 at n = 25, about 0.5 at n = 500 and 1000",
    "fig7": "BMA over 10 orders >= over 1 order at every size; original order best, reversed "
            "worst; the 1-vs-10 gap is largest at n = 50 and 100 and vanishes at 500-1000",
    "fig9": "multiple orders always beat a single order; the gap grows with the missing share",
}


def _mask_features(codes: np.ndarray, class_index: int, pct: float,
                   rng: np.random.Generator) -> np.ndarray:
    out = codes.copy()
    feats = np.array([i for i in range(codes.shape[1]) if i != class_index])
    k = int(round(pct / 100 * len(feats)))
    for row in out:
        row[rng.choice(feats, size=k, replace=False)] = -1
    return out


def _train_sample(bn, size: int, rep: int, ci: int) -> tuple[np.ndarray, int]:
    """Training codes of one repetition (redrawn while the class has a single value) and the
    number of redraws."""
    seed, resampled = 100000 + 100 * size + rep, 0
    while True:
        tr = bn.sample_codes(size, seed=seed)
        if len(np.unique(tr[:, ci])) > 1:
            return tr, resampled
        seed += 7919
        resampled += 1


def _accuracy(clf, p: np.ndarray, yte: np.ndarray) -> float:
    # classes absent from training are never predicted; accuracy counts them wrong
    return float(np.mean(clf.classes_[p.argmax(axis=1)] == yte))


def _order_count_rows(clf, lj: np.ndarray, compared: list[int], base: dict,
                      yte: np.ndarray) -> list[dict]:
    """Accuracy with k of the kept orders (joint and mean-posterior combination)."""
    rows = []
    for k in compared:
        rows.append({**base, "method": f"{k} order" + "s" * (k > 1),
                     "accuracy": _accuracy(clf, clf.proba_from_log_joints(lj, k), yte)})
    for k in compared:
        if k > 1:
            rows.append({**base, "method": f"{k} orders, mean posterior",
                         "accuracy": _accuracy(clf, clf.proba_from_log_joints(
                             lj, k, "posterior"), yte)})
    return rows


def _one_rep(bn, cv: str, ctx: dict, size: int, rep: int, p: dict) -> dict:
    """Fit one training sample; rows for the three tables and, if kept, its trace."""
    ci, feats, topo_clf, yte = ctx["ci"], ctx["feats"], ctx["topo_clf"], ctx["yte"]
    tr, resampled = _train_sample(bn, size, rep, ci)
    Xtr, ytr, ar = tr[:, feats], tr[:, ci], bn.arities[feats]
    t0 = time.perf_counter()
    clf = OrderMCMCBMA(n_iter=p["n_iter"], burn_in=p["burn_in"], n_orders=p["n_orders"],
                       max_parents=p["max_parents"], start="reversed", start_order=topo_clf,
                       reference_order=topo_clf, random_state=rep)
    clf.fit(Xtr, ytr, arities=ar)
    out = {"t_fit": time.perf_counter() - t0, "trace": None, "missing": []}
    out["spearman"] = {"class_variable": cv, "n_train": size, "rep": rep,
                       "spearman": float(clf.trace_["spearman"].iloc[p["burn_in"]:].mean()),
                       "acceptance_rate": clf.acceptance_rate_, "resampled": resampled}
    ref_log2 = clf.table_.order_log_score(np.asarray(topo_clf)) * LOG2E
    after = clf.trace_["log2_score"].iloc[p["burn_in"]:]
    out["scores"] = {"reference_log2": float(ref_log2), "max_log2_after_burn_in":
                     float(after.max()), "mean_log2_after_burn_in": float(after.mean())}
    if rep == p["first_rep"] and size in (min(p["sizes"]), max(p["sizes"])):
        out["trace"] = (clf.trace_, ref_log2)
    base = {"class_variable": cv, "n_train": size, "rep": rep}
    lj = clf.order_log_joints(ctx["Xte"])
    acc = _order_count_rows(clf, lj, p["compared"], base, yte)
    for name, order in (("original order", topo_clf), ("reversed order", topo_clf[::-1])):
        fo = FixedOrderBMA(order=order, max_parents=p["max_parents"]).fit(Xtr, ytr, arities=ar)
        acc.append({**base, "method": name,
                    "accuracy": float(np.mean(fo.predict(ctx["Xte"]) == yte))})
    acc.append({**base, "method": "Bayes optimal", "accuracy": ctx["optimal"]})
    out["accuracy"] = acc
    if size == p["missing_n_train"]:
        clf.set_params(predict_missing="impute")
        for pct, codes in ctx["miss_sets"].items():
            ljm = clf.order_log_joints(codes[:, feats])
            mb = {**base, "missing_pct": pct}
            out["missing"] += _order_count_rows(clf, ljm, p["compared"], mb, yte)
            out["missing"].append({**mb, "method": "Bayes optimal",
                                   "accuracy": ctx["optimal_missing"][pct]})
    return out


def _class_context(bn, cv: str, test_codes: np.ndarray, topo: list[int],
                   missing_pcts) -> dict:
    """Per class variable: feature indices, the topological order in classifier indices, the
    test set (complete and with masked features) and the Bayes-optimal accuracies."""
    n = bn.n_vars
    ci = bn.index(cv)
    feats = [i for i in range(n) if i != ci]
    to_clf = {v: j for j, v in enumerate(feats)}
    to_clf[ci] = len(feats)
    yte = test_codes[:, ci]
    post = bn.class_posterior(cv, test_codes)
    miss_sets = {pct: _mask_features(test_codes, ci, pct, np.random.default_rng(pct))
                 for pct in missing_pcts}
    return {"ci": ci, "feats": feats, "topo_clf": [to_clf[v] for v in topo],
            "Xte": test_codes[:, feats], "yte": yte,
            "optimal": float(np.mean(post.argmax(axis=1) == yte)), "miss_sets": miss_sets,
            "optimal_missing": {pct: float(np.mean(bn.class_posterior(cv, c).argmax(axis=1)
                                                   == yte)) for pct, c in miss_sets.items()}}


def summarize(res: dict[str, pd.DataFrame]) -> dict:
    """Means per cell, next to the paper's statements."""
    sp = res["spearman"].groupby(["class_variable", "n_train"])["spearman"].agg(["mean", "std"])
    acc = res["accuracy"].pivot_table(index=["class_variable", "n_train"], columns="method",
                                      values="accuracy", aggfunc="mean")
    out = {"spearman": {f"{a} n={b}": [round(m, 3), round(s, 3) if not math.isnan(s) else None]
                        for (a, b), (m, s) in sp.iterrows()},
           "accuracy": {f"{a} n={b}": {k: round(v, 4) for k, v in row.items()}
                        for (a, b), row in acc.iterrows()},
           "paper": PAPER}
    if len(res["missing"]):
        mi = res["missing"].pivot_table(index=["class_variable", "missing_pct"],
                                        columns="method", values="accuracy", aggfunc="mean")
        out["missing"] = {f"{a} {b}%": {k: round(v, 4) for k, v in row.items()}
                          for (a, b), row in mi.iterrows()}
    return out


# ---- the reproduction: grid, cell, report ----------------------------------------------
TITLE = "Hwang & Zhang (2005): BMA over multiple node orders on ALARM (Figs. 6, 7, 9)"
FULL = {"sizes": SIZES, "reps": 10, "n_test": 3000, "n_iter": 60000, "burn_in": 10000,
        "n_orders": 30, "max_parents": 3, "missing_pcts": MISSING_PCTS, "missing_n_train": 100}
QUICK = {"sizes": (25, 100, 1000), "reps": 2, "n_test": 1000, "n_iter": 4000, "burn_in": 1000,
         "n_orders": 10, "max_parents": 3, "missing_pcts": (10,), "missing_n_train": 100}
TEST_SEED = 123456  # the test set of alarm_orders.py
TRACE_POINTS = 800  # Fig. 5: stored points of a trace, over the whole run and its first part
TRACE_HEAD = 0.1  # Fig. 5(b, d): the initial portion shown enlarged, as a share of the run


def thin_trace(trace: pd.DataFrame, n_points: int = TRACE_POINTS,
               head: float = TRACE_HEAD) -> dict[str, list]:
    """A trace (``chain``, ``iteration``, ``log2_score``) thinned for storage: ``n_points``
    evenly spaced iterations per chain over the whole run plus as many over its first ``head``
    share (Fig. 5(b, d) enlarge that part), each chain's last iteration included."""
    parts = []
    for _, d in trace.groupby("chain", sort=True):
        n = len(d)
        idx = np.unique(np.concatenate([
            np.linspace(0, n - 1, n_points).round(),
            np.linspace(0, max(int(n * head) - 1, 0), n_points).round()]).astype(np.int64))
        parts.append(d.iloc[idx])
    t = pd.concat(parts)
    return {"chain": t["chain"].astype(int).tolist(),
            "iteration": t["iteration"].astype(int).tolist(),
            "log2_score": t["log2_score"].astype(float).tolist()}


def grid(quick: bool = False) -> list[dict]:
    """One cell per class variable × training size × repetition (paper: 2 × 5 × 10)."""
    s = QUICK if quick else FULL
    shared = {k: s[k] for k in ("n_test", "n_iter", "burn_in", "n_orders", "max_parents",
                                "missing_n_train")}
    shared["missing_pcts"] = list(s["missing_pcts"])
    # repetition 0 also stores its thinned trace (Fig. 5); the key says so, so a store filled
    # before traces were kept recomputes exactly these cells
    return [{"class_variable": cv, "n_train": n, "rep": rep, **shared,
             **({"trace_points": TRACE_POINTS} if rep == 0 else {})}
            for cv in CLASS_VARIABLES for n in s["sizes"] for rep in range(s["reps"])]


def config(quick: bool = False) -> dict:
    s = QUICK if quick else FULL
    return {"grid": "quick" if quick else "full (the paper's settings)", **{
        k: str(v) for k, v in s.items()}, "class variables": ", ".join(CLASS_VARIABLES),
        "scoring": "K2, Hwang-Zhang structure prior (eq. 13), max in-degree 3",
        "MCMC": "random swap of two positions, start = reversed topological order",
        "test set": f"{s['n_test']} rows sampled from ALARM (seed {TEST_SEED})",
        "confidence intervals": "95 % Student t over repetitions"}


@lru_cache(maxsize=4)
def _context(cv: str, n_test: int, missing_pcts: tuple[int, ...]):
    from bnma_core.network import load_network

    bn = load_network("alarm")
    test_codes = bn.sample_codes(n_test, seed=TEST_SEED)
    return bn, _class_context(bn, cv, test_codes, bn.topological_order(), missing_pcts)


def cell(key: dict) -> dict:
    """One repetition: Spearman row, accuracy rows, missing-value rows (JSON lists), the log2
    scores of Fig. 5 (reference order, best and mean after burn-in) and, when the key has
    ``trace_points``, the thinned trace (:func:`thin_trace`)."""
    bn, ctx = _context(key["class_variable"], key["n_test"], tuple(key["missing_pcts"]))
    trace = "trace_points" in key
    p = {"n_iter": key["n_iter"], "burn_in": key["burn_in"], "n_orders": key["n_orders"],
         "max_parents": key["max_parents"], "first_rep": key["rep"] if trace else -1,
         "sizes": [key["n_train"]],
         "missing_n_train": key["missing_n_train"],
         "compared": [k for k in N_ORDERS_COMPARED if k <= key["n_orders"]]}
    out = _one_rep(bn, key["class_variable"], ctx, key["n_train"], key["rep"], p)
    res = {"t_fit": out["t_fit"], "spearman": out["spearman"], "accuracy": out["accuracy"],
           "missing": out["missing"], "scores": out["scores"]}
    if trace:
        res["trace"] = thin_trace(out["trace"][0], int(key["trace_points"]))
    return res


def tables(cells: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The stored cells as the ``spearman`` / ``accuracy`` / ``missing`` frames of
    ``experiments/alarm_orders.py``, plus ``scores`` (Fig. 5's log2 scores per cell, from
    cells that store them) and ``traces`` (one row per stored trace point: class_variable,
    n_train, rep, chain, iteration, log2_score, reference_log2)."""
    res = list(cells["result"])
    keys = list(cells["key"])
    scores = [{**{c: k[c] for c in ("class_variable", "n_train", "rep")}, **r["scores"]}
              for k, r in zip(keys, res, strict=True) if "scores" in r]
    traces = [pd.DataFrame({**{c: k[c] for c in ("class_variable", "n_train", "rep")},
                            **r["trace"], "reference_log2": r["scores"]["reference_log2"]})
              for k, r in zip(keys, res, strict=True) if "trace" in r]
    return {"spearman": pd.DataFrame([r["spearman"] for r in res]),
            "accuracy": pd.DataFrame([row for r in res for row in r["accuracy"]]),
            "missing": pd.DataFrame([row for r in res for row in r["missing"]]),
            "scores": pd.DataFrame(scores),
            "traces": pd.concat(traces, ignore_index=True) if traces else pd.DataFrame()}


def _paired(acc: pd.DataFrame, a: str, b: str, by: list[str]) -> pd.DataFrame:
    """Mean and 95 % CI of accuracy(a) − accuracy(b), paired over repetitions."""
    from .report import mean_ci

    piv = acc.pivot_table(index=[*by, "rep"], columns="method", values="accuracy")
    if a not in piv or b not in piv:
        return pd.DataFrame()
    d = (piv[a] - piv[b]).rename("diff").reset_index()
    rows = []
    for g, sub in d.groupby(by):
        m, h = mean_ci(sub["diff"])
        rows.append({**dict(zip(by, g if isinstance(g, tuple) else (g,), strict=True)),
                     "mean": m, "ci95": h, "n": len(sub)})
    return pd.DataFrame(rows)


def _status(ok: bool, paired: pd.DataFrame) -> str:
    from .report import over_repetitions

    return over_repetitions(ok, int(paired["n"].min()))[0]


def _why(status: str) -> str:
    from .report import MIN_REPETITIONS, NOT_CHECKABLE

    return (f"fewer than {MIN_REPETITIONS} repetitions per point: too few to decide (run the "
            "full grid)" if status == NOT_CHECKABLE else "")


def _trace_claim(scores: pd.DataFrame) -> dict:
    """Fig. 5: after burn-in every chain finds an order scoring as well as ALARM's own."""
    from .report import NOT_CHECKABLE, NOT_REPRODUCED, REPRODUCED, claim

    text = ("after burn-in the sampled orders score as well as an original order of ALARM "
            "(Fig. 5)")
    paper = "best log2 P(≺, D) after burn-in ≥ the original order's"
    if scores.empty:
        return claim(text, paper, "no scores stored", NOT_CHECKABLE,
                     "the stored cells predate the Fig. 5 scores; rerun with --fresh")
    gap = scores["max_log2_after_burn_in"] - scores["reference_log2"]
    ok = bool((gap >= 0).all())
    by_n = gap.groupby(scores["n_train"]).agg(["min", "median"])
    desc = "; ".join(f"n={n}: min {r['min']:+.1f}, median {r['median']:+.1f}"
                     for n, r in by_n.iterrows())
    return claim(text, paper, f"best − original order, log2 ({(gap >= 0).sum()} of {len(gap)} "
                 f"runs ≥ 0): {desc}", REPRODUCED if ok else NOT_REPRODUCED,
                 "" if ok else "some chains stay below the original order's score after "
                 "burn-in")


def check_claims(t: dict[str, pd.DataFrame]) -> list[dict]:
    """The paper's claims (Figs. 6, 7, 9 and the traces) against our tables."""
    return ([_trace_claim(t.get("scores", pd.DataFrame()))] + _spearman_claims(t["spearman"])
            + _accuracy_claims(t))


def _spearman_claims(sp: pd.DataFrame) -> list[dict]:
    """Fig. 6: rank correlation of the sampled orders with ALARM's, by training size."""
    from .report import NOT_CHECKABLE, claim, mean_ci, over_repetitions

    out: list[dict] = []
    by_n = sp.groupby("n_train")["spearman"].apply(list)
    small, large = min(by_n.index), max(by_n.index)
    m, h = mean_ci(by_n[small])
    text = "orders sampled from 25 rows hardly resemble ALARM's order (Fig. 6: Spearman < 0.1)"
    if small != 25:
        out.append(claim(text, "< 0.1 at n = 25", f"smallest n = {small}", NOT_CHECKABLE,
                         "n = 25 is not in this grid"))
    else:  # the rule of every claim over repetitions (report.over_repetitions)
        out.append(claim(text, "< 0.1 at n = 25", f"{m:.3f} ± {h:.3f} (95 % CI)",
                         *over_repetitions(m < 0.1, len(by_n[small]), "the mean is above 0.1")))
    m2, h2 = mean_ci(by_n[large])
    text = "with 500-1000 rows the Spearman correlation reaches about 0.5 (Fig. 6)"
    if large < 500:
        out.append(claim(text, "≈ 0.5", f"largest n = {large}", NOT_CHECKABLE,
                         "no training size ≥ 500 in this grid"))
    else:
        ok = 0.4 <= m2 <= 0.6
        out.append(claim(text, "≈ 0.5", f"n = {large}: {m2:.3f} ± {h2:.3f} (95 % CI)",
                         *over_repetitions(
                             ok, len(by_n[large]), "lower level; the reference is one "
                             "topological order of ALARM, which fixes only a partial order "
                             "(random linear extensions of the true DAG reach only 0.75 ± 0.10 "
                             "with it), so the level depends on that choice")))
    ok = m2 > m
    out.append(claim("the correlation rises with the training size (Fig. 6)", "rising",
                     f"{m:.3f} at n = {small} → {m2:.3f} at n = {large}",
                     *over_repetitions(ok, min(len(by_n[small]), len(by_n[large])),
                                       "it does not rise")))
    return out


def _accuracy_claims(t: dict[str, pd.DataFrame]) -> list[dict]:
    """Figs. 7 and 9: several orders vs one, original vs reversed order, missing values."""
    from .report import NOT_CHECKABLE, claim

    out: list[dict] = []
    acc = t["accuracy"]
    present = [k for k in N_ORDERS_COMPARED if f"{k} orders" in set(acc["method"])]
    many = 10 if 10 in present else max(present, default=None)  # the paper compares 10 with 1
    text = ("BMA over several orders is at least as accurate as over one order at every size, "
            "most so at n = 50-100 (Fig. 7)")
    if many is None:
        out.append(claim(text, "10 orders ≥ 1 order", "one order only", NOT_CHECKABLE, ""))
    else:
        d = _paired(acc, f"{many} orders", "1 order", ["class_variable", "n_train"])
        worse = d[d["mean"] + d["ci95"] < 0]
        better = d[(d["mean"] - d["ci95"] > 0)]
        ok = worse.empty and not better.empty
        status = _status(ok, d)
        desc = "; ".join(f"{r.class_variable} n={r.n_train}: {r.mean:+.3f} ± {r.ci95:.3f}"
                         for r in d.itertuples())
        out.append(claim(text, f"{many} orders ≥ 1 order, gap largest at n = 50-100",
                         f"{many} − 1 orders, paired (95 % CI): {desc}", status,
                         _why(status) or ("" if ok else "the differences are within noise and not "
                                          "consistently signed (no size where several orders "
                                          "are significantly better)")))
    d = _paired(acc, "original order", "reversed order", ["class_variable", "n_train"])
    if d.empty:
        out.append(claim("the original order beats the reversed order (Fig. 7)", "", "",
                         NOT_CHECKABLE, "no fixed-order rows"))
    else:
        big = d[d["n_train"] >= 100]
        ok = (big["mean"] >= 0).all() and (big["mean"] - big["ci95"] > 0).any()
        desc = "; ".join(f"{r.class_variable} n={r.n_train}: {r.mean:+.3f} ± {r.ci95:.3f}"
                         for r in big.itertuples())
        out.append(claim("with n ≥ 100 the original (topological) order beats the reversed one "
                         "(Fig. 7)", "original best, reversed worst",
                         f"original − reversed (95 % CI): {desc}", _status(ok, big),
                         _why(_status(ok, big)) or (
                             "" if ok else "not significantly better at any size ≥ 100")))
    mi = t["missing"]
    text = ("with missing test values several orders beat a single order, more so as the "
            "missing share grows (Fig. 9)")
    if mi.empty or many is None:
        out.append(claim(text, "multiple > single", "not run", NOT_CHECKABLE,
                         "no missing-value rows in this grid"))
    else:
        d = _paired(mi, f"{many} orders", "1 order", ["class_variable", "missing_pct"])
        ok = (d["mean"] - d["ci95"] > 0).any() and (d["mean"] + d["ci95"] >= 0).all()
        desc = "; ".join(f"{r.class_variable} {r.missing_pct}%: {r.mean:+.3f} ± {r.ci95:.3f}"
                         for r in d.itertuples())
        out.append(claim(text, "multiple > single, gap grows with the share",
                         f"{many} − 1 orders (95 % CI): {desc}", _status(ok, d),
                         _why(_status(ok, d)) or (
                             "" if ok else "no significant advantage of several orders")))
    return out


def _trace_sections(traces: pd.DataFrame, burn_in: int | None) -> list[tuple[str, object]]:
    """Fig. 5: per class variable, the stored traces at the smallest and largest training
    size, the whole run (a, c) and its initial portion (b, d), with the original order's
    score dashed."""
    from bnma_core.viz.mcmc import trace_figure

    if traces.empty:
        return [("Fig. 5: order-MCMC traces", "No trace is stored in these cells (they were "
                 "computed before traces were kept); rerun with --fresh to draw Fig. 5.")]
    out: list[tuple[str, object]] = []
    for (cv, n), d in traces.groupby(["class_variable", "n_train"], sort=True):
        if n not in (traces["n_train"].min(), traces["n_train"].max()):
            continue
        ref = float(d["reference_log2"].iloc[0])
        head = int(d["iteration"].max() * TRACE_HEAD)
        out.append((f"Fig. 5: order-MCMC trace, class {cv}, n = {n}", trace_figure(
            d, reference_log2=ref, burn_in=burn_in,
            title=f"Fig. 5: log2 P(order, D), class {cv}, n = {n} (whole run)")))
        out.append((f"Fig. 5: initial portion, class {cv}, n = {n}", trace_figure(
            d[d["iteration"] <= head], reference_log2=ref,
            burn_in=burn_in if burn_in and burn_in <= head else None,
            title=f"Fig. 5: first {head:,} iterations, class {cv}, n = {n}")))
    return out


def report(cells: pd.DataFrame, meta: dict) -> str:
    """Claims, Fig. 5 traces, Spearman and accuracy tables with 95 % CIs, Figs. 6, 7, 9."""
    from bnma_core.viz.mcmc import orders_accuracy_figure, rank_correlation_figure

    from .report import build_report, mean_ci

    t = tables(cells)
    claims = check_claims(t)
    sp = t["spearman"]
    rows = []
    for (cv, n), g in sp.groupby(["class_variable", "n_train"]):
        m, h = mean_ci(g["spearman"])
        rows.append({"class": cv, "n train": n, "Spearman (95 % CI)": f"{m:.3f} ± {h:.3f}",
                     "paper": {25: "< 0.1", 500: "≈ 0.5", 1000: "≈ 0.5"}.get(n, ""),
                     "reps": len(g)})
    acc = t["accuracy"].pivot_table(index=["class_variable", "n_train"], columns="method",
                                    values="accuracy", aggfunc="mean")
    sections: list[tuple[str, object]] = [
        *_trace_sections(t["traces"], int(cells["key"].iloc[0]["burn_in"]) or None),
        ("Fig. 6: Spearman correlation with ALARM's order", pd.DataFrame(rows)),
        ("Fig. 6", rank_correlation_figure(sp)),
        ("Fig. 7: accuracy on the test set (mean over repetitions)", acc)]
    for cv in t["accuracy"]["class_variable"].unique():
        d = t["accuracy"][t["accuracy"]["class_variable"] == cv]
        sections.append((f"Fig. 7: class {cv}",
                         orders_accuracy_figure(d, title=f"Fig. 7: accuracy, class {cv}")))
    if len(t["missing"]):
        mi = t["missing"].pivot_table(index=["class_variable", "missing_pct"],
                                      columns="method", values="accuracy", aggfunc="mean")
        sections.append(("Fig. 9: accuracy with missing test values (random imputation)", mi))
        for cv in t["missing"]["class_variable"].unique():
            d = t["missing"][t["missing"]["class_variable"] == cv]
            sections.append((f"Fig. 9: class {cv}", orders_accuracy_figure(
                d, x="missing_pct", title=f"Fig. 9: missing test values, class {cv}")))
    sections.append(("Paper's statements", pd.Series(PAPER, name="paper")))
    return build_report(TITLE, claims, sections, meta.pop("config", {}), meta)
