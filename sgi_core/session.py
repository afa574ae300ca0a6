"""Calibration sessions: a chosen calibrator and threshold, saved as JSON and loaded back.

A session records which model scored the data, the fitted calibrator's parameters,
the threshold on the score below which a row is flagged as hallucinated, a
fingerprint of the data it was tuned on, and when it was saved. Loading checks
everything before anything is used: a file from another tool, another version of
this schema, or another data set raises :class:`~sgi_core.errors.SGIInputError`.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from sgi_core.columns import TEXT_COLUMNS
from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult

SCHEMA = "sgi-workbench.calibration-session"
SCHEMA_VERSION = 1

#: Columns added by :func:`apply_session`.
PROBABILITY_COLUMN = "p_grounded"
FLAG_COLUMN = "flagged_hallucinated"

#: Rows turned into Python objects at a time while fingerprinting.
FINGERPRINT_BLOCK_ROWS = 10_000

_FIELDS = ("schema", "version", "model", "score_column", "calibrator", "threshold", "fingerprint", "created")


def data_fingerprint(frame: pd.DataFrame) -> str:
    """SHA-256 of the question, context, response and label of every row, in order.

    Only the triples and labels count: renaming or adding other columns, or
    changing the column mapping to the same texts, keeps the fingerprint.

    Examples
    --------
    >>> f = pd.DataFrame({"question": ["q"], "context": ["c"], "response": ["r"], "label": [1.0]})
    >>> data_fingerprint(f) == data_fingerprint(f.assign(extra=["x"]))
    True
    >>> data_fingerprint(f) == data_fingerprint(f.assign(label=[0.0]))
    False
    """
    missing = [c for c in (*TEXT_COLUMNS, "label") if c not in frame.columns]
    if missing:
        raise SGIInputError(f"cannot fingerprint data without the columns {', '.join(missing)}")
    digest = hashlib.sha256()
    # A block of rows at a time: Python copies of a few thousand cells, never of a whole text column.
    for start in range(0, len(frame), FINGERPRINT_BLOCK_ROWS):
        block = frame.iloc[start : start + FINGERPRINT_BLOCK_ROWS]
        for question, context, response, label in zip(*(block[c].tolist() for c in (*TEXT_COLUMNS, "label"))):
            label = None if label is None or (isinstance(label, float) and math.isnan(label)) else float(label)
            # One JSON array per line: no choice of separator can make two rows collide.
            digest.update(json.dumps([question, context, response, label], ensure_ascii=False).encode("utf-8"))
            digest.update(b"\n")
    return digest.hexdigest()


@dataclass(frozen=True)
class CalibrationSession(JsonResult):
    """What a user tuned on one data set, in a form that survives JSON.

    Attributes
    ----------
    model : str
        Name of the embedding model whose scores were calibrated.
    score_column : str
        The score the threshold applies to (``"sgi"``).
    calibrator : dict
        ``Calibrator.to_dict()`` of the fitted calibrator.
    threshold : float
        Rows with ``score < threshold`` are flagged as hallucinated.
    fingerprint : str
        :func:`data_fingerprint` of the data the session was tuned on.
    created : str
        ISO 8601 time (UTC) the session was saved.
    """

    model: str
    score_column: str
    calibrator: dict
    threshold: float
    fingerprint: str
    created: str
    schema: str = SCHEMA
    version: int = SCHEMA_VERSION

    @classmethod
    def from_dict(cls, data: dict) -> "CalibrationSession":
        return cls(**{name: data[name] for name in _FIELDS})


def new_session(*, model: str, calibrator, threshold: float, frame: pd.DataFrame,
                score_column: str = "sgi", fingerprint: str | None = None) -> CalibrationSession:
    """Record a session for ``frame`` (the scored data) now.

    ``fingerprint`` is ``data_fingerprint(frame)`` when the caller already has it (it
    reads every text of the frame); computed here otherwise.
    """
    return CalibrationSession(
        model=model,
        score_column=score_column,
        calibrator=calibrator.to_dict(),
        threshold=float(threshold),
        fingerprint=data_fingerprint(frame) if fingerprint is None else fingerprint,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )


def session_to_json(session: CalibrationSession) -> bytes:
    """UTF-8 JSON of a session, keys in a stable order."""
    return json.dumps(session.to_dict(), indent=2).encode("utf-8")


def load_session(raw: bytes | str, *, fingerprint: str, source: str = "<session>") -> CalibrationSession:
    """Parse and check a saved session against the data now loaded.

    Parameters
    ----------
    raw : bytes or str
        The JSON written by :func:`session_to_json`.
    fingerprint : str
        :func:`data_fingerprint` of the data the session is to be applied to.
    source : str
        File name used in messages.

    Raises
    ------
    SGIInputError
        Not JSON, not a session of this schema and version, a missing or mistyped
        field, calibrator parameters that do not load, or a fingerprint that does
        not match the current data.
    """
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:  # RecursionError: nested too deep
        raise SGIInputError(f"not a JSON file: {err}", source=source,
                            hint="Load a session saved from the Calibration page") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise SGIInputError("not a calibration session (the 'schema' field is missing or different)",
                            source=source, hint="Load a session saved from the Calibration page")
    if data.get("version") != SCHEMA_VERSION:
        raise SGIInputError(f"session version {data.get('version')!r} is not supported (this version reads "
                            f"{SCHEMA_VERSION})", source=source)
    missing = [name for name in _FIELDS if name not in data]
    if missing:
        raise SGIInputError(f"the session lacks the fields {', '.join(missing)}", source=source)
    _check_types(data, source)
    _check_calibrator(data["calibrator"], source)
    if data["fingerprint"] != fingerprint:
        raise SGIInputError(
            "the session was tuned on different data (the fingerprint of the question, context, response "
            "and label columns does not match)",
            source=source,
            hint="Load the data set the session was saved with, or tune a new session on this one",
        )
    return CalibrationSession.from_dict(data)


def _check_types(data: dict, source: str) -> None:
    expected = {"model": str, "score_column": str, "calibrator": dict, "fingerprint": str, "created": str}
    wrong = [name for name, kind in expected.items() if not isinstance(data[name], kind)]
    threshold = data["threshold"]
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
        wrong.append("threshold")
    if wrong:
        raise SGIInputError(f"the session fields {', '.join(wrong)} have the wrong type", source=source)


def _check_calibrator(params: dict, source: str) -> None:
    from sgi_core.evaluation import Calibrator

    try:
        calibrator = Calibrator.from_dict(params)
    except (KeyError, TypeError, ValueError) as err:
        raise SGIInputError(f"the calibrator parameters do not load: {err}", source=source) from None
    problem = _calibrator_problem(calibrator)
    if problem:
        raise SGIInputError(f"the calibrator parameters are not usable: {problem}", source=source,
                            hint="Load a session saved from the Calibration page")


def _calibrator_problem(calibrator) -> str | None:
    """Why a calibrator that loaded would fail or give values outside [0, 1] when applied."""
    from sgi_core.evaluation.calibration import METHODS

    if calibrator.method not in METHODS:
        return f"unknown method {calibrator.method!r}"
    if calibrator.method == "platt":
        finite = math.isfinite(calibrator.slope) and math.isfinite(calibrator.intercept)
        return None if finite else "the Platt slope and intercept must be finite numbers"
    knots_x, knots_y = np.asarray(calibrator.knots_x), np.asarray(calibrator.knots_y)
    if len(knots_x) == 0 or len(knots_x) != len(knots_y):
        return "knots_x and knots_y must be non-empty and of equal length"
    if not (np.isfinite(knots_x).all() and np.isfinite(knots_y).all()):
        return "the knots must be finite numbers"
    if np.any(np.diff(knots_x) < 0):
        return "knots_x must be in increasing order"
    if np.any((knots_y < 0) | (knots_y > 1)):
        return "knots_y are probabilities and must lie in [0, 1]"
    return None


def apply_session(frame: pd.DataFrame, calibrator, threshold: float, *, score_column: str = "sgi") -> pd.DataFrame:
    """Copy of a scored frame with the calibrated probability and the flag added.

    ``p_grounded = calibrator.predict(score)``; ``flagged_hallucinated`` is True where
    ``score < threshold``, False where the score is at or above it, and missing
    (``<NA>``) for rows without a score, so unscored rows are not counted as passed.
    """
    score = frame[score_column].to_numpy(dtype=np.float64)
    scored = np.isfinite(score)
    out = frame.copy()
    probability = np.full(len(frame), np.nan)
    if scored.any():
        probability[scored] = np.asarray(calibrator.predict(score[scored]), dtype=np.float64)
    out[PROBABILITY_COLUMN] = probability
    flag = pd.array(score < threshold, dtype="boolean")
    flag[~scored] = pd.NA
    out[FLAG_COLUMN] = flag
    return out
