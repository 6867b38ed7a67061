"""The one table of input limits: the largest (and smallest) inputs the library accepts.

A shared server must refuse a value before it allocates anything from it: a class-bin count,
a number of rows to sample or a file's shape. The library checks the shape limits itself
(:mod:`bnma_core.data`); the dashboard's widgets take their ranges from :data:`INPUT_RANGES`
and a restored link is checked against the same ranges before anything is built (DESIGN §7),
so a value no widget could produce is never used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MAX_COLUMNS = 5_000
"""Columns a CSV may have. Reading and encoding cost about a millisecond and 25 kB per column
(pandas' per-column overhead), so this bounds one upload to seconds and ~150 MB; a wider table
(e.g. gene expression) is reduced to the columns of interest before it is uploaded."""

MAX_ROWS = 2_000_000
"""Data rows a CSV may have."""

MAX_CELLS = 25_000_000
"""Rows times columns of a CSV: about 100 MB of codes, the largest table one session may
pin on a shared server."""

MAX_SAMPLE_ROWS = 50_000
"""Rows that may be sampled from a bundled network."""

MAX_BINS = 20
"""Equal-frequency bins of a numeric feature (``discretization="quantile"``)."""

MAX_CLASS_VALUES = 50
"""Distinct class values (and so the largest number of class bins): more classes than this
are not a classification problem the methods are meant for."""


EXPLAIN_BUDGET_MB = 256
"""Default memory (MB) one explanation of one case may use on top of the fitted model (the
Patient page, ``bnma explain``): the coalitions of the Shapley values are predicted in chunks
that fit in it (DESIGN §15, Budget). Server setting: the environment variable
``BNMA_EXPLAIN_BUDGET_MB``."""

EXPLAIN_BUDGET_CPU_S = 10.0
"""Default CPU seconds one explanation of one case may take (all its parts together: the
intervals' parameter draws, the Shapley values, the next test and the unusual-case check).
An explanation estimated above it is made cheaper with a sentence saying how (sampled Shapley
values with their standard errors, fewer draws) or refused with the remedy
(:func:`bnma_core.explain.budget.plan_explanation`). Server setting: the environment variable
``BNMA_EXPLAIN_BUDGET_CPU_S``."""


FIT_BUDGET_MB = 1024.0
"""Default memory (MB) the fitted models of one request may hold: one fit (Compare, a model of
all rows) or the K fold models of cross-fitting (the Patient page). A method priced above it
from the data's shape before any fit (the order averages' score tables, a stack's candidates:
``estimate_fit_bytes``) is refused with the remedies
(:func:`bnma_core.classifiers.registry.resource_limit`). Server setting: the environment
variable ``BNMA_FIT_BUDGET_MB``."""


@dataclass(frozen=True)
class Budget:
    """What one request may spend: memory (MB) and CPU seconds."""

    memory_mb: float
    cpu_seconds: float

    @property
    def memory_bytes(self) -> float:
        return self.memory_mb * 2.0 ** 20


def _setting(name: str, default: float, low: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"The server setting {name} must be a number (got {text[:40]!r}).") \
            from None
    if not value >= low:
        raise ValueError(f"The server setting {name} must be at least {low:g} (got {value:g}).")
    return value


def explain_budget() -> Budget:
    """The per-request budget of an explanation: :data:`EXPLAIN_BUDGET_MB` and
    :data:`EXPLAIN_BUDGET_CPU_S`, or the server's settings ``BNMA_EXPLAIN_BUDGET_MB`` and
    ``BNMA_EXPLAIN_BUDGET_CPU_S`` (read at each call)."""
    return Budget(_setting("BNMA_EXPLAIN_BUDGET_MB", EXPLAIN_BUDGET_MB, 16.0),
                  _setting("BNMA_EXPLAIN_BUDGET_CPU_S", EXPLAIN_BUDGET_CPU_S, 0.1))


def fit_budget_bytes() -> float:
    """Bytes the fitted models of one request may hold: :data:`FIT_BUDGET_MB` or the server's
    setting ``BNMA_FIT_BUDGET_MB`` (read at each call)."""
    return _setting("BNMA_FIT_BUDGET_MB", FIT_BUDGET_MB, 16.0) * 2.0 ** 20


@dataclass(frozen=True)
class Range:
    """The accepted whole numbers ``low .. high`` of one input, its default and its name.

    ``off`` is an extra accepted value meaning "not used" (e.g. 0 class bins = the class is
    not grouped).
    """

    low: int
    high: int
    default: int
    name: str
    off: int | None = None

    def problem(self, value: object) -> str:
        """A one-sentence message when ``value`` is not an accepted whole number, else ``""``."""
        try:
            number = int(str(value).strip())
        except (TypeError, ValueError):
            return f"The {self.name} must be a whole number (got {str(value)[:40]!r})."
        if number == self.off or self.low <= number <= self.high:
            return ""
        return (f"The {self.name} must be between {self.low:,} and {self.high:,} "
                f"(got {number:,}).")

    def accepts(self, value: object) -> bool:
        return not self.problem(value)


INPUT_RANGES: dict[str, Range] = {
    "rows": Range(50, MAX_SAMPLE_ROWS, 1000, "number of rows to sample"),
    "seed": Range(0, 2**31 - 1, 0, "seed"),
    "bins": Range(2, 10, 3, "number of groups per numeric column"),
    "cbins": Range(2, 10, 3, "number of class groups", off=0),
    "draws": Range(2, 20_000, 400, "number of parameter draws"),
}
"""The ranges the dashboard offers, by query-parameter name (DESIGN §7): the widgets are built
from them and a restored link is checked against them."""
