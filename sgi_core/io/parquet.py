"""Reading Parquet files for :func:`sgi_core.io.reading.read_table`: whole, or column by column under limits.

Under :class:`~sgi_core.io.limits.InputLimits` a file is checked from its metadata
before any row is read, then read one column at a time in record batches whose cells
are checked as they come, through the C library's allocator (:func:`_system_allocator`).
"""

from __future__ import annotations

import io
import os
import re
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.io.formats import PARQUET_SUFFIXES, check_unique_columns, no_rows_error
from sgi_core.io.limits import InputLimits, check_cells, check_shape, parquet_shape

#: Rows per Parquet record batch read under limits: each batch's cells are checked as it is read.
PARQUET_BATCH_ROWS = 65_536

_PYARROW_SOURCE_PREFIX = re.compile(r"^Could not open Parquet input source '[^']*': ")


def parquet_error(err: Exception, name: str) -> SGIInputError:
    """The :class:`SGIInputError` for a file pyarrow cannot read as Parquet."""
    detail = _PYARROW_SOURCE_PREFIX.sub("", str(err))
    return SGIInputError(f"cannot read as Parquet: {detail}", source=name, hint="Write the file again, or export it as CSV")


def read_parquet_bytes(raw: bytes, name: str) -> pd.DataFrame:
    """A Parquet file held in memory, read whole."""
    try:
        frame = pd.read_parquet(io.BytesIO(raw))
    except Exception as err:  # pyarrow raises several unrelated types for corrupt files
        raise parquet_error(err, name) from None
    check_unique_columns(frame.columns, name)
    return frame


def _large_strings(batch):
    """A record batch with its text columns as ``large_string``, which pandas wraps without a copy."""
    import pyarrow as pa

    fields = [pa.field(f.name, pa.large_string()) if pa.types.is_string(f.type) else f for f in batch.schema]
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


def read_parquet_limited(source, name: str, limits: InputLimits) -> pd.DataFrame:
    """A Parquet file checked from its metadata, then read column by column, each batch's cells checked.

    Reading one column at a time keeps the peak near the frame itself: only one
    column's Arrow batches are held beside the columns already converted.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        n_rows, columns = parquet_shape(source)
    except Exception as err:  # pyarrow raises several unrelated types for corrupt files
        raise parquet_error(err, name) from None
    check_unique_columns(columns, name)
    check_shape(n_rows, columns, name, limits)
    if n_rows == 0:
        raise no_rows_error(name)
    converted = {}
    try:
        with _system_allocator():
            parquet = pq.ParquetFile(source)  # its reader keeps the allocator current when it is opened
            for column in columns:
                batches, first_row = [], 1
                for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=[column]):
                    check_cells(batch, name, limits, first_row=first_row)
                    batches.append(_large_strings(batch))
                    first_row += batch.num_rows
                converted[column] = pa.Table.from_batches(batches).to_pandas(self_destruct=True)[column]
                del batches
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
