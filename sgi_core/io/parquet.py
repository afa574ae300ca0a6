"""Reading Parquet files for :func:`sgi_core.io.reading.read_table`: whole, or column by column under limits.

Under :class:`~sgi_core.io.limits.InputLimits` a file is checked from its metadata
before any row is read, then read one column at a time in record batches whose cells
are checked as they come, through the C library's allocator (:func:`_system_allocator`).

Every reader keeps every column of the file: a pandas index stored in the file (a
named one such as ``doc_id``, or ``__index_level_0__``) comes back as an ordinary
column, as the other extra columns do, never as a frame index that later steps drop.
Under limits, text stored with a dictionary is measured before it is expanded.
"""

from __future__ import annotations

import io
import os
import re
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.io.limits import InputLimits, check_cells, check_shape, is_scored, parquet_shape
from sgi_core.io.table_formats import PARQUET_SUFFIXES, check_unique_columns, no_rows_error

#: Rows per Parquet record batch read under limits: each batch's cells are checked as it is read.
PARQUET_BATCH_ROWS = 65_536

# pyarrow names its in-memory buffer, which means nothing to the user.
_PYARROW_SOURCE_PREFIX = re.compile(r"^Could not open Parquet input source '[^']*': ")


def parquet_error(err: Exception, name: str) -> SGIInputError:
    """The :class:`SGIInputError` for a file pyarrow cannot read as Parquet."""
    detail = _PYARROW_SOURCE_PREFIX.sub("", str(err))
    return SGIInputError(f"cannot read as Parquet: {detail}", source=name,
                         hint="Write the file again, or export it as CSV")


def stored_index_columns(schema) -> list[str]:
    """Names of the columns in which pandas stored a frame's index (a range index is stored as none)."""
    metadata = schema.pandas_metadata or {}
    return [column for column in metadata.get("index_columns", []) if isinstance(column, str)]


def index_as_columns(frame: pd.DataFrame, stored: list[str]) -> pd.DataFrame:
    """``frame`` with the index pandas restored from the columns ``stored`` turned back into those columns.

    Examples
    --------
    >>> frame = pd.DataFrame({"q": ["a"]}, index=pd.Index(["d7"], name="doc_id"))
    >>> index_as_columns(frame, ["doc_id"]).columns.tolist()
    ['q', 'doc_id']
    """
    if not stored:
        return frame
    levels = frame.index.to_frame(index=False)
    levels.columns = stored
    return pd.concat([frame.reset_index(drop=True), levels], axis=1)


def read_parquet_bytes(raw: bytes, name: str) -> pd.DataFrame:
    """A whole Parquet file from its bytes, every column kept (:func:`index_as_columns`)."""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(raw))
        frame = index_as_columns(table.to_pandas(), stored_index_columns(table.schema))
    except Exception as err:  # pyarrow raises several unrelated types for corrupt files
        raise parquet_error(err, name) from None
    check_unique_columns(frame.columns, name)
    return frame


def large_strings(batch):
    """A record batch with its text columns as ``large_string``, which pandas wraps without a copy.

    A dictionary-encoded text column is expanded here, after its size was checked.
    The schema's pandas metadata is dropped, so a stored index converts to an
    ordinary column of its own name (``doc_id``, ``__index_level_0__``).
    """
    import pyarrow as pa

    def text_type(kind) -> bool:
        return pa.types.is_string(kind) or pa.types.is_large_string(kind)

    fields = [pa.field(f.name, pa.large_string()) if text_type(f.type) or pa.types.is_dictionary(f.type)
              and text_type(f.type.value_type) else f for f in batch.schema]
    return batch.cast(pa.schema(fields))


@contextmanager
def _system_allocator():
    """Arrow allocates through the C library's ``malloc`` while the block runs.

    Arrow's default allocator (mimalloc or jemalloc) keeps the memory of the batches
    freed column by column for its own reuse, and the frame outlives the read, so that
    memory stayed held beside it: reading a 2,000,000-row scored Parquet peaked at
    1,851 MiB with it and 1,674 MiB with the system allocator (docs/PERFORMANCE.md).
    Each buffer is released by the allocator that made it, so the swap is safe for
    buffers that outlive the block.
    """
    import pyarrow as pa

    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


def _dictionary_encoded_text_columns(parquet) -> list[str]:
    """Text columns stored with a dictionary in some row group: the ones that can expand far beyond the file."""
    import pyarrow as pa

    metadata, names = parquet.metadata, []
    for position, field in enumerate(parquet.schema_arrow):
        if not (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
            continue
        # Parquet columns are leaves of the schema; a flat table's leaf i is its column i.
        chunks = (metadata.row_group(group).column(position) for group in range(metadata.num_row_groups))
        if any(chunk.has_dictionary_page for chunk in chunks):
            names.append(field.name)
    return names


def open_measurable(source):
    """A ``pyarrow.parquet.ParquetFile`` whose dictionary-encoded text columns are read as dictionaries.

    Such a column can expand far beyond the file (one distinct 99,000-character text
    20,000 times is 2 billion characters in 7 KB); read as a dictionary it can be
    measured (:func:`~sgi_core.io.limits.check_cells`) before :func:`large_strings`
    expands it. Text columns stored plainly are read as they are.
    """
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(source)
    dictionary_columns = _dictionary_encoded_text_columns(parquet)
    return pq.ParquetFile(source, read_dictionary=dictionary_columns) if dictionary_columns else parquet


def coalesced(batches, rows: int):
    """Record batches joined until each holds at least ``rows`` rows (the last may hold fewer).

    A file written in many small row groups is read one row group per batch; checking
    and converting 300 rows at a time costs more than reading them. Dictionary-encoded
    columns stay encoded (their dictionaries unified), so they are still measured
    before they are expanded.
    """
    import pyarrow as pa

    pending, count = [], 0
    for batch in batches:
        pending.append(batch)
        count += batch.num_rows
        if count >= rows:
            yield pa.concat_batches(pending)
            pending, count = [], 0
    if pending:
        yield pa.concat_batches(pending)


def read_parquet_limited(source, name: str, limits: InputLimits) -> pd.DataFrame:
    """A Parquet file checked from its metadata, then read column by column, each batch's cells checked.

    Reading one column at a time keeps the peak near the frame itself: only one
    column's Arrow batches are held beside the columns already converted. A text
    column stored with a dictionary is read as one (each distinct text once) and
    measured before it is expanded, so a few kilobytes that expand to billions of
    characters are refused at their size in the file.
    """
    import pyarrow as pa

    try:
        n_rows, columns = parquet_shape(source)
    except Exception as err:  # pyarrow raises several unrelated types for corrupt files
        raise parquet_error(err, name) from None
    check_unique_columns(columns, name)
    check_shape(n_rows, columns, name, limits)
    if n_rows == 0:
        raise no_rows_error(name)
    scored = is_scored(columns)
    converted, chars = {}, 0
    try:
        with _system_allocator():
            parquet = open_measurable(source)  # the reader keeps the allocator current when it is opened
            for column in columns:
                batches, first_row = [], 1
                for batch in coalesced(parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=[column]),
                                       PARQUET_BATCH_ROWS):
                    chars = check_cells(batch, name, limits, first_row=first_row, chars_before=chars, scored=scored)
                    batches.append(large_strings(batch))
                    first_row += batch.num_rows
                table = pa.Table.from_batches(batches)
                converted[column] = table.to_pandas(self_destruct=True)[column]
                del batches, table
                pa.default_memory_pool().release_unused()
    except SGIInputError:
        raise
    except Exception as err:  # as above
        raise parquet_error(err, name) from None
    return pd.DataFrame(converted)


def is_parquet_path(source) -> bool:
    """Whether ``source`` is a path to a Parquet file (by its suffix or its magic bytes)."""
    if not isinstance(source, (str, os.PathLike)) or not Path(source).is_file():
        return False
    with open(source, "rb") as handle:
        return Path(source).suffix.lower() in PARQUET_SUFFIXES or handle.read(4) == b"PAR1"
