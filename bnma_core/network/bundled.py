"""The networks shipped with the package and :func:`load_network`."""

from __future__ import annotations

from pathlib import Path

from ..datasets import bundled_path
from ._io import read_source
from .bif import read_bif
from .model import DiscreteBN
from .xmlbif import read_xmlbif

__all__ = ["BUNDLED_NETWORKS", "load_network"]

BUNDLED_NETWORKS = ("alarm", "hepar2", "asia")

_XML_SUFFIXES = (".xml", ".xmlbif", ".xml.gz", ".xmlbif.gz")


def load_network(name_or_path: str | Path | DiscreteBN) -> DiscreteBN:
    """A bundled network by name (``alarm``, ``hepar2``, ``asia``, in
    ``sample_data/``) or a network read from a file: BIF (``.bif``, ``.bif.gz``) or
    XMLBIF (``.xml``, ``.xmlbif``, optionally ``.gz``; also any file whose text starts with
    ``<``)."""
    if isinstance(name_or_path, DiscreteBN):
        return name_or_path
    key = str(name_or_path).strip().lower()
    if key in BUNDLED_NETWORKS:
        bn = read_bif(bundled_path(f"{key}.bif.gz"))
        bn.name = key
        return bn
    p = Path(name_or_path)
    if not p.is_file():
        raise ValueError(f"Unknown network {str(name_or_path)!r}: give one of "
                         f"{', '.join(BUNDLED_NETWORKS)} or the path of a .bif / .bif.gz / "
                         ".xml / .xmlbif file.")
    if p.name.lower().endswith(_XML_SUFFIXES) or _starts_with_xml(p):
        return read_xmlbif(p)
    return read_bif(p)


def _starts_with_xml(p: Path) -> bool:
    return read_source(p, "network", "\0")[:512].lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")
