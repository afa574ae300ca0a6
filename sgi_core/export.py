"""Writing scored tables safely.

CSV exports escape cells that a spreadsheet would run as a formula (OWASP CSV
injection guidance): a text cell starting with ``=``, ``+``, ``-``, ``@``, tab or
carriage return gets a leading apostrophe. Numeric columns are left as numbers.
Parquet keeps values exactly.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sgi_core.errors import SGIInputError

_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def escape_formula_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Copy of ``frame`` whose text cells cannot start a spreadsheet formula."""
    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_numeric_dtype(out[col]) or pd.api.types.is_bool_dtype(out[col]):
            continue
        out[col] = out[col].map(
            lambda v: "'" + v if isinstance(v, str) and v.startswith(_FORMULA_PREFIXES) else v
        )
    return out


def to_csv_bytes(frame: pd.DataFrame) -> bytes:
    """UTF-8 CSV of ``frame`` with formula-like cells escaped."""
    return escape_formula_cells(frame).to_csv(index=False).encode("utf-8")


def write_table(frame: pd.DataFrame, path: str | Path) -> None:
    """Write ``frame`` as CSV (escaped) or Parquet, chosen by the file extension."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        frame.to_parquet(path, index=False)
    elif suffix in (".csv", ".txt", ""):
        path.write_bytes(to_csv_bytes(frame))
    else:
        raise SGIInputError(f"cannot write '{suffix}' files", source=str(path), hint="Use .csv or .parquet")
