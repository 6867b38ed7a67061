"""The registry of reproducible papers (issue 17).

A paper is one module of this package declaring

* ``TITLE`` (str) and ``ISSUE`` (int, optional);
* ``grid(quick: bool) -> list[dict]`` — the cells, each a JSON-serialisable key (dataset,
  method, fold, repetition, parameters ...); every cell is a pure function of its key;
* ``cell(key: dict) -> dict`` — run one cell, return JSON-serialisable metrics (seeds from
  :func:`bnma_core.reproduce.store.cell_seed` or from the key itself, never from the order);
* ``config(quick: bool) -> dict`` — the settings shown in the report;
* ``report(cells: pandas.DataFrame, meta: dict) -> str`` — one self-contained HTML page;
* optionally ``missing_inputs(quick: bool) -> str | None`` — why the grid cannot run here (data
  that is not part of the package and is absent), with the remedy; checked by
  :func:`missing_inputs` before any cell is planned (``bnma reproduce`` and the Reports page).

Adding a paper is one module and one line in :data:`PAPERS`; :data:`PENDING` names papers whose
module does not exist yet (``bnma reproduce`` refuses them with the issue number).
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["PAPERS", "PENDING", "NotAvailable", "load_paper", "missing_inputs",
           "paper_names"]

PAPERS: dict[str, str] = {
    "hwang2005": "bnma_core.reproduce.hwang2005",
    "dash2002": "bnma_core.reproduce.dash2002",
    "ukdb": "bnma_core.reproduce.ukdb",
    "santafe": "bnma_core.reproduce.santafe",
    "smoke": "bnma_core.reproduce.smoke",
    "anchors": "bnma_core.reproduce.anchors",
    "sugahara": "bnma_core.reproduce.sugahara",
}
PENDING: dict[str, int] = {}


class NotAvailable(LookupError):
    """The paper is known but its reproduction module does not exist yet."""


def paper_names() -> list[str]:
    """Every name ``bnma reproduce`` accepts (available and pending)."""
    return [*PAPERS, *PENDING]


def load_paper(name: str) -> ModuleType:
    """The paper's module; :class:`NotAvailable` for a pending paper, ``ValueError`` for an
    unknown name."""
    if name in PAPERS:
        return importlib.import_module(PAPERS[name])
    if name in PENDING:
        raise NotAvailable(f"{name}: not yet available: issue {PENDING[name]}")
    raise ValueError(f"unknown paper {name!r}; choose from {', '.join(paper_names())}")


def missing_inputs(name: str, quick: bool = False) -> str | None:
    """Why paper ``name``'s grid (quick or full) cannot run on this machine, with the remedy;
    None when everything it reads is present (papers on bundled data always)."""
    check = getattr(load_paper(name), "missing_inputs", None)
    return None if check is None else check(quick)
