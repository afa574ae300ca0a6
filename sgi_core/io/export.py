"""Writing scored tables safely.

CSV exports neutralise cells that a spreadsheet would run as a formula (OWASP CSV
injection guidance, ASVS 1.2.10): a text cell or column name starting with ``=``,
``+``, ``-``, ``@``, tab, carriage return, line feed or NUL gets a leading apostrophe,
which spreadsheets read as "this is text". A cell that is a plain number, such as
``-0.5`` or ``+1e3``, is left alone: spreadsheets read it as a number, never as a
formula, and escaping it would change the data. Numeric columns are written as
numbers. Parquet keeps every value exactly as it is.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from sgi_core.errors import SGIInputError

_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r", "\n", "\x00")
_PLAIN_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


def escape_formula_cell(value):
    """``value`` with a leading apostrophe if a spreadsheet would run it as a formula.

    Examples
    --------
    >>> escape_formula_cell("=HYPERLINK(\\"http://x\\")"), escape_formula_cell("-0.5"), escape_formula_cell(3)
    ('\\'=HYPERLINK("http://x")', '-0.5', 3)
    """
    if isinstance(value, str) and value.startswith(_FORMULA_PREFIXES) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def escape_formula_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Copy of ``frame`` whose text cells and column names cannot start a spreadsheet formula."""
    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_numeric_dtype(out[col]) or pd.api.types.is_bool_dtype(out[col]):
            continue
        out[col] = out[col].map(escape_formula_cell)
    out.columns = [escape_formula_cell(col) for col in out.columns]
    return out


def to_csv_bytes(frame: pd.DataFrame) -> bytes:
    """UTF-8 CSV of ``frame`` with formula-like cells escaped, CRLF line ends (RFC 4180)."""
    # With "\n" line ends the csv writer leaves a cell holding a bare "\r" unquoted, and
    # every reader then splits the row there; "\r\n" makes it quote both.
    return escape_formula_cells(frame).to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def write_table(frame: pd.DataFrame, path: str | Path) -> None:
    """Write ``frame`` as CSV (escaped) or Parquet (exact), chosen by the file extension.

    Raises
    ------
    SGIInputError
        An unsupported extension, or a path that cannot be written.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".parquet", ".pq", ".csv", ".txt", ""):
        raise SGIInputError(f"cannot write '{suffix}' files", source=str(path), hint="Use .csv or .parquet")
    try:
        if suffix in (".parquet", ".pq"):
            frame.to_parquet(path, index=False)
        else:
            path.write_bytes(to_csv_bytes(frame))
    except OSError as err:
        raise SGIInputError(f"cannot write the output: {err.strerror or err}", source=str(path),
                            hint="Check that the folder exists and can be written to") from None
