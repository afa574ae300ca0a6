"""One way to read JSON: every failure is an :class:`~sgi_core.errors.SGIInputError` naming its source.

Python's :func:`json.loads` fails in more ways than :class:`json.JSONDecodeError`: an
integer of more than 4,300 digits raises a bare ``ValueError`` (Python's limit on
integer conversion), ``1e400`` silently becomes ``inf`` (and an ``OverflowError`` once
something calls ``int`` on it), nesting 100,000 deep raises ``RecursionError``, a
repeated key silently keeps its last value, and ``"\\ud800"`` gives a string that no
file can hold. :func:`loads_json` turns each of them into one clear input error that
says which file, row and field it came from; :func:`read_json_file` adds the file's
size, reading and UTF-8 decoding.

Every JSON the library reads from outside (input rows, id lists, judge answers, API
replies, policies, sessions) goes through here.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys

from sgi_core.errors import SGIInputError

#: Objects and arrays nested deeper than this are refused. Python's parser gives up
#: near 1,000 levels (less when the stack is already deep), so a fixed limit below it
#: makes the outcome the same wherever the call is made.
MAX_JSON_DEPTH = 512

#: Files larger than this are refused by :func:`read_json_file` before they are read.
MAX_JSON_FILE_BYTES = 64 * 1024 * 1024

# An escaped surrogate (\ud800-\udfff): the only way a JSON text can produce a string
# that cannot be encoded; checking the raw text first spares the search on every string.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Refused(Exception):
    """Raised inside the parser's hooks; :func:`loads_json` turns it into an input error."""


def _refuse_constant(name: str):
    raise _Refused(f"{name} is not a JSON number")


def _object_refusing_duplicates(pairs: list) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        keys = [key for key, _ in pairs]
        duplicate = next(key for index, key in enumerate(keys) if key in keys[:index])
        raise _Refused(f"the key {duplicate!r} appears twice in one JSON object")
    return obj


def _check_tree(value, max_depth: int, strings_may_hold_surrogates: bool) -> None:
    """Refuse nesting deeper than ``max_depth``, numbers that overflowed to infinity and lone surrogates."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = list(item.values())
            if strings_may_hold_surrogates:
                children.extend(item.keys())
        elif isinstance(item, list):
            children = item
        elif isinstance(item, float) and math.isinf(item):
            raise _Refused("a JSON number is too large for a floating-point value (it would be infinite)")
        elif strings_may_hold_surrogates and isinstance(item, str) and _SURROGATE.search(item):
            raise _Refused("a JSON string holds a lone UTF-16 surrogate escape (\\ud800 to \\udfff), which is not text")
        else:
            continue
        if depth >= max_depth:
            raise _Refused("JSON nested too deeply to read")
        stack.extend((child, depth + 1) for child in children)


def loads_json(
    text: str | bytes, *, source: str = "<input>", rows=None, column: str | None = None, hint: str | None = None,
    max_depth: int = MAX_JSON_DEPTH, allow_duplicate_keys: bool = False, allow_non_finite: bool = False,
):
    """Parse one JSON text, refusing what :func:`json.loads` would crash on or silently change.

    Parameters
    ----------
    text : str or bytes
        The JSON text; bytes must be UTF-8 (a leading byte-order mark is allowed).
    source, rows, column : optional
        Where the text came from (file, 1-based row or line numbers, field), named in errors.
    hint : str, optional
        What the user can do, appended to every error.
    max_depth : int
        Deepest nesting of objects and arrays accepted (``[[1]]`` is 2 deep).
    allow_duplicate_keys : bool
        Keep the last value of a repeated key, as :func:`json.loads` does, instead of refusing it.
    allow_non_finite : bool
        Accept the non-standard constants ``NaN``, ``Infinity`` and ``-Infinity``.
        Numbers too large for a float (``1e400``) are refused whatever this says.

    Returns
    -------
    object
        What :func:`json.loads` returns.

    Raises
    ------
    SGIInputError
        Bytes that are not UTF-8, invalid JSON, an integer of more digits than Python
        converts (4,300 by default), a number that overflows a float, nesting deeper
        than ``max_depth``, a repeated key, a lone surrogate escape.

    Examples
    --------
    >>> loads_json('{"ids": ["d1", 2]}')
    {'ids': ['d1', 2]}
    >>> loads_json('{"x": 1e400}', source="answer.json", rows=[3])
    Traceback (most recent call last):
    ...
    sgi_core.errors.SGIInputError: a JSON number is too large for a floating-point value (it would be infinite) ...
    """
    def refused(message: str) -> SGIInputError:
        return SGIInputError(message, source=source, column=column, rows=rows, hint=hint)

    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise refused(f"not valid UTF-8 (byte {err.start + 1})") from None
    text = text.removeprefix("\ufeff")
    hooks = {} if allow_duplicate_keys else {"object_pairs_hook": _object_refusing_duplicates}
    if not allow_non_finite:
        hooks["parse_constant"] = _refuse_constant
    try:
        value = json.loads(text, **hooks)
        _check_tree(value, max_depth, bool(_SURROGATE_ESCAPE.search(text)))
    except json.JSONDecodeError as err:
        where = f"line {err.lineno} column {err.colno}" if "\n" in text.strip() else f"character {err.pos + 1}"
        # Some messages end in "at" already ("Unterminated string starting at").
        raise refused(f"invalid JSON: {err.msg.removesuffix(' at')} at {where}") from None
    except RecursionError:
        raise refused("JSON nested too deeply to read") from None
    except _Refused as err:
        raise refused(str(err)) from None
    except ValueError as err:
        # JSONDecodeError is caught above, so this is int()'s limit on digits.
        if "integer string conversion" not in str(err):
            raise
        raise refused(f"a JSON number has more than {sys.get_int_max_str_digits():,} digits") from None
    return value


def read_json_file(path: str | os.PathLike, *, max_bytes: int = MAX_JSON_FILE_BYTES, hint: str | None = None,
                   **options):
    """Read and parse one JSON file with :func:`loads_json`; ``options`` are passed on to it.

    Raises
    ------
    SGIInputError
        A missing or unreadable file, a folder, a file over ``max_bytes``, or any
        error of :func:`loads_json`, each naming the file.
    """
    name = str(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise SGIInputError("file not found", source=name, hint=hint) from None
    except IsADirectoryError:
        raise SGIInputError("this is a folder, not a JSON file", source=name, hint=hint) from None
    except OSError as err:
        raise SGIInputError(f"cannot read the file: {err.strerror}", source=name, hint=hint) from None
    if len(raw) > max_bytes:
        raise SGIInputError(f"the file is larger than the {max_bytes:,} bytes a JSON file may have",
                            source=name, hint=hint)
    return loads_json(raw, source=name, hint=hint, **options)

