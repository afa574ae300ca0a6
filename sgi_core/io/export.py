"""Writing scored tables safely.

A CSV opened in a spreadsheet may run a cell as a formula, and a run that fails half way must not
leave a truncated table: :func:`escape_formula_cell` neutralises the first, :func:`atomic_output`
prevents the second.
"""

from __future__ import annotations

import glob
import json
import os
import re
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.io.output_paths import check_output_file, is_stdout
from sgi_core.io.scored import SCORED_WITH_KEY
from sgi_core.io.table_formats import CSV_OUTPUT_SUFFIXES, PARQUET_SUFFIXES, PLAIN_NUMBER

_FORMULA_PREFIXES = (
    "=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20", "\t", "\r", "\n", "\x0b", "\x0c", "\x00",
)
# Spreadsheets skip these before deciding whether a cell is a formula.
_LEADING_BLANKS = " \u00a0"
NUL_REPLACEMENT = "\ufffd"
_WRITE_HINT = "Check that the folder exists and can be written to"
# This host's name as it appears in temporary file names: no dots, so the name splits cleanly.
_HOST = re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname()) or "host"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# mkstemp makes files only the owner can read; an output gets the mode a plain open() would give.
_OUTPUT_MODE = 0o666 & ~_umask()


def escape_formula_cell(value):
    """``value`` with a leading apostrophe if a spreadsheet would run it as a formula.

    Notes
    -----
    CSV exports neutralise cells that a spreadsheet would run as a formula (OWASP CSV
    injection guidance, ASVS 1.2.10): a text cell or column name starting with ``=``,
    ``+``, ``-``, ``@`` (or their full-width forms ``＝ ＋ － ＠``), tab, carriage return,
    line feed, vertical tab, form feed or NUL, also after leading spaces or no-break
    spaces, gets a leading apostrophe, which spreadsheets read as "this is text". A cell
    that is a plain number, such as ``-0.5`` or ``+1e3``, is left alone: spreadsheets read
    it as a number, never as a formula, and escaping it would change the data. A NUL
    character is written as U+FFFD (the replacement character): readers take a file with
    NUL bytes for a binary file. Numeric columns are written as numbers. Parquet keeps
    every value exactly as it is.

    Examples
    --------
    >>> escape_formula_cell("=HYPERLINK(\\"http://x\\")"), escape_formula_cell("-0.5"), escape_formula_cell(3)
    ('\\'=HYPERLINK("http://x")', '-0.5', 3)
    >>> escape_formula_cell(" =1+1"), escape_formula_cell("\\uff1d1")
    ("' =1+1", "'＝1")
    """
    if isinstance(value, str):
        rest = value.lstrip(_LEADING_BLANKS)
        if rest.startswith(_FORMULA_PREFIXES) and not PLAIN_NUMBER.fullmatch(rest):
            return "'" + value
    return value


def _csv_cell(value):
    # A list cell (a Parquet file's passages) is written as the JSON array it is read back from.
    if isinstance(value, (list, tuple, np.ndarray)):
        value = json.dumps(np.asarray(value, dtype=object).tolist(), ensure_ascii=False, default=str)
    if isinstance(value, str) and "\x00" in value:
        value = value.replace("\x00", NUL_REPLACEMENT)
    return escape_formula_cell(value)


def _map_text_cells(frame: pd.DataFrame, cell: Callable) -> pd.DataFrame:
    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_numeric_dtype(out[col]) or pd.api.types.is_bool_dtype(out[col]):
            continue
        out[col] = out[col].map(cell)
    out.columns = [cell(col) for col in out.columns]
    return out


def escape_formula_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Copy of ``frame`` whose text cells and column names cannot start a spreadsheet formula."""
    return _map_text_cells(frame, escape_formula_cell)


def to_csv_bytes(frame: pd.DataFrame) -> bytes:
    """UTF-8 CSV of ``frame``, formula-like cells escaped, NUL as U+FFFD, CRLF line ends (RFC 4180).

    Examples
    --------
    >>> to_csv_bytes(pd.DataFrame({"text": ["=1", "a\\x00b"]})).decode()
    "text\\r\\n'=1\\r\\na\\ufffdb\\r\\n"
    """
    # With "\n" line ends the csv writer leaves a cell holding a bare "\r" unquoted, and
    # every reader then splits the row there; "\r\n" makes it quote both.
    return _map_text_cells(frame, _csv_cell).to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def check_output_path(path: str | os.PathLike, *, inputs=()) -> str:
    """The format an output path will be written in, ``"csv"`` or ``"parquet"``; ``-`` is CSV on standard output.

    Raises
    ------
    SGIInputError
        An unsupported extension, or a path :func:`~sgi_core.io.output_paths.check_output_file`
        refuses (a folder, a device, a link, a missing folder, one of ``inputs``).
    """
    if is_stdout(path):
        return "csv"
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in PARQUET_SUFFIXES + CSV_OUTPUT_SUFFIXES:
        raise SGIInputError(f"cannot write '{suffix}' files", source=str(path), hint="Use .csv or .parquet")
    check_output_file(path, inputs=inputs, file_hint="Give a file name ending in .csv or .parquet")
    return "parquet" if suffix in PARQUET_SUFFIXES else "csv"


def _temporary_prefix(path: Path) -> str:
    # The host and process in the name tell a later run which leftovers belong to no live run.
    return f".{path.name}.{_HOST}.{os.getpid()}."


def _process_is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists but belongs to another user
        return True
    return True


def remove_stale_partials(path: str | os.PathLike) -> list[Path]:
    """Delete the temporary files that runs killed while writing ``path`` on this host left behind.

    A run stopped by an exception deletes its own temporary file; one killed outright
    (``SIGKILL``, a power cut) cannot. Its file is named after ``path``, this host and
    its process id, so a file whose process is no longer running is known to be stale.

    Returns
    -------
    list of Path
        The files deleted.
    """
    path = Path(path)
    removed = []
    for leftover in path.parent.glob(f".{glob.escape(path.name)}.{_HOST}.*.partial"):
        pid = leftover.name[len(f".{path.name}.{_HOST}."):].split(".", 1)[0]
        if pid.isdigit() and not _process_is_running(int(pid)):
            leftover.unlink(missing_ok=True)
            removed.append(leftover)
    return removed


def _sync_folder(folder: Path) -> None:
    # The rename itself is durable only once the folder's entry is on disk.
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:  # some file systems cannot sync a folder; the data itself is synced
        pass
    finally:
        os.close(descriptor)


@contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file that becomes ``path`` when the block ends without an exception.

    The file is a new one of a unique name beside ``path`` (:func:`tempfile.mkstemp`
    creates it exclusively, so a link planted there is never followed); it is
    flushed to disk (``fsync``) and replaces ``path`` in one :func:`os.replace`, so a
    crash leaves the old file or the new one, never a part. On an exception it is
    deleted and ``path`` is left as it was; leftovers of killed runs are deleted
    first (:func:`remove_stale_partials`). ``-`` writes to standard output directly.
    Two runs writing one target leave one of the two complete files; a target that is not
    a regular file (a device, a pipe, a link) is refused before any work
    (:mod:`sgi_core.io.output_paths`).

    Raises
    ------
    SGIInputError
        If the temporary file cannot be created or moved onto ``path``.
    """
    if is_stdout(path):
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    path = Path(path)
    try:
        remove_stale_partials(path)
        descriptor, temporary = tempfile.mkstemp(prefix=_temporary_prefix(path), suffix=".partial", dir=path.parent)
        os.chmod(temporary, _OUTPUT_MODE)
    except OSError as err:
        raise _write_error(err, path) from None
    try:
        with open(descriptor, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    try:
        os.replace(temporary, path)
    except OSError as err:
        Path(temporary).unlink(missing_ok=True)
        raise _write_error(err, path) from None
    _sync_folder(path.parent)


def write_text_output(text: str, path: str | os.PathLike, *, inputs=(), what: str = "output") -> None:
    """Write ``text`` as UTF-8 to ``path`` (``-``: standard output) as :func:`atomic_output` does.

    Raises
    ------
    SGIInputError
        A path :func:`~sgi_core.io.output_paths.check_output_file` refuses, or one that cannot be written.
    """
    check_output_file(path, inputs=inputs, what=what)
    try:
        with atomic_output(path) as handle:
            handle.write(text.encode("utf-8"))
    except OSError as err:
        raise _write_error(err, Path(path)) from None


def _write_error(err: OSError, path: Path) -> SGIInputError:
    return SGIInputError(f"cannot write the output: {err.strerror or err}", source=str(path), hint=_WRITE_HINT)


class _CsvChunks:
    """Appends frames to a CSV file exactly as :func:`to_csv_bytes` writes them all at once."""

    def __init__(self, handle: BinaryIO):
        self._handle = handle
        self._header_written = False

    def write(self, frame: pd.DataFrame) -> None:
        data = to_csv_bytes(frame)
        if self._header_written:
            # The header is the same bytes at the head of every chunk's CSV; cut it off.
            data = data[len(to_csv_bytes(frame.iloc[:0])):]
        self._handle.write(data)
        self._header_written = True

    def close(self) -> None:
        pass


class _ParquetChunks:
    """Appends frames as row groups of one Parquet file; the first frame fixes the schema."""

    def __init__(self, handle: BinaryIO, metadata: dict | None = None):
        self._handle = handle
        self._writer = None
        self._metadata = metadata

    def write(self, frame: pd.DataFrame) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self._writer is None:
            table = pa.Table.from_pandas(frame, preserve_index=False)
            if self._metadata:
                table = table.replace_schema_metadata({**(table.schema.metadata or {}), **self._metadata})
            self._writer = pq.ParquetWriter(self._handle, table.schema)
        else:
            table = pa.Table.from_pandas(frame, schema=self._writer.schema, preserve_index=False)
        self._writer.write_table(table)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


@contextmanager
def table_writer(path: str | os.PathLike, *, scored_by: dict | None = None) -> Iterator[Callable[[pd.DataFrame], None]]:
    """``write(frame)`` appending frames, in order, to one CSV (escaped) or Parquet (exact) file.

    ``scored_by`` (``{"model": ..., "precision": ...}``) is recorded in a Parquet file's
    metadata under :data:`SCORED_WITH_KEY` (:func:`scored_with` reads it back); a CSV
    file has no place for it.

    The path is checked (:func:`check_output_path`) before anything is written, and
    the file appears at ``path`` only when the block ends without an exception
    (:func:`atomic_output`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> with table_writer(out) as write:
    ...     write(pd.DataFrame({"a": [1]}))
    ...     write(pd.DataFrame({"a": [2]}))
    >>> out.read_bytes()
    b'a\\r\\n1\\r\\n2\\r\\n'
    """
    kind = check_output_path(path)
    with atomic_output(path) as handle:
        import json

        metadata = {SCORED_WITH_KEY: json.dumps(scored_by).encode()} if scored_by else None
        chunks = _ParquetChunks(handle, metadata) if kind == "parquet" else _CsvChunks(handle)
        yield chunks.write
        chunks.close()


def write_table(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``frame`` as CSV (escaped) or Parquet (exact), chosen by the file extension.

    Raises
    ------
    SGIInputError
        An unsupported extension, or a path that cannot be written.
    """
    try:
        with table_writer(path) as write:
            write(frame)
    except OSError as err:
        raise _write_error(err, Path(path)) from None
