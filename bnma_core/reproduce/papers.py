"""The registry of reproducible papers.

A paper is one module of this package declaring

* ``TITLE`` (str);
* ``grid(quick: bool) -> list[dict]`` — the cells, each a JSON-serialisable key (dataset,
  method, fold, repetition, parameters ...); every cell is a pure function of its key;
* ``cell(key: dict) -> dict`` — run one cell, return JSON-serialisable metrics (seeds from
  :func:`bnma_core.reproduce.store.cell_seed` or from the key itself, never from the order);
* ``config(quick: bool) -> dict`` — the settings shown in the report;
* ``report(cells: pandas.DataFrame, meta: dict) -> str`` — one self-contained HTML page;
* optionally ``missing_inputs(quick: bool) -> str | None`` — why the grid cannot run here (data
  that is not part of the package and is absent), with the remedy; checked by
  :func:`missing_inputs` before any cell is planned (``bnma reproduce`` and the Reports page).

Adding a paper is one module and one :class:`PaperSpec` in :data:`PAPERS` (the shape of the
method registry, :class:`bnma_core.classifiers.registry.MethodSpec`); :data:`PENDING` names
papers whose module does not exist yet (``bnma reproduce`` refuses them with the issue number).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

__all__ = ["PAPERS", "PENDING", "NotAvailable", "PaperSpec", "get_paper_spec", "load_paper",
           "missing_inputs", "paper_names"]


@dataclass(frozen=True)
class PaperSpec:
    """One reproducible paper (or study) of the registry.

    Attributes
    ----------
    name : str
        The code ``bnma reproduce`` takes.
    factory : str
        The module declaring the grid (module docstring).
    description : str
        One plain-language line: what the reproduction shows.
    display_name : str
        Authors and year, or the study in words (e.g. "Hwang & Zhang (2005)").
    """

    name: str
    factory: str
    description: str
    display_name: str

    def load(self) -> ModuleType:
        """The paper's module."""
        return importlib.import_module(self.factory)


PAPERS: dict[str, PaperSpec] = {s.name: s for s in (
    PaperSpec("hwang2005", "bnma_core.reproduce.hwang2005",
              "BMA over multiple node orders on ALARM (Figs. 6, 7, 9).", "Hwang & Zhang (2005)"),
    PaperSpec("dash2002", "bnma_core.reproduce.dash2002",
              "Exact model averaging with naive Bayes: ROC-area gains (Figs. 2-5).",
              "Dash & Cooper (2002)"),
    PaperSpec("ukdb", "bnma_core.reproduce.ukdb",
              "UKDB on WBC and the bias-variance of UKDB against KDB.",
              "UKDB: domain and personalized knowledge (DESIGN §12, paper 004)"),
    PaperSpec("santafe", "bnma_core.reproduce.santafe",
              "EMA-TAN for clustering, Table 1 (random TANs).",
              "Santafé, Lozano & Larrañaga"),
    PaperSpec("smoke", "bnma_core.reproduce.smoke",
              "A small grid that checks the reproduction runner itself.",
              "Runner self-test"),
    PaperSpec("anchors", "bnma_core.reproduce.anchors",
              "The library's methods against Weka and pyAgrum on Weka's folds of seven data "
              "sets.", "Accuracy against Weka and pyAgrum"),
    PaperSpec("sugahara", "bnma_core.reproduce.sugahara",
              "Model averaging classifiers by subbagging, Table 1.",
              "Sugahara, Aomi & Ueno"),
)}
"""Registered papers: code -> :class:`PaperSpec`."""

PENDING: dict[str, int] = {}


class NotAvailable(LookupError):
    """The paper is known but its reproduction module does not exist yet."""


def paper_names() -> list[str]:
    """Every name ``bnma reproduce`` accepts (available and pending)."""
    return [*PAPERS, *PENDING]


def get_paper_spec(name: str) -> PaperSpec:
    """The :class:`PaperSpec` of ``name``; :class:`NotAvailable` for a pending paper,
    ``ValueError`` naming the choices for an unknown name."""
    if name in PAPERS:
        return PAPERS[name]
    if name in PENDING:
        raise NotAvailable(f"{name}: not yet available in this version")
    raise ValueError(f"unknown paper {name!r}; choose from {', '.join(paper_names())}")


def load_paper(name: str) -> ModuleType:
    """The paper's module; :class:`NotAvailable` for a pending paper, ``ValueError`` for an
    unknown name."""
    return get_paper_spec(name).load()


def missing_inputs(name: str, quick: bool = False) -> str | None:
    """Why paper ``name``'s grid (quick or full) cannot run on this machine, with the remedy;
    None when everything it reads is present (papers on bundled data always)."""
    check = getattr(load_paper(name), "missing_inputs", None)
    return None if check is None else check(quick)
