"""What every reader and writer of tables agrees on, each written once.

File formats and their suffixes, the byte-order marks, the options CSV text is read
with, the pattern of a plain number, and the messages shared by the whole-file
reader (:mod:`sgi_core.io.reading`), the chunked reader (:mod:`sgi_core.io.chunks`)
and the writers (:mod:`sgi_core.io.export`).
"""

from __future__ import annotations

import re
from pathlib import Path

from sgi_core.columns import ADDED_COLUMNS
from sgi_core.errors import SGIInputError

#: Rows read, scored and written at a time. Scoring 10,000 HaluEval rows holds a few hundred MB (texts,
#: float32 embeddings, float64 angle work arrays); the model itself is separate.
DEFAULT_CHUNK_ROWS = 10_000

#: Byte-order marks and the encoding each announces, longest first (UTF-32 LE starts like UTF-16 LE).
BYTE_ORDER_MARKS = (
    (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"), (b"\xef\xbb\xbf", "utf-8-sig"),
)

#: Text without a byte-order mark is read in the first of these that decodes it: UTF-8, then
#: Windows-1252 (Excel's "CSV" on Western Windows), then Latin-1 (which decodes any bytes).
TEXT_ENCODINGS = ("utf-8", "cp1252", "latin-1")

PARQUET_SUFFIXES = (".parquet", ".pq")
JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")
#: Suffixes written as CSV; no suffix at all means CSV too.
CSV_OUTPUT_SUFFIXES = (".csv", ".txt", "")

#: How CSV text becomes cells: every cell text (``"NA"`` stays a string, ``"007"`` keeps its
#: zeros), and ``header=None`` so that a first column the header does not name is an error
#: instead of a silent index. The header is the first row of cells (:func:`split_header`).
CSV_READ_OPTIONS = {"header": None, "dtype": str, "keep_default_na": False, "na_filter": False, "engine": "c"}

#: A cell spreadsheets read as a number: ``-0.5``, ``+1e3``, ``.5``, ``007``.
PLAIN_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")

FORMATS_HINT = "Use a CSV, TSV, JSON Lines or Parquet file"
# Columns read or written by name, whose case-only variants would be confused with them.
_LIBRARY_COLUMNS = frozenset(ADDED_COLUMNS)
_ROWS_HINT = "Add at least one row with a question, a context and a response"


def table_format(name: str, head: bytes, start: str = "") -> str:
    """The format of a file: ``"parquet"``, ``"jsonl"``, ``"json"`` (an array) or ``"csv"``.

    Parameters
    ----------
    name : str
        File name; its suffix decides, except that Parquet is also known by its magic bytes.
    head : bytes
        The file's first bytes.
    start : str
        The first non-blank character of the decoded text: a ``.json`` file starting
        with ``{`` is JSON Lines, one starting with ``[`` a JSON array.

    Examples
    --------
    >>> table_format("a.PQ", b""), table_format("a", b"PAR1..."), table_format("a.json", b"", "{")
    ('parquet', 'parquet', 'jsonl')
    >>> table_format("a.json", b"", "["), table_format("a.tsv", b"")
    ('json', 'csv')
    """
    suffix = Path(name).suffix.lower()
    if suffix in PARQUET_SUFFIXES or head[:4] == b"PAR1":
        return "parquet"
    if suffix in JSON_LINES_SUFFIXES or (suffix == ".json" and start == "{"):
        return "jsonl"
    if suffix == ".json" and start == "[":
        return "json"
    return "csv"


def split_header(cells):
    """The header names (stripped) and the data rows of a frame read with :data:`CSV_READ_OPTIONS`."""
    return [str(column).strip() for column in cells.iloc[0]], cells.iloc[1:]


def empty_file_error(name: str, *, json_rows: bool = False) -> SGIInputError:
    """The :class:`SGIInputError` for a file with nothing in it."""
    hint = "Give one JSON object per row" if json_rows else "Give a file with a header row and data rows"
    return SGIInputError("the file is empty", source=name, hint=hint)


def no_rows_error(name: str) -> SGIInputError:
    """The :class:`SGIInputError` for a file whose column names are followed by no row."""
    return SGIInputError("the file has column names but no data rows", source=name, hint=_ROWS_HINT)


def not_a_table_error(name: str, reason: str) -> SGIInputError:
    """The :class:`SGIInputError` for a file with no rows whose only line is no header either."""
    return SGIInputError(f"the file is not a text table: it has no data rows, and its only line is not "
                         f"column names ({reason})", source=name, hint=f"{FORMATS_HINT} with a header row")


def check_unique_columns(columns, source: str) -> None:
    """Raise :class:`SGIInputError` naming any column name that appears more than once."""
    seen, duplicates = set(), []
    for column in columns:
        if column in seen and column not in duplicates:
            duplicates.append(column)
        seen.add(column)
    if duplicates:
        names = ", ".join(str(c) if str(c).strip() else "(blank)" for c in duplicates)
        raise SGIInputError(f"duplicate column names: {names}", source=source,
                            hint="Rename the columns so that each name appears once")
    _check_case_clashes(columns, source)


def _check_case_clashes(columns, source: str) -> None:
    """Refuse names that differ only in case where one of them is a column the library reads or writes.

    ``SGI`` beside ``sgi`` (or ``Question`` beside ``question``) leaves the reader to
    guess which is meant: the roles are found whatever their case, and the scores
    written beside an old ``SGI`` column look like the same column.
    """
    by_lower: dict[str, list] = {}
    for column in columns:
        by_lower.setdefault(str(column).strip().lower(), []).append(column)
    clashes = [names for lower, names in by_lower.items() if len(names) > 1 and lower in _LIBRARY_COLUMNS]
    if clashes:
        raise SGIInputError(f"columns whose names differ only in case: {', '.join(map(str, clashes[0]))}",
                            source=source, hint="Rename or drop one of them: the library reads or writes the column "
                                                f"'{str(clashes[0][0]).strip().lower()}' whatever its case")
