"""Paper reproductions as declared grids run on Dask, with a crash-safe store and one HTML
report per paper (DESIGN §8; run times: experiments/reproduce.md).

``python -m bnma_core.reproduce PAPER [--quick] [--workers N] [--scheduler ADDR] [--out DIR]
[--fresh]``; the ``bnma`` CLI gets the same sub-command from :mod:`.cli`. Layout: :mod:`.papers`
(registry), :mod:`.runner` (Dask), :mod:`.store` (Parquet), :mod:`.report` (shared report
pieces), one module per paper (``hwang2005``, ``dash2002``, ``ukdb``).
"""

from .papers import PAPERS, PENDING, NotAvailable, load_paper, missing_inputs, paper_names
from .runner import RunSummary, run_cell, run_grid, write_report
from .store import ResultStore, cell_seed, key_id

__all__ = ["PAPERS", "PENDING", "NotAvailable", "load_paper", "missing_inputs", "paper_names",
           "RunSummary", "run_cell", "run_grid", "write_report", "ResultStore", "cell_seed",
           "key_id"]
