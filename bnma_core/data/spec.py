"""The dataset specification: which data, read how — one object for the dashboard and the CLI.

A :class:`DatasetSpec` names the source (a sample file, a CSV path, an uploaded file or rows
sampled from a sample network) and every setting that turns it into a
:class:`~bnma_core.data.DiscreteDataset`: class column, binning, missing-value policy,
separator, decimal mark, columns left out, class bins and features kept. The dashboard's Data
page builds one from its widgets and keeps it in the page's URL
(:meth:`DatasetSpec.to_query_params`); a restored link is read back with
:meth:`DatasetSpec.from_query_params`, which checks every value against the same ranges as
the widgets (:data:`bnma_core.limits.INPUT_RANGES`) before anything is built (DESIGN §7).
``bnma cv`` / ``bnma explain`` build the same object from ``--data --target --missing --sep
--decimal --drop`` (:func:`bnma_core.cli`), and :meth:`DatasetSpec.build` reads the data the
same way for both.

This module is not imported by ``bnma_core.data`` itself (it samples from
:mod:`bnma_core.network`, which is built on the data layer): import it as
``from bnma_core.data.spec import DatasetSpec``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..limits import INPUT_RANGES, MAX_COLUMNS
from .base import DISCRETIZATIONS, MISSING_POLICIES, DataError
from .reading import DECIMAL_MARKS, SEPARATORS

__all__ = ["DEFAULT_CLASS", "NETWORKS", "SAMPLE_TITLES", "SOURCES", "DatasetSpec"]

SOURCES = {
    "bundled": "A bundled sample file",
    "network": "Sampled from a known network",
    "upload": "My own CSV file",
    "path": "A CSV file on this computer",
}
"""Where the data come from (``path`` is the CLI's; the dashboard offers the other three)."""

NETWORKS = {
    "alarm": "ALARM (intensive-care monitoring, 37 variables)",
    "hepar2": "HEPAR II (liver disorders, 70 variables)",
    "asia": "ASIA (chest clinic, 8 variables)",
}
"""The sample networks rows can be drawn from, in words."""

DEFAULT_CLASS = {"alarm": "CATECHOL", "hepar2": "Cirrhosis", "asia": "lung"}
"""The class variable of a network sample unless another is chosen (Hwang & Zhang used
CATECHOL of ALARM)."""

SAMPLE_TITLES = {"wbc.csv": "Wisconsin breast cancer"}
"""Sample files by the name a user knows them by."""

SEP_WORDS = {",": "comma", ";": "semicolon", "\t": "tab"}
"""Separator -> its word in a link (``sep=semicolon``); None (detect) is ``auto``."""
DECIMAL_WORDS = {".": "point", ",": "comma"}
"""Decimal mark -> its word in a link (``dec=comma``); None (detect) is ``auto``."""
assert set(SEP_WORDS) == set(SEPARATORS) and set(DECIMAL_WORDS) == set(DECIMAL_MARKS)

MAX_NAME_CHARS = 1000
"""Characters of one file, column or variable name in a link."""

_DASHBOARD_DISCRETIZATIONS = ("median", "quantile", "none")


class _QueryValues:
    """Reads single values of a page URL's query parameters for
    :meth:`DatasetSpec.from_query_params`: each reader returns the checked value, or None
    (the default applies) when the key is absent or the value fails, appending one plain
    sentence per failure to :attr:`problems`."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.params = params
        self.problems: list[str] = []

    def text(self, key: str) -> str | None:
        """The value as text, unless longer than :data:`MAX_NAME_CHARS`."""
        if key not in self.params:
            return None
        v = str(self.params[key])
        if len(v) > MAX_NAME_CHARS:
            self.problems.append(f"The link's {key} is {len(v):,} characters long; at most "
                                 f"{MAX_NAME_CHARS:,} are possible: the default applies.")
            return None
        return v

    def number(self, key: str) -> int | None:
        """The value as an integer within :data:`bnma_core.limits.INPUT_RANGES` ``[key]``."""
        if key not in self.params:
            return None
        r = INPUT_RANGES[key]
        why = r.problem(self.params[key])
        if why:
            self.problems.append(f"{why} The link's value was not used: the default "
                                 f"({r.default:,}) applies.")
            return None
        return int(str(self.params[key]).strip())

    def choice(self, key: str, options: Mapping[str, Any]) -> Any:
        """``options[value]``, when the value is one of ``options``' words."""
        v = self.text(key)
        if v is None:
            return None
        if v not in options:
            self.problems.append(f"The link asks for {key}={v[:40]!r}, which is not one of "
                                 f"{', '.join(options)}: the default applies.")
            return None
        return options[v]

    def names(self, key: str) -> tuple[str, ...] | None:
        """The comma-separated names, at most :data:`bnma_core.limits.MAX_COLUMNS` of at most
        :data:`MAX_NAME_CHARS` characters each."""
        if key not in self.params:
            return None
        items = [t for t in str(self.params[key]).split(",") if t]
        if len(items) > MAX_COLUMNS:
            self.problems.append(f"The link names {len(items):,} columns in {key}; at most "
                                 f"{MAX_COLUMNS:,} are possible: the default applies.")
            return None
        if any(len(t) > MAX_NAME_CHARS for t in items):
            self.problems.append(f"A name in the link's {key} is longer than "
                                 f"{MAX_NAME_CHARS:,} characters: the default applies.")
            return None
        return tuple(items)


@dataclass(frozen=True)
class DatasetSpec:
    """Which data, read how: everything that rebuilds one dataset.

    Parameters
    ----------
    source : {"bundled", "network", "upload", "path"}
        A sample file (``file`` names it, default the first: ``wbc.csv``), rows sampled from
        a sample network (``net``), an uploaded file (its bytes are passed to :meth:`build`)
        or a CSV path (``file``; the CLI).
    file : str or None
        The sample file's name, the uploaded file's name or the CSV path.
    net, rows, seed : str, int, int
        The network sampled from, how many rows and the seed (``source="network"``).
    target : str or None
        The class column (a network's class variable); None = guessed (a column named
        class / target / label / diagnosis, else the last; a network's :data:`DEFAULT_CLASS`).
    discretization, bins : str, int
        How numeric columns are grouped (:class:`~bnma_core.data.DiscreteEncoder`).
    missing : {"keep", "drop"}
        Rows with a missing value: kept (the methods learn from available cases) or left out.
    sep, decimal : str or None
        Column separator and decimal mark; None = detected.
    drop : tuple of str
        Columns left out.
    class_bins : int
        Group a numeric class into this many classes (0 = no).
    keep : tuple of str
        Only these features (and the class); empty = every feature.
    """

    source: str = "bundled"
    file: str | None = None
    net: str = "alarm"
    rows: int = INPUT_RANGES["rows"].default
    seed: int = INPUT_RANGES["seed"].default
    target: str | None = None
    discretization: str = "median"
    bins: int = INPUT_RANGES["bins"].default
    missing: str = "keep"
    sep: str | None = None
    decimal: str | None = None
    drop: tuple[str, ...] = field(default=())
    class_bins: int = 0
    keep: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "drop", tuple(str(c) for c in self.drop))
        object.__setattr__(self, "keep", tuple(str(c) for c in self.keep))

    # ------------------------------------------------------------------ checks
    def problem(self) -> str:
        """One plain sentence saying what cannot be built from this spec, else ``""``
        (checked before anything is read or sampled)."""
        if self.source not in SOURCES:
            return (f"Unknown data source {self.source!r}; use one of "
                    f"{', '.join(SOURCES)}.")
        if self.source == "network":
            if self.net not in NETWORKS:
                return (f"There is no bundled network named {self.net!r}; choose one of "
                        f"{', '.join(NETWORKS)}.")
            for name in ("rows", "seed"):
                why = INPUT_RANGES[name].problem(getattr(self, name))
                if why:
                    return why
            return ""
        if self.source == "path" and not self.file:
            return "No CSV file is named; give its path."
        if self.missing not in MISSING_POLICIES:
            return f"Unknown missing-value policy {self.missing!r}; use 'keep' or 'drop'."
        if self.discretization not in DISCRETIZATIONS:
            return (f"Unknown discretization {self.discretization!r}; choose one of "
                    f"{', '.join(DISCRETIZATIONS)}.")
        if self.sep is not None and self.sep not in SEPARATORS:
            return f"Unknown column separator {self.sep!r}; use a comma, semicolon or tab."
        if self.decimal is not None and self.decimal not in DECIMAL_MARKS:
            return f"Unknown decimal mark {self.decimal!r}; use '.' or ','."
        return ""

    def check(self) -> DatasetSpec:
        """This spec, or a :class:`DataError` with :meth:`problem`'s sentence."""
        why = self.problem()
        if why:
            raise DataError(why)
        return self

    # ------------------------------------------------------------------ words
    @property
    def class_variable(self) -> str | None:
        """The class asked for: ``target``, or a network's :data:`DEFAULT_CLASS`."""
        if self.source == "network":
            return self.target or DEFAULT_CLASS.get(self.net)
        return self.target

    @property
    def label(self) -> str:
        """Where the data come from, in words (e.g. "Wisconsin breast cancer (wbc.csv)",
        "asia sample (300 rows, seed 7)", "uploaded trial.csv"), with the number of features
        kept when only some are."""
        if self.source == "network":
            text = f"{self.net} sample ({int(self.rows)} rows, seed {int(self.seed)})"
        elif self.source == "bundled":
            name = self.file or "wbc.csv"
            text = f"{SAMPLE_TITLES[name]} ({name})" if name in SAMPLE_TITLES else name
        elif self.source == "upload":
            text = f"uploaded {self.file or 'file'}"
        else:
            text = Path(self.file or "").name
        return text + (f", {len(self.keep)} features" if self.keep else "")

    # ------------------------------------------------------------------ building
    def build(self, raw: bytes | None = None, network: Any = None) -> Any:
        """The :class:`~bnma_core.data.DiscreteDataset` this spec names.

        Parameters
        ----------
        raw : bytes, optional
            The CSV's content: required for ``source="upload"``; for a sample file or a path
            it replaces reading the file (the dashboard passes bytes it has cached).
        network : DiscreteBN, optional
            The network to sample from for ``source="network"`` (default: the bundled
            network ``net``, read now).

        Raises
        ------
        DataError
            For every problem, with one plain sentence (:meth:`problem`, and those of
            :func:`~bnma_core.data.load_dataset`).
        """
        from .loaders import load_dataset

        self.check()
        if self.source == "network":
            if network is None:
                from ..network import load_network

                network = load_network(self.net)
            target = self.class_variable
            if target not in network.names:
                raise DataError(f"{target!r} is not a variable of the {self.net} network.")
            ds = network.sample(int(self.rows), int(self.seed), target)
        else:
            if raw is not None:
                source: Any = raw
            elif self.source == "upload":
                raise DataError("The uploaded file is not in this session; upload it again.")
            else:
                source = self.path()
            ds = load_dataset(source, self.target, discretization=self.discretization,
                              n_bins=int(self.bins), missing=self.missing, sep=self.sep,
                              decimal=self.decimal, drop_columns=list(self.drop),
                              class_bins=int(self.class_bins))
        if self.keep:
            unknown = [c for c in self.keep if c not in ds.feature_names]
            if unknown:
                raise DataError(f"{unknown[0]!r} is not a feature of these data; choose the "
                                "features to keep again.")
            ds = ds.select_features(list(self.keep))
        return ds

    def path(self) -> Path:
        """The CSV file of a sample file or path spec (:class:`DataError` if there is none)."""
        from ..datasets import bundled_csv_files, bundled_path

        if self.source == "bundled":
            name = self.file or bundled_csv_files()[0]
            if name not in bundled_csv_files():
                raise DataError(f"There is no bundled file named {name!r}; bundled: "
                                f"{', '.join(bundled_csv_files())}.")
            return bundled_path(name)
        if self.source == "path" and self.file:
            p = Path(self.file)
            if not p.is_file():
                raise DataError(f"File not found: {self.file}.")
            return p
        raise DataError(f"A {self.source} spec has no file to read.")

    @classmethod
    def from_data_argument(cls, text: str, **settings: Any) -> DatasetSpec:
        """The spec of the CLI's ``--data``: a CSV path as given, else the sample file named
        ``text`` (``wbc`` or ``wbc.csv``); ``settings`` are the other fields. A
        :class:`DataError` names the sample files when neither exists."""
        from ..datasets import bundled_csv_files

        if Path(text).exists():
            return cls(source="path", file=text, **settings)
        for name in (text, f"{text}.csv"):
            if name in bundled_csv_files():
                return cls(source="bundled", file=name, **settings)
        raise DataError(f"File not found: {text} (bundled datasets: "
                        + ", ".join(n[:-4] for n in bundled_csv_files()) + ")")

    # ------------------------------------------------------------------ links
    def to_query_params(self) -> dict[str, str]:
        """This choice as a page URL's query parameters (DESIGN §7): ``src``, ``file``,
        ``target`` (``cls`` for a network), ``disc``, ``bins``, ``missing``, ``sep``, ``dec``
        (words: ``semicolon``, ``comma``), ``drop`` and ``keep`` (comma-joined), ``cbins``,
        ``net``, ``rows``, ``seed``; values that say nothing are left out."""
        if self.source == "network":
            out = {"src": "network", "net": self.net, "rows": str(int(self.rows)),
                   "seed": str(int(self.seed)), "cls": self.target or ""}
        else:
            out = {"src": self.source, "file": self.file or "", "target": self.target or "",
                   "disc": self.discretization, "bins": str(int(self.bins)),
                   "missing": self.missing, "sep": SEP_WORDS.get(self.sep, "auto"),
                   "dec": DECIMAL_WORDS.get(self.decimal, "auto"), "drop": ",".join(self.drop),
                   "cbins": str(int(self.class_bins))}
        out["keep"] = ",".join(self.keep)
        return {k: v for k, v in out.items() if v != ""}

    @classmethod
    def from_query_params(cls, params: Mapping[str, Any]
                          ) -> tuple[DatasetSpec | None, list[str]]:
        """The spec in a page URL's query parameters and one plain sentence per value that
        was not used; (None, []) when they name no dataset.

        Every value is checked before anything is built: numbers against
        :data:`bnma_core.limits.INPUT_RANGES` (the Data page's widget ranges), choices against
        the widgets' options, names and lists against their length limits. A value that
        fails is left out (the default applies) and said."""
        src = params.get("src") if hasattr(params, "get") else None
        if src not in ("bundled", "network", "upload"):
            return None, []
        q = _QueryValues(params)
        values: dict[str, Any] = {"source": src}

        if src == "network":
            values["net"] = q.choice("net", {n: n for n in NETWORKS})
            values["rows"] = q.number("rows")
            values["seed"] = q.number("seed")
            values["target"] = q.text("cls")
        else:
            values["file"] = q.text("file")
            values["target"] = q.text("target")
            values["discretization"] = q.choice("disc", {d: d for d in _DASHBOARD_DISCRETIZATIONS})
            values["bins"] = q.number("bins")
            values["missing"] = q.choice("missing", {m: m for m in MISSING_POLICIES})
            sep_words = {"auto": None, **{w: c for c, w in SEP_WORDS.items()}}
            dec_words = {"auto": None, **{w: c for c, w in DECIMAL_WORDS.items()}}
            if "sep" in params:
                values["sep"] = q.choice("sep", sep_words)
            if "dec" in params:
                values["decimal"] = q.choice("dec", dec_words)
            values["drop"] = q.names("drop")
            values["class_bins"] = q.number("cbins")
        values["keep"] = q.names("keep")
        return cls(**{k: v for k, v in values.items() if v is not None}), q.problems

    def replace(self, **changes: Any) -> DatasetSpec:
        """A copy with ``changes`` (e.g. ``keep=``)."""
        return replace(self, **changes)
