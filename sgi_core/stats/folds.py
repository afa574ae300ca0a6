"""Cross-fitting folds that never split a group, shared by every cross-fitted score and combination.

A score learnt from labelled rows (a reference set, a combined model) is measured out
of fold: rows are split into K folds, each fold is scored with what was learnt on the
other folds only. Rows of one group (one question: :func:`sgi_core.detectors.folds.question_groups`)
share a fold, so a question's grounded answer never helps score its hallucinated twin.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold

from sgi_core.errors import SGIInputError
from sgi_core.stats.checks import as_labels, check_int
from sgi_core.stats.key_order import canonical_order


def crossfit_folds(groups, *, y_true=None, n_folds: int = 5, seed: int = 0) -> np.ndarray:
    """Assign each row to one of ``n_folds`` folds, never splitting a group.

    Whole groups are dealt to folds by :class:`sklearn.model_selection.StratifiedKFold`
    (shuffled with ``seed``), stratified on whether the group holds a grounded row:
    the groups that feed reference sets are spread evenly over the folds, so every
    fold's reference set (the grounded rows of the other folds) has about the same
    size. When neither stratum has ``n_folds`` groups, they are dealt without strata.
    (``StratifiedGroupKFold`` balances rows rather than groups, but loops over groups in
    Python: 12 s for 20,000 single-row groups, against milliseconds here.)
    Groups are dealt in their canonical order (:func:`~sgi_core.stats.key_order.canonical_order`
    of the group values), not in order of first appearance: the same group values get the
    same folds whatever the order of the rows.

    Parameters
    ----------
    groups : array_like of shape (n,)
        Group of each row (e.g. from :func:`sgi_core.detectors.folds.question_groups`).
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
    >>> sorted(set(crossfit_folds(range(8), y_true=[1, 1, 1, 1, 0, 0, 0, 0], n_folds=5).tolist()))
    [0, 1, 2, 3, 4]
    """
    n_folds = check_int(n_folds, "n_folds", "crossfit_folds", minimum=2)
    seed = check_int(seed, "seed", "crossfit_folds", minimum=0)
    codes, values = pd.factorize(pd.Series(np.asarray(groups, dtype=object).ravel()), sort=False)
    place = np.empty(len(values), dtype=np.int64)
    place[canonical_order(np.asarray(values, dtype=object))] = np.arange(len(values))
    codes = place[codes]
    n_groups = len(values)
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
        if np.bincount(strata).max() < n_folds:  # no stratum fills every fold: dealt without strata
            strata[:] = 0
    splitter = StratifiedKFold(n_folds, shuffle=True, random_state=seed)
    group_fold = np.empty(n_groups, dtype=np.int64)
    for fold, (_, held_out) in enumerate(splitter.split(np.zeros(n_groups), strata)):
        group_fold[held_out] = fold
    return group_fold[codes]
