"""Cross-fitting folds that never split a question.

A detector that learns from labelled rows (a reference set, a combined model) is
measured out of fold: rows are split into K folds, each fold is scored with what
was learnt on the other folds only. Rows that share a question must share a fold;
otherwise a question's grounded answer sits in the reference set that scores its
hallucinated twin (in HaluEval both answers of one question share ``pair_id``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from sklearn.model_selection import StratifiedKFold

from sgi_core.errors import SGIInputError
from sgi_core.evaluation._common import as_labels, check_int

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
        Group numbers ``0..n_groups-1``.

    Raises
    ------
    SGIInputError
        If ``question`` or the named group column is missing.

    Examples
    --------
    >>> frame = pd.DataFrame({"question": ["a", "a", "b", "c"], "pair_id": [0, 0, 1, 1]})
    >>> question_groups(frame).tolist()
    [0, 0, 1, 1]
    """
    if "question" not in frame.columns:
        raise SGIInputError("the table has no 'question' column", column="question",
                            hint="Read the file with sgi_core.data.load_triples")
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
    return pd.factorize(labels[:n], sort=False)[0].astype(np.int64)


def crossfit_folds(groups, *, y_true=None, n_folds: int = 5, seed: int = 0) -> np.ndarray:
    """Assign each row to one of ``n_folds`` folds, never splitting a group.

    Whole groups are dealt to folds by :class:`sklearn.model_selection.StratifiedKFold`
    (shuffled with ``seed``), stratified on whether the group holds a grounded row:
    the groups that feed reference sets are spread evenly over the folds, so every
    fold's reference set (the grounded rows of the other folds) has about the same
    size. (``StratifiedGroupKFold`` balances rows rather than groups, but loops over
    groups in Python: 12 s for 20,000 single-row groups, against milliseconds here.)

    Parameters
    ----------
    groups : array_like of shape (n,)
        Group of each row (e.g. from :func:`question_groups`).
    y_true : array_like of shape (n,), optional
        1 = grounded, 0 = hallucinated, NaN = unlabelled. Without it groups are
        dealt without strata.
    n_folds : int, default 5
    seed : int, default 0

    Returns
    -------
    ndarray of int64, shape (n,)
        Fold number ``0..n_folds-1`` of each row.

    Raises
    ------
    SGIInputError
        If ``n_folds`` < 2, there are fewer groups than folds, or lengths differ.

    Examples
    --------
    >>> folds = crossfit_folds([0, 0, 1, 1, 2, 2], n_folds=3)
    >>> bool((folds[0::2] == folds[1::2]).all()), sorted(set(folds.tolist()))
    (True, [0, 1, 2])
    """
    n_folds = check_int(n_folds, "n_folds", "crossfit_folds", minimum=2)
    seed = check_int(seed, "seed", "crossfit_folds", minimum=0)
    codes = pd.factorize(pd.Series(np.asarray(groups, dtype=object).ravel()), sort=False)[0]
    n_groups = int(codes.max(initial=-1)) + 1
    if n_groups < n_folds:
        raise SGIInputError(
            f"cross-fitting needs at least as many question groups as folds; got {n_groups} groups "
            f"for {n_folds} folds",
            hint="Use fewer folds or more questions",
        )
    strata = np.zeros(n_groups, dtype=np.int64)
    if y_true is not None:
        labels = as_labels(y_true)
        if len(labels) != len(codes):
            raise SGIInputError(f"'y_true' has {len(labels)} values but 'groups' has {len(codes)}",
                                column="y_true")
        strata = pd.Series(labels == 1.0).groupby(codes).any().to_numpy(dtype=np.int64)
    splitter = StratifiedKFold(n_folds, shuffle=True, random_state=seed)
    group_fold = np.empty(n_groups, dtype=np.int64)
    for fold, (_, held_out) in enumerate(splitter.split(np.zeros(n_groups), strata)):
        group_fold[held_out] = fold
    return group_fold[codes]
