"""Scoring new cases with a saved model (DESIGN §17): columns matched by name, each case's class
probabilities, the Patient page's verdict (the class, or "uncertain"), the structure and
parameter intervals (DESIGN §15) and, optionally, the findings that moved it most.

:func:`case_codes` turns a table of raw values into the model's feature codes with the
encoder saved in the model file (a value never seen in training is treated as missing and
marginalized, with :class:`~bnma_core.classifiers.base.UnseenValueWarning`); :func:`score`
builds the scored table in chunks, so a long file shows progress and its memory stays flat.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from .data import CODE_DTYPE, MISSING, DataError

CHUNK_ROWS = 5_000
"""Rows scored at a time."""


def case_codes(model_file: Any, frame: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Feature codes of the rows of ``frame`` for the model of ``model_file``, and the
    columns of ``frame`` the model does not use.

    Columns are matched by name (order does not matter). A feature column missing from
    ``frame`` is refused (:class:`~bnma_core.data.DataError` naming them); a value the
    training data never had (or text in a numeric column) is treated as missing, with one
    :class:`~bnma_core.classifiers.base.UnseenValueWarning` naming the columns.
    """
    from .classifiers.base import _warn_unseen

    info = model_file.info
    features = list(info["features"])
    absent = [f for f in features if f not in frame.columns]
    if absent:
        raise DataError("The data lack columns the model needs: " + ", ".join(absent[:20])
                        + (f" and {len(absent) - 20} more" if len(absent) > 20 else "") + ".")
    extra = [str(c) for c in frame.columns if c not in set(features)]
    sub = frame[features].reset_index(drop=True)
    enc = model_file.encoder
    if enc is not None and [c.name for c in enc.columns_] == features:
        codes = enc.transform(sub).astype(CODE_DTYPE)
    else:  # fitted on codes: the state labels name the codes
        from .data.labels import _label

        codes = np.full(sub.shape, MISSING, dtype=CODE_DTYPE)
        for j, states in enumerate(info["feature_states"]):
            index = {s: k for k, s in enumerate(states)}
            col = sub.iloc[:, j]
            ok = col.notna().to_numpy()
            codes[ok, j] = [index.get(_label(v), MISSING) for v in col[ok]]
    unseen = (codes < 0) & sub.notna().to_numpy()
    if unseen.any():
        _warn_unseen(unseen, features,
                     [sub.iloc[int(np.argmax(unseen[:, j])), j] for j in range(len(features))])
    return codes, extra


def _interval_columns(out: dict, classes: list[str], iv: np.ndarray, kind: str) -> None:
    for k, c in enumerate(classes):
        out[f"P({c}) {kind} low"] = iv[:, k, 0]
        out[f"P({c}) {kind} high"] = iv[:, k, 1]


def score(model_file: Any, codes: np.ndarray, *, interval: bool = False, level: float = 0.9,
          n_draws: int = 200, seed: int = 0, shapley: int = 0, row_ids: Any = None,
          progress: Callable[[int], None] | None = None,
          notes: list[str] | None = None) -> pd.DataFrame:
    """One row per case: ``row``, ``P(class)`` per class, ``prediction`` (the class, or
    "uncertain" by the Patient page's rule, :func:`bnma_core.viz.patient.is_uncertain`), the
    structure interval of each class and, with ``interval``, the structure + parameter
    interval (DESIGN §15); with ``shapley`` > 0 the ``top contributions`` (that many
    findings with their Shapley values for the log-odds of the predicted class).

    Parameters
    ----------
    model_file : ModelFile
        From :func:`bnma_core.model_io.read_model`.
    codes : (n, p) int array
        Feature codes (:func:`case_codes`).
    interval, level, n_draws, seed
        The parameter interval (Dirichlet draws) and the level of both intervals. A model
        whose draws need its training rows (not kept in a model file) has no parameter
        interval; ``notes`` receives one sentence saying so.
    shapley : int
        Number of top contributions per case (0 = none).
    row_ids : array, optional
        The file's row numbers (default 0 .. n-1).
    progress : callable, optional
        Called with the number of rows scored after each chunk of :data:`CHUNK_ROWS`.
    notes : list, optional
        Collects plain sentences about what could not be computed.
    """
    from . import explain
    from .viz.patient import uncertain_rows

    est = model_file.estimator
    classes = [str(c) for c in est.classes_]
    names = list(model_file.info["features"])
    notes = [] if notes is None else notes
    n = len(codes)
    row_ids = np.arange(n) if row_ids is None else np.asarray(row_ids)
    parts = []
    draws = int(n_draws) if interval else 0
    for start in range(0, n, CHUNK_ROWS):
        X = np.asarray(codes[start:start + CHUNK_ROWS], dtype=np.int64)
        try:
            pred = explain.predict_with_uncertainty(est, X, level, draws, model_file.train,
                                                    seed, codes=True)
        except ValueError as exc:
            if not draws:
                raise
            notes.append(f"No parameter interval: {exc}")
            draws = 0
            pred = explain.predict_with_uncertainty(est, X, level, 0, None, seed, codes=True)
        out: dict[str, Any] = {"row": row_ids[start:start + len(X)]}
        for k, c in enumerate(classes):
            out[f"P({c})"] = pred.proba[:, k]
        out["prediction"] = np.where(uncertain_rows(pred), "uncertain",
                                     np.asarray(classes, dtype=object)[pred.predicted])
        _interval_columns(out, classes, pred.structure_interval, "structure")
        if pred.parameter_interval is not None:
            _interval_columns(out, classes, pred.parameter_interval, "parameter")
        if shapley:
            out["top contributions"] = [_top(est, x, int(c), names, shapley, seed)
                                        for x, c in zip(X, pred.predicted)]
        parts.append(pd.DataFrame(out))
        if progress is not None:
            progress(len(X))
    if not parts:
        return pd.DataFrame(columns=["row", *[f"P({c})" for c in classes], "prediction"])
    return pd.concat(parts, ignore_index=True)


def _top(est: Any, x: np.ndarray, target: int, names: list[str], k: int, seed: int) -> str:
    """``"name +0.42; name -0.10"``: the ``k`` findings with the largest |Shapley value|."""
    from . import explain

    try:
        sh = explain.shapley_values(est, x, target=target, seed=seed, spread=False, codes=True)
    except ValueError as exc:
        return f"unavailable: {exc}"
    return "; ".join(f"{d['finding']} {d['value']:+.3f}" for d in sh.ranked()[:k])
