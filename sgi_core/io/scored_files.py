"""What a scored file carries besides its rows: the model that scored it.

A scored Parquet file written by ``score`` records the embedding model and precision
behind its angles and SGI in its key-value metadata (:data:`SCORED_WITH_KEY`), so a
gate policy can refuse scores made by another model. A CSV file has no place for it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from sgi_core.errors import SGIInputError
from sgi_core.io.formats import PARQUET_SUFFIXES

#: Parquet key-value metadata naming the embedding model and precision behind a scored file's angles and SGI.
SCORED_WITH_KEY = b"sgi_core.scored_with"


def scored_with(path: str | os.PathLike) -> dict | None:
    """``{"model": ..., "precision": ..., "backend": ...}`` recorded in a scored Parquet file, else None (CSV, older files).

    Raises
    ------
    SGIInputError
        A recorded value that is not such an object.
    """
    if Path(path).suffix.lower() not in PARQUET_SUFFIXES:
        return None
    import pyarrow.parquet as pq

    try:
        raw = (pq.read_schema(path).metadata or {}).get(SCORED_WITH_KEY)
    except (OSError, ValueError):  # not readable as Parquet: the reader says why
        return None
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    if not (isinstance(value, dict) and {"model", "precision"} <= set(value) <= {"model", "precision", "backend"}
            and all(isinstance(v, str) for v in value.values())):
        raise SGIInputError("the file's record of the model that scored it cannot be read", source=str(path),
                            hint="Score the file again with `python -m sgi_core score`")
    # Files scored before the backend was recorded were all scored by torch.
    return {"backend": "torch", **value}
