"""What a scored file carries besides its rows: the model that scored it, and one label column.

A scored Parquet file written by ``score`` records the embedding model and precision
behind its angles and SGI in its key-value metadata (:data:`SCORED_WITH_KEY`), so a
gate policy can refuse scores made by another model. A CSV file has no place for it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.io.formats import PARQUET_SUFFIXES

#: Parquet key-value metadata naming the embedding model and precision behind a scored file's angles and SGI.
SCORED_WITH_KEY = b"sgi_core.scored_with"


def scored_with(path: str | os.PathLike) -> dict | None:
    """``{"model": ..., "precision": ...}`` recorded in a scored Parquet file, else None (CSV, older files).

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
    if not (isinstance(value, dict) and set(value) == {"model", "precision"}
            and all(isinstance(v, str) for v in value.values())):
        raise SGIInputError("the file's record of the model that scored it cannot be read", source=str(path),
                            hint="Score the file again with `python -m sgi_core score`")
    return value


#: Where the reader keeps the cells of an input ``label`` column that it rewrites as 1/0.
INPUT_LABEL_COPY = "input_label"


def one_label_column(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without ``input_label`` when ``label`` says all it said, for a file that reopens with one label.

    The copy is dropped when every row with an ``input_label`` cell has a ``label``
    (1 grounded, 0 hallucinated): the copy then only spells the same classes
    differently, and reopened it would be a second label column. It is kept when
    some of its cells were read as unlabelled (a value mapped to "unlabelled"), since
    they would be lost.

    Examples
    --------
    >>> f = pd.DataFrame({"input_label": ["yes", "no"], "label": [1.0, 0.0]})
    >>> one_label_column(f).columns.tolist()
    ['label']
    >>> one_label_column(f.assign(label=[1.0, float("nan")])).columns.tolist()
    ['input_label', 'label']
    """
    if INPUT_LABEL_COPY not in frame.columns or "label" not in frame.columns:
        return frame
    copy = frame[INPUT_LABEL_COPY]
    filled = copy.notna() & (copy.astype(str).str.strip() != "")
    if bool((filled & frame["label"].isna()).any()):
        return frame
    return frame.drop(columns=INPUT_LABEL_COPY)
