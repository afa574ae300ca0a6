"""Reading CSV, TSV, JSON Lines, JSON and Parquet files into a frame of raw columns.

Every way a file can be unreadable ends in one :class:`~sgi_core.errors.SGIInputError`
that says what was wrong and where: empty files, files with a header and no rows,
binary files (whatever their name), rows with more fields than the header, an
unclosed quote, duplicate column names, files too large to read at once. Bytes
become text as :mod:`sgi_core.io.decoding` says. All CSV cells are read as text, so
``"NA"`` stays a string and ``"007"`` keeps its zeros; cells missing at the end of a
short row read as ``""``.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.io.decoding import decode_text, detect_separator, header_only_error
from sgi_core.io.limits import InputLimits, check_cells, check_header_width, check_shape, is_scored, limit_error
from sgi_core.io.parquet import is_parquet_path, read_parquet_bytes, read_parquet_limited
from sgi_core.io.table_formats import (
    CSV_READ_OPTIONS,
    FORMATS_HINT,
    check_unique_columns,
    empty_file_error,
    no_rows_error,
    split_header,
    table_format,
)
from sgi_core.jsonio import loads_json

#: Files above this size are refused before they are read; ``SGI_MAX_INPUT_MB`` overrides it.
#: Parsing holds several copies of the text in memory, so the limit protects the machine.
DEFAULT_MAX_INPUT_MB = 200
_MB = 1024 * 1024

_FIELD_COUNT_ERROR = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_OPEN_QUOTE_ERROR = re.compile(r"EOF inside string starting at row (\d+)")


def max_input_bytes() -> int:
    """Largest file :func:`read_table` reads: ``$SGI_MAX_INPUT_MB`` or 200 MB, in bytes.

    Raises
    ------
    SGIInputError
        If ``SGI_MAX_INPUT_MB`` is set to anything but a positive number.
    """
    raw = os.environ.get("SGI_MAX_INPUT_MB", "").strip()
    if not raw:
        return DEFAULT_MAX_INPUT_MB * _MB
    try:
        megabytes = float(raw)
    except ValueError:
        megabytes = math.nan
    if not (math.isfinite(megabytes) and megabytes > 0):
        raise SGIInputError(
            f"SGI_MAX_INPUT_MB must be a positive number of megabytes; got {raw!r}",
            hint=f"Unset it to use the default of {DEFAULT_MAX_INPUT_MB} MB",
        )
    return int(megabytes * _MB)


def source_name(source) -> str:
    """A name for ``source`` in messages: the path, the upload's name or ``"<upload>"``."""
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    return getattr(source, "name", None) or "<upload>"


def _too_large(size: int | None, limit: int, name: str) -> SGIInputError:
    size_text = f"the file is {size / _MB:.1f} MB," if size is not None else "the file is"
    return SGIInputError(
        f"{size_text} larger than the {limit / _MB:g} MB that can be read at once",
        source=name,
        hint=("Split it into smaller files, or raise the limit with SGI_MAX_INPUT_MB "
              "if this machine has several times the file's size in free memory"),
    )


def _read_bytes(source, name: str, limit: int) -> bytes:
    """All bytes of ``source``, refusing more than ``limit`` without reading them all."""
    if isinstance(source, bytes):
        raw = source
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise SGIInputError("file not found", source=name)
        if path.is_dir():
            raise SGIInputError("this is a folder, not a file", source=name, hint=FORMATS_HINT)
        if path.is_file() and path.stat().st_size > limit:
            raise _too_large(path.stat().st_size, limit, name)
        try:
            with open(path, "rb") as handle:
                # One byte past the limit tells a too-large stream (a pipe, /dev/zero) from one that fits.
                raw = handle.read(limit + 1)
        except OSError as err:
            raise SGIInputError(f"cannot read the file: {err.strerror}", source=name) from None
    else:
        size = getattr(source, "size", None)
        if isinstance(size, int) and size > limit:
            raise _too_large(size, limit, name)
        raw = source.read(limit + 1)
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
    if len(raw) > limit:
        raise _too_large(len(raw) if isinstance(source, bytes) else None, limit, name)
    return raw


def csv_parse_error(err: pd.errors.ParserError, separator: str, name: str) -> SGIInputError:
    """The :class:`SGIInputError` for a pandas parser error on a file read with ``header=None``.

    Rows too wide for the header and unclosed quotes are named by data row; any other
    parser message is passed on.
    """
    message = str(err)
    # pandas counts records from 1 with the header as record 1, so record N is data row N - 1.
    field_count = _FIELD_COUNT_ERROR.search(message)
    if field_count:
        expected, record, seen = (int(g) for g in field_count.groups())
        return SGIInputError(
            f"a row has {seen} fields but the header has {expected}", source=name, rows=[record - 1],
            hint=f"Put cells that contain the separator {separator!r} in double quotes, or name every column in the "
                 "header",
        )
    open_quote = _OPEN_QUOTE_ERROR.search(message)
    if open_quote:
        return SGIInputError(
            "a double quote opens a cell that is never closed", source=name, rows=[int(open_quote.group(1))],
            hint='Close the quote; inside a quoted cell write a double quote as ""',
        )
    return SGIInputError(f"cannot parse as CSV: {message.strip()}", source=name,
                         hint="Check the quoting and that every row has the header's number of fields")


def _read_csv_text(text: str, name: str, limits: InputLimits | None = None) -> pd.DataFrame:
    separator, body = detect_separator(text)
    if not body.strip():
        raise empty_file_error(name)
    options = dict(CSV_READ_OPTIONS)
    if limits is not None:
        check_header_width(body, separator, name, limits)
        header = pd.read_csv(io.StringIO(body), sep=separator, nrows=1, **CSV_READ_OPTIONS).iloc[0]
        # One row past the limit (after the header) proves the file too long without parsing the rest.
        options["nrows"] = limits.row_limit(scored=is_scored(str(c).strip() for c in header)) + 2
    try:
        cells = pd.read_csv(io.StringIO(body), sep=separator, **options)
    except pd.errors.ParserError as err:
        raise csv_parse_error(err, separator, name) from None
    header, rows = split_header(cells)
    check_unique_columns(header, name)
    if limits is not None:
        check_shape(len(rows), header, name, limits, at_least=len(cells) == options["nrows"])
    frame = rows.reset_index(drop=True)
    frame.columns = header
    return frame


def cell_to_text(value) -> str:
    """A cell as text: missing -> ``""``, lists and mappings -> JSON, bytes -> UTF-8 (bad bytes -> U+FFFD)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    return str(value)


def _frame_from_records(records: list, name: str) -> pd.DataFrame:
    if not records:
        raise empty_file_error(name, json_rows=True)
    # dtype=object keeps each value as parsed: 3 stays "3" beside 0.25 instead of becoming "3.0".
    frame = pd.DataFrame(records, dtype=object)
    return frame.apply(lambda column: column.map(_json_cell_to_text))


def _json_cell_to_text(value) -> str:
    if isinstance(value, bool):
        return json.dumps(value)
    return cell_to_text(value)


def parse_jsonl_record(line: str, number: int, name: str) -> dict:
    """One JSON Lines record; errors name the file and the (1-based) line."""
    record = loads_json(line, source=name, rows=[number], hint="Each line must be one JSON object")
    if not isinstance(record, dict):
        raise SGIInputError("a JSON Lines record must be an object", source=name, rows=[number])
    return record


def jsonl_records(lines, name: str, limits: InputLimits | None = None) -> tuple[list[dict], list[str]]:
    """The records of numbered JSON Lines ``(number, line)`` and their keys in order of first appearance.

    Records with a new key each would make a frame of records x keys cells (10,000
    such records, 680 KB, took 725 MB); the keys are counted as they come and refused
    past :attr:`~sgi_core.io.limits.InputLimits.max_columns`.
    """
    records, keys = [], {}
    for number, line in lines:
        record = parse_jsonl_record(line, number, name)
        keys.update(dict.fromkeys(record))
        if limits is not None and len(keys) > limits.max_columns:
            raise limit_error(name, "max_columns", f"the records have more than {limits.max_columns:,} different keys "
                              f"by line {number}", limits)
        records.append(record)
    return records, list(keys)


def _read_jsonl_text(text: str, name: str, limits: InputLimits | None = None) -> pd.DataFrame:
    lines = ((number, line) for number, line in enumerate(text.splitlines(), start=1) if line.strip())
    return _frame_from_records(jsonl_records(lines, name, limits)[0], name)


def _read_json_array_text(text: str, name: str) -> pd.DataFrame:
    records = loads_json(text, source=name, hint="Give one JSON array of objects, or one object per line (JSON Lines)")
    if not isinstance(records, list):
        raise SGIInputError("a JSON file must hold an array of objects", source=name,
                            hint="Give one JSON array of objects, or one object per line (JSON Lines)")
    bad = [i for i, record in enumerate(records, start=1) if not isinstance(record, dict)]
    if bad:
        raise SGIInputError("every element of a JSON array must be an object", source=name, rows=bad)
    return _frame_from_records(records, name)


def read_table(
    source: str | os.PathLike | BinaryIO | bytes, *, name: str | None = None, max_bytes: int | None = None,
    limits: InputLimits | None = None,
) -> pd.DataFrame:
    """Read a CSV, TSV, JSON Lines, JSON array or Parquet file into a frame of raw columns.

    Parameters
    ----------
    source : path, bytes or binary file object
    name : str, optional
        File name used to pick the format and in messages (defaults to the path).
    max_bytes : int, optional
        Refuse larger files before reading them whole (default :func:`max_input_bytes`).
    limits : InputLimits, optional
        Refuse tables with more rows or columns, or longer cells, than these limits
        (:mod:`sgi_core.io.limits`). A Parquet file is then checked from its metadata
        before any row is read, and read in record batches, each checked as it comes;
        a Parquet path is not held in memory as bytes, so ``max_bytes`` does not apply
        to it. A CSV file is parsed no further than one row past the row limit.
        Default: no limit beyond ``max_bytes``.

    Returns
    -------
    DataFrame
        One row per data row, in file order. CSV and JSON cells are ``str`` with
        missing cells as ``""``; Parquet keeps its column types.

    Raises
    ------
    SGIInputError
        Missing, empty, binary, too large or unparsable files; a header with no
        data rows; duplicate column names; a broken limit.

    Examples
    --------
    >>> read_table(b"question,context,response\\n" + b"q,c,r\\n" * 3, name="t.csv",
    ...            limits=InputLimits(max_rows=2))
    Traceback (most recent call last):
    ...
    sgi_core.errors.SGIInputError: the file has more than 2 rows; the limit is 2 rows to score (file 't.csv'). ...
    """
    name = name or source_name(source)
    if limits is not None and is_parquet_path(source):
        return read_parquet_limited(source, name, limits)
    limit = max_input_bytes() if max_bytes is None else max_bytes
    raw = _read_bytes(source, name, limit)
    if table_format(name, raw) == "parquet":
        if limits is not None:
            return read_parquet_limited(io.BytesIO(raw), name, limits)
        frame = read_parquet_bytes(raw, name)
        if len(frame) == 0:
            raise no_rows_error(name)
        return frame
    text = decode_text(raw, name)
    kind = table_format(name, raw, text.lstrip()[:1])
    if kind in ("jsonl", "json"):
        frame = _read_jsonl_text(text, name, limits) if kind == "jsonl" else _read_json_array_text(text, name)
        if limits is not None:
            check_shape(len(frame), frame.columns, name, limits)
    else:
        frame = _read_csv_text(text, name, limits)
        if len(frame) == 0:
            raise header_only_error(raw, frame.columns, name)
    if limits is not None:
        check_cells(frame, name, limits)
    return frame
