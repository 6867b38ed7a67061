"""Model files: a fitted model saved and loaded without pickle (DESIGN §17).

A model file (``.bnma``) is a ZIP archive of JSON documents and NumPy ``.npy`` arrays::

    manifest.json       format name and version, library version, the SHA-256 of every other
                        member and of the whole content
    info.json           provenance in plain JSON: method code and name, parameters, seed,
                        training data fingerprint and size, class and feature names, states,
                        missing-value handling, date, the development out-of-fold summary
    state.json          the fitted estimator and the data encoder as a tree of tagged JSON
                        values (small arrays inline, base64 of little-endian bytes)
    arrays/000000.npy   larger arrays, read with ``allow_pickle=False``

Nothing in a model file is ever unpickled or imported by name: objects are rebuilt from an
explicit allow-list of the library's classes (the registered estimators and their data
classes), networks through :class:`~bnma_core.network.DiscreteBN`'s checking constructor.
A file is untrusted input (DESIGN §17): its size, every member's name, declared size and
compression ratio, its format version and its checksums are checked before anything is read
into memory or decoded, and each refusal is one sentence (:class:`ModelFileError`).

Examples
--------
>>> import tempfile, numpy as np
>>> from bnma_core import load_dataset, save_model, load_model
>>> from bnma_core.classifiers.registry import fit_method
>>> from bnma_core.datasets import bundled_path
>>> ds = load_dataset(bundled_path("wbc.csv"))
>>> model = fit_method("nb", ds)
>>> path = save_model(model, tempfile.mkdtemp() + "/nb.bnma", dataset=ds, method="nb")
>>> again = load_model(path)
>>> bool(np.abs(again.predict_proba(ds.X) - model.predict_proba(ds.X)).max() < 1e-12)
True
>>> again.model_info_["method"], again.model_info_["n_rows"]
('nb', 699)
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import importlib
import io
import json
import math
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .data import DataError

FORMAT = "bnma-model"
FORMAT_VERSION = 1
"""Version of the layout written here; a file with a larger version is refused."""
SUFFIX = ".bnma"

MAX_FILE_BYTES = 512 * 2**20
"""Largest model file read (compressed)."""
MAX_CONTENT_BYTES = 1024 * 2**20
"""Largest total declared uncompressed size of a model file's members."""
MAX_ARRAY_BYTES = 8 * 25_000_000
"""Largest single array: as many int64 values as :data:`bnma_core.limits.MAX_CELLS`."""
MAX_JSON_BYTES = 256 * 2**20
"""Largest JSON member (uncompressed)."""
MAX_MEMBERS = 200_000
"""Most members of a model file."""
MAX_RATIO = 1000
"""Largest ratio of declared content to file size over 1 MiB of content. DEFLATE cannot
expand more than 1032 times, which only crafted runs of one byte reach; legitimate models
stay far below (bagged exact networks on WBC, whose large CPTs repeat one uniform row for
every unseen parent configuration: 470)."""
MAX_DEPTH = 200
"""Deepest nesting of the state tree."""
INLINE_BYTES = 512
"""Arrays up to this size are stored inline in state.json."""

_MEMBER_NAME = re.compile(r"^(manifest\.json|info\.json|state\.json|arrays/\d{6}\.npy)$")
_ARRAY_KINDS = "biuf"

# library data classes a model may hold (besides the registered estimator classes)
_DATA_CLASSES = (
    "bnma_core.classifiers.kbest:Subsample",
    "bnma_core.classifiers.ukdb:KDependenceStructure",
    "bnma_core.data.encoding:DiscreteEncoder",
    "bnma_core.data.encoding:ColumnCoding",
    "bnma_core.factors:FactorModel",
    "bnma_core.kernels.orders:TableArrays",
    "bnma_core.structure.exact:ScoredStructure",
    "bnma_core.structure.exact:ExactLimits",
    "bnma_core.structure.orders:OrderMCMCResult",
    "bnma_core.structure.score_table:ScoreTable",
)
# attributes not saved (caches rebuilt on use, callbacks of a running fit): restored as None
_TRANSIENT = {
    "bnma_core.structure.score_table:ScoreTable": ("_arrays", "_cpt"),
    "bnma_core.classifiers.kbest:SubbaggingKBest": ("_progress",),
}


class ModelFileError(DataError):
    """A model file that cannot be written or read, with a one-sentence reason."""


def _class_key(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def allowed_keys() -> frozenset[str]:
    """The ``"module:Class"`` keys of the classes a model file may hold: every registered
    estimator class and the library's data classes (:data:`_DATA_CLASSES`)."""
    from .classifiers.registry import METHODS

    return frozenset({spec.factory for spec in METHODS.values()} | set(_DATA_CLASSES))


def _allowed_class(key: str) -> type | None:
    """The class of an allow-listed key (its module imported now), else None."""
    if key not in allowed_keys():
        return None
    module, _, name = key.partition(":")
    return getattr(importlib.import_module(module), name)


# --- encoding: Python objects -> tagged JSON + arrays ------------------------------------------

class _Writer:
    def __init__(self) -> None:
        self.arrays: list[bytes] = []
        self.allowed = allowed_keys()

    def key(self, o: Any) -> str | None:
        key = _class_key(type(o))
        return key if key in self.allowed else None

    def array(self, a: np.ndarray) -> dict:
        if a.dtype.kind not in _ARRAY_KINDS:
            raise TypeError(f"an array of dtype {a.dtype}")
        a = np.ascontiguousarray(a)
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("<"))
        if a.nbytes <= INLINE_BYTES:
            return {"$nd": [a.dtype.str, list(a.shape),
                            base64.b64encode(a.tobytes()).decode("ascii")]}
        buf = io.BytesIO()
        np.save(buf, a, allow_pickle=False)
        self.arrays.append(buf.getvalue())
        return {"$npy": len(self.arrays) - 1}

    def encode(self, o: Any, where: str, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise TypeError("nesting deeper than the format allows")
        if o is None or isinstance(o, bool | str):
            return o
        if isinstance(o, int):
            return int(o)
        if isinstance(o, float):
            return o if math.isfinite(o) else {"$f": repr(o)}
        if isinstance(o, np.ndarray):
            if o.dtype.kind in _ARRAY_KINDS:
                return self.array(o)
            if o.dtype.kind in "OUS":
                return {"$objarray": [list(o.shape), [self.encode(v, where, depth + 1)
                                                      for v in o.ravel().tolist()]]}
            raise TypeError(f"an array of dtype {o.dtype}")
        if isinstance(o, np.generic):
            if o.dtype.kind not in _ARRAY_KINDS + "US":
                raise TypeError(f"a NumPy scalar of dtype {o.dtype}")
            return {"$np": [o.dtype.str, self.encode(o.item(), where, depth + 1)]}
        if isinstance(o, list):
            return [self.encode(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(o)]
        key = self.key(o)
        if isinstance(o, tuple) and key is None:
            if type(o) is not tuple:
                raise TypeError(f"a {type(o).__name__}")
            return {"$tuple": [self.encode(v, f"{where}[{i}]", depth + 1)
                               for i, v in enumerate(o)]}
        if isinstance(o, set | frozenset):
            items = sorted(o, key=repr)
            return {"$set": [self.encode(v, where, depth + 1) for v in items]}
        if isinstance(o, dict):
            if type(o) is not dict:
                raise TypeError(f"a {type(o).__name__}")
            if all(isinstance(k, str) and not k.startswith("$") for k in o):
                return {k: self.encode(v, f"{where}[{k!r}]", depth + 1) for k, v in o.items()}
            return {"$dict": [[self.encode(k, where, depth + 1),
                               self.encode(v, f"{where}[{k!r}]", depth + 1)]
                              for k, v in o.items()]}
        return self.encode_object(o, key, where, depth)

    def encode_object(self, o: Any, key: str | None, where: str, depth: int) -> Any:
        import networkx as nx
        import pandas as pd

        from .network import DiscreteBN

        if isinstance(o, DiscreteBN):
            return {"$bn": {"name": o.name, "names": o.names, "states": o.states,
                            "parents": [self.encode(p, where, depth + 1) for p in o.parents],
                            "cpts": [self.array(np.asarray(c, dtype=float)) for c in o.cpts]}}
        if type(o) in (nx.DiGraph, nx.Graph):
            return {"$graph": {
                "directed": isinstance(o, nx.DiGraph),
                "graph": self.encode(dict(o.graph), where, depth + 1),
                "nodes": [[self.encode(n, where, depth + 1), self.encode(dict(a), where, depth + 1)]
                          for n, a in o.nodes(data=True)],
                "edges": [[self.encode(u, where, depth + 1), self.encode(v, where, depth + 1),
                           self.encode(dict(a), where, depth + 1)]
                          for u, v, a in o.edges(data=True)]}}
        if isinstance(o, pd.DataFrame):
            return {"$frame": {
                "columns": self.encode(np.asarray(o.columns, dtype=object), where, depth + 1),
                "index": self.encode(np.asarray(o.index, dtype=object), where, depth + 1),
                "names": [self.encode(o.columns.name, where), self.encode(o.index.name, where)],
                "data": [self.encode(np.asarray(o.iloc[:, j]), where, depth + 1)
                         for j in range(o.shape[1])]}}
        if isinstance(o, pd.Series):
            return {"$series": {
                "name": self.encode(o.name, where),
                "index": self.encode(np.asarray(o.index, dtype=object), where, depth + 1),
                "index_name": self.encode(o.index.name, where),
                "data": self.encode(np.asarray(o), where, depth + 1)}}
        if key is None:
            raise TypeError(f"a {type(o).__module__}.{type(o).__qualname__}")
        if isinstance(o, tuple):  # a NamedTuple of the library
            return {"$namedtuple": [key, {f: self.encode(getattr(o, f), f"{where}.{f}",
                                                         depth + 1) for f in o._fields}]}
        transient = _TRANSIENT.get(key, ())
        state = {k: (None if k in transient else v) for k, v in vars(o).items()}
        return {"$obj": [key, self.encode_attrs(state, where, depth)]}

    def encode_attrs(self, state: dict, where: str, depth: int) -> dict:
        return {k: self.encode(v, f"{where}.{k}", depth + 1) for k, v in state.items()}


# --- decoding: tagged JSON + arrays -> Python objects (allow-listed classes only) --------------

class _Reader:
    def __init__(self, arrays: list[np.ndarray]) -> None:
        self.arrays = arrays

    def array(self, node: Any) -> np.ndarray:
        if isinstance(node, dict) and "$npy" in node:
            i = node["$npy"]
            if not isinstance(i, int) or not 0 <= i < len(self.arrays):
                raise ModelFileError("The model file refers to an array it does not hold.")
            return self.arrays[i]
        if isinstance(node, dict) and "$nd" in node:
            dtype, shape, data = node["$nd"]
            dt = np.dtype(_checked_dtype(dtype))
            shape = tuple(int(s) for s in shape)
            raw = base64.b64decode(data, validate=True)
            if math.prod(shape) * dt.itemsize != len(raw) or any(s < 0 for s in shape):
                raise ModelFileError("An inline array of the model file has the wrong size.")
            return np.frombuffer(raw, dtype=dt).reshape(shape).copy()
        raise ModelFileError("The model file holds a value where an array was expected.")

    def decode(self, node: Any, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise ModelFileError("The model file nests values deeper than the format allows.")
        if node is None or isinstance(node, bool | int | float | str):
            return node
        if isinstance(node, list):
            return [self.decode(v, depth + 1) for v in node]
        if not isinstance(node, dict):
            raise ModelFileError("The model file holds a value of an unknown kind.")
        if len(node) == 1:
            (tag, body), = node.items()
            if tag.startswith("$"):
                return self.tagged(tag, body, depth)
        if any(k.startswith("$") for k in node):
            raise ModelFileError("The model file holds a value of an unknown kind.")
        return {k: self.decode(v, depth + 1) for k, v in node.items()}

    def tagged(self, tag: str, body: Any, depth: int) -> Any:
        d = depth + 1
        if tag in ("$nd", "$npy"):
            return self.array({tag: body})
        if tag == "$f":
            if body not in ("nan", "inf", "-inf"):
                raise ModelFileError("The model file holds an invalid number.")
            return float(body)
        if tag == "$np":
            dtype, value = body
            return np.dtype(_checked_dtype(dtype, "US")).type(self.decode(value, d))
        if tag == "$tuple":
            return tuple(self.decode(v, d) for v in body)
        if tag == "$set":
            return {self.decode(v, d) for v in body}
        if tag == "$dict":
            return {_hashable(self.decode(k, d)): self.decode(v, d) for k, v in body}
        if tag == "$objarray":
            shape, items = body
            out = np.empty(len(items), dtype=object)
            for i, v in enumerate(items):
                out[i] = self.decode(v, d)
            return out.reshape(tuple(int(s) for s in shape))
        if tag == "$bn":
            from .network import DiscreteBN

            try:
                return DiscreteBN(body["names"], body["states"],
                                  [[int(p) for p in self.decode(pa, d)] for pa in body["parents"]],
                                  [self.array(c) for c in body["cpts"]], name=body["name"])
            except (ValueError, TypeError, KeyError) as exc:
                raise ModelFileError(f"A network in the model file is invalid: {exc}") from None
        if tag == "$graph":
            import networkx as nx

            g = nx.DiGraph() if body["directed"] else nx.Graph()
            g.graph.update(self.decode(body["graph"], d))
            for n, attrs in body["nodes"]:
                g.add_node(_hashable(self.decode(n, d)), **self.decode(attrs, d))
            for u, v, attrs in body["edges"]:
                g.add_edge(_hashable(self.decode(u, d)), _hashable(self.decode(v, d)),
                           **self.decode(attrs, d))
            return g
        if tag == "$frame":
            import pandas as pd

            cols = list(self.decode(body["columns"], d))
            data = {i: self.decode(c, d) for i, c in enumerate(body["data"])}
            frame = pd.DataFrame(data, index=pd.Index(list(self.decode(body["index"], d))))
            frame.columns = pd.Index(cols)
            frame.columns.name, frame.index.name = (self.decode(v, d) for v in body["names"])
            return frame
        if tag == "$series":
            import pandas as pd

            s = pd.Series(self.decode(body["data"], d),
                          index=pd.Index(list(self.decode(body["index"], d))),
                          name=self.decode(body["name"], d))
            s.index.name = self.decode(body["index_name"], d)
            return s
        if tag in ("$obj", "$namedtuple"):
            key, state = body
            cls = _allowed_class(key) if isinstance(key, str) else None
            if cls is None:
                raise ModelFileError(f"The model file refers to the class {str(key)[:80]!r}, "
                                     "which a model file may not hold.")
            values = {k: self.decode(v, d) for k, v in state.items()}
            if tag == "$namedtuple":
                return cls(**values)
            obj = cls.__new__(cls)
            obj.__dict__.update(values)
            return obj
        raise ModelFileError(f"The model file holds an unknown kind of value ({tag[:20]}).")


def _hashable(v: Any) -> Any:
    return tuple(_hashable(x) for x in v) if isinstance(v, list) else v


def _checked_dtype(text: Any, extra: str = "") -> str:
    try:
        dt = np.dtype(str(text))
    except TypeError:
        raise ModelFileError("The model file holds an array of an unknown type.") from None
    if dt.kind not in _ARRAY_KINDS + extra or dt.hasobject:
        raise ModelFileError(f"The model file holds an array of type {dt}, which a model file "
                             "may not hold.")
    return str(text)


# --- provenance --------------------------------------------------------------------------------

def _method_code(model: Any) -> str:
    """The registry code whose class and defaults the model has ('' if none)."""
    from .classifiers.registry import METHODS

    params = model.get_params(deep=False)
    key = _class_key(type(model))
    for name, spec in METHODS.items():
        if spec.factory != key:
            continue
        if all(_same(params.get(k), v) for k, v in spec.defaults.items()):
            return name
    return ""


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(np.all(a == b)) if not isinstance(a, tuple | list) else \
            list(a) == list(b)
    except (TypeError, ValueError):
        return False


def _plain_params(model: Any) -> dict:
    out = {}
    for k, v in model.get_params(deep=False).items():
        if v is None or isinstance(v, bool | int | float | str):
            out[k] = v
        elif isinstance(v, tuple | list):
            out[k] = [x if isinstance(x, bool | int | float | str) or x is None else repr(x)
                      for x in v]
        else:
            out[k] = repr(v)
    return out


def model_info(model: Any, dataset: Any = None, method: str | None = None,
               settings: Mapping | None = None, development: Any = None) -> dict:
    """The provenance saved in ``info.json``: method, parameters, seed, training data
    fingerprint and size, variables and states, missing-value handling, versions and date.

    Parameters
    ----------
    model : fitted estimator
    dataset : DiscreteDataset, optional
        The data it was fitted on (fingerprint, size, encoder, names and states).
    method : str, optional
        The registry code (default: the code whose class and defaults match).
    settings : mapping, optional
        How the data were read (e.g. :class:`~bnma_core.data.spec.DatasetSpec` fields).
    development : CVPredictions, optional
        The development data's out-of-fold predictions of this method
        (:func:`bnma_core.validation.development_predictions`); ``info`` records their
        folds, seed and rows, the state holds them.
    """
    from . import __version__
    from .classifiers.registry import capabilities, display_name, is_method

    code = method or _method_code(model)
    params = _plain_params(model)
    names = [str(n) for n in getattr(model, "feature_names_in_", [])]
    info: dict[str, Any] = {
        "method": code,
        "method_name": display_name(code) if code and is_method(code) else type(model).__name__,
        "estimator": _class_key(type(model)),
        "params": params,
        "seed": params.get("random_state"),
        "classes": [str(c) for c in model.classes_],
        "features": names,
        "feature_states": [[str(s) for s in st] for st in getattr(model, "feature_states_", [])],
        "n_train_rows": int(getattr(model, "n_train_rows_", -1)),
        "missing": {"fit": capabilities(model).fit_missing,
                    "predict": capabilities(model).predict_missing},
        "library_version": __version__,
        "numpy_version": np.__version__,
        "created": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
    }
    if dataset is not None:
        info.update(data_fingerprint=dataset.fingerprint(), n_rows=int(dataset.n_rows),
                    class_name=str(dataset.class_name),
                    n_missing_values=int((dataset.X < 0).sum()))
        info["missing"]["rows"] = "kept" if (dataset.codes < 0).any() else "complete"
    if settings:
        info["settings"] = {k: v for k, v in dict(settings).items()
                            if v is None or isinstance(v, bool | int | float | str | list)}
    if development is not None:
        info["development"] = {"folds": int(len(np.unique(development.folds))),
                               "seed": development.seed, "rows": int(len(development.y)),
                               "methods": list(development.proba)}
    return info


# --- the file ----------------------------------------------------------------------------------

@dataclass
class ModelFile:
    """What a model file holds: the fitted estimator, the encoder of raw columns (None when
    the model was fitted on codes), the provenance (``info.json``) and the self-check rows.

    Attributes
    ----------
    estimator : fitted estimator
    encoder : DiscreteEncoder or None
    info : dict
    check_codes, check_proba : ndarray
        Feature codes and the class probabilities the model gave them when it was saved;
        :func:`read_model` recomputes them (a file that predicts differently is refused).
    train : (X, y) or None
        The training rows as feature codes and class labels, when they were kept
        (``keep_rows``): the parameter draws of the intervals count from them (DESIGN §15).
    development : CVPredictions or None
        The development data's out-of-fold predictions, when ``bnma fit --cv-folds`` made
        them (the development column of ``bnma report --model``).
    """

    estimator: Any
    encoder: Any = None
    info: dict = field(default_factory=dict)
    check_codes: np.ndarray | None = None
    check_proba: np.ndarray | None = None
    train: tuple | None = None
    development: Any = None


def _check_rows(model: Any, seed: int = 0, n: int = 16) -> np.ndarray:
    """A few feature-code rows covering every state (some values missing) for the self-check."""
    ar = np.asarray(model.arities_, dtype=np.int64)
    rng = np.random.default_rng(seed)
    codes = (rng.random((n, len(ar))) * ar).astype(np.int64)
    codes[rng.random(codes.shape) < 0.15] = -1
    return codes


def save_model(model: Any, path: str | Path, *, dataset: Any = None, method: str | None = None,
               settings: Mapping | None = None, development: Any = None,
               encoder: Any = None, keep_rows: bool = True) -> Path:
    """Write a fitted model to a model file (DESIGN §17).

    Parameters
    ----------
    model : fitted estimator or ModelFile
        A fitted estimator of a registered method (e.g. from
        :func:`bnma_core.classifiers.registry.fit_method`), or a :class:`ModelFile` read
        before (written again with its provenance).
    path : str or Path
        Written through a temporary ``.part`` file, so a failed save leaves no half file.
    dataset : DiscreteDataset, optional
        The training data: its fingerprint, size and encoder are saved.
    method, settings, development
        As for :func:`model_info`.
    encoder : DiscreteEncoder, optional
        How raw columns become codes (default ``dataset.encoder``).
    keep_rows : bool
        Keep the training rows of ``dataset`` as codes (their smallest integer type), so that
        a loaded model gives the interval with parameter uncertainty (DESIGN §15). The file
        then holds the training data, coded: share it as you would share the data. UKDB, and
        so ``stack``, keep their training codes in the estimator whatever this says.

    Returns
    -------
    Path

    Raises
    ------
    ModelFileError
        The model holds something the format does not store (one sentence naming it), or it
        is not fitted.
    """
    data = model_bytes(model, dataset=dataset, method=method, settings=settings,
                       development=development, encoder=encoder, keep_rows=keep_rows)
    path = Path(path)
    tmp = path.with_name(path.name + ".part")
    try:
        tmp.write_bytes(data)
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ModelFileError(f"Cannot write {path}: {exc.strerror or exc}.") from None
    return path


def model_bytes(model: Any, *, dataset: Any = None, method: str | None = None,
                settings: Mapping | None = None, development: Any = None,
                encoder: Any = None, keep_rows: bool = True) -> bytes:
    """The bytes of the model file :func:`save_model` writes (e.g. for a download)."""
    train = None
    if isinstance(model, ModelFile):
        info, enc, est, train = dict(model.info), model.encoder, model.estimator, model.train
        development = model.development
    else:
        est = model
        if not hasattr(est, "classes_"):
            raise ModelFileError("Only a fitted model can be saved; fit it first.")
        enc = encoder if encoder is not None else getattr(dataset, "encoder", None)
        if enc is not None and dataset is not None:  # the features of this model only
            from dataclasses import replace

            wanted = set(dataset.feature_names)
            enc = replace(enc, columns_=[c for c in enc.columns_ if c.name in wanted])
        info = model_info(est, dataset, method, settings, development)
        if dataset is not None and keep_rows:
            train = (dataset.X, np.asarray(dataset.classes, dtype=object)[dataset.y])
        info["training_rows_kept"] = train is not None
    if _class_key(type(est)) not in allowed_keys():
        raise ModelFileError(f"{type(est).__name__} cannot be saved: model files hold the "
                             "registered methods only.")
    writer = _Writer()
    check = _check_rows(est)
    try:
        proba = est.predict_proba(check)
    except Exception:  # noqa: BLE001 - an estimator that cannot score these rows
        check, proba = check[:0], np.zeros((0, len(est.classes_)))
    try:
        state = {"estimator": writer.encode(est, "model"),
                 "encoder": writer.encode(enc, "encoder"),
                 "check": {"codes": writer.array(check), "proba": writer.array(proba)}}
        if development is not None:
            d = development
            state["development"] = {
                "y": writer.array(np.asarray(d.y, dtype=np.int64)),
                "classes": [str(c) for c in d.classes],
                "proba": {str(k): writer.array(np.asarray(v, dtype=float))
                          for k, v in d.proba.items()},
                "folds": writer.array(np.asarray(d.folds, dtype=np.int64)),
                "row_ids": writer.array(np.asarray(d.row_ids, dtype=np.int64)),
                "seed": d.seed, "class_name": d.class_name}
        if train is not None:
            X, labels = train
            X = np.asarray(X)
            small = np.int8 if X.max(initial=0) < 127 else np.int16 if X.max() < 32767 \
                else np.int32
            index = {str(c): k for k, c in enumerate(est.classes_)}
            y = np.array([index.get(str(v), -1) for v in labels], dtype=np.int16)
            state["training"] = {"X": writer.array(X[y >= 0].astype(small)),
                                 "y": writer.array(y[y >= 0])}
    except TypeError as exc:
        label = info.get("method") or type(est).__name__
        raise ModelFileError(f"{label} cannot be saved: it holds {exc}, which the model file "
                             "format does not store.") from None
    members = {"info.json": _json_bytes(info), "state.json": _json_bytes(state)}
    for i, data in enumerate(writer.arrays):
        members[f"arrays/{i:06d}.npy"] = data
    listing = [{"name": n, "size": len(b), "sha256": hashlib.sha256(b).hexdigest()}
               for n, b in members.items()]
    from . import __version__

    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "library_version": __version__, "members": listing,
                "content_sha256": _content_hash(listing)}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        zf.writestr("manifest.json", _json_bytes(manifest))
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


def _content_hash(listing: list[dict]) -> str:
    h = hashlib.sha256()
    for m in listing:
        h.update(f"{m['name']}\0{m['size']}\0{m['sha256']}\n".encode())
    return h.hexdigest()


def _refuse(reason: str) -> ModelFileError:
    return ModelFileError(f"Not loaded: {reason}")


def _open_source(source: Any) -> tuple[Any, int]:
    """A binary file object and its size (a path, bytes or a file object)."""
    if isinstance(source, bytes | bytearray | memoryview):
        return io.BytesIO(bytes(source)), len(source)
    if hasattr(source, "read"):
        data = source.read(MAX_FILE_BYTES + 1)
        return io.BytesIO(data), len(data)
    p = Path(source)
    if not p.is_file():
        raise ModelFileError(f"No model file at {p}.")
    return p.open("rb"), p.stat().st_size


def _check_archive(fh: Any, size: int) -> zipfile.ZipFile:
    """The ZIP archive after its size, kind, member names, sizes and ratios were checked."""
    if size > MAX_FILE_BYTES:
        raise _refuse(f"the file is {size / 2**20:.0f} MB, more than the "
                      f"{MAX_FILE_BYTES / 2**20:.0f} MB a model file may have.")
    head = fh.read(4)
    fh.seek(0)
    if head[:1] == b"\x80" or head[:1] in (b"(", b"c", b"]", b"}"):
        raise _refuse("the file looks like a Python pickle, which is never opened because "
                      "loading one can run any code; save the model with bnma fit or "
                      "save_model.")
    if head != b"PK\x03\x04":
        raise _refuse("the file is not a BNMA model file (not a ZIP archive).")
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise _refuse(f"the archive is damaged ({exc}).") from None
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise _refuse(f"the archive has {len(infos)} members, more than {MAX_MEMBERS}.")
    names = [i.filename for i in infos]
    for name in names:
        if not _MEMBER_NAME.match(name):
            raise _refuse(f"the archive holds the path {name[:80]!r}, which a model file may "
                          "not hold (only manifest.json, info.json, state.json and "
                          "arrays/NNNNNN.npy).")
    if len(set(names)) != len(names):
        raise _refuse("the archive holds a member twice.")
    total = 0
    for i in infos:
        if i.flag_bits & 0x1:
            raise _refuse(f"{i.filename} is encrypted.")
        if i.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _refuse(f"{i.filename} uses an unsupported compression.")
        limit = MAX_JSON_BYTES if i.filename.endswith(".json") else MAX_ARRAY_BYTES + 4096
        if i.file_size > limit:
            raise _refuse(f"{i.filename} declares {i.file_size / 2**20:.0f} MB, more than the "
                          f"{limit / 2**20:.0f} MB the library accepts.")
        total += i.file_size
    ends = sorted((i.header_offset, i.header_offset + 30 + len(i.filename.encode())
                   + i.compress_size) for i in infos)
    if any(b[0] < a[1] for a, b in zip(ends, ends[1:])):
        raise _refuse("members of the archive overlap (a compression bomb).")
    if total > 1 << 20 and total > MAX_RATIO * max(size, 1):
        raise _refuse(f"the archive would expand {total / max(size, 1):.0f} times (more than "
                      f"{MAX_RATIO}): a compression bomb.")
    if total > MAX_CONTENT_BYTES:
        raise _refuse(f"the archive declares {total / 2**20:.0f} MB of content, more than "
                      f"{MAX_CONTENT_BYTES / 2**20:.0f} MB.")
    if "manifest.json" not in names:
        raise _refuse("the archive has no manifest.json; it is not a BNMA model file.")
    return zf


def _read_member(zf: zipfile.ZipFile, name: str) -> bytes:
    try:
        return zf.read(name)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise _refuse(f"{name} is damaged ({exc}).") from None


def _load_json(data: bytes, name: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise _refuse(f"{name} is not valid JSON ({str(exc)[:80]}).") from None


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not allowed")


def _load_npy(data: bytes, name: str) -> np.ndarray:
    """An array after its header's dtype and declared size were checked."""
    buf = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(buf)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(buf)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(buf)
        else:
            raise ValueError(f"npy version {version}")
    except ValueError as exc:
        raise _refuse(f"{name} is not a valid array ({str(exc)[:80]}).") from None
    if dtype.hasobject or dtype.kind not in _ARRAY_KINDS:
        raise _refuse(f"{name} holds an array of type {dtype}, which a model file may not hold.")
    n_bytes = math.prod(shape) * dtype.itemsize
    if n_bytes > MAX_ARRAY_BYTES:
        raise _refuse(f"{name} declares an array of {n_bytes / 2**20:.0f} MB, more than the "
                      f"{MAX_ARRAY_BYTES / 2**20:.0f} MB the library accepts.")
    if n_bytes != len(data) - buf.tell():
        raise _refuse(f"{name} does not hold the array its header declares.")
    buf.seek(0)
    return np.load(buf, allow_pickle=False)


def _check_manifest(zf: zipfile.ZipFile) -> list[dict]:
    """The member listing of the archive's manifest, after checking the format name and
    version, the listing's shape, that it names exactly the archive's members and the
    content checksum; each refusal one sentence (:class:`ModelFileError`)."""
    manifest = _load_json(_read_member(zf, "manifest.json"), "manifest.json")
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _refuse("manifest.json does not name the BNMA model format.")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise _refuse("manifest.json has no valid format version.")
    if version > FORMAT_VERSION:
        raise _refuse(f"the file has format version {version}, newer than this "
                      f"library reads ({FORMAT_VERSION}); update bnma-studio (it was "
                      f"written by version {manifest.get('library_version')}).")
    listing = manifest.get("members")
    if not isinstance(listing, list) or not all(
            isinstance(m, dict) and {"name", "size", "sha256"} <= set(m) for m in listing):
        raise _refuse("manifest.json does not list the members.")
    listed = [m["name"] for m in listing]
    present = sorted(n for n in zf.namelist() if n != "manifest.json")
    if sorted(listed) != present:
        raise _refuse("the archive's members differ from those its manifest lists.")
    if _content_hash(listing) != manifest.get("content_sha256"):
        raise _refuse("the content checksum does not match: the file was changed "
                      "after it was saved.")
    return listing


def _read_members(zf: zipfile.ZipFile) -> dict[str, bytes]:
    """Every member the manifest lists (:func:`_check_manifest`), by name, each checked
    against its declared size and SHA-256."""
    raw = {}
    for m in _check_manifest(zf):
        data = _read_member(zf, m["name"])
        if len(data) != m["size"] or hashlib.sha256(data).hexdigest() != m["sha256"]:
            raise _refuse(f"the checksum of {m['name']} does not match: the file was "
                          "changed after it was saved.")
        raw[m["name"]] = data
    return raw


def _parse_members(raw: dict[str, bytes]) -> tuple[list[np.ndarray], dict, dict]:
    """The numbered arrays, ``info.json`` and ``state.json`` of the checked members, each
    checked for its shape; each refusal one sentence (:class:`ModelFileError`)."""
    if "info.json" not in raw or "state.json" not in raw:
        raise _refuse("the archive lacks info.json or state.json.")
    arrays = [_load_npy(raw[f"arrays/{i:06d}.npy"], f"arrays/{i:06d}.npy")
              for i in range(sum(n.startswith("arrays/") for n in raw))
              if f"arrays/{i:06d}.npy" in raw]
    if len(arrays) != sum(n.startswith("arrays/") for n in raw):
        raise _refuse("the arrays are not numbered 000000, 000001, ...")
    info = _load_json(raw["info.json"], "info.json")
    if not isinstance(info, dict):
        raise _refuse("info.json does not hold the model's provenance.")
    state = _load_json(raw["state.json"], "state.json")
    if not isinstance(state, dict) or not {"estimator", "encoder", "check"} <= set(state):
        raise _refuse("state.json does not hold a model.")
    return arrays, info, state


def _decode_state(state: dict, arrays: list[np.ndarray]) -> tuple[Any, ...]:
    """The estimator, encoder, self-check codes and probabilities, training rows (or None)
    and development out-of-fold predictions (or None) rebuilt from ``state`` by the
    allow-listed :class:`_Reader`; a malformed state is refused in one sentence."""
    reader = _Reader(arrays)
    try:
        est = reader.decode(state["estimator"])
        enc = reader.decode(state["encoder"])
        codes = reader.array(state["check"]["codes"])
        proba = reader.array(state["check"]["proba"])
        train = None
        if "training" in state:
            X = reader.array(state["training"]["X"]).astype(np.int64)
            y = reader.array(state["training"]["y"])
            if X.ndim != 2 or len(X) != len(y) or (y < 0).any() or \
                    (y >= len(est.classes_)).any():
                raise ModelFileError("The training rows of the model file are inconsistent.")
            train = (X, np.asarray(est.classes_, dtype=object)[y])
        development = None
        if "development" in state:
            from .evaluation import CVPredictions

            d = state["development"]
            development = CVPredictions(
                reader.array(d["y"]), [str(c) for c in d["classes"]],
                {str(k): reader.array(v) for k, v in d["proba"].items()},
                reader.array(d["folds"]), reader.array(d["row_ids"]), d["seed"],
                class_name=d["class_name"])
    except ModelFileError as exc:
        raise _refuse(str(exc)[0].lower() + str(exc)[1:]) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
        raise _refuse(f"state.json is malformed ({type(exc).__name__}: {str(exc)[:80]}).") \
            from None
    if _class_key(type(est)) not in allowed_keys() or not hasattr(est, "predict_proba"):
        raise _refuse("state.json does not hold a model.")
    return est, enc, codes, proba, train, development


def _self_check(est: Any, codes: np.ndarray, proba: np.ndarray) -> None:
    """Refuse (:class:`ModelFileError`) unless ``est`` gives the saved probabilities
    ``proba`` to the self-check rows ``codes`` (to 1e-9)."""
    try:
        again = est.predict_proba(codes)
        ok = again.shape == proba.shape and np.allclose(again, proba, rtol=0, atol=1e-9)
    except Exception:  # noqa: BLE001 - any failure means the state is inconsistent
        ok = False
    if not ok:
        raise _refuse("the model does not reproduce the predictions saved with it "
                      "(an inconsistent or incompatible file).")


def read_model(source: Any, *, self_check: bool = True) -> ModelFile:
    """Read a model file (a path, bytes or a binary file object), checking it first.

    Checks, in this order, each refusal one sentence (:class:`ModelFileError`): the file's
    size; that it is a ZIP archive and not a pickle; every member's name (no folders, no
    ``..``, no absolute path), declared size and compression ratio; the format name and
    version; each member's SHA-256 and the content's; each array's type and declared size
    (from its header, before it is read). Then the state is rebuilt from the allow-listed
    classes only and, with ``self_check``, the model must give the saved probabilities to
    the self-check rows.

    Returns
    -------
    ModelFile
    """
    fh, size = _open_source(source)
    try:
        zf = _check_archive(fh, size)
        with zf:
            raw = _read_members(zf)
    finally:
        fh.close()
    arrays, info, state = _parse_members(raw)
    est, enc, codes, proba, train, development = _decode_state(state, arrays)
    est.model_info_ = info
    out = ModelFile(est, enc, info, codes, proba, train, development)
    if self_check and len(codes):
        _self_check(est, codes, proba)
    return out


def load_model(source: Any) -> Any:
    """The fitted estimator of a model file (:func:`read_model`); its provenance is
    ``model_info_`` (a dict: method, seed, data fingerprint, rows, version, date)."""
    return read_model(source).estimator


def unsaveable_reason(model: Any) -> str:
    """Why ``model`` cannot be saved, in one sentence ('' when it can)."""
    try:
        model_bytes(model)
    except ModelFileError as exc:
        return str(exc)
    return ""
