"""XMLBIF 0.3 reading and writing (Cozman 1998; the format of Weka, JavaBayes and pgmpy).

``<BIF VERSION="0.3"><NETWORK><NAME>`` holds the network name; each ``<VARIABLE>`` a ``<NAME>``
and its ``<OUTCOME>`` states; each ``<DEFINITION>`` one ``<FOR>`` variable, its ``<GIVEN>``
parents in order and a ``<TABLE>`` of whitespace-separated probabilities listed with the
child's state varying fastest, then the parents with the **last** varying fastest. Tag names
are matched case-insensitively; ``PROPERTY`` elements are ignored. Parsing uses the standard
library's :mod:`xml.etree.ElementTree`.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ._io import (
    check_table_sizes,
    missing_message,
    read_source,
    rows_from_last_fastest,
    rows_to_last_fastest,
    write_bytes,
)
from .model import ROW_SUM_ATOL, DiscreteBN

__all__ = ["read_xmlbif", "write_xmlbif", "xmlbif_text"]

_DTD = """<!DOCTYPE BIF [
  <!ELEMENT BIF ( NETWORK )*>
    <!ATTLIST BIF VERSION CDATA #REQUIRED>
  <!ELEMENT NETWORK ( NAME, ( PROPERTY | VARIABLE | DEFINITION )* )>
  <!ELEMENT NAME (#PCDATA)>
  <!ELEMENT VARIABLE ( NAME, ( OUTCOME | PROPERTY )* ) >
    <!ATTLIST VARIABLE TYPE (nature|decision|utility) "nature">
  <!ELEMENT OUTCOME (#PCDATA)>
  <!ELEMENT DEFINITION ( FOR | GIVEN | TABLE | PROPERTY )* >
  <!ELEMENT FOR (#PCDATA)>
  <!ELEMENT GIVEN (#PCDATA)>
  <!ELEMENT TABLE (#PCDATA)>
  <!ELEMENT PROPERTY (#PCDATA)>
]>
"""


def _kids(elem: ET.Element, tag: str) -> list[ET.Element]:
    return [c for c in elem if isinstance(c.tag, str) and c.tag.upper() == tag]


def _text(elem: ET.Element, tag: str, where: str) -> str:
    found = _kids(elem, tag)
    if not found or not (found[0].text or "").strip():
        raise ValueError(f"XMLBIF: {where} has no <{tag}>.")
    return (found[0].text or "").strip()


def _network(root: ET.Element) -> ET.Element:
    if root.tag.upper() == "NETWORK":
        return root
    nets = _kids(root, "NETWORK")
    if root.tag.upper() != "BIF" or not nets:
        raise ValueError("XMLBIF: expected <BIF><NETWORK> ... </NETWORK></BIF>.")
    return nets[0]


def _variables(net: ET.Element) -> tuple[list[str], dict[str, list[str]]]:
    names: list[str] = []
    states: dict[str, list[str]] = {}
    for k, var in enumerate(_kids(net, "VARIABLE")):
        name = _text(var, "NAME", f"variable {k + 1}")
        kind = var.get("TYPE", var.get("type", "nature")).lower()
        if kind != "nature":
            raise ValueError(f"XMLBIF: variable {name!r} has TYPE {kind!r}; only chance "
                             "('nature') variables are supported.")
        if name in states:
            raise ValueError(f"XMLBIF: variable {name!r} is declared twice.")
        names.append(name)
        states[name] = [(o.text or "").strip() for o in _kids(var, "OUTCOME")]
        if not states[name]:
            raise ValueError(f"XMLBIF: variable {name!r} has no <OUTCOME>.")
    if not names:
        raise ValueError("XMLBIF: the network declares no variables.")
    return names, states


def _declared(net: ET.Element, states: dict[str, list[str]]
              ) -> list[tuple[ET.Element, str, str, list[str]]]:
    """(element, where, child, parents) of every ``<DEFINITION>``, names checked, before any
    table is read."""
    out = []
    seen: set[str] = set()
    for k, d in enumerate(_kids(net, "DEFINITION")):
        child = _text(d, "FOR", f"definition {k + 1}")
        where = f"XMLBIF definition of {child!r}"
        if child not in states:
            raise ValueError(f"{where}: {child!r} is not a declared variable.")
        if child in seen:
            raise ValueError(f"{where}: given twice.")
        seen.add(child)
        parents = [(g.text or "").strip() for g in _kids(d, "GIVEN")]
        for p in parents:
            if p not in states:
                raise ValueError(f"{where}: parent {p!r} is not a declared variable.")
        out.append((d, where, child, parents))
    return out


def _definitions(net: ET.Element, states: dict[str, list[str]]
                 ) -> dict[str, tuple[list[str], np.ndarray]]:
    out: dict[str, tuple[list[str], np.ndarray]] = {}
    declared = _declared(net, states)
    check_table_sizes("XMLBIF", ((where, child, [len(states[p]) for p in parents],
                                  len(states[child])) for _, where, child, parents in declared))
    for d, where, child, parents in declared:
        try:
            values = [float(x) for x in _text(d, "TABLE", where).split()]
        except ValueError as e:
            raise ValueError(f"{where}: the table holds a non-number ({e}).") from None
        cards = [len(states[p]) for p in parents]
        r, q = len(states[child]), math.prod(cards)
        if len(values) != q * r:
            raise ValueError(f"{where}: the table has {len(values)} values; expected {q * r} "
                             f"({q} parent configurations x {r} states).")
        rows = np.array(values, dtype=np.float64).reshape(q, r)
        out[child] = (parents, rows_from_last_fastest(rows, cards))
    return out


def read_xmlbif(source: str | Path | bytes, atol: float = ROW_SUM_ATOL) -> DiscreteBN:
    """Read a network in XMLBIF 0.3.

    Parameters
    ----------
    source : str, Path or bytes
        A path (``.xml``, ``.xmlbif``, optionally gzipped), XML text, or raw bytes.
    atol : float
        Tolerance on CPT row sums (rows are renormalised).

    Raises
    ------
    ValueError
        Malformed XML, unknown variables, wrong table sizes, variables without a definition
        (all named), cycles, rows not summing to 1.
    """
    raw = read_source(source, "XMLBIF", "<")
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as e:
        raise ValueError(f"XMLBIF: not well-formed XML ({e}).") from None
    net = _network(root)
    name = (_kids(net, "NAME")[0].text or "unknown").strip() if _kids(net, "NAME") else "unknown"
    names, states = _variables(net)
    defs = _definitions(net, states)
    missing = [v for v in names if v not in defs]
    if missing:
        raise ValueError(missing_message("XMLBIF", missing, "<DEFINITION>"))
    try:
        return DiscreteBN(names, [states[v] for v in names], [defs[v][0] for v in names],
                          [defs[v][1] for v in names], name=name, atol=atol)
    except ValueError as e:
        raise ValueError(f"XMLBIF: {e}") from None


def xmlbif_text(bn: DiscreteBN) -> str:
    """The network as XMLBIF 0.3 text (with the format's DTD; probabilities printed with
    ``repr`` so that reading back gives identical floats)."""
    bif = ET.Element("BIF", VERSION="0.3")
    net = ET.SubElement(bif, "NETWORK")
    ET.SubElement(net, "NAME").text = bn.name
    for nm, st in zip(bn.names, bn.states):
        var = ET.SubElement(net, "VARIABLE", TYPE="nature")
        ET.SubElement(var, "NAME").text = nm
        for s in st:
            ET.SubElement(var, "OUTCOME").text = s
    for i, nm in enumerate(bn.names):
        d = ET.SubElement(net, "DEFINITION")
        ET.SubElement(d, "FOR").text = nm
        for p in bn.parents[i]:
            ET.SubElement(d, "GIVEN").text = bn.names[int(p)]
        rows = rows_to_last_fastest(bn.cpts[i], [int(bn.arities[p]) for p in bn.parents[i]])
        ET.SubElement(d, "TABLE").text = " ".join(repr(float(x)) for x in rows.ravel())
    ET.indent(bif)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + _DTD
            + ET.tostring(bif, encoding="unicode") + "\n")


def write_xmlbif(bn: DiscreteBN, path: str | Path) -> None:
    """Write ``bn`` as XMLBIF 0.3; gzip-compressed when ``path`` ends in ``.gz``."""
    write_bytes(path, xmlbif_text(bn).encode("utf-8"))
