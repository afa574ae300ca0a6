"""Shards of a dataset: finding them and their format for the Ray engine, and streaming a scored run's shards.

A shard's format is decided as for every other file (:func:`sgi_core.io.table_formats.table_format`:
the suffix, and Parquet's magic bytes), so the two engines read the same file the same way.
:func:`stream_shards` reads a scored run written as several Parquet files (``score --engine ray``
writes a folder of them) a bounded number of rows at a time, only the columns asked for;
:func:`shards_scored_with` checks that every shard was scored the same way.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.io.table_formats import PARQUET_SUFFIXES, table_format

#: What a shard may be called: a CSV or Parquet file.
SHARD_SUFFIXES = (".csv", *PARQUET_SUFFIXES)
#: Bytes read to recognise a Parquet file by its magic number.
_MAGIC_BYTES = 4


def shard_format(path: Path) -> str:
    """``"parquet"`` or ``"csv"``, as :func:`~sgi_core.io.table_formats.table_format` decides it for this file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "part.csv"
    >>> _ = path.write_bytes(b"PAR1")
    >>> shard_format(path), shard_format(path.with_name("absent.pq"))
    ('parquet', 'parquet')
    """
    head = b""
    if path.is_file():
        with open(path, "rb") as handle:
            head = handle.read(_MAGIC_BYTES)
    return "parquet" if table_format(path.name, head) == "parquet" else "csv"


def find_shards(input_path: str | os.PathLike) -> list[Path]:
    """The CSV and Parquet files named by a file, a folder or a glob, sorted by path.

    A folder gives its ``*.csv``, ``*.parquet`` and ``*.pq`` files (not its subfolders).

    Raises
    ------
    SGIInputError
        When nothing matches, or a named file is neither CSV nor Parquet.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("b.csv", "a.parquet", "notes.txt"):
    ...     _ = (folder / name).write_text("")
    >>> [p.name for p in find_shards(folder)]
    ['a.parquet', 'b.csv']
    """
    text = str(input_path)
    path = Path(text).expanduser()
    if path.is_dir():
        found = [p for p in path.iterdir() if p.is_file() and p.suffix.lower() in SHARD_SUFFIXES]
        where = f"folder '{path}'"
    elif path.is_file():
        found = [path]
        where = f"file '{path}'"
    else:
        found = [Path(p) for p in glob.glob(os.path.expanduser(text)) if Path(p).is_file()]
        where = f"pattern '{text}'"
    if not found:
        raise SGIInputError(f"no input files match {where}", source=text,
                            hint="Give a CSV or Parquet file, a folder holding them, or a glob such as 'shards/*.csv'")
    wrong = [p.name for p in found if p.suffix.lower() not in SHARD_SUFFIXES]
    if wrong:
        raise SGIInputError(f"only .csv and .parquet shards can be read on Ray; got {', '.join(wrong[:5])}",
                            source=text, hint="Convert the files to Parquet, or score them without --engine ray")
    return sorted(p.resolve() for p in found)


#: Rows a stream of shards holds at a time (:func:`stream_shards`).
STREAM_BATCH_ROWS = 50_000


def parquet_shards(input_path: str | os.PathLike) -> list[Path]:
    """The Parquet files of a scored run: one file, a folder (as ``score --engine ray`` writes it) or a glob.

    Raises
    ------
    SGIInputError
        When nothing matches, or a file is not Parquet.
    """
    shards = find_shards(input_path)
    other = [p.name for p in shards if shard_format(p) != "parquet"]
    if other:
        raise SGIInputError(f"a sharded run is read from Parquet files; got {', '.join(other[:5])}",
                            source=str(input_path), hint="Give the folder or glob of the Parquet files score wrote")
    return shards


def is_sharded(input_path: str | os.PathLike) -> bool:
    """Whether a run is given as shards: a folder, or a glob that names no existing file.

    Examples
    --------
    >>> import tempfile
    >>> is_sharded(tempfile.mkdtemp()), is_sharded("scored/*.parquet"), is_sharded("run.parquet")
    (True, True, False)
    """
    path = Path(str(input_path)).expanduser()
    return path.is_dir() or (not path.exists() and any(ch in str(input_path) for ch in "*?["))


def shard_columns(input_path: str | os.PathLike) -> dict[Path, list[str]]:
    """The columns of each Parquet shard of a run, in path order (only the footers are read).

    Raises
    ------
    SGIInputError
        What :func:`parquet_shards` raises, or an unreadable footer.
    """
    shards = parquet_shards(input_path)
    return dict(zip(shards, _schemas(shards)))


def _schemas(shards: list[Path]) -> list[list[str]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = []
    for shard in shards:
        try:
            names.append(pq.read_schema(shard).names)
        except (pa.ArrowException, OSError) as err:
            raise SGIInputError(f"cannot read the shard's Parquet footer: {err}", source=str(shard)) from None
    return names


def stream_shards(input_path: str | os.PathLike, columns, *, optional=(),
                  batch_rows: int = STREAM_BATCH_ROWS) -> Iterator[pd.DataFrame]:
    """The rows of a scored run's shards, ``batch_rows`` at a time, with only the columns asked for.

    Only ``columns`` and those of ``optional`` that every shard has are read (Parquet
    reads columns apart), and no more than ``batch_rows`` rows are held at once. Shards
    come in path order and each shard's rows in file order; a folder written by
    ``score --engine ray`` holds its rows in no particular order across files (its
    ``input_shard`` and ``input_row`` give the input order). Every footer is read, and
    every column checked, before the first row.

    Parameters
    ----------
    input_path : path-like
        A Parquet file, a folder of them, or a glob (:func:`parquet_shards`).
    columns : sequence of str
        Columns every shard must have.
    optional : sequence of str
        Columns read where every shard has them.
    batch_rows : int
        Most rows of one yielded frame.

    Raises
    ------
    SGIInputError
        No Parquet shard, an unreadable footer, a shard lacking one of ``columns``
        (named with the shard), or a ``batch_rows`` below 1.

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> pd.DataFrame({"sgi": [1.0, 2.0, 3.0], "response": ["a", "b", "c"]}).to_parquet(folder / "a.parquet")
    >>> pd.DataFrame({"sgi": [4.0], "response": ["d"]}).to_parquet(folder / "b.parquet")
    >>> [frame["sgi"].tolist() for frame in stream_shards(folder, ["sgi"], batch_rows=2)]
    [[1.0, 2.0], [3.0], [4.0]]
    """
    return (batch.frame for batch in shard_batches(input_path, columns, optional=optional, batch_rows=batch_rows))


@dataclass(frozen=True)
class ShardBatch:
    """Rows of one shard read by :func:`shard_batches`.

    Attributes
    ----------
    shard : Path
        The Parquet file they come from.
    first_row : int
        0-based position of the first of them in their shard.
    frame : DataFrame
        The rows, with the columns asked for.
    """

    shard: Path
    first_row: int
    frame: pd.DataFrame


def shard_batches(input_path: str | os.PathLike, columns, *, optional=(),
                  batch_rows: int = STREAM_BATCH_ROWS) -> Iterator[ShardBatch]:
    """:func:`stream_shards`, each frame with the shard it comes from and its first row there (for messages).

    Raises
    ------
    SGIInputError
        What :func:`stream_shards` raises, before the first row is read.
    """
    if isinstance(batch_rows, bool) or not isinstance(batch_rows, int) or batch_rows < 1:
        raise SGIInputError(f"The 'batch_rows' parameter of stream_shards must be an int >= 1. Got {batch_rows!r} "
                            "instead.")
    shards = parquet_shards(input_path)
    schemas = _schemas(shards)
    for shard, names in zip(shards, schemas):
        missing = [column for column in columns if column not in names]
        if missing:
            raise SGIInputError(f"the shard has no column {missing[0]}", source=str(shard), column=missing[0],
                                hint="Give the shards of one scored run: every shard holds the same columns")
    wanted = list(dict.fromkeys([*columns, *(c for c in optional if all(c in names for names in schemas))]))
    return _batches(shards, wanted, batch_rows)


def _batches(shards: list[Path], columns: list[str], batch_rows: int) -> Iterator[ShardBatch]:
    import pyarrow.parquet as pq

    for shard in shards:
        first = 0
        with pq.ParquetFile(shard) as handle:
            for batch in handle.iter_batches(batch_size=batch_rows, columns=columns):
                yield ShardBatch(shard, first, batch.to_pandas())
                first += batch.num_rows


def shards_scored_with(input_path: str | os.PathLike) -> dict | None:
    """The record of what scored a sharded run (:func:`sgi_core.io.scored.scored_with`), the same in every shard.

    None when no shard records one.

    Raises
    ------
    SGIInputError
        When shards record different scorings (or some record one and others none):
        they are not one run.
    """
    from sgi_core.io.scored import scored_with

    shards = parquet_shards(input_path)
    records = [scored_with(shard) for shard in shards]
    other = next((shard for shard, record in zip(shards, records) if record != records[0]), None)
    if other is not None:
        raise SGIInputError(f"the shard records another scoring than '{shards[0].name}' ({records[0]} against "
                            f"{records[shards.index(other)]})", source=str(other),
                            hint="Give the shards of one run, scored with one model, precision, backend and strategy")
    return records[0]


def map_shards(input_path: str | os.PathLike, compute, columns, *, optional=(),
               batch_rows: int = STREAM_BATCH_ROWS) -> dict[str, np.ndarray]:
    """Per-row values of a scored run computed one batch of its shards at a time, concatenated.

    ``compute(frame)`` receives each frame of :func:`stream_shards` and returns a dict of
    one-dimensional arrays, one value per row of the frame (a row's score, its response
    length, its key); the texts of one batch at most are held at once, the values of every
    row are returned, in the order :func:`stream_shards` reads the rows (an empty dict when
    the shards hold no row).

    Raises
    ------
    SGIInputError
        What :func:`stream_shards` raises.
    ValueError
        When ``compute`` returns other names for another batch, or an array whose length
        is not the batch's.

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> pd.DataFrame({"response": ["ab", "abc", "a"]}).to_parquet(folder / "a.parquet")
    >>> map_shards(folder, lambda f: {"length": f["response"].str.len().to_numpy()}, ["response"],
    ...            batch_rows=2)["length"].tolist()
    [2, 3, 1]
    """
    parts: dict[str, list[np.ndarray]] | None = None
    for frame in stream_shards(input_path, columns, optional=optional, batch_rows=batch_rows):
        values = {name: np.asarray(array).ravel() for name, array in compute(frame).items()}
        wrong = [name for name, array in values.items() if len(array) != len(frame)]
        if wrong:
            raise ValueError(f"compute returned {len(values[wrong[0]])} values of '{wrong[0]}' for a batch of "
                             f"{len(frame)} rows")
        if parts is None:
            parts = {name: [] for name in values}
        if set(values) != set(parts):
            raise ValueError(f"compute returned {sorted(values)} for one batch and {sorted(parts)} for another")
        for name, array in values.items():
            parts[name].append(array)
    return {name: np.concatenate(arrays) for name, arrays in (parts or {}).items()}


def shards_sha256(input_path: str | os.PathLike) -> str:
    """SHA-256 over the SHA-256 of each Parquet shard's bytes (hex, in path order): the run's content, named once.

    Examples
    --------
    >>> import tempfile, pathlib, hashlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.parquet").write_bytes(b"PAR1")
    >>> shards_sha256(folder) == hashlib.sha256(hashlib.sha256(b"PAR1").hexdigest().encode()).hexdigest()
    True
    """
    import hashlib

    digests = []
    for shard in parquet_shards(input_path):
        digest = hashlib.sha256()
        with open(shard, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digests.append(digest.hexdigest())
    return hashlib.sha256("".join(digests).encode()).hexdigest()
