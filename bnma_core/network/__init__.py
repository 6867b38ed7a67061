"""Discrete Bayesian networks, split by role (as pgmpy's models / sampling / inference /
readwrite):

* :mod:`.model` — :class:`DiscreteBN` (names, states, parents, CPTs, graph, Markov blanket,
  topological order, :meth:`DiscreteBN.from_structure`);
* :mod:`.sampling` — forward sampling (numba kernel in :mod:`bnma_core.kernels.sampling`);
* :mod:`.inference` — exact queries through :mod:`bnma_core.factors`;
* :mod:`.bif` / :mod:`.xmlbif` — BIF (bnlearn / pgmpy and JavaBayes dialects) and XMLBIF 0.3
  reading and writing;
* :mod:`.bundled` — :func:`load_network` and the networks of ``sample_data/``.

CPT layout (shared with :mod:`bnma_core.scores` and :mod:`bnma_core.factors`): node ``i`` has
parents ``parents[i]`` and a CPT ``cpts[i]`` of shape (q_i, r_i); row j is the parent
configuration in mixed radix with the **first parent varying fastest**,
j = sum_k x_{pa_k} * prod_{l<k} r_{pa_l}. Every row sums to 1.
"""

from __future__ import annotations

from .bif import bif_text, read_bif, write_bif
from .bundled import BUNDLED_NETWORKS, load_network
from .model import ROW_SUM_ATOL, DiscreteBN
from .xmlbif import read_xmlbif, write_xmlbif, xmlbif_text

__all__ = ["BUNDLED_NETWORKS", "ROW_SUM_ATOL", "DiscreteBN", "bif_text", "load_network",
           "read_bif", "read_xmlbif", "write_bif", "write_xmlbif", "xmlbif_text"]
