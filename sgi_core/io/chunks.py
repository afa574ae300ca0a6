"""Reading a table file a chunk of rows at a time, with memory that does not grow with the file.

:func:`raw_chunks` yields a file's raw cells (every cell text, as
:func:`sgi_core.io.reading.read_table` gives them) in chunks of rows, choosing the
reader by the file's format. A file up to :data:`WHOLE_READ_BYTES` is read whole by
``read_table``, so it gets every check and message of the dashboard's reader. A
larger file is streamed: CSV/TSV through pandas' chunked reader with ``read_table``'s
options, JSON Lines a block of lines at a time (each block read by ``read_table``),
Parquet by record batches. Its cells and messages are those of a whole read.
Validating the chunks is the caller's (:func:`sgi_core.pipelines.local_engine.read_chunks`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.io.decoding import detect_separator, file_encoding
from sgi_core.io.limits import InputLimits, check_cells, check_header_width, check_shape, limit_error
from sgi_core.io.parquet import is_parquet_path, large_strings, open_measurable, parquet_error
from sgi_core.io.reading import csv_parse_error, max_input_bytes, parse_jsonl_record, read_table
from sgi_core.io.table_formats import (
    CSV_READ_OPTIONS,
    check_unique_columns,
    empty_file_error,
    no_rows_error,
    split_header,
    table_format,
)

#: Files up to this size are read whole by :func:`~sgi_core.io.reading.read_table`, so they
#: get exactly its checks and messages; parsed, they take about as much memory as
#: scoring one chunk. Larger files (and any above ``SGI_MAX_INPUT_MB``) are streamed.
WHOLE_READ_BYTES = 16 * 1024 * 1024

_SNIFF_BYTES = 64 * 1024


def _not_decodable(encoding: str, name: str) -> SGIInputError:
    return SGIInputError(f"the file is not valid {encoding.upper()} text past its start", source=name,
                         hint="Save it again as UTF-8")


def _csv_chunks(path: Path, encoding: str, name: str, chunk_rows: int,
                limits: InputLimits) -> Iterator[pd.DataFrame]:
    try:
        with open(path, encoding=encoding, newline="") as handle:
            head = handle.read(_SNIFF_BYTES)
            separator, body = detect_separator(head)
            handle.seek(0)
            if len(body) != len(head):
                handle.readline()  # Excel's "sep=X" line
            header_start = handle.tell()
            check_header_width(handle.readline(), separator, name, limits)
            handle.seek(header_start)
            with pd.read_csv(handle, sep=separator, chunksize=chunk_rows, **CSV_READ_OPTIONS) as reader:
                header, rows = split_header(reader.get_chunk(chunk_rows + 1))  # the header and a full chunk
                check_unique_columns(header, name)
                for cells in itertools.chain([rows], reader):
                    if len(cells):
                        yield cells.set_axis(header, axis=1).reset_index(drop=True)
    except pd.errors.EmptyDataError:
        raise empty_file_error(name) from None
    except pd.errors.ParserError as err:
        raise csv_parse_error(err, separator, name) from None
    except UnicodeDecodeError:
        raise _not_decodable(encoding, name) from None


def _jsonl_lines(path: Path, encoding: str, name: str) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based line numbers."""
    with open(path, encoding=encoding) as handle:
        try:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, line
        except UnicodeDecodeError:
            raise _not_decodable(encoding, name) from None


def _jsonl_columns(path: Path, encoding: str, name: str, limits: InputLimits) -> list[str]:
    """Every key of every record, in order of first appearance (what a whole-file read gives)."""
    columns: dict[str, None] = {}
    for number, line in _jsonl_lines(path, encoding, name):
        columns.update(dict.fromkeys(parse_jsonl_record(line, number, name)))
        if len(columns) > limits.max_columns:
            raise limit_error(name, "max_columns", f"the records have more than {limits.max_columns:,} different "
                              f"keys by line {number}", limits)
    return list(columns)


def _jsonl_chunks(path: Path, encoding: str, name: str, chunk_rows: int,
                  limits: InputLimits) -> Iterator[pd.DataFrame]:
    # A block of lines is itself a JSON Lines file, so read_table converts its cells
    # exactly as it would in a whole-file read; a first pass finds the columns that
    # later blocks may add, so that every chunk has the same columns.
    columns = _jsonl_columns(path, encoding, name, limits)
    if not columns:
        raise empty_file_error(name, json_rows=True)
    lines = (line for _, line in _jsonl_lines(path, encoding, name))
    while block := list(itertools.islice(lines, chunk_rows)):
        frame = read_table("".join(block).encode("utf-8"), name=name)
        yield frame.reindex(columns=columns, fill_value="")


def _parquet_chunks(path: Path, name: str, chunk_rows: int, limits: InputLimits) -> Iterator[pd.DataFrame]:
    # Each batch is measured while its dictionary-encoded texts are still dictionaries.
    try:
        parquet = open_measurable(path)
    except Exception as err:  # pyarrow raises several unrelated types for corrupt files
        raise parquet_error(err, name) from None
    columns = parquet.schema_arrow.names
    check_unique_columns(columns, name)
    check_shape(0, columns, name, limits)
    if parquet.metadata.num_rows == 0:
        raise no_rows_error(name)
    first_row = 1
    for batch in parquet.iter_batches(batch_size=chunk_rows):
        check_cells(batch, name, limits, first_row=first_row)
        first_row += batch.num_rows
        yield large_strings(batch).to_pandas()


def _checked(frames: Iterator[pd.DataFrame], name: str, limits: InputLimits) -> Iterator[pd.DataFrame]:
    first_row = 1
    for frame in frames:
        check_cells(frame, name, limits, first_row=first_row)
        first_row += len(frame)
        yield frame


def _frame_chunks(frame: pd.DataFrame, chunk_rows: int) -> Iterator[pd.DataFrame]:
    for start in range(0, len(frame), chunk_rows):
        yield frame.iloc[start : start + chunk_rows].reset_index(drop=True)


def raw_chunks(path: Path, name: str, chunk_rows: int, limits: InputLimits | None = None) -> Iterator[pd.DataFrame]:
    """A file's cells ``chunk_rows`` rows at a time, unvalidated, with the whole read's cells and messages.

    Parameters
    ----------
    path : Path
        CSV, TSV, JSON Lines, JSON array or Parquet file (a JSON array is read whole).
    name : str
        The file's name in messages.
    chunk_rows : int
        Rows per chunk, at least 1.
    limits : InputLimits, optional
        Columns, characters per cell and characters in all, checked per chunk
        (:meth:`~sgi_core.io.limits.InputLimits.per_chunk`); rows are not limited.
        Default :meth:`~sgi_core.io.limits.InputLimits.from_env`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("question,context,response\\nq1,c1,r1\\nq2,c2,r2\\nq3,c3,r3\\n")
    >>> [len(chunk) for chunk in raw_chunks(path, "t.csv", 2)]
    [2, 1]
    """
    limits = (InputLimits.from_env() if limits is None else limits).per_chunk()
    if is_parquet_path(path):
        # Parquet goes by batches whatever its size: a few kilobytes can hold billions of characters.
        return _parquet_chunks(path, name, chunk_rows, limits)
    if not path.is_file() or path.stat().st_size <= min(WHOLE_READ_BYTES, max_input_bytes()):
        return _frame_chunks(read_table(path, name=name, limits=limits), chunk_rows)
    with open(path, "rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    encoding = file_encoding(path, head, name)
    kind = table_format(name, head, head.decode(encoding, errors="ignore").lstrip("\ufeff \t\r\n")[:1])
    if kind == "jsonl":
        return _checked(_jsonl_chunks(path, encoding, name, chunk_rows, limits), name, limits)
    if kind == "json" or path.suffix.lower() == ".json":
        # A JSON array cannot be cut into rows without parsing it whole.
        return _frame_chunks(read_table(path, name=name, limits=limits), chunk_rows)
    return _checked(_csv_chunks(path, encoding, name, chunk_rows, limits), name, limits)
