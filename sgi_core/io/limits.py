"""Limits on the shape of a table read whole: rows, columns, characters per cell and in all.

A file's byte size says little about what it becomes in memory, so :class:`InputLimits` bounds what
a whole read may hold, and the checks here refuse a table past a limit with an
:class:`~sgi_core.errors.SGIInputError` naming the file, the limit, the value found and how to raise it.
"""

from __future__ import annotations

import csv
import io
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
#: Characters of text in all cells: a file to score (100,000 rows of 5,000 characters),
#: and an already scored one (the 2,000,000-row benchmark file holds 1.2 billion).
DEFAULT_MAX_CHARS = 500_000_000
DEFAULT_MAX_SCORED_CHARS = 2_000_000_000
#: Stands for "no limit" where a reader bounds memory another way (chunks of rows).
UNBOUNDED = 10**15

#: Environment variable of each limit.
LIMIT_ENV = {
    "max_rows": "SGI_MAX_ROWS",
    "max_scored_rows": "SGI_MAX_SCORED_ROWS",
    "max_columns": "SGI_MAX_COLUMNS",
    "max_cell_chars": "SGI_MAX_CELL_CHARS",
    "max_chars": "SGI_MAX_CHARS",
    "max_scored_chars": "SGI_MAX_SCORED_CHARS",
}

_WHAT = {
    "max_rows": "rows to score",
    "max_scored_rows": "rows of an already scored file",
    "max_columns": "columns",
    "max_cell_chars": "characters per cell",
    "max_chars": "characters of text in a file to score",
    "max_scored_chars": "characters of text in an already scored file",
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
    max_chars : int
        Characters in all text cells of a file that still needs scoring.
    max_scored_chars : int
        Characters in all text cells of an already scored file.

    Notes
    -----
    A file's byte size (``SGI_MAX_INPUT_MB``, :func:`sgi_core.io.reading.max_input_bytes`)
    says little about what it becomes in memory: 2.7 MB of CSV can hold 200,000 tiny
    rows (600,000 texts to embed), and 42 KB of Parquet can expand to 3 million rows.
    :class:`InputLimits` bounds what a whole read may hold, and the checks here refuse a
    table that breaks a limit with an :class:`~sgi_core.errors.SGIInputError` naming the
    file, the limit, the value found and how to raise it. A Parquet file is checked from
    its metadata (:func:`parquet_shape`) before any row is read; its text columns are
    read as dictionaries (one copy of each distinct text) and measured before they are
    expanded, since 214 KB of Parquet holding one 99,000-character context 20,000 times
    expands to 2 billion characters. A CSV header's fields are counted before pandas
    parses it, and JSON records' keys as they are parsed.

    Rows that still need scoring cost embeddings; rows of an already scored file (its
    ``theta_*``, ``sgi`` and ``sgi_status`` columns present, :func:`is_scored`) cost only
    their cells, so they have a separate, higher row limit.

    Each limit has an environment variable (:data:`LIMIT_ENV`) read by
    :meth:`InputLimits.from_env`; a program may also pass its own :class:`InputLimits`.

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
    max_chars: int = DEFAULT_MAX_CHARS
    max_scored_chars: int = DEFAULT_MAX_SCORED_CHARS

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

    def char_limit(self, *, scored: bool) -> int:
        """:attr:`max_scored_chars` for an already scored file, else :attr:`max_chars`."""
        return self.max_scored_chars if scored else self.max_chars

    def per_chunk(self) -> InputLimits:
        """These limits for a reader that holds one chunk of rows at a time.

        The file may have any number of rows; columns, characters per cell and
        characters in all apply to each chunk (:func:`sgi_core.io.chunks.raw_chunks`).
        """
        return replace(self, max_rows=UNBOUNDED, max_scored_rows=UNBOUNDED)


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
    hint = (f"Raise the limit with {LIMIT_ENV[limit]} (or the Limits setting on the Data page) if this machine has "
            "the memory")
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


def _is_list_of_text(kind) -> bool:
    import pyarrow as pa

    return ((pa.types.is_list(kind) or pa.types.is_large_list(kind))
            and (pa.types.is_string(kind.value_type) or pa.types.is_large_string(kind.value_type)))


def _cell_length(cell) -> int:
    """Characters of a text cell, or of a list of passages joined by a blank line; 0 for anything else."""
    if isinstance(cell, str):
        return len(cell)
    if isinstance(cell, (list, tuple, np.ndarray)):
        texts = [item for item in cell if isinstance(item, str)]
        return sum(map(len, texts)) + 2 * max(len(texts) - 1, 0)
    return 0


def _passage_lengths(column) -> np.ndarray:
    """Characters per cell of a pyarrow list of texts: its passages joined by a blank line, ``sum(len) + 2 (k - 1)``."""
    import pyarrow.compute as pc

    counts = pc.list_value_length(column).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    parents = pc.list_parent_indices(column).to_numpy(zero_copy_only=False)
    lengths = pc.utf8_length(pc.list_flatten(column)).fill_null(0).to_numpy(zero_copy_only=False)
    chars = np.bincount(parents, weights=lengths, minlength=len(column)).astype(np.int64)
    return chars + 2 * np.maximum(counts - 1, 0)


def _text_lengths(column) -> np.ndarray | None:
    """Characters per cell of a text column (pandas or pyarrow); None for other types.

    A list of texts (a context of passages) counts as its passages joined by a blank line,
    the text it is scored as. A pyarrow dictionary column is measured without expanding
    it: the lengths of its distinct texts, taken by index.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if isinstance(column, pa.DictionaryArray):
        lengths = _text_lengths(column.dictionary)
        if lengths is None:
            return None
        lengths = np.append(lengths, 0)  # a missing cell points past the dictionary, at 0 characters
        return lengths[column.indices.fill_null(len(lengths) - 1).to_numpy(zero_copy_only=False)]
    if isinstance(column, pa.Array):
        if _is_list_of_text(column.type):
            return _passage_lengths(column)
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            return None
        return pc.utf8_length(column).fill_null(0).to_numpy(zero_copy_only=False)
    if column.dtype == object:
        return column.map(_cell_length).to_numpy(dtype=np.int64)
    if pd.api.types.is_string_dtype(column):
        return column.str.len().fillna(0).to_numpy(dtype=np.int64)
    return None


def check_cells(table, name: str, limits: InputLimits, *, first_row: int = 1, chars_before: int = 0,
                scored: bool | None = None) -> int:
    """Refuse a text cell longer than :attr:`InputLimits.max_cell_chars`, or too many characters in all.

    Parameters
    ----------
    table : DataFrame or pyarrow.RecordBatch / Table
        Dictionary-encoded text columns are measured without being expanded.
    first_row : int
        File row number of the table's first row, for the message.
    chars_before : int
        Characters already counted in earlier parts of the same file.
    scored : bool, optional
        Whether the file is already scored (:meth:`InputLimits.char_limit`); default
        :func:`is_scored` of the table's columns.

    Returns
    -------
    int
        ``chars_before`` plus the characters of every text cell of ``table``.

    Raises
    ------
    SGIInputError
        Naming the column, the first rows that are too long and the longest length;
        or the characters counted so far against :meth:`InputLimits.char_limit`.

    Examples
    --------
    >>> check_cells(pd.DataFrame({"context": ["abc", "abcdef"]}), "t.csv", InputLimits(max_cell_chars=5))
    Traceback (most recent call last):
    ...
    sgi_core.errors.SGIInputError: a cell has 6 characters; the limit is 5 characters per cell (file 't.csv', ...
    >>> check_cells(pd.DataFrame({"q": ["abc"], "c": ["abcdef"]}), "t.csv", InputLimits())
    9
    """
    names = table.column_names if hasattr(table, "column_names") else list(table.columns)
    scored = is_scored(names) if scored is None else scored
    char_limit = limits.char_limit(scored=scored)
    total = chars_before
    for position, column_name in enumerate(names):
        column = table.column(position) if hasattr(table, "column_names") else table.iloc[:, position]
        lengths = _text_lengths(column)
        if lengths is None or not len(lengths):
            continue
        if lengths.max() > limits.max_cell_chars:
            too_long = np.flatnonzero(lengths > limits.max_cell_chars)
            raise limit_error(name, "max_cell_chars", f"a cell has {int(lengths.max()):,} characters", limits,
                              rows=(too_long + first_row).tolist(), column=str(column_name))
        total += int(lengths.sum())
        if total > char_limit:
            raise limit_error(name, "max_scored_chars" if scored else "max_chars",
                              f"the file's text cells hold at least {total:,} characters", limits)
    return total


def check_header_width(body: str, separator: str, name: str, limits: InputLimits) -> None:
    """Refuse a delimited text whose header has more fields than :attr:`InputLimits.max_columns`.

    Counted before pandas parses anything: a 1,000,000-field header (9.9 MB) took
    5.2 GB in pandas. The separators of the first line bound the count from above;
    only when that bound breaks the limit is the header parsed (quotes respected).
    """
    end = body.find("\n")
    if body.count(separator, 0, end if end >= 0 else len(body)) < limits.max_columns:
        return
    try:
        fields = len(next(csv.reader(io.StringIO(body), delimiter=separator), []))
    except csv.Error:  # a malformed header: pandas names the problem
        return
    if fields > limits.max_columns:
        raise limit_error(name, "max_columns", f"the header has {fields:,} columns", limits)


def parquet_shape(source) -> tuple[int, list[str]]:
    """Rows and column names of a Parquet file, from its metadata alone (no row is read).

    ``source`` is a path or a binary file object; pyarrow errors propagate.
    """
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(source)
    return parquet.metadata.num_rows, list(parquet.schema_arrow.names)
