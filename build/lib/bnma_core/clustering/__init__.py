"""Clustering with Bayesian networks and a latent cluster variable (DESIGN §6).

EMA-TAN (Santafé, Lozano & Larrañaga: model averaging over TAN models for clustering) and the
paper's baselines EMA, EM-TAN and EM-BNET, scikit-learn style (``fit``, ``predict``,
``predict_proba``, ``score``, ``bic``); :func:`cluster_accuracy` matches clusters to known
classes (Hungarian algorithm).
"""

from __future__ import annotations

from typing import Any

from .base import CollapsedStartWarning, cluster_accuracy, expand_missing
from .estimators import EMA, EMATAN, EMBNET, EMTAN

#: Registered clustering methods: short name -> (class, one-line description).
CLUSTERERS: dict[str, tuple[type, str]] = {
    "ematan": (EMATAN, "EMA-TAN: average over every TAN model consistent with an order "
                       "(Santafé, Lozano & Larrañaga)."),
    "ema": (EMA, "EMA: average over the selective naive Bayes models (Santafé et al. 2006)."),
    "emtan": (EMTAN, "EM-TAN: structural EM learning one TAN per iteration "
                     "(Friedman et al. 1997 inside EM)."),
    "embnet": (EMBNET, "EM-BNET: parameter EM for the complete network consistent with an "
                       "order."),
}


def make_clusterer(name: str, **params: Any):
    """A new, unfitted clusterer registered as ``name`` (``ematan``, ``ema``, ``emtan``,
    ``embnet``)."""
    try:
        cls = CLUSTERERS[name][0]
    except KeyError:
        raise ValueError(f"Unknown clustering method {name!r}; available: "
                         f"{', '.join(CLUSTERERS)}.") from None
    return cls(**params)


__all__ = ["CLUSTERERS", "EMA", "EMATAN", "EMBNET", "EMTAN", "CollapsedStartWarning",
           "cluster_accuracy", "expand_missing", "make_clusterer"]
