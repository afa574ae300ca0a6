"""Limits on the shape of a table read whole: rows, columns and characters per cell.

A file's byte size (``SGI_MAX_INPUT_MB``, :func:`sgi_core.io.reading.max_input_bytes`)
says little about what it becomes in memory: 2.7 MB of CSV can hold 200,000 tiny
rows (600,000 texts to embed), and 42 KB of Parquet can expand to 3 million rows.
:class:`InputLimits` bounds what a whole read may hold, and the checks here refuse a
table that breaks a limit with an :class:`~sgi_core.errors.SGIInputError` naming the
file, the limit, the value found and how to raise it. A Parquet file is checked from
its metadata (:func:`parquet_shape`) before any row is read.

Rows that still need scoring cost embeddings; rows of an already scored file (its
``theta_*``, ``sgi`` and ``sgi_status`` columns present, :func:`is_scored`) cost only
their cells, so they have a separate, higher row limit.

Each limit has an environment variable (:data:`LIMIT_ENV`) read by
:meth:`InputLimits.from_env`; a program may also pass its own :class:`InputLimits`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace

import numpy as np
import pandas as pd

from sgi_core.columns import SCORE_COLUMNS
from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult

DEFAULT_MAX_ROWS = 100_000
DEFAULT_MAX_SCORED_ROWS = 5_000_000
DEFAULT_MAX_COLUMNS = 200
DEFAULT_MAX_CELL_CHARS = 100_000

#: Environment variable of each limit.
LIMIT_ENV = {
    "max_rows": "SGI_MAX_ROWS",
    "max_scored_rows": "SGI_MAX_SCORED_ROWS",
    "max_columns": "SGI_MAX_COLUMNS",
    "max_cell_chars": "SGI_MAX_CELL_CHARS",
}

_WHAT = {
    "max_rows": "rows to score",
    "max_scored_rows": "rows of an already scored file",
    "max_columns": "columns",
    "max_cell_chars": "characters per cell",
}


@dataclass(frozen=True)
class InputLimits(JsonResult):
    """Most rows, columns and characters per cell a table read whole may have.

    Attributes
    ----------
    max_rows : int
        Rows of a file that still needs scoring (each costs three embeddings).
    max_scored_rows : int
        Rows of an already scored file (:func:`is_scored`), opened without embedding.
    max_columns : int
    max_cell_chars : int
        Characters in any one text cell.

    Examples
    --------
    >>> InputLimits.from_env({"SGI_MAX_ROWS": "250000"}).max_rows
    250000
    >>> InputLimits().row_limit(scored=True)
    5000000
    """

    max_rows: int = DEFAULT_MAX_ROWS
    max_scored_rows: int = DEFAULT_MAX_SCORED_ROWS
    max_columns: int = DEFAULT_MAX_COLUMNS
    max_cell_chars: int = DEFAULT_MAX_CELL_CHARS

    def __post_init__(self):
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise SGIInputError(f"The '{item.name}' limit must be an int >= 1. Got {value!r} instead.",
                                    hint=f"Set {LIMIT_ENV[item.name]} to a whole number of at least 1")
            object.__setattr__(self, item.name, int(value))

    @classmethod
    def from_env(cls, environ=None) -> InputLimits:
        """The defaults, each replaced by its environment variable (:data:`LIMIT_ENV`) where set.

        Raises
        ------
        SGIInputError
            A variable set to anything but a whole number of at least 1.
        """
        environ = os.environ if environ is None else environ
        given = {}
        for name, variable in LIMIT_ENV.items():
            raw = str(environ.get(variable, "")).strip().replace("_", "").replace(",", "")
            if not raw:
                continue
            if not raw.isdigit() or int(raw) < 1:
                raise SGIInputError(f"{variable} must be a whole number of at least 1; got {environ[variable]!r}",
                                    hint=f"Unset it to use the default of {getattr(cls(), name):,}")
            given[name] = int(raw)
        return replace(cls(), **given)

    def row_limit(self, *, scored: bool) -> int:
        """:attr:`max_scored_rows` for an already scored file, else :attr:`max_rows`."""
        return self.max_scored_rows if scored else self.max_rows


def is_scored(columns) -> bool:
    """Whether a table with these columns is already scored (``theta_*``, ``sgi``, ``sgi_status``).

    Examples
    --------
    >>> is_scored(["question", "context", "response", "theta_qc", "theta_rq", "theta_rc", "sgi", "sgi_status"])
    True
    >>> is_scored(["question", "context", "response", "sgi"])
    False
    """
    return set(SCORE_COLUMNS) <= set(map(str, columns))


def limit_error(name: str, limit: str, found: str, limits: InputLimits, *, rows=None, column=None) -> SGIInputError:
    """The :class:`SGIInputError` for a table that breaks ``limit`` (an :class:`InputLimits` field name)."""
    value = getattr(limits, limit)
    hint = f"Raise the limit with {LIMIT_ENV[limit]} (or the Limits setting on the Data page) if this machine has the memory"
    if limit == "max_rows":
        hint += (", or score the file in chunks with `python -m sgi_core score FILE -o scored.parquet` "
                 "and open the scored Parquet, which needs no embeddings")
    return SGIInputError(f"{found}; the limit is {value:,} {_WHAT[limit]}", source=name, column=column,
                         rows=rows, hint=hint)


def check_shape(n_rows: int, columns, name: str, limits: InputLimits, *, at_least: bool = False) -> None:
    """Refuse a table of ``n_rows`` rows and these ``columns`` that breaks a row or column limit.

    ``at_least`` says that ``n_rows`` is a lower bound (a read stopped past the limit).

    Raises
    ------
    SGIInputError
        Too many columns, or more rows than :meth:`InputLimits.row_limit` allows.

    Examples
    --------
    >>> check_shape(3, ["question", "context", "response"], "t.csv", InputLimits(max_rows=3))
    >>> check_shape(4, ["question", "context", "response"], "t.csv", InputLimits(max_rows=3))
    Traceback (most recent call last):
    ...
    sgi_core.errors.SGIInputError: the file has 4 rows; the limit is 3 rows to score (file 't.csv'). ...
    """
    columns = list(columns)
    if len(columns) > limits.max_columns:
        raise limit_error(name, "max_columns", f"the file has {len(columns):,} columns", limits)
    scored = is_scored(columns)
    if n_rows > limits.row_limit(scored=scored):
        found = f"the file has more than {n_rows - 1:,} rows" if at_least else f"the file has {n_rows:,} rows"
        raise limit_error(name, "max_scored_rows" if scored else "max_rows", found, limits)


def _text_lengths(column) -> np.ndarray | None:
    """Characters per cell of a text column (pandas or pyarrow); None for other types."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, (pa.Array, pa.ChunkedArray)):
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            return None
        return pc.utf8_length(column).fill_null(0).to_numpy(zero_copy_only=False)
    if column.dtype == object:
        return column.map(lambda cell: len(cell) if isinstance(cell, str) else 0).to_numpy(dtype=np.int64)
    if pd.api.types.is_string_dtype(column):
        return column.str.len().fillna(0).to_numpy(dtype=np.int64)
    return None


def check_cells(table, name: str, limits: InputLimits, *, first_row: int = 1) -> None:
    """Refuse a text cell longer than :attr:`InputLimits.max_cell_chars` characters.

    Parameters
    ----------
    table : DataFrame or pyarrow.RecordBatch / Table
    first_row : int
        File row number of the table's first row, for the message.

    Raises
    ------
    SGIInputError
        Naming the column, the first rows that are too long and the longest length.

    Examples
    --------
    >>> check_cells(pd.DataFrame({"context": ["abc", "abcdef"]}), "t.csv", InputLimits(max_cell_chars=5))
    Traceback (most recent call last):
    ...
    sgi_core.errors.SGIInputError: a cell has 6 characters; the limit is 5 characters per cell (file 't.csv', column 'context', row 2). ...
    """
    names = table.column_names if hasattr(table, "column_names") else list(table.columns)
    for position, column_name in enumerate(names):
        column = table.column(position) if hasattr(table, "column_names") else table.iloc[:, position]
        lengths = _text_lengths(column)
        if lengths is None or not len(lengths) or lengths.max() <= limits.max_cell_chars:
            continue
        too_long = np.flatnonzero(lengths > limits.max_cell_chars)
        raise limit_error(name, "max_cell_chars", f"a cell has {int(lengths.max()):,} characters", limits,
                          rows=(too_long + first_row).tolist(), column=str(column_name))


def parquet_shape(source) -> tuple[int, list[str]]:
    """Rows and column names of a Parquet file, from its metadata alone (no row is read).

    ``source`` is a path or a binary file object; pyarrow errors propagate.
    """
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(source)
    return parquet.metadata.num_rows, list(parquet.schema_arrow.names)
