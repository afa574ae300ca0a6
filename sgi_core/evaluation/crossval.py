"""Out-of-fold probabilities of one logistic pipeline, shared by every cross-validated comparison.

The pipeline fills a missing feature value with the training fold's median, maps
each feature to normal quantiles (fitted on the training fold, so SGI's rare huge
values where the response equals the context do not dominate) and fits a logistic
regression with grounded = 1. The quantile count is sized from the
fold being fitted, ``min(1000, n_train)``, so it never asks for more quantiles than
the fold has rows; the rows the quantiles are drawn from are seeded, so the same
inputs give the same probabilities.

Folds are stratified by label and, when ``groups`` is given, never split a group
(both answers of one question stay in the same fold).
"""

from __future__ import annotations

import numpy as np
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import QuantileTransformer

#: Upper bound on the quantiles of the normal-score map.
MAX_QUANTILES = 1000
#: Rows the fitted map transforms at a time: its temporaries (input checks, two interpolations,
#: the normal quantile function) are several copies of what it is given.
MAP_BLOCK_ROWS = 100_000


def normal_scores(n_train: int, seed: int = 0):
    """Median fill and normal-quantile map, fitted on a training fold of ``n_train`` rows.

    Each feature is mapped on its own; above the transformer's subsample (10,000
    rows) its quantiles come from a sample of rows drawn with ``seed``, the same rows
    for every feature.
    """
    return make_pipeline(
        SimpleImputer(strategy="median", keep_empty_features=True),
        QuantileTransformer(output_distribution="normal", n_quantiles=min(MAX_QUANTILES, n_train), random_state=seed),
    )


def mapped_in_blocks(mapping, rows: np.ndarray) -> np.ndarray:
    """``mapping.transform(rows)``, :data:`MAP_BLOCK_ROWS` rows at a time.

    The median fill and the quantile map of :func:`normal_scores` act on each row
    alone, so the blocks give the same values as one call, with temporaries the size
    of a block instead of several copies of every row (180 MB on 1,600,000 rows of
    two features).
    """
    out = np.empty(rows.shape, dtype=np.float64)
    for start in range(0, len(rows), MAP_BLOCK_ROWS):
        out[start:start + MAP_BLOCK_ROWS] = mapping.transform(rows[start:start + MAP_BLOCK_ROWS])
    return out


def fold_ids(labels: np.ndarray, *, n_splits: int, seed: int, groups=None) -> np.ndarray:
    """Fold index of each row: stratified by label, shuffled with ``seed``, groups kept whole.

    Examples
    --------
    >>> ids = fold_ids(np.array([1, 0] * 5), n_splits=5, seed=0, groups=np.repeat(np.arange(5), 2))
    >>> bool(all(ids[0::2] == ids[1::2]))
    True
    """
    labels = np.asarray(labels)
    if groups is None:
        splitter = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
        splits = splitter.split(np.zeros(len(labels)), labels)
    else:
        splitter = StratifiedGroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
        splits = splitter.split(np.zeros(len(labels)), labels, groups=np.asarray(groups))
    ids = np.empty(len(labels), dtype=np.int64)
    for fold, (_, test) in enumerate(splits):
        ids[test] = fold
    return ids


def out_of_fold_probabilities(features: np.ndarray, labels: np.ndarray, folds: np.ndarray, column_sets,
                               *, seed: int = 0) -> list[np.ndarray]:
    """P(grounded) of each row from models on several column sets, each fitted on the other folds.

    The feature map (:func:`normal_scores`) works column by column, so it is fitted
    once per fold on every column and each set's logistic fit reads its columns:
    the same probabilities as the map and the fit made on each set alone.

    Parameters
    ----------
    features : ndarray of shape (n, k)
        Feature values, oriented as the caller likes (the fit learns signs); NaN
        is filled with the training fold's median.
    labels : ndarray of shape (n,)
        1 = grounded, 0 = hallucinated.
    folds : ndarray of int, shape (n,)
        Fold index of each row (:func:`fold_ids`).
    column_sets : sequence of sequence of int
        The feature columns of each model.
    seed : int, default 0
        Seeds the rows the quantiles are drawn from (see :func:`normal_scores`).

    Returns
    -------
    list of ndarray of shape (n,)
        One array of out-of-fold probabilities per column set.

    Examples
    --------
    >>> y = np.array([1, 0] * 20)
    >>> x = np.column_stack([y + np.random.default_rng(0).normal(0, 0.2, 40), np.zeros(40)])
    >>> alone, both = out_of_fold_probabilities(x, y, np.arange(40) % 4, [[0], [0, 1]])
    >>> bool(alone[y == 1].mean() > 0.7 and alone[y == 0].mean() < 0.3)
    True
    """
    column_sets = [list(columns) for columns in column_sets]
    probs = [np.empty(len(labels)) for _ in column_sets]
    for fold in np.unique(folds):
        train, test = folds != fold, folds == fold
        training_rows = features[train]
        mapping = normal_scores(len(training_rows), seed).fit(training_rows)
        fitted = mapped_in_blocks(mapping, training_rows)
        del training_rows  # 26 MB at 1,600,000 rows of two features, not needed by the fits
        held_out = mapped_in_blocks(mapping, features[test])
        for prob, columns in zip(probs, column_sets):
            model = LogisticRegression().fit(fitted[:, columns], labels[train])
            prob[test] = model.predict_proba(held_out[:, columns])[:, 1]
    return probs


def out_of_fold_probability(features: np.ndarray, labels: np.ndarray, folds: np.ndarray, *,
                            seed: int = 0) -> np.ndarray:
    """P(grounded) of each row from the pipeline on every column, fitted on the other folds.

    :func:`out_of_fold_probabilities` with one column set holding every column.

    Examples
    --------
    >>> y = np.array([1, 0] * 20)
    >>> x = y + np.random.default_rng(0).normal(0, 0.2, 40)
    >>> prob = out_of_fold_probability(x[:, None], y, np.arange(40) % 4)
    >>> bool(prob[y == 1].mean() > 0.7 and prob[y == 0].mean() < 0.3)
    True
    """
    return out_of_fold_probabilities(features, labels, folds, [range(features.shape[1])], seed=seed)[0]
