"""Clustering with Bayesian networks and a latent cluster variable (DESIGN §6).

EMA-TAN (Santafé, Lozano & Larrañaga: model averaging over TAN models for clustering) and the
paper's baselines EMA, EM-TAN and EM-BNET, scikit-learn style (``fit``, ``predict``,
``predict_proba``, ``score``, ``bic``); :func:`cluster_accuracy` matches clusters to known
classes (Hungarian algorithm).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import CollapsedStartWarning, cluster_accuracy, expand_missing
from .estimators import EMA, EMATAN, EMBNET, EMTAN


@dataclass(frozen=True)
class ClustererSpec:
    """One registered clustering method (the shape of
    :class:`bnma_core.classifiers.registry.MethodSpec`).

    Attributes
    ----------
    name : str
        The method code.
    factory : type
        The estimator class.
    description : str
        One plain-language line.
    display_name : str
        A plain-words name shown beside the code.
    """

    name: str
    factory: type
    description: str
    display_name: str

    def make(self, **params: Any):
        """A new, unfitted estimator with ``params``."""
        return self.factory(**params)


CLUSTERERS: dict[str, ClustererSpec] = {s.name: s for s in (
    ClustererSpec("ematan", EMATAN, "EMA-TAN: average over every TAN model consistent with an "
                  "order (Santafé, Lozano & Larrañaga).",
                  "Averaging over tree-augmented models (EMA-TAN)"),
    ClustererSpec("ema", EMA, "EMA: average over the selective naive Bayes models (Santafé et "
                  "al. 2006).", "Averaging over naive Bayes models (EMA)"),
    ClustererSpec("emtan", EMTAN, "EM-TAN: structural EM learning one TAN per iteration "
                  "(Friedman et al. 1997 inside EM).", "One tree-augmented model by EM (EM-TAN)"),
    ClustererSpec("embnet", EMBNET, "EM-BNET: parameter EM for the complete network consistent "
                  "with an order.", "One complete network by EM (EM-BNET)"),
)}
"""Registered clustering methods: code -> :class:`ClustererSpec`."""


def get_clusterer_spec(name: str) -> ClustererSpec:
    """The :class:`ClustererSpec` of ``name`` (ValueError naming the choices)."""
    try:
        return CLUSTERERS[name]
    except KeyError:
        raise ValueError(f"Unknown clustering method {name!r}; available: "
                         f"{', '.join(CLUSTERERS)}.") from None


def make_clusterer(name: str, **params: Any):
    """A new, unfitted clusterer registered as ``name`` (``ematan``, ``ema``, ``emtan``,
    ``embnet``)."""
    return get_clusterer_spec(name).make(**params)


__all__ = ["CLUSTERERS", "EMA", "EMATAN", "EMBNET", "EMTAN", "ClustererSpec",
           "CollapsedStartWarning", "cluster_accuracy", "expand_missing", "get_clusterer_spec",
           "make_clusterer"]
