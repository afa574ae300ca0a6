"""How rows keep their place through a Ray run: the order key, clashing input columns, the final check.

Order key: ``input_shard`` (0-based position of the shard in the sorted list of
input files, also named in ``input_file``) and ``input_row`` (1-based data row in
that shard). :class:`NumberRows` adds it in each read task under private names, so
that input columns named ``input_shard``, ``input_file``, ``input_row`` or ``path``
keep their values (the first two under an ``input_`` prefix, as ``score`` keeps
``input_row``: :func:`keep_clashing_columns`); the scorer writes the public names.
:func:`check_output` checks the written dataset against the shards.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sgi_core.columns import ADDED_COLUMNS
from sgi_core.io.shards import shard_format

#: Columns naming each row's place in the input.
ORDER_KEY = ("input_shard", "input_row")

#: Columns of the same names in the input keep their values under an ``input_`` prefix,
#: as ``score`` keeps ``input_row`` (``input_row`` itself is renamed by ``validate_triples``).
_RAY_ADDED_COLUMNS = ("input_shard", "input_file")

# The order key travels under names no input column can have until the scorer writes it:
# an input column named like it was overwritten, and Ray's own "path" column was popped
# together with an input column named "path".
PRIVATE_FILE, PRIVATE_SHARD, PRIVATE_ROW = "\x00sgi_input_file", "\x00sgi_input_shard", "\x00sgi_input_row"
PRIVATE_KEY = [PRIVATE_FILE, PRIVATE_SHARD, PRIVATE_ROW]


class NumberRows:
    """Adds the order key to the blocks of a read task, which reads each of its shards whole and in order.

    The count per shard runs on across the task's blocks; a shard is read by one task only.
    Each row's file is in Ray's ``path`` column, or is ``path`` when the task reads one
    shard whose own columns include a ``path``.
    """

    def __init__(self, shard_index: dict[str, int], path: str | None = None):
        self._shard_index = shard_index
        self._path = path
        self._rows_seen: dict[str, int] = {}

    def __call__(self, block: pd.DataFrame) -> pd.DataFrame:
        paths = block.pop("path") if self._path is None else pd.Series(self._path, index=block.index)
        offset = paths.map(lambda path: self._rows_seen.get(path, 0)).to_numpy(dtype=np.int64)
        block[PRIVATE_FILE] = paths.to_numpy(dtype=object)
        block[PRIVATE_SHARD] = paths.map(self._shard_index).to_numpy(dtype=np.int64)
        block[PRIVATE_ROW] = offset + paths.groupby(paths, sort=False).cumcount().to_numpy(dtype=np.int64) + 1
        for path, count in paths.value_counts(sort=False).items():
            self._rows_seen[path] = self._rows_seen.get(path, 0) + int(count)
        return block


def keep_clashing_columns(raw: pd.DataFrame) -> pd.DataFrame:
    """``raw`` with input columns named ``input_shard`` or ``input_file`` kept under an ``input_`` prefix.

    Examples
    --------
    >>> keep_clashing_columns(pd.DataFrame(columns=["input_file", "input_input_file", "q"])).columns.tolist()
    ['input_input_input_file', 'input_input_file', 'q']
    """
    taken = set(map(str, raw.columns)) | set(_RAY_ADDED_COLUMNS) | set(ADDED_COLUMNS)
    renames = {}
    for column in _RAY_ADDED_COLUMNS:
        if column in raw.columns:
            new = f"input_{column}"
            while new in taken:
                new = f"input_{new}"
            taken.add(new)
            renames[column] = new
    return raw.rename(columns=renames)


def check_output(output: Path, shards: list[Path]) -> tuple[int, int]:
    """Rows and scored rows of the written dataset, after checking every shard's rows.

    Each shard must hold rows 1..n once, and a Parquet shard exactly the rows its
    footer counts; a shard index must name one of the shards read.
    """
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq

    keys = pads.dataset(output, format="parquet").to_table(columns=[*ORDER_KEY, "sgi"]).to_pandas()
    per_shard = keys.groupby("input_shard")["input_row"].agg(["size", "max", "nunique"])
    broken = per_shard[(per_shard["size"] != per_shard["max"]) | (per_shard["nunique"] != per_shard["size"])]
    if len(broken):
        raise RuntimeError(f"the order keys of shards {broken.index.tolist()} are not 1..n: "
                           "a shard was read by more than one task, or read twice")
    unknown = sorted(set(per_shard.index) - set(range(len(shards))))
    written = per_shard["size"].to_dict()
    short = [i for i, shard in enumerate(shards)
             if shard_format(shard) == "parquet" and written.get(i, 0) != pq.ParquetFile(shard).metadata.num_rows]
    if unknown or short:
        raise RuntimeError(f"the output does not hold every shard's rows (shard indices {unknown} unknown, shards "
                           f"{short} with another row count than their file): a read task was lost or repeated")
    return len(keys), int(np.isfinite(keys["sgi"].to_numpy(dtype=float)).sum())
