"""Out-of-fold probabilities of one logistic pipeline, shared by every cross-validated comparison.

The pipeline fills a missing feature value with the training fold's median, maps
each feature to normal quantiles (fitted on the training fold, so SGI's rare huge
values where the response equals the context do not dominate) and fits a logistic
regression with grounded = 1. The quantile count is sized from the
fold being fitted, ``min(1000, n_train)``, so it never asks for more quantiles than
the fold has rows.

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


def quantile_logistic(n_train: int):
    """The pipeline fitted on a training fold of ``n_train`` rows."""
    return make_pipeline(
        SimpleImputer(strategy="median", keep_empty_features=True),
        QuantileTransformer(output_distribution="normal", n_quantiles=min(MAX_QUANTILES, n_train)),
        LogisticRegression(),
    )


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


def out_of_fold_probability(features: np.ndarray, labels: np.ndarray, folds: np.ndarray) -> np.ndarray:
    """P(grounded) of each row from the pipeline fitted on the other folds.

    Parameters
    ----------
    features : ndarray of shape (n, k)
        Feature values, oriented as the caller likes (the fit learns signs); NaN
        is filled with the training fold's median.
    labels : ndarray of shape (n,)
        1 = grounded, 0 = hallucinated.
    folds : ndarray of int, shape (n,)
        Fold index of each row (:func:`fold_ids`).

    Examples
    --------
    >>> y = np.array([1, 0] * 20)
    >>> x = y + np.random.default_rng(0).normal(0, 0.2, 40)
    >>> prob = out_of_fold_probability(x[:, None], y, np.arange(40) % 4)
    >>> bool(prob[y == 1].mean() > 0.7 and prob[y == 0].mean() < 0.3)
    True
    """
    prob = np.empty(len(labels))
    for fold in np.unique(folds):
        train, test = folds != fold, folds == fold
        model = quantile_logistic(int(train.sum())).fit(features[train], labels[train])
        prob[test] = model.predict_proba(features[test])[:, 1]
    return prob
