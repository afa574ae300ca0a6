"""Cross-fitting folds that never split a question.

A detector that learns from labelled rows is measured out of fold, and rows sharing a question share a
fold, or a question's grounded answer would sit in the reference set that scores its hallucinated twin.
:func:`question_groups` finds the groups; :func:`sgi_core.stats.folds.crossfit_folds` deals the folds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from sgi_core.errors import SGIInputError
from sgi_core.stats.key_order import canonical_order

#: Columns that, when present, tie rows together beside the question text (first found wins).
GROUP_COLUMNS = ("group", "pair_id")


def question_groups(frame: pd.DataFrame, *, group_column: str | None = None) -> np.ndarray:
    """One integer group per row: rows that share a question or a group id share a group.

    Two rows are in the same group when they have the same ``question`` text or the
    same non-empty value in the group column (``group_column``, else the first of
    :data:`GROUP_COLUMNS` the frame has); groups are the connected components of
    those links, so a question that appears under two pair ids still ends up in one
    group.

    Parameters
    ----------
    frame : DataFrame
        With a ``question`` column.
    group_column : str, optional
        Column whose equal values tie rows together.

    Returns
    -------
    ndarray of int64, shape (n,)
        Group numbers ``0..n_groups-1``, numbered in the canonical order of each group's
        smallest question text (:func:`~sgi_core.stats.key_order.canonical_order`), so that
        a row's group number, and the folds dealt from it, do not depend on the row order.

    Raises
    ------
    SGIInputError
        If ``question`` or the named group column is missing.

    Examples
    --------
    >>> frame = pd.DataFrame({"question": ["a", "a", "b", "c"], "pair_id": [0, 0, 1, 1]})
    >>> groups = question_groups(frame)
    >>> bool(groups[0] == groups[1] != groups[2] == groups[3])
    True
    """
    if "question" not in frame.columns:
        raise SGIInputError("the table has no 'question' column", column="question",
                            hint="Read the file with sgi_core.io.triples.load_triples")
    if group_column is not None and group_column not in frame.columns:
        raise SGIInputError(f"there is no column '{group_column}' to group rows by", column=group_column,
                            hint=f"Choose one of: {', '.join(map(str, frame.columns))}")
    if group_column is None:
        group_column = next((c for c in GROUP_COLUMNS if c in frame.columns), None)
    n = len(frame)
    keys = [pd.factorize(frame["question"].astype(str), sort=False)[0]]
    if group_column is not None:
        values = frame[group_column]
        blank = values.isna() | (values.astype(str).str.strip() == "")
        codes = pd.factorize(values.astype(str), sort=False)[0]
        # A blank group id ties nothing together: give each such row a code of its own.
        codes[blank.to_numpy()] = codes.max(initial=-1) + 1 + np.arange(int(blank.sum()))
        keys.append(codes)
    # Bipartite graph rows -> keys; rows in one component share a group.
    offsets = np.cumsum([n] + [int(k.max(initial=-1)) + 1 for k in keys])
    cols = np.concatenate([k + off for k, off in zip(keys, offsets[:-1])])
    rows = np.tile(np.arange(n), len(keys))
    size = int(offsets[-1])
    graph = coo_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(size, size))
    _, labels = connected_components(graph, directed=False)
    components = labels[:n]
    # Each component is named by its smallest question text and numbered in the canonical order of the names.
    names = pd.Series(frame["question"].astype(str).to_numpy()).groupby(components).min()
    number = np.empty(len(names), dtype=np.int64)
    number[canonical_order(names.to_numpy())] = np.arange(len(names))
    return pd.Series(number, index=names.index).reindex(components).to_numpy(dtype=np.int64)
