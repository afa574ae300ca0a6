"""Ground floor of the library: JSON-safe frozen results and the undefined-statistic warning.

Every multi-part result of :mod:`sgi_core` is a frozen dataclass mixing in
:class:`JsonResult`, so that ``to_dict()`` is JSON-safe and ``from_dict()`` reads it back.
A statistic that is undefined for its input (one class, too few rows, zero spread) is
NaN and says why through :class:`UndefinedStatisticWarning`.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
import warnings

import numpy as np


class UndefinedStatisticWarning(UserWarning):
    """A statistic is undefined for this input (one class, too few rows, zero spread); it is NaN."""


def warn_undefined(message: str) -> None:
    warnings.warn(message, UndefinedStatisticWarning, stacklevel=3)


def _encode(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value.to_dict()
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if math.isnan(number):
            return None
        if math.isinf(number):
            # JSON has no infinity; ROC curves start at an infinite threshold.
            return "inf" if number > 0 else "-inf"
        return number
    return value


def _decode(kind, value):
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _decode(inner, value)
    if kind is float:
        return math.nan if value is None else float(value)
    if kind is np.ndarray:
        return frozen_array([math.nan if v is None else float(v) for v in value])
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v) for v in value)
        return tuple(_decode(a, v) for a, v in zip(args, value))
    if origin is dict:
        # JSON object keys are strings; integer keys (K of Recall@K) are read back as ints.
        key = int if args[0] is int else (lambda k: k)
        return {key(k): _decode(args[1], v) for k, v in value.items()}
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return kind.from_dict(value)
    return value


def frozen_array(values) -> np.ndarray:
    """``values`` as a read-only float64 array, for a field of a frozen result.

    Examples
    --------
    >>> frozen_array([0.0, "inf"]).flags.writeable, frozen_array([0.0, float("inf")]).tolist()
    (False, [0.0, inf])
    """
    array = np.array(values, dtype=np.float64)
    array.flags.writeable = False
    return array


def same_fields(result, other) -> bool:
    """Field-by-field equality of two results whose fields may hold arrays.

    Arrays are equal when their shapes and values are (NaN equal to NaN); every other
    field compares as the generated ``__eq__`` would (identical or ``==``). It serves the
    result classes declared with ``eq=False`` because an array field would make the generated
    ``__eq__`` ambiguous.
    """
    for field in dataclasses.fields(result):
        mine, theirs = getattr(result, field.name), getattr(other, field.name)
        if isinstance(mine, np.ndarray) or isinstance(theirs, np.ndarray):
            if not np.array_equal(np.asarray(mine, dtype=np.float64), np.asarray(theirs, dtype=np.float64),
                                  equal_nan=True):
                return False
        # ``is`` first, as the generated ``__eq__`` compares tuples of fields.
        elif not (mine is theirs or mine == theirs):
            return False
    return True


class JsonResult:
    """Mixin for frozen result dataclasses: ``to_dict()`` is JSON-safe and ``from_dict`` reverses it.

    Tuples and arrays become lists, NaN becomes ``None`` and infinities the strings
    ``"inf"`` / ``"-inf"``; nested results become dicts. ``from_dict`` reads the field
    types to rebuild floats (``None`` -> NaN), tuples, read-only float arrays (fields
    annotated ``np.ndarray``) and nested results.
    """

    def to_dict(self) -> dict:
        return {f.name: _encode(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: dict):
        hints = typing.get_type_hints(cls)
        return cls(**{f.name: _decode(hints[f.name], data[f.name]) for f in dataclasses.fields(cls)})


@dataclasses.dataclass(frozen=True)
class Estimate(JsonResult):
    """A number with its 95% interval and how the interval was made.

    Attributes
    ----------
    value : float
        NaN when undefined for the input.
    interval : (float, float)
        Lower and upper bounds; NaN when none was computed (no resamples, too few rows).
    method : str
        How the interval was made (``"bootstrap percentile"``, ``"DeLong"``, ...); ``""`` without one.

    Examples
    --------
    >>> Estimate(0.8, (0.7, 0.9), "DeLong").to_dict()
    {'value': 0.8, 'interval': [0.7, 0.9], 'method': 'DeLong'}
    >>> Estimate.from_dict({'value': None, 'interval': [None, None], 'method': ''}).value
    nan
    """

    value: float
    interval: tuple[float, float] = (math.nan, math.nan)
    method: str = ""

    def __post_init__(self):
        object.__setattr__(self, "value", float(self.value))
        object.__setattr__(self, "interval", tuple(float(bound) for bound in self.interval))
        if len(self.interval) != 2:
            raise ValueError(f"an interval has two bounds; got {self.interval!r}")
