"""Exact queries on a :class:`~bnma_core.network.DiscreteBN`.

Every elimination goes through :mod:`bnma_core.factors` (variable elimination on the ancestral
set of the query and evidence, min-fill order; Zhang & Poole 1994; Koller & Friedman 2009,
alg. 9.1): the network hands over its CPTs as a :class:`~bnma_core.factors.FactorModel`
(:meth:`DiscreteBN.factor_model`), this module validates and normalises.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..factors import class_log_posterior, log_joint_batch

if TYPE_CHECKING:
    from .model import DiscreteBN

__all__ = ["class_posterior", "log_prob", "marginals", "normalised_posterior", "posterior"]


def normalised_posterior(log_p: np.ndarray) -> np.ndarray:
    """Rows of log P(target, evidence) -> probabilities; zero-probability rows raise."""
    m = log_p.max(axis=1, keepdims=True)
    bad = ~np.isfinite(m).ravel()
    if bad.any():
        raise ValueError(f"{int(bad.sum())} evidence row(s) have probability zero under the "
                         "network (the observed values cannot occur together).")
    p = np.exp(log_p - m)
    return p / p.sum(axis=1, keepdims=True)


def log_prob(bn: DiscreteBN, codes: np.ndarray) -> np.ndarray:
    """log P(x) of complete (validated) rows: sum_i log theta_i(x_i | x_pa(i))."""
    fm = bn.factor_model()
    out = np.zeros(codes.shape[0])
    for i, pa in enumerate(fm.parents):
        j = codes[:, pa] @ fm.strides(i) if len(pa) else 0
        out += fm.log_cpts[i][j, codes[:, i]]
    return out


def posterior(bn: DiscreteBN, t: int, obs: Sequence[int], vals: Sequence[int]) -> np.ndarray:
    """P(t | x_obs = vals) for one evidence set (indices already validated)."""
    ev = np.array([list(vals)], dtype=np.int64).reshape(1, len(obs))
    return normalised_posterior(log_joint_batch(bn.factor_model(), t, list(obs), ev))[0]


def marginals(bn: DiscreteBN) -> list[np.ndarray]:
    """Prior marginals P(X_i) of every node."""
    fm = bn.factor_model()
    none = np.zeros((1, 0), np.int64)
    return [normalised_posterior(log_joint_batch(fm, i, [], none))[0] for i in range(bn.n_vars)]


def class_posterior(bn: DiscreteBN, t: int, codes: np.ndarray) -> np.ndarray:
    """P(t | observed values) per row of validated codes (-1 = unobserved)."""
    return normalised_posterior(class_log_posterior(bn.factor_model(), t, codes, validate=False))
