"""Convergence diagnostics of order MCMC as ArviZ defines them (Vehtari, Gelman, Simpson,
Carpenter & Bürkner 2021; DESIGN §11 and §14).

Every number comes from ArviZ's own functions (``arviz_stats.base.array_stats``): the
rank-normalised split R-hat (max of the bulk and the folded, tail, version), the bulk and tail
effective sample sizes, the Monte Carlo standard error of a mean, the autocorrelation and the
pooled ranks of a rank plot. They are computed for the order log score and for every edge
indicator; the verdict uses the thresholds Vehtari et al. (2021) recommend: R-hat ≤ 1.01
and bulk and tail ESS ≥ 400 from at least 4 chains.

**Edge indicators.** For each post-burn-in order ≺_t recorded by
:class:`~bnma_core.structure.orders.OrderMCMC` the trace holds the order-conditional edge
posterior P(y -> x | D, ≺_t) (DESIGN §4), not the arcs of the order's best network. The
conditional probability is the expectation, given the order, of the 0/1 indicator of a DAG
drawn from P(G | ≺_t, D) (the DAG samples BiDAG takes per order), so its average over the
chain estimates the same edge posterior P(y -> x | D) with less variance (Rao-Blackwell), and
that average is exactly the edge posterior the library reports
(:class:`~bnma_core.classifiers.order_bma.OrderMCMCBMA`); the MCSE is then the Monte Carlo
error of the reported number. The best network's arcs are a maximum, not a draw: their
average is not the edge posterior, so its MCSE would measure the wrong quantity.

**Settled edges.** Rank normalisation is scale free: a trace varying by 1e-9 gets the same
R-hat as one varying by 0.5. An edge whose conditional probability varies by less than
``settled`` (default 0.001) over all draws of all chains cannot move its reported posterior by
more than that, so it is reported as settled (R-hat and ESS not computed, NaN) and left out of
the verdict; its MCSE is still computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

RHAT_MAX = 1.01
ESS_MIN = 400.0
MIN_CHAINS = 4
MIN_DRAWS = 8
TAIL_PROB = 0.05  # tail ESS: the smaller of the 5 % and 95 % quantile ESS
SETTLED = 1e-3
N_LEAST = 5
MAX_LAG = 100
N_BINS = 20


def _az():
    """ArviZ's array functions, imported when first used (the import takes ~0.6 s)."""
    from arviz_stats.base import array_stats

    return array_stats


@dataclass
class QuantityDiagnostics:
    """ArviZ diagnostics of one scalar trace ``draws`` (n_chains, n_draws): rank-normalised
    split ``rhat``, ``ess_bulk``, ``ess_tail``, posterior ``mean`` and its ``mcse``,
    ``autocorrelation`` per chain (lags 0..max_lag) and ``rank_counts`` (n_chains, n_bins):
    how many of a chain's draws fall in each bin of the ranks pooled over all chains (a rank
    plot; each count is near n_draws / n_bins when the chains agree)."""

    name: str
    draws: np.ndarray
    rhat: float
    ess_bulk: float
    ess_tail: float
    mean: float
    mcse: float
    autocorrelation: np.ndarray
    rank_counts: np.ndarray


@dataclass
class ConvergenceReport:
    """What :func:`convergence_diagnostics` found.

    ``log_score``: the order log score's :class:`QuantityDiagnostics`. ``edges``: one row per
    ordered pair (parent, child) with the edge ``posterior`` (mean over all draws), its
    ``mcse``, ``rhat``, ``ess_bulk``, ``ess_tail``, the ``range`` of its trace and whether it
    is ``settled`` (see the module docstring). ``least_converged``: the diagnostics (with
    traces, autocorrelation and rank counts) of the ``n_least`` edges with the largest R-hat.
    ``concordance``: edge posteriors of two independent halves of the chains (``run_a``:
    chains 0..k/2-1, ``run_b``: the others) per edge, with their ``difference`` (BiDAG's
    ``plotpcor`` scatter). ``converged`` / ``verdict``: the plain-words judgement with its
    reasons in ``problems``.
    """

    n_chains: int
    n_draws: int
    n_edge_draws: int
    log_score: QuantityDiagnostics
    edges: pd.DataFrame
    least_converged: list[QuantityDiagnostics]
    concordance: pd.DataFrame
    converged: bool
    verdict: str
    problems: list[str] = field(default_factory=list)
    rhat_max: float = RHAT_MAX
    ess_min: float = ESS_MIN

    @property
    def max_concordance_difference(self) -> float:
        """Largest |run_a - run_b| over the edges (0 without edges)."""
        if len(self.concordance) == 0:
            return 0.0
        return float(self.concordance["difference"].abs().max())


def _quantity(name: str, draws: np.ndarray, max_lag: int, n_bins: int) -> QuantityDiagnostics:
    az = _az()
    x = np.asarray(draws, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rhat = float(az.rhat(x, method="rank"))
        ess_bulk = float(az.ess(x, method="bulk"))
        ess_tail = float(az.ess(x, method="tail", prob=TAIL_PROB))
        mcse = float(az.mcse(x, method="mean"))
        acf = az.autocorr(x, axis=-1)[:, : max_lag + 1]
    return QuantityDiagnostics(name, x, rhat, ess_bulk, ess_tail, float(x.mean()), mcse, acf,
                               rank_counts(x, n_bins))


def rank_counts(draws: np.ndarray, n_bins: int = N_BINS) -> np.ndarray:
    """Rank-plot data (Vehtari et al. 2021): the draws of all chains ranked together by
    ArviZ (``compute_ranks``, ties averaged), and for each chain the number of its draws whose
    rank falls in each of ``n_bins`` equal bins of 1..N. Returns (n_chains, n_bins) counts."""
    x = np.asarray(draws, dtype=float)
    ranks = _az().compute_ranks(x, axis=(0, 1))
    total = x.size
    edges = np.linspace(0.5, total + 0.5, n_bins + 1)
    return np.stack([np.histogram(r, bins=edges)[0] for r in ranks])


def edge_concordance(posterior_a: np.ndarray, posterior_b: np.ndarray,
                     names: Sequence[str] | None = None) -> pd.DataFrame:
    """Edge posteriors of two independent runs side by side, one row per ordered pair
    (parent, child), parent ≠ child: ``run_a``, ``run_b`` and ``difference`` = run_a - run_b
    (the points of BiDAG's ``plotpcor``: on the diagonal when both runs agree)."""
    a = np.asarray(posterior_a, dtype=float)
    b = np.asarray(posterior_b, dtype=float)
    if a.shape != b.shape or a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("Both runs' edge posteriors must be square arrays of the same size "
                         f"(got {a.shape} and {b.shape}).")
    n = a.shape[0]
    labels = _labels(names, n)
    y, x = np.nonzero(~np.eye(n, dtype=bool))
    return pd.DataFrame({"parent": [labels[i] for i in y], "child": [labels[i] for i in x],
                         "run_a": a[y, x], "run_b": b[y, x], "difference": a[y, x] - b[y, x]})


def _labels(names: Sequence[str] | None, n: int) -> list:
    if names is None:
        return list(range(n))
    if len(names) != n:
        raise ValueError(f"Got {len(names)} names for {n} variables; give one name per "
                         "variable.")
    return list(names)


def _check_traces(log_score: np.ndarray, edges: np.ndarray | None) -> None:
    if log_score.ndim != 2:
        raise ValueError("The log-score traces must be an array (n_chains, n_draws).")
    n_chains, n_draws = log_score.shape
    if n_chains < MIN_CHAINS:
        raise ValueError(f"Convergence diagnostics need at least {MIN_CHAINS} chains (got "
                         f"{n_chains}); run order MCMC with n_chains={MIN_CHAINS} or more.")
    if n_draws < MIN_DRAWS:
        raise ValueError(f"Convergence diagnostics need at least {MIN_DRAWS} post-burn-in "
                         f"draws per chain (got {n_draws}); run more iterations after the "
                         "burn-in.")
    if not np.isfinite(log_score).all():
        raise ValueError("The log-score traces contain values that are not finite; pass "
                         "the traces of a run that has finished its burn-in.")
    if edges is None:
        return
    if edges.ndim != 4 or edges.shape[0] != n_chains or edges.shape[2] != edges.shape[3]:
        raise ValueError("The edge traces must be an array (n_chains, n_draws, n, n) with "
                         "the log score's number of chains.")
    if edges.shape[1] < MIN_DRAWS:
        raise ValueError(f"Convergence diagnostics need at least {MIN_DRAWS} recorded orders "
                         f"per chain after the burn-in (got {edges.shape[1]}); record orders "
                         "more often (a smaller trace_every) or run longer.")


def convergence_diagnostics(log_score: np.ndarray, edges: np.ndarray | None = None,
                            names: Sequence[str] | None = None, *,
                            rhat_max: float = RHAT_MAX, ess_min: float = ESS_MIN,
                            settled: float = SETTLED, n_least: int = N_LEAST,
                            max_lag: int = MAX_LAG, n_bins: int = N_BINS
                            ) -> ConvergenceReport:
    """Rank-normalised split R-hat, bulk / tail ESS, MCSE, autocorrelation and rank plots of
    order-MCMC chains, by ArviZ, with a verdict (Vehtari et al. 2021).

    Parameters
    ----------
    log_score : (n_chains, n_draws) array
        The order log score log P(≺, D) of every post-burn-in iteration of each chain
        (:meth:`OrderMCMC.log_score_traces`); at least 4 chains.
    edges : (n_chains, n_edge_draws, n, n) array, optional
        ``edges[c, t, y, x]`` = P(y -> x | D, ≺_t) of chain c's t-th recorded post-burn-in
        order (:meth:`OrderMCMC.edge_traces`); why the order-conditional probabilities and not
        the best network's arcs: see the module docstring.
    names : sequence of str, optional
        Variable names for the edge table.
    rhat_max, ess_min : float
        The verdict's thresholds: R-hat ≤ 1.01 and bulk and tail ESS ≥ 400 (Vehtari et al.
        2021: 4 chains, ESS ≥ 100 per chain).
    settled : float
        Edges whose trace varies by less than this over all draws are settled: reported, but
        without R-hat / ESS and not judged (module docstring).
    n_least, max_lag, n_bins : int
        Edges kept with full traces (largest R-hat first), autocorrelation lags, rank-plot
        bins.

    Returns
    -------
    ConvergenceReport
    """
    az = _az()
    ls = np.asarray(log_score, dtype=float)
    ed = None if edges is None else np.asarray(edges, dtype=float)
    _check_traces(ls, ed)
    n_chains = ls.shape[0]
    score = _quantity("log score", ls, max_lag, n_bins)
    problems = _score_problems(score, rhat_max, ess_min)
    if ed is None:
        table = pd.DataFrame(columns=["parent", "child", "posterior", "mcse", "rhat",
                                      "ess_bulk", "ess_tail", "range", "settled"])
        least, conc, n_edge_draws, n_judged = [], edge_concordance(np.zeros((0, 0)),
                                                                   np.zeros((0, 0))), 0, 0
    else:
        n_edge_draws = ed.shape[1]
        table, least, conc, edge_problems = _edge_diagnostics(
            az, ed, names, rhat_max=rhat_max, ess_min=ess_min, settled=settled,
            n_least=n_least, max_lag=max_lag, n_bins=n_bins)
        n_judged = int((~table["settled"]).sum())
        problems += edge_problems
    converged = not problems
    verdict = _verdict(problems, n_judged if ed is not None else None, n_chains,
                       rhat_max, ess_min)
    return ConvergenceReport(n_chains, ls.shape[1], n_edge_draws, score, table, least, conc,
                             converged, verdict, problems, rhat_max, ess_min)


def _score_problems(score: QuantityDiagnostics, rhat_max: float, ess_min: float) -> list:
    """The verdict's complaints about the log score's R-hat and bulk / tail ESS (Vehtari et
    al. 2021), as sentences; empty when it passes.

    Parameters
    ----------
    score : QuantityDiagnostics
        The log score's diagnostics.
    rhat_max, ess_min : float
        Thresholds of :func:`convergence_diagnostics`.

    Returns
    -------
    list of str
    """
    problems = []
    if not np.isfinite(score.rhat):
        problems.append("the R-hat of the log score cannot be computed (no variation within "
                        "the chains)")
    elif score.rhat > rhat_max:
        problems.append(f"the R-hat of the log score is {score.rhat:.3f} (above {rhat_max})")
    low = min(score.ess_bulk, score.ess_tail)
    if not low >= ess_min:
        problems.append(f"the log score's effective sample size is {low:.0f} (below "
                        f"{ess_min:.0f})")
    return problems


def _edge_table(az, ed: np.ndarray, labels: list, settled: float):
    """Per-edge posterior, MCSE, rank-normalised R-hat and bulk / tail ESS of the edge traces;
    settled edges (range below ``settled``) get no R-hat / ESS (module docstring).

    Parameters
    ----------
    az : module
        ArviZ (stats).
    ed : (n_chains, n_edge_draws, n, n) array
        Edge traces, as in :func:`convergence_diagnostics`.
    labels : list of str
        Variable names.
    settled : float
        Range below which an edge is settled.

    Returns
    -------
    table : DataFrame
        One row per ordered pair y != x.
    flat : (n_pairs, n_chains, n_edge_draws) array
        The traces of those pairs, in the table's row order.
    y, x : arrays of int
        Parent and child index of each row.
    """
    n = ed.shape[2]
    y, x = np.nonzero(~np.eye(n, dtype=bool))
    flat = np.moveaxis(ed[:, :, y, x], -1, 0)  # (n_pairs, n_chains, n_draws)
    rng_ = flat.max(axis=(1, 2)) - flat.min(axis=(1, 2))
    moving = rng_ >= settled
    nan = np.full(len(y), np.nan)
    rhat, ess_b, ess_t = nan.copy(), nan.copy(), nan.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        mcse = np.asarray(az.mcse(flat, method="mean"), dtype=float)
        if moving.any():
            sub = flat[moving]
            rhat[moving] = az.rhat(sub, method="rank")
            ess_b[moving] = az.ess(sub, method="bulk")
            ess_t[moving] = az.ess(sub, method="tail", prob=TAIL_PROB)
    table = pd.DataFrame({
        "parent": [labels[i] for i in y], "child": [labels[i] for i in x],
        "posterior": flat.mean(axis=(1, 2)), "mcse": mcse, "rhat": rhat,
        "ess_bulk": ess_b, "ess_tail": ess_t, "range": rng_, "settled": ~moving})
    return table, flat, y, x


def _edge_diagnostics(az, ed: np.ndarray, names: Sequence[str] | None, *, rhat_max: float,
                      ess_min: float, settled: float, n_least: int, max_lag: int,
                      n_bins: int):
    """The edge part of :func:`convergence_diagnostics`: the edge table, the least-converged
    edges with full traces, the split-half concordance and the verdict's complaints.

    Parameters
    ----------
    az : module
        ArviZ (stats).
    ed : (n_chains, n_edge_draws, n, n) array
        Edge traces.
    names : sequence of str, optional
        Variable names.
    rhat_max, ess_min, settled : float
    n_least, max_lag, n_bins : int
        As in :func:`convergence_diagnostics`.

    Returns
    -------
    table : DataFrame
    least : list of QuantityDiagnostics
    conc : DataFrame
        :func:`edge_concordance` of the two halves of the chains.
    problems : list of str
    """
    labels = _labels(names, ed.shape[2])
    table, flat, y, x = _edge_table(az, ed, labels, settled)
    moving = ~table["settled"].to_numpy()
    rhat = table["rhat"].to_numpy()
    n_judged = int(moving.sum())
    problems = []
    # how unconverged each edge looks: R-hat, an undefined one among the worst, settled
    # edges last
    key = np.where(moving, np.where(np.isnan(rhat), np.inf, rhat), -np.inf)
    bad_rhat = moving & ~(rhat <= rhat_max)
    if bad_rhat.any():
        worst = int(np.argmax(key))
        value = "undefined" if np.isnan(rhat[worst]) else f"{rhat[worst]:.3f}"
        problems.append(f"{int(bad_rhat.sum())} of {n_judged} varying edges have R-hat "
                        f"above {rhat_max} (worst {labels[y[worst]]} -> "
                        f"{labels[x[worst]]}: {value})")
    low_e = np.fmin(table["ess_bulk"].to_numpy(), table["ess_tail"].to_numpy())
    bad_ess = moving & ~(low_e >= ess_min)
    if bad_ess.any():
        problems.append(f"{int(bad_ess.sum())} of {n_judged} varying edges have an "
                        f"effective sample size below {ess_min:.0f} (smallest "
                        f"{np.nanmin(np.where(moving, low_e, np.inf)):.0f})")
    order = np.argsort(-key, kind="stable")[: min(n_least, n_judged)]
    least = [_quantity(f"{labels[y[k]]} -> {labels[x[k]]}", flat[k], max_lag, n_bins)
             for k in order]
    half = ed.shape[0] // 2
    conc = edge_concordance(ed[:half].mean(axis=(0, 1)), ed[half:].mean(axis=(0, 1)), names)
    return table, least, conc, problems


def _verdict(problems: list, n_judged: int | None, n_chains: int, rhat_max: float,
             ess_min: float) -> str:
    """The one-paragraph verdict of :func:`convergence_diagnostics`.

    Parameters
    ----------
    problems : list of str
        The complaints; none means converged.
    n_judged : int or None
        Varying edges judged; None when no edge traces were given.
    n_chains : int
    rhat_max, ess_min : float

    Returns
    -------
    str
    """
    if problems:
        text = "; ".join(problems)
        return f"Not yet converged: run longer / more chains. {text[0].upper()}{text[1:]}."
    what = "the log score" + (f" and all {n_judged} varying edges" if n_judged is not None
                              else "")
    return (f"Converged: R-hat ≤ {rhat_max} and bulk and tail ESS ≥ {ess_min:.0f} "
            f"for {what} ({n_chains} chains).")


def kept_orders_diagnostics(model, **kwargs) -> ConvergenceReport:
    """:func:`convergence_diagnostics` of a fitted
    :class:`~bnma_core.classifiers.order_bma.OrderMCMCBMA` (also a stopped one) from what it
    keeps: the log score of every post-burn-in iteration (``trace_``, converted from log2 to
    natural log) and, as edge traces, the order-conditional edge posteriors
    P(y -> x | D, ≺_t) of the orders each chain kept (``mcmc_result_``; ``n_orders`` per
    chain, at least 8 needed). Those kept orders are the draws the model averages, so each
    edge's MCSE is the Monte Carlo error of the edge posterior the model reports
    (``edge_posterior_``). Every chain is cut to the shortest; ``kwargs`` go to
    :func:`convergence_diagnostics`; at least 4 chains are needed."""
    from ..kernels.orders import orders_edge_probabilities

    res = model.mcmc_result_
    trace = model.trace_
    n_chains = int(trace["chain"].max()) + 1 if len(trace) else 0
    post = trace[trace["iteration"] > model.burn_in]
    scores = [post.loc[post["chain"] == c, "log2_score"].to_numpy() * np.log(2.0)
              for c in range(n_chains)]
    draws = min((len(s) for s in scores), default=0)
    log_score = np.stack([s[:draws] for s in scores]) if scores else np.zeros((0, 0))
    kept = [res.orders[res.order_chain == c] for c in range(n_chains)]
    n_kept = min((len(k) for k in kept), default=0)
    tab = model.table_.arrays()
    edges = (np.stack([orders_edge_probabilities(tab, np.ascontiguousarray(k[:n_kept]))
                       for k in kept]) if n_kept else None)
    if edges is None and n_chains >= MIN_CHAINS:
        raise ValueError("No order was kept after the burn-in; run more iterations after "
                         "the burn-in.")
    return convergence_diagnostics(log_score, edges, list(model.variable_names_), **kwargs)
