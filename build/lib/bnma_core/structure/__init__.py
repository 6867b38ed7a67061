"""bnma_core.structure: score tables and order MCMC for node-order methods (DESIGN §3-4, §9).

Classifiers reach the numba kernels of :mod:`bnma_core.kernels.orders` only through these
modules (:class:`ScoreTable` methods, :class:`OrderMCMC`).
"""

from .candidates import best_parent_sets, boundary_gains, expand_candidates
from .orders import OrderMCMC, OrderMCMCResult, exact_order_posterior, spearman_orders
from .score_table import ScoreTable, build_score_table, node_average_log_ml, select_candidates

__all__ = ["OrderMCMC", "OrderMCMCResult", "ScoreTable", "best_parent_sets", "boundary_gains",
           "build_score_table", "exact_order_posterior", "expand_candidates",
           "node_average_log_ml", "select_candidates", "spearman_orders"]
