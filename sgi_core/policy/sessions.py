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
_HINT = "Load a session saved from the Calibration page"


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
    def from_dict(cls, data: dict) -> CalibrationSession:
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


def load_session(raw: bytes | str, *, source: str = "<session>") -> CalibrationSession:
    """Parse and check a saved session.

    Read by the rules of :mod:`sgi_core.policy.saved_json`, the same as gate
    policies: one JSON object, no repeated key, exactly the session's fields,
    ``version`` the integer 1, a calibrator that applies.

    Parameters
    ----------
    raw : bytes or str
        The JSON written by :func:`session_to_json`.
    source : str
        File name used in messages.

    Raises
    ------
    SGIInputError
        Not JSON, not a session of this schema and version, an unknown, missing,
        repeated or mistyped field, or calibrator parameters that do not apply. A session
        tuned on other data is no error: its threshold and calibrator apply to any file
        scored by its model (the next release's run); compare its ``fingerprint`` with
        :func:`data_fingerprint` of the data now loaded to say so.
    """
    from sgi_core.policy.saved_json import check_fields, check_schema, read_calibrator, read_json_object

    data = read_json_object(raw, source=source, what="the session", hint=_HINT)
    if data.get("schema") != SCHEMA:
        raise SGIInputError("not a calibration session (the 'schema' field is missing or different)",
                            source=source, hint=_HINT)
    check_schema(data, SCHEMA, (SCHEMA_VERSION,), source=source, what="a calibration session")
    check_fields(data, _FIELDS, source=source, what="the session", hint=_HINT)
    _check_types(data, source)
    read_calibrator(data["calibrator"], source=source, hint=_HINT)
    return CalibrationSession.from_dict(data)


def _check_types(data: dict, source: str) -> None:
    expected = {"model": str, "score_column": str, "calibrator": dict, "fingerprint": str, "created": str}
    wrong = [name for name, kind in expected.items() if not isinstance(data[name], kind)]
    threshold = data["threshold"]
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
        wrong.append("threshold")
    if wrong:
        raise SGIInputError(f"the session fields {', '.join(wrong)} have the wrong type", source=source)


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
