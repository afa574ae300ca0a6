"""Where a file's rows are labelled: its own annotations, and the other annotation files of the data folder.

Annotations are kept per file name (:func:`sgi_core.review.annotations.annotations_path`)
and keyed by the row's texts (:func:`~sgi_core.review.annotations.row_key`). The same
rows opened under another name (a trace export converted to a table, a copy saved as
Parquet) find no labels in their own file; their row keys still match the decisions in
the file they were labelled under. :func:`labels_elsewhere` finds those files and counts,
for each, the rows of this file that have a decision in force there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult
from sgi_core.review.annotations import AnnotationStore


@dataclass(frozen=True)
class StoreMatch(JsonResult):
    """An annotations file holding decisions on some of a file's rows.

    Attributes
    ----------
    path : str
    n_rows : int
        Rows of the file whose key has a decision in force there (unsure included).
    n_labelled : int
        Of those, rows labelled grounded or hallucinated.
    """

    path: str
    n_rows: int
    n_labelled: int


def labels_elsewhere(keys, folder, *, exclude=None) -> tuple[StoreMatch, ...]:
    """The annotation files of ``folder`` (``*.jsonl``) with decisions on rows of ``keys``, most rows first.

    Parameters
    ----------
    keys : array_like of str
        The row keys of the file (:func:`~sgi_core.review.annotations.row_keys`).
    folder : path
        The annotations folder (``annotations_path(name).parent``); absent means none.
    exclude : path, optional
        The file's own annotations, left out.

    Returns
    -------
    tuple of StoreMatch
        Files that cannot be read are left out (their own page says why when opened).

    Examples
    --------
    >>> import tempfile
    >>> from sgi_core.review.annotations import AnnotationStore, row_key
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = AnnotationStore(folder / "traces.jsonl").add(row_key("q", "c", "r"), "grounded")
    >>> [(Path(m.path).name, m.n_rows) for m in labels_elsewhere([row_key("q", "c", "r"), "other"], folder)]
    [('traces.jsonl', 1)]
    """
    folder = Path(folder)
    if not folder.is_dir():
        return ()
    wanted = pd.Index(np.asarray(keys, dtype=object)).unique()
    own = None if exclude is None else Path(exclude).resolve()
    found = []
    for path in sorted(folder.glob("*.jsonl")):
        if own is not None and path.resolve() == own:
            continue
        try:
            current = AnnotationStore(path).current()
        except (SGIInputError, OSError):
            continue
        here = current[current["key"].isin(wanted)]
        if len(here):
            found.append(StoreMatch(str(path), int(here["key"].nunique()),
                                    int(here.loc[here["label"].isin(["grounded", "hallucinated"]), "key"].nunique())))
    return tuple(sorted(found, key=lambda m: (-m.n_rows, m.path)))
