"""BIF reading and writing (Cozman's Interchange Format 0.15).

Both dialects in the wild are read:

* **bnlearn / pgmpy**: ``variable X { type discrete [ 2 ] { a, b }; }`` and
  ``probability ( X | A, B ) { (a0, b0) 0.1, 0.9; ... }``, ``table`` for root nodes;
* **JavaBayes**: quoted names, ``type discrete[2] { "a" "b" };``, space-separated parents
  ``probability ( "X" "A" "B" )``, ``table`` entries for nodes with parents (the child's
  state varies slowest, then the parents with the **last** varying fastest), ``default``
  entries (one row used for every configuration not listed; a full table's worth of values is
  read as a ``table``, as pgmpy does), ``property`` lines anywhere, ``//`` and ``/* */``
  comments.

Values may be separated by commas or spaces. A later entry overrides an earlier one: rows
override ``table``, which overrides ``default``. The writer emits the bnlearn dialect with
every probability printed by ``repr`` (reading back gives identical floats) and quotes names
that need it.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..kernels.counting import parent_strides
from ._io import (
    check_table_sizes,
    decode,
    missing_message,
    read_source,
    rows_from_last_fastest,
    write_bytes,
)
from .model import ROW_SUM_ATOL, DiscreteBN

__all__ = ["bif_text", "read_bif", "write_bif"]

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/|[{}\[\]()|,;]'
                    r'|(?:[^\s{}\[\]()|,;"/]|/(?![/*]))+', re.S)
_PUNCT = frozenset("{}[]()|,;")


class _Tokens:
    """The BIF text as tokens (comments dropped) with a cursor and line-aware errors."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = [(m.group(), m.start()) for m in _TOKEN.finditer(text)
                     if not m.group().startswith(("//", "/*"))]
        self.i = 0

    def line(self) -> int:
        pos = self.toks[min(self.i, len(self.toks) - 1)][1] if self.toks else 0
        return self.text.count("\n", 0, pos) + 1

    def error(self, msg: str) -> ValueError:
        return ValueError(f"BIF line {self.line()}: {msg}")

    def at_end(self) -> bool:
        return self.i >= len(self.toks)

    def peek(self) -> str:
        if self.i >= len(self.toks):
            raise ValueError("BIF text ends too early (a block is not closed).")
        return self.toks[self.i][0]

    def next(self) -> str:
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, tok: str) -> None:
        if self.peek() != tok:
            raise self.error(f"expected {tok!r} but found {self.peek()!r}.")
        self.i += 1

    def name(self) -> str:
        t = self.peek()
        if t in _PUNCT:
            raise self.error(f"expected a name but found {t!r}.")
        self.i += 1
        return t[1:-1] if t.startswith('"') else t

    def names_until(self, close: str, seps: str = ",") -> list[str]:
        """Names up to (not including) ``close``, separated by spaces or ``seps``."""
        out = []
        while self.peek() != close:
            if self.peek() in seps:
                self.i += 1
            else:
                out.append(self.name())
        return out

    def skip_statement(self) -> None:
        """Skip to the ';' that ends the current statement (property lines), or to just before
        the '}' that closes the enclosing block."""
        depth = 0
        while True:
            t = self.peek()
            if t in "})" and depth == 0:
                return
            self.i += 1
            depth += (t in "{(") - (t in "})")
            if t == ";" and depth == 0:
                return

    def skip_block(self) -> None:
        self.expect("{")
        depth = 1
        while depth:
            t = self.next()
            depth += (t == "{") - (t == "}")

    def numbers(self) -> list[float]:
        """Numbers separated by commas or spaces, up to ';' (consumed) or '}' (not)."""
        out = []
        while self.peek() not in ";}":
            t = self.next()
            if t == ",":
                continue
            try:
                out.append(float(t))
            except ValueError:
                self.i -= 1
                raise self.error(f"expected a probability but found {t!r}.") from None
        if self.peek() == ";":
            self.i += 1
        return out


@dataclass
class _Prob:
    """One ``probability`` block as written."""

    child: str
    parents: list[str]
    line: int
    rows: dict[tuple[str, ...], list[float]] = field(default_factory=dict)
    table: list[float] | None = None
    default: list[float] | None = None


@dataclass
class _Decl:
    """Everything declared in a BIF text."""

    name: str = "unknown"
    names: list[str] = field(default_factory=list)
    states: dict[str, list[str]] = field(default_factory=dict)
    probs: dict[str, _Prob] = field(default_factory=dict)


# ---------------------------------------------------------------------- blocks
def _network_block(tk: _Tokens, decl: _Decl) -> None:
    if tk.peek() != "{":
        decl.name = tk.name()
    tk.skip_block()


def _variable_block(tk: _Tokens, decl: _Decl) -> None:
    var = tk.name()
    if var in decl.states:
        raise tk.error(f"variable {var!r} is declared twice.")
    tk.expect("{")
    states: list[str] | None = None
    while tk.peek() != "}":
        item = tk.next().lower()
        if item == "type":
            states = _type_line(tk, var)
        elif item == "property":
            tk.skip_statement()
        elif item != ";":
            tk.i -= 1
            raise tk.error(f"unexpected {item!r} in the declaration of {var!r}.")
    tk.expect("}")
    if states is None:
        raise tk.error(f"variable {var!r} has no 'type discrete [ n ] {{ ... }}' line.")
    decl.names.append(var)
    decl.states[var] = states


def _type_line(tk: _Tokens, var: str) -> list[str]:
    """``discrete [ n ] { s1, s2, ... } ;`` after the ``type`` keyword."""
    kind = tk.next().lower()
    if kind != "discrete":
        raise tk.error(f"variable {var!r} has type {kind!r}; only discrete variables are "
                       "supported.")
    tk.expect("[")
    try:
        count = int(tk.next())
    except ValueError:
        raise tk.error(f"the number of states of {var!r} is not an integer.") from None
    tk.expect("]")
    tk.expect("{")
    states = tk.names_until("}")
    tk.expect("}")
    if tk.peek() == ";":
        tk.next()
    if len(states) != count:
        raise tk.error(f"variable {var!r} declares {count} states but lists {len(states)} "
                       f"({', '.join(states)}).")
    if len(set(states)) != len(states):
        raise tk.error(f"variable {var!r} lists a state twice.")
    return states


def _probability_block(tk: _Tokens, decl: _Decl) -> None:
    """``probability ( child [|] parents... ) { entries }``."""
    line = tk.line()
    tk.expect("(")
    names = tk.names_until(")", seps=",|")
    tk.expect(")")
    if not names:
        raise tk.error("a probability block names no variable.")
    prob = _Prob(names[0], names[1:], line)
    if prob.child in decl.probs:
        raise tk.error(f"the probability of {prob.child!r} is given twice.")
    tk.expect("{")
    while tk.peek() != "}":
        _probability_entry(tk, prob)
    tk.expect("}")
    decl.probs[prob.child] = prob


def _probability_entry(tk: _Tokens, prob: _Prob) -> None:
    """One row ``(states) values;``, ``table values;``, ``default values;`` or property."""
    item = tk.peek()
    low = item.lower()
    if item == "(":
        tk.next()
        cfg = tuple(tk.names_until(")"))
        tk.expect(")")
        if cfg in prob.rows:
            raise tk.error(f"parent configuration ({', '.join(cfg)}) of {prob.child!r} is "
                           "given twice.")
        prob.rows[cfg] = tk.numbers()
    elif low in ("table", "default"):
        tk.next()
        setattr(prob, low, tk.numbers())
    elif low == "property":
        tk.next()
        tk.skip_statement()
    elif item == ";":
        tk.next()
    else:
        raise tk.error(f"unexpected {item!r} in the probability block of {prob.child!r}.")


_BLOCKS: dict[str, Callable[[_Tokens, _Decl], None]] = {
    "network": _network_block,
    "variable": _variable_block,
    "probability": _probability_block,
    "property": lambda tk, decl: tk.skip_statement(),
}


# ---------------------------------------------------------------------- tables
def _resolve(name: str, states: dict[str, list[str]], lower: dict[str, str | None]) -> str | None:
    """A declared variable name, matched exactly or else case-insensitively (if unique)."""
    if name in states:
        return name
    return lower.get(name.lower())


def _table_values(prob: _Prob, values: list[float], r: int, cards: list[int], where: str,
                  what: str) -> np.ndarray:
    """A whole table (child slowest, then the parents, last fastest) as (q, r) rows."""
    q = math.prod(cards)
    if len(values) != q * r:
        raise ValueError(f"{where}: the {what} has {len(values)} values; expected {q * r} "
                         f"({q} parent configurations x {r} states).")
    by_config = np.array(values, dtype=np.float64).reshape(r, q).T
    return rows_from_last_fastest(by_config, cards)


def _cpt(prob: _Prob, states: dict[str, list[str]]) -> np.ndarray:
    """The (q, r) CPT of one probability block (first parent fastest)."""
    where = f"BIF line {prob.line} (probability of {prob.child!r})"
    r = len(states[prob.child])
    cards = [len(states[p]) for p in prob.parents]
    q = math.prod(cards)
    cpt = np.full((q, r), np.nan)
    if prob.default is not None:
        if len(prob.default) == r:
            cpt[:] = prob.default
        else:
            cpt[:] = _table_values(prob, prob.default, r, cards, where, "default entry")
    if prob.table is not None:
        cpt[:] = _table_values(prob, prob.table, r, cards, where, "table")
    lookup = [{s: k for k, s in enumerate(states[p])} for p in prob.parents]
    strides = parent_strides(np.arange(len(cards), dtype=np.int64), np.array(cards, np.int64))
    for cfg, vals in prob.rows.items():
        if len(cfg) != len(prob.parents):
            raise ValueError(f"{where}: configuration ({', '.join(cfg)}) has {len(cfg)} "
                             f"values for {len(prob.parents)} parent(s).")
        j = 0
        for k, s in enumerate(cfg):
            if s not in lookup[k]:
                raise ValueError(f"{where}: {s!r} is not a state of parent {prob.parents[k]!r} "
                                 f"(states: {', '.join(states[prob.parents[k]])}).")
            j += lookup[k][s] * int(strides[k])
        if len(vals) != r:
            raise ValueError(f"{where}: row ({', '.join(cfg)}) has {len(vals)} values; "
                             f"{prob.child!r} has {r} states.")
        cpt[j] = vals
    missing = np.isnan(cpt).any(axis=1)
    if missing.any():
        raise ValueError(f"{where}: {int(missing.sum())} of {q} parent configurations have no "
                         "probabilities.")
    return cpt


def _link_names(decl: _Decl) -> None:
    """Map every name of the probability blocks to a declared variable (case-insensitive
    fallback); raise on unknown names and on variables without a probability block."""
    lower: dict[str, str | None] = {}
    for v in decl.names:
        lower[v.lower()] = None if v.lower() in lower else v
    probs = {}
    for prob in decl.probs.values():
        child = _resolve(prob.child, decl.states, lower)
        if child is None:
            raise ValueError(f"BIF line {prob.line}: probability block for {prob.child!r}, "
                             "which is not a declared variable.")
        for k, p in enumerate(prob.parents):
            pr = _resolve(p, decl.states, lower)
            if pr is None:
                raise ValueError(f"BIF line {prob.line} (probability of {prob.child!r}): parent "
                                 f"{p!r} is not a declared variable.")
            prob.parents[k] = pr
        prob.child = child
        probs[child] = prob
    decl.probs = probs
    missing = [v for v in decl.names if v not in probs]
    if missing:
        raise ValueError(missing_message("BIF", missing, "probability block"))


def _parse_bif(text: str, atol: float) -> DiscreteBN:
    tk = _Tokens(text)
    decl = _Decl()
    while not tk.at_end():
        block = _BLOCKS.get(tk.peek().lower())
        if block is None:
            raise tk.error(f"expected 'network', 'variable' or 'probability' but found "
                           f"{tk.peek()!r}.")
        tk.next()
        block(tk, decl)
    if not decl.names:
        raise ValueError("The BIF text declares no variables.")
    _link_names(decl)
    check_table_sizes("BIF", ((f"BIF line {p.line}", p.child, [len(decl.states[x]) for x in
                                                                 p.parents],
                               len(decl.states[p.child])) for p in decl.probs.values()))
    cpts = [_cpt(decl.probs[v], decl.states) for v in decl.names]
    try:
        return DiscreteBN(decl.names, [decl.states[v] for v in decl.names],
                          [decl.probs[v].parents for v in decl.names], cpts, name=decl.name,
                          atol=atol)
    except ValueError as e:
        raise ValueError(f"BIF: {e}") from None


def read_bif(source: str | Path | bytes, atol: float = ROW_SUM_ATOL) -> DiscreteBN:
    """Read a network in BIF (bnlearn / pgmpy or JavaBayes dialect; module docstring).

    Parameters
    ----------
    source : str, Path or bytes
        A path to a ``.bif`` or ``.bif.gz`` file (gzip detected from the content), BIF text, or
        raw (possibly gzipped) bytes.
    atol : float
        Tolerance on CPT row sums (rows are renormalised).

    Returns
    -------
    DiscreteBN
        Variables in declaration order, parents in the order of each ``probability`` line.

    Raises
    ------
    ValueError
        Syntax errors (with the line), unknown variables or states, wrong value counts, missing
        parent configurations, variables without a probability block (all named), cycles, rows
        not summing to 1.
    """
    text = decode(read_source(source, "BIF", "{"))
    if text.lstrip("\ufeff \t\r\n").startswith("<"):
        raise ValueError("This is XML, not BIF: read it with read_xmlbif (load_network "
                         "recognises both).")
    return _parse_bif(text, atol)


# ---------------------------------------------------------------------- writing
_NEEDS_QUOTES = re.compile(r'[\s{}\[\]()|,;]|//|/\*')


def _label(s: str) -> str:
    """A name as written: bare, or quoted when it holds spaces or punctuation."""
    if not s or '"' in s or "\n" in s or "\\" in s:
        raise ValueError(f"{s!r} cannot be written to BIF (names must be non-empty and contain "
                         "no double quote, backslash or line break).")
    return f'"{s}"' if _NEEDS_QUOTES.search(s) else s


def bif_text(bn: DiscreteBN) -> str:
    """The network as BIF text (bnlearn dialect; rows listed with the first parent varying
    fastest; every probability printed with ``repr`` so that reading it back gives identical
    floats)."""
    names = [_label(n) for n in bn.names]
    states = [[_label(s) for s in st] for st in bn.states]
    out = io.StringIO()
    out.write(f"network {_label(bn.name)} {{\n}}\n")
    for nm, st in zip(names, states):
        out.write(f"variable {nm} {{\n  type discrete [ {len(st)} ] {{ {', '.join(st)} }};\n}}\n")
    for i, nm in enumerate(names):
        pa = bn.parents[i]
        cpt = bn.cpts[i]
        if not len(pa):
            out.write(f"probability ( {nm} ) {{\n  table {_nums(cpt[0])};\n}}\n")
            continue
        out.write(f"probability ( {nm} | {', '.join(names[int(p)] for p in pa)} ) {{\n")
        strides = parent_strides(pa, bn.arities)
        for j in range(cpt.shape[0]):
            cfg = [states[int(p)][(j // int(s)) % int(bn.arities[p])] for p, s in zip(pa, strides)]
            out.write(f"  ({', '.join(cfg)}) {_nums(cpt[j])};\n")
        out.write("}\n")
    return out.getvalue()


def _nums(row: np.ndarray) -> str:
    return ", ".join(repr(float(x)) for x in row)


def write_bif(bn: DiscreteBN, path: str | Path) -> None:
    """Write ``bn`` as BIF; gzip-compressed when ``path`` ends in ``.gz`` (mtime 0, so the bytes
    depend only on the network)."""
    write_bytes(path, bif_text(bn).encode("utf-8"))
