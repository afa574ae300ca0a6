"""Strict reading of the JSON files this tool saves: gate policies and calibration sessions.

Both carry a fitted :class:`~sgi_core.stats.calibration.Calibrator`, and both are
read by the same rules, so a file one reader refuses the other refuses too:

* one JSON object read by :func:`sgi_core.jsonio.loads_json`: no key written twice
  (the standard library would keep the last silently), no ``NaN``/``Infinity`` (not
  JSON), no number too long or too large, no nesting too deep;
* exactly the expected fields, ``schema`` the expected string and ``version`` an
  integer (``true`` is not the version 1);
* a calibrator that applies: a known method, finite Platt parameters, and for the
  piecewise-linear methods non-empty knots of equal length, ``knots_x`` never
  decreasing and ``knots_y`` probabilities in [0, 1] that never decrease (higher
  score = grounded, so P(grounded) cannot fall as the score rises).

Nothing in a file is evaluated or unpickled.
"""

from __future__ import annotations

import math
from dataclasses import fields

import numpy as np

from sgi_core.errors import SGIInputError
from sgi_core.jsonio import loads_json
from sgi_core.stats.calibration import METHODS as CALIBRATION_METHODS
from sgi_core.stats.calibration import Calibrator


def is_number(value) -> bool:
    """A finite JSON number (``true``/``false`` are not numbers here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def read_json_object(raw: bytes | str, *, source: str, what: str, hint: str) -> dict:
    """Parse ``raw`` as one JSON object (:func:`sgi_core.jsonio.loads_json`); anything else raises
    :class:`SGIInputError` naming ``source``.

    Examples
    --------
    >>> read_json_object('{"a": 1}', source="x.json", what="a policy", hint="")
    {'a': 1}
    >>> read_json_object('[1]', source="x.json", what="a policy", hint="")
    Traceback (most recent call last):
    ...
    sgi_core.errors.SGIInputError: a policy must be a JSON object (file 'x.json')
    """
    data = loads_json(raw, source=source, hint=hint or None)
    if not isinstance(data, dict):
        raise SGIInputError(f"{what} must be a JSON object", source=source, hint=hint or None)
    return data


def check_fields(data: dict, expected, *, source: str, what: str, hint: str) -> None:
    """Refuse unknown and missing fields, naming them all."""
    unknown, missing = sorted(set(data) - set(expected)), sorted(set(expected) - set(data))
    if unknown or missing:
        parts = [part for part in (unknown and f"unknown fields {', '.join(unknown)}",
                                   missing and f"missing fields {', '.join(missing)}") if part]
        raise SGIInputError(f"{what} has " + "; ".join(parts), source=source, hint=hint)


def check_schema(data: dict, schema: str, versions, *, source: str, what: str) -> int:
    """The file's ``version``: ``schema`` must match and ``version`` be one of ``versions`` as an integer."""
    version = data.get("version")
    if data.get("schema") != schema or type(version) is not int or version not in versions:
        raise SGIInputError(f"not {what} this tool reads: schema {data.get('schema')!r} version {version!r}, "
                            f"expected {schema!r} version {' or '.join(map(str, versions))}", source=source)
    return version


def calibrator_problem(data) -> str | None:
    """Why ``data`` is not the ``to_dict()`` of a calibrator that applies, or None.

    Examples
    --------
    >>> calibrator_problem({"method": "isotonic", "knots_x": [0.2, 0.1], "knots_y": [0.0, 1.0],
    ...                     "slope": None, "intercept": None})
    'knots_x must never decrease'
    """
    names = {f.name for f in fields(Calibrator)}
    if not isinstance(data, dict) or set(data) != names:
        return f"it must be an object with exactly the fields {', '.join(sorted(names))}"
    if data["method"] not in CALIBRATION_METHODS:
        return f"unknown method {data['method']!r} (use one of {', '.join(CALIBRATION_METHODS)})"
    knots_x, knots_y = data["knots_x"], data["knots_y"]
    if not all(isinstance(k, list) and all(is_number(v) for v in k) for k in (knots_x, knots_y)):
        return "knots_x and knots_y must be lists of finite numbers"
    if not all(data[name] is None or is_number(data[name]) for name in ("slope", "intercept")):
        return "slope and intercept must be null or finite numbers"
    if data["method"] == "platt":
        ok = is_number(data["slope"]) and is_number(data["intercept"])
        return None if ok else "the Platt slope and intercept must be finite numbers"
    if not knots_x or not knots_y:
        return "knots_x and knots_y must not be empty"
    if len(knots_x) != len(knots_y):
        return "knots_x and knots_y must be of equal length"
    if np.any(np.diff(knots_x) < 0):
        return "knots_x must never decrease"
    if not all(0.0 <= y <= 1.0 for y in knots_y):
        return "knots_y are probabilities and must lie in [0, 1]"
    if np.any(np.diff(knots_y) < 0):
        return "knots_y must never decrease (a higher score cannot mean a lower P(grounded))"
    return None


def read_calibrator(data, *, source: str, hint: str) -> Calibrator:
    """The :class:`Calibrator` of a saved file's ``calibrator`` field, or :class:`SGIInputError` saying why not."""
    problem = calibrator_problem(data)
    if problem:
        raise SGIInputError(f"the calibrator cannot be used: {problem}", source=source, hint=hint)
    return Calibrator.from_dict(data)
