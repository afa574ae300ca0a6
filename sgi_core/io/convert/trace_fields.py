"""Reading one field of a trace export's record: where it is, ids as text, start times.

Every trace reader (:mod:`sgi_core.io.convert.trace_formats`) reads its ids and start times here,
so a malformed field gives one kind of error, an :class:`~sgi_core.errors.SGIInputError`
naming the file, the record (its data row or line) and the field, and never a traceback.
Ids must be text: the number ``1`` and the text ``"1"`` would otherwise name one trace,
and a list or an object would be read as its Python spelling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sgi_core.errors import SGIInputError
from sgi_core.io.convert.traces import is_missing


@dataclass(frozen=True)
class Record:
    """Where a record of a trace export is, for messages: its file, its row (data row or line) and what to do.

    Examples
    --------
    >>> err = Record("t.json", 3, "Export it again").refuse("spans[0].traceId",
    ...                                                     "the trace id is a number (1), not text")
    >>> str(err)
    "the trace id is a number (1), not text (file 't.json', column 'spans[0].traceId', row 3). Export it again"
    """

    name: str
    row: int
    hint: str | None = None

    def refuse(self, field: str, message: str) -> SGIInputError:
        """The error for ``field`` of this record (raise it)."""
        return SGIInputError(message, source=self.name, column=field, rows=[self.row], hint=self.hint)


def describe(value) -> str:
    """A value that is not what a field needs, for a message: ``a number (1)``, ``a list``, ``'²'``, ``null``.

    Examples
    --------
    >>> [describe(v) for v in (None, 1, "²", [1], {"a": 1}, True)]
    ['null', 'a number (1)', "'²'", 'a list', 'an object', 'true']
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        shown = repr(value)
        return f"a number ({shown[:40]}{'...' if len(shown) > 40 else ''})"
    if isinstance(value, str):
        return repr(value[:40] + ("..." if len(value) > 40 else ""))
    if isinstance(value, (list, tuple)):
        return "a list"
    return "an object" if isinstance(value, dict) else f"a {type(value).__name__}"


def text_id(value, record: Record, field: str, *, required: bool = True) -> str:
    """A trace or span id, which must be text: ``1`` and ``"1"`` would otherwise name one trace.

    Returns ``""`` for a missing id when not ``required``.

    Raises
    ------
    SGIInputError
        A missing required id, or an id that is a number, a list or an object, naming the
        record and the field.
    """
    if is_missing(value):
        if required:
            raise record.refuse(field, f"a span has no {field}" if field != "id" else "a trace has no id")
        return ""
    if not isinstance(value, str):
        raise record.refuse(field, f"the id {field} is {describe(value)}, not text; ids are read as text so that "
                                   "two spellings never name one trace")
    return value


#: A count of nanoseconds since 1970 (OTLP's ``fixed64``): at most 20 ASCII digits.
_NANOSECONDS = re.compile(r"-?[0-9]{1,20}")
_DIGITS = re.compile(r"-?[0-9]+")
#: Longer than any ISO 8601 time (``2024-05-14T10:05:00.123456789+00:00`` is 35): Python's parser
#: would read ``"1" * 5000`` as a time, its surplus digits as fractions of a second.
_LONGEST_ISO = 64


def start_key(value, record: Record, field: str) -> float | None:
    """A start time as seconds, to order steps: ISO 8601 text, a datetime, or a count of nanoseconds (OTLP).

    None when the field is missing.

    Raises
    ------
    SGIInputError
        A start time that is neither (``"²"``, a count of more than 20 digits, a list),
        naming the record and the field.

    Examples
    --------
    >>> start_key("1717318800000000000", Record("t.json", 1), "startTimeUnixNano")
    1717318800.0
    >>> start_key("2024-05-14T10:05:00Z", Record("t.json", 1), "startTime")
    1715681100.0
    """
    if is_missing(value):
        return None
    try:
        if hasattr(value, "timestamp"):
            return float(value.timestamp())
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if isinstance(value, str):
            text = value.strip()
            if _NANOSECONDS.fullmatch(text):
                return int(text) / 1e9
            if not _DIGITS.fullmatch(text) and len(text) <= _LONGEST_ISO:
                return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError, OSError):
        pass
    raise record.refuse(field, f"the start time {field} is {describe(value)}, neither ISO 8601 text nor a count of "
                               "nanoseconds (at most 20 digits)")


def repeated(value, record: Record, field: str) -> list:
    """An OTLP repeated field (``resourceSpans``, ``scopeSpans``, ``spans``, ``attributes``): its objects.

    A missing field is an empty list.

    Raises
    ------
    SGIInputError
        The field is not a list, or one of its items is not an object, naming the record
        and the field (``resourceSpans[0].scopeSpans[1]``).
    """
    if value is None:
        return []
    if not isinstance(value, list):
        raise record.refuse(field, f"{field} is {describe(value)}, not a list")
    for position, item in enumerate(value):
        if not isinstance(item, dict):
            raise record.refuse(f"{field}[{position}]", f"{field}[{position}] is {describe(item)}, not an object")
    return value


#: The range of OTLP's ``intValue`` (int64), written as a JSON number or as decimal text.
_INT64 = (-(2**63), 2**63 - 1)
_INTEGER = re.compile(r"-?[0-9]{1,19}")


def _int_value(item, record: Record, field: str) -> int:
    number = None
    if isinstance(item, int) and not isinstance(item, bool):
        number = item
    elif isinstance(item, str) and _INTEGER.fullmatch(item.strip()):
        number = int(item.strip())
    if number is None or not _INT64[0] <= number <= _INT64[1]:
        raise record.refuse(field, f"{field} is {describe(item)}, not a 64-bit integer (a JSON number or decimal text)")
    return number


def any_value(value: dict, record: Record, field: str):
    """An OTLP ``AnyValue`` (lowerCamelCase or snake_case keys) as Python: text, number, bool, list or dict.

    An ``intValue`` is read from a JSON number or from decimal text (proto3 JSON writes
    int64 as text); an ``arrayValue`` or ``kvlistValue`` holds ``{"values": [...]}``.

    Raises
    ------
    SGIInputError
        An ``intValue`` that is not a 64-bit integer (``"abc"``, null), or an array or
        key-value list that is not an object of ``values``, naming the record and the field.

    Examples
    --------
    >>> any_value({"intValue": "42"}, Record("t.json", 1), "attributes[0].value")
    42
    >>> any_value({"arrayValue": {"values": [{"stringValue": "a"}]}}, Record("t.json", 1), "attributes[0].value")
    ['a']
    >>> any_value({"array_value": None, "string_value": "q"}, Record("t.json", 1), "attributes[0].value")
    'q'
    """
    # Phoenix's otlpv1 listing writes every unset field of the oneof as null beside the one that is set.
    present = {key: item for key, item in value.items() if item is not None} or value
    for key, item in present.items():
        kind = key.replace("_", "").lower()
        if kind in ("stringvalue", "boolvalue", "doublevalue", "bytesvalue"):
            return item
        if kind == "intvalue":
            return _int_value(item, record, f"{field}.{key}")
        if kind in ("arrayvalue", "kvlistvalue"):
            if item is not None and not isinstance(item, dict):
                raise record.refuse(f"{field}.{key}", f"{field}.{key} is {describe(item)}, not an object of values")
            items = repeated((item or {}).get("values"), record, f"{field}.{key}.values")
            if kind == "kvlistvalue":
                return attributes(items, record, f"{field}.{key}.values")
            return [any_value(v, record, f"{field}.{key}.values[{i}]") for i, v in enumerate(items)]
    return None


def attributes(pairs, record: Record, field: str) -> dict:
    """OTLP key-value pairs (``[{"key": ..., "value": {AnyValue}}]``) as a dict.

    Raises
    ------
    SGIInputError
        Pairs that are not a list of objects, a key that is not text, or a value that is
        not an object, naming the record and the field (``...spans[0].attributes[3].key``).

    Examples
    --------
    >>> attributes([{"key": "input.value", "value": {"stringValue": "q"}}], Record("t.json", 1), "attributes")
    {'input.value': 'q'}
    """
    read = {}
    for position, pair in enumerate(repeated(pairs, record, field)):
        where = f"{field}[{position}]"
        key, value = pair.get("key"), pair.get("value")
        if not isinstance(key, str):
            raise record.refuse(f"{where}.key", f"{where}.key is {describe(key)}, not text")
        if value is not None and not isinstance(value, dict):
            raise record.refuse(f"{where}.value", f"{where}.value is {describe(value)}, not an AnyValue object")
        read[key] = any_value(value or {}, record, f"{where}.value")
    return read
