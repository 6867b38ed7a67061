"""Structural Hamming distance between two directed graphs over the same variables
(Tsamardinos, Brown & Aliferis 2006, §6; DESIGN §14).

The distance counts the unordered pairs of variables whose connection differs: an arc the
learned graph lacks (missing), an arc it adds (extra), or an arc it points the other way
(reversed); each pair counts once. It is how far a learned or averaged network is from the
network the data were sampled from (the dashboard's Order MCMC page and the Teach lessons).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

import networkx as nx

__all__ = ["StructureDifference", "structural_hamming_distance", "structure_difference"]


@dataclass(frozen=True)
class StructureDifference:
    """How a learned graph differs from a true one: the arcs (parent, child) of the true graph
    that the learned one lacks (``missing``), the learned arcs between pairs the true graph
    leaves unconnected (``extra``) and the true arcs the learned graph reverses
    (``reversed``, as the true arc). ``shd`` = the number of pairs that differ."""

    missing: list[tuple[Hashable, Hashable]] = field(default_factory=list)
    extra: list[tuple[Hashable, Hashable]] = field(default_factory=list)
    reversed: list[tuple[Hashable, Hashable]] = field(default_factory=list)

    @property
    def shd(self) -> int:
        return len(self.missing) + len(self.extra) + len(self.reversed)


def _arcs(graph: nx.DiGraph, threshold: float | None, weight: str) -> set[tuple]:
    if threshold is None:
        return {(u, v) for u, v in graph.edges if u != v}
    return {(u, v) for u, v, w in graph.edges(data=weight, default=1.0)
            if u != v and w > threshold}


def structure_difference(learned: nx.DiGraph, true: nx.DiGraph, *,
                         threshold: float | None = None, weight: str = "weight"
                         ) -> StructureDifference:
    """The arcs by which ``learned`` differs from ``true`` (see :class:`StructureDifference`).

    Parameters
    ----------
    learned, true : networkx.DiGraph
        Graphs over the same node names (a node present in one only is a variable without
        arcs in the other).
    threshold : float, optional
        Keep only the learned arcs whose ``weight`` attribute (missing = 1) exceeds it, e.g.
        0.5 for the median-probability network of an edge-posterior graph (arcs with
        P(u -> v | D) > 0.5; at most one direction of a pair can pass). Default: every arc.
    weight : str
        The edge attribute ``threshold`` reads.

    A pair connected both ways in ``learned`` (possible below a threshold of 0.5) counts as
    one difference: reversed when the true graph has one of its arcs, extra otherwise.

    Examples
    --------
    >>> import networkx as nx
    >>> true = nx.DiGraph([("a", "b"), ("b", "c")])
    >>> learned = nx.DiGraph([("b", "a"), ("a", "c")])
    >>> d = structure_difference(learned, true)
    >>> d.missing, d.extra, d.reversed, d.shd
    ([('b', 'c')], [('a', 'c')], [('a', 'b')], 3)
    """
    lrn = _arcs(learned, threshold, weight)
    tru = _arcs(true, None, weight)
    missing, extra, rev = [], [], []
    for u, v in sorted(tru, key=repr):
        if (u, v) in lrn and (v, u) not in lrn:
            continue
        (rev if (v, u) in lrn else missing).append((u, v))
    seen = set()
    for u, v in sorted(lrn, key=repr):
        pair = frozenset((u, v))
        if pair in seen:
            continue
        seen.add(pair)
        if (u, v) in tru or (v, u) in tru:
            continue  # agrees with or reverses a true arc: counted above
        extra.append((u, v))
    return StructureDifference(missing, extra, rev)


def structural_hamming_distance(learned: nx.DiGraph, true: nx.DiGraph, *,
                                threshold: float | None = None, weight: str = "weight"
                                ) -> int:
    """Number of pairs of variables whose arc differs between ``learned`` and ``true``:
    missing, extra or reversed, each pair once (Tsamardinos et al. 2006). Options as for
    :func:`structure_difference`.

    Examples
    --------
    >>> import networkx as nx
    >>> structural_hamming_distance(nx.DiGraph([("a", "b")]), nx.DiGraph([("b", "a")]))
    1
    """
    return structure_difference(learned, true, threshold=threshold, weight=weight).shd
