"""Finding the shards of a dataset, and their format, for the Ray engine (:mod:`sgi_core.pipelines.ray_engine`).

A shard's format is decided as for every other file (:func:`sgi_core.io.table_formats.table_format`:
the suffix, and Parquet's magic bytes), so the two engines read the same file the same way.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

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
