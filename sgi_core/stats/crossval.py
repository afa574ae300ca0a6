"""Out-of-fold probabilities of one logistic pipeline, shared by every cross-validated comparison.

Every combination and every score compared with it goes through the same pipeline and the same
folds (:func:`out_of_fold_probabilities` gives both), so a comparison is like for like.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, ndtri
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
# QuantileTransformer's bounds: values within 1e-7 of the extreme quantiles map to them, the normal is clipped.
_BOUND = 1e-7
_CLIP = (float(ndtri(_BOUND - np.spacing(1))), float(ndtri(1 - (_BOUND - np.spacing(1)))))
#: Floats of one batch of logistic fits (fits x rows x columns).
_BATCH_VALUES = 4_000_000


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

    Notes
    -----
    The pipeline fills a missing feature value with the training fold's median, maps
    each feature to normal quantiles (fitted on the training fold, so SGI's rare huge
    values where the response equals the context do not dominate) and fits a logistic
    regression with grounded = 1. The quantile count is sized from the
    fold being fitted, ``min(1000, n_train)``, so it never asks for more quantiles than
    the fold has rows; the rows the quantiles are drawn from are seeded, so the same
    inputs give the same probabilities.

    Folds are stratified by label and, when ``groups`` is given, never split a group
    (both answers of one question stay in the same fold).

    :func:`out_of_fold_batch` runs the same pipeline on many problems at once (the
    bootstrap resamples of :mod:`sgi_core.evaluation.refit`, each refitted): the map by
    the same numpy arithmetic as scikit-learn's, the logistic fits by one batched
    Newton solve.

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


def _normal_map(train: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``normal_scores(len(train)).fit(train).transform(rows)`` by the same numpy calls, without sklearn's checks."""
    ordered, filled = np.sort(train, axis=0), (~np.isnan(train)).sum(axis=0)
    middle = np.take_along_axis(ordered, np.stack([(filled - 1) // 2, filled // 2]).clip(0), axis=0)
    # The median of the filled values as numpy.ma.median takes it; 0 for an all-NaN column (keep_empty_features).
    fill = np.where(filled > 0, (middle[0] + middle[1]) / 2.0, 0.0)
    train, rows = np.where(np.isnan(train), fill, train), np.where(np.isnan(rows), fill, rows)
    # numpy.percentile's linear rule, float for float, on the sorted column without its partition (slow for
    # 1,000 quantiles): a quantile one rounding off a tied value would move that value's rank.
    references = np.linspace(0, 1, min(MAX_QUANTILES, len(train)))
    ordered, position = np.sort(train, axis=0), (len(train) - 1) * ((references * 100) / 100)
    below = np.where(position >= len(train) - 1, len(train) - 1, np.floor(position)).astype(np.int64)
    above, step = np.minimum(below + 1, len(train) - 1), (position - below)[:, None]
    gap = ordered[above] - ordered[below]
    quantiles = np.where(step >= 0.5, ordered[above] - gap * (1 - step), ordered[below] + gap * step)
    # The mean of both interpolation directions: tied quantiles map to the middle of their run.
    out = np.column_stack([0.5 * (np.interp(x, q, references) - np.interp(-x, -q[::-1], -references[::-1]))
                           for q, x in zip(quantiles.T, rows.T)])
    out[rows + _BOUND > quantiles[-1]] = 1.0
    out[rows - _BOUND < quantiles[0]] = 0.0
    with np.errstate(divide="ignore"):
        return np.clip(ndtri(out), *_CLIP)


def _logistic_fits(design: np.ndarray, target: np.ndarray, weight: np.ndarray, *, max_iter: int = 50) -> np.ndarray:
    """Coefficients of many L2 logistic regressions at once, by Newton's method with step halving.

    Each fit minimises ``sum_i w_i [log(1 + exp(eta_i)) - y_i eta_i] + |b|**2 / 2`` with
    ``eta = X b + b0``, the intercept ``b0`` (the last column of ``design``, all ones)
    unpenalised: :class:`~sklearn.linear_model.LogisticRegression`'s default (C = 1),
    solved to a gradient of 1e-9 per row instead of lbfgs' 1e-4. ``design`` is (fits, rows,
    columns); padding rows carry weight 0.
    """
    penalty = np.ones(design.shape[2])
    penalty[-1] = 0.0

    def objective(beta):
        eta = np.einsum("fmc,fc->fm", design, beta)
        return (weight * (np.logaddexp(0.0, eta) - target * eta)).sum(axis=1) + 0.5 * (penalty * beta**2).sum(axis=1)

    beta = np.zeros(design.shape[::2])
    for _ in range(max_iter):
        p = expit(np.einsum("fmc,fc->fm", design, beta))
        gradient = np.einsum("fmc,fm->fc", design, weight * (p - target)) + penalty * beta
        if np.abs(gradient).max() < 1e-9 * design.shape[1]:
            break
        hessian = (design * (weight * p * (1 - p))[..., None]).transpose(0, 2, 1) @ design + np.diag(penalty)
        step, now, size = np.linalg.solve(hessian, gradient[..., None])[..., 0], objective(beta), np.ones(len(beta))
        for _ in range(30):
            worse = objective(beta - size[:, None] * step) > now + 1e-12 * np.abs(now)
            if not worse.any():
                break
            size[worse] /= 2
        beta = beta - size[:, None] * step
    return beta


def out_of_fold_batch(problems, column_sets) -> list[list[np.ndarray]]:
    """:func:`out_of_fold_probabilities` of many problems, the logistic fits of all of them solved together.

    Parameters
    ----------
    problems : sequence of (features, labels, folds)
        As :func:`out_of_fold_probabilities` takes them; every training fold must
        hold both classes and at most 10,000 rows (the map's subsample, not drawn here).
    column_sets : sequence of sequence of int

    Returns
    -------
    list of list of ndarray
        ``result[p][s]``: problem ``p``'s out-of-fold P(grounded) from column set ``s``.
        The map is the same numbers as :func:`normal_scores`; the fits are solved to
        convergence (:func:`_logistic_fits`), within 1e-3 of lbfgs' probabilities.
    """
    column_sets = [list(columns) for columns in column_sets]
    out = [[np.empty(len(labels)) for _ in column_sets] for _, labels, _ in problems]
    widest = max(len(columns) for columns in column_sets) + 1
    per_batch = max(1, _BATCH_VALUES // (max(len(labels) for _, labels, _ in problems) * widest))
    fits = []
    for p, (features, labels, folds) in enumerate(problems):
        for fold in np.unique(folds):
            train = folds != fold
            mapped = _normal_map(features[train], features)
            fits.append((p, np.flatnonzero(~train), mapped[train], labels[train], mapped[~train]))
            if len(fits) == per_batch:  # mapped folds are held a batch at a time
                _solve(fits, column_sets, out)
                fits = []
    if fits:
        _solve(fits, column_sets, out)
    return out


def _solve(fits, column_sets, out) -> None:
    """Fit every column set on a batch of mapped folds and write each held-out fold's probabilities into ``out``."""
    rows = max(len(fit[3]) for fit in fits)
    for s, columns in enumerate(column_sets):
        design = np.zeros((len(fits), rows, len(columns) + 1))
        target, weight = np.zeros((len(fits), rows)), np.zeros((len(fits), rows))
        for i, (_, _, train, y, _) in enumerate(fits):
            design[i, :len(y), :-1], design[i, :len(y), -1] = train[:, columns], 1.0
            target[i, :len(y)], weight[i, :len(y)] = y, 1.0
        beta = _logistic_fits(design, target, weight)
        for (p, test, _, _, held_out), b in zip(fits, beta):
            out[p][s][test] = expit(held_out[:, columns] @ b[:-1] + b[-1])
