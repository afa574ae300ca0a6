"""Prediction-powered inference (PPI++) of a mean from few labels and many predicted rows.

A few labels bound a rate loosely; a score on every row narrows the interval when it predicts the
labels and never misleads when it does not (:func:`ppi_mean` gives the method and its references).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.checks import as_scores, check_fraction, check_int
from sgi_core.stats.crossval import fold_ids, mapped_in_blocks, normal_scores
from sgi_core.stats.proportions import as_halluc, paired_difference_ci, proportion_ci

#: Labelled rows of each class (or nonzero paired differences) below which PPI++ falls back to the labels alone.
MIN_CLASS_COUNT = 5


@dataclass(frozen=True)
class PPIEstimate(JsonResult):
    """A PPI++ estimate of a mean and what the labels alone give.

    Attributes
    ----------
    estimate, ci : float, (float, float)
        The PPI++ estimate and its normal interval.
    labels_only_estimate, labels_only_ci : float, (float, float)
        Mean of the labelled targets and what the labels alone report (``labels_only_method``).
    lam : float
        The tuning ``lam`` in [0, 1]; 0 = labels only, 1 = plain PPI.
    n_labelled, n_unlabelled : int
    method, labels_only_method : str
        ``method`` starts with "labels only" when too few labels of a class left PPI++ out (see the module).
    confidence : float
    residual_variance : float
        ``var(y - lam f)`` over the labelled rows (ddof=0): one more label's share of the variance.
    unlabelled_variance : float
        ``var(lam f~) / N``: the part of the variance that more labels do not shrink.
    """

    estimate: float
    ci: tuple[float, float]
    labels_only_estimate: float
    labels_only_ci: tuple[float, float]
    lam: float
    n_labelled: int
    n_unlabelled: int
    method: str
    labels_only_method: str
    confidence: float
    residual_variance: float = math.nan
    unlabelled_variance: float = math.nan


def _undefined(n_labelled: int, n_unlabelled: int, method: str, confidence: float) -> PPIEstimate:
    nan = math.nan
    return PPIEstimate(nan, (nan, nan), nan, (nan, nan), nan, n_labelled, n_unlabelled, method, "", confidence)


def _ppi(y, f_lab, f_unlab, confidence, power_tuning) -> tuple[float, tuple[float, float], float, float, float]:
    """Estimate, normal interval, ``lam`` and the two variance terms by ppi_py's conventions (see :func:`ppi_mean`)."""
    n, big_n = len(y), len(f_unlab)
    pooled = np.concatenate([f_lab, f_unlab])
    if not power_tuning:
        lam = 1.0
    elif big_n == 0 or np.ptp(pooled) == 0:
        lam = 0.0
    else:
        cov = float(np.mean((y - y.mean()) * (f_lab - f_lab.mean())))
        lam = float(np.clip(cov / ((1 + n / big_n) * np.var(pooled, ddof=1)), 0.0, 1.0))
    rectifier = y - lam * f_lab
    estimate = float(rectifier.mean() + (lam * f_unlab.mean() if big_n else 0.0))
    unlabelled = float((lam * f_unlab).var() / big_n) if big_n else 0.0
    half = float(stats.norm.ppf(0.5 + confidence / 2.0)) * math.sqrt(rectifier.var() / n + unlabelled)
    return estimate, (estimate - half, estimate + half), lam, float(rectifier.var()), unlabelled


def _too_few(counts: dict[str, int]) -> str:
    """The fallback method when a count of ``counts`` is below :data:`MIN_CLASS_COUNT`; "" otherwise."""
    short = [f"{count} {name}" for name, count in counts.items() if count < MIN_CLASS_COUNT]
    if not short:
        return ""
    return (f"labels only: {' and '.join(short)} labelled (fewer than {MIN_CLASS_COUNT}), too few to fit a predictor "
            "that could narrow the labels' interval")


def _complete(values, name: str, *, n: int | None = None) -> np.ndarray:
    array = as_scores(values, name=name, n=n)
    if np.isnan(array).any():
        raise SGIInputError(f"'{name}' holds NaN", column=name, rows=(np.flatnonzero(np.isnan(array)) + 1).tolist(),
                            hint="Leave those rows out, or fill predictions with cross_fitted_predictions")
    return array


def ppi_mean(y_labelled, pred_labelled, pred_unlabelled, *, confidence: float = 0.95,
             power_tuning: bool = True) -> PPIEstimate:
    """PPI++ estimate and interval of the mean of ``y`` (Angelopoulos, Duchi and Zrnic 2023).

    With ``n`` labelled rows (target ``y``, prediction ``f``) and ``N`` unlabelled rows
    (prediction ``f~``)::

        theta = mean(y - lam f) + lam mean(f~)
        Var   = var(lam f~) / N + var(y - lam f) / n          (ddof=0)
        lam   = cov(y, f) / ((1 + n/N) var(f, f~))            clipped to [0, 1]

    where ``cov`` has ddof=0 over the labelled rows and ``var(f, f~)`` ddof=1 over the
    labelled and unlabelled predictions pooled: the conventions of ``ppi_py`` 0.2.3
    (``ppi_mean_ci``, ``_calc_lam_glm`` with ``clip=True``). The interval is
    ``theta -/+ z Var^(1/2)``. Departing from ``ppi_py``, ``lam`` is 0 (not NaN) when
    the predictions are constant or ``N`` is 0. ``power_tuning=False`` fixes ``lam = 1``.

    The labels-only interval is what the labels alone would report: Wilson's when every
    target is 0 or 1 (a rate), otherwise the normal interval ``mean(y) -/+ z sd(y) /
    sqrt(n)`` (ddof=0, the same as PPI++ at ``lam = 0``).

    Parameters
    ----------
    y_labelled, pred_labelled : array_like of shape (n,)
        Labelled targets and their predictions, by a model not fitted on them (:func:`cross_fitted_predictions`).
    pred_unlabelled : array_like of shape (N,)
    confidence : float, default 0.95
    power_tuning : bool, default True

    Returns
    -------
    PPIEstimate
        NaN with a warning below 2 labelled rows.

    Notes
    -----
    PPI++ (Angelopoulos, Duchi and Zrnic 2023) corrects a predictor's mean over all rows by
    its error on the labelled ones, scaled by a ``lam`` tuned to minimise the variance: a
    useless predictor gets ``lam`` near 0 (the labels-only interval), a good one narrows it.
    The predictor is fitted by cross-prediction (Zrnic and Candès 2024): a labelled row is
    predicted by a model not fitted on its fold, so no label both fits and corrects it.

    An estimate is never narrower than the labels can bound: with fewer than
    :data:`MIN_CLASS_COUNT` labelled rows of a class (or nonzero paired differences), the
    cross-fitted predictor is near constant and the normal interval's variance collapses
    (to zero with one class), so the labels-only interval is reported instead and the
    ``method`` says so.

    References
    ----------
    Angelopoulos, A. N., Duchi, J. C. and Zrnic, T. (2023). PPI++: Efficient
    prediction-powered inference. arXiv:2311.01453.
    Zrnic, T. and Candès, E. J. (2024). Cross-prediction-powered inference. PNAS 121(15),
    e2322083121.

    Examples
    --------
    >>> y, f = np.array([1, 0, 1, 1, 0, 0, 1, 0] * 2), np.array([0.6, 0.2, 0.3, 0.5, 0.1, 0.5, 0.4, 0.4] * 2)
    >>> res = ppi_mean(y, f, np.linspace(0.0, 1.0, 11))
    >>> round(res.estimate, 4), round(res.lam, 4), res.labels_only_method
    (0.5312, 0.2495, 'Wilson')
    >>> ppi_mean(y[:8], f[:8], np.linspace(0.0, 1.0, 11)).method.split(":")[0]  # 4 of each class: too few
    'labels only'
    """
    confidence = check_fraction(confidence, "confidence", "ppi_mean")
    y = _complete(y_labelled, "y_labelled")
    f_lab = _complete(pred_labelled, "pred_labelled", n=len(y))
    f_unlab = _complete(pred_unlabelled, "pred_unlabelled")
    method = "PPI++ (power-tuned)" if power_tuning else "PPI (lam = 1)"
    n = len(y)
    if n < 2:
        warn_undefined(f"the PPI++ interval needs at least 2 labelled rows; got {n}")
        return _undefined(n, len(f_unlab), method, confidence)
    estimate, ci, lam, residual, unlabelled = _ppi(y, f_lab, f_unlab, confidence, power_tuning)
    binary = bool(np.isin(y, (0.0, 1.0)).all())
    if binary:
        labels_ci, labels_method = proportion_ci(int(y.sum()), n, confidence=confidence), "Wilson"
    else:
        labels_ci, labels_method = _ppi(y, f_lab, f_unlab[:0], confidence, True)[1], "normal (ddof=0)"
    fallback = _too_few({"rows of class 1": int(y.sum()), "rows of class 0": int(n - y.sum())}) if binary else ""
    if fallback:
        estimate, ci, lam, method = float(y.mean()), labels_ci, 0.0, fallback
        residual, unlabelled = float(y.var()), 0.0
    return PPIEstimate(estimate, ci, float(y.mean()), labels_ci, lam, n, len(f_unlab), method, labels_method,
                       confidence, residual, unlabelled)


def _as_features(values, name: str, *, n: int | None = None, columns: int | None = None) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise SGIInputError(f"'{name}' must hold numbers", column=name) from None
    array = array.reshape(-1, 1) if array.ndim == 1 else array
    if array.ndim != 2:
        raise SGIInputError(f"'{name}' must be 1-D (one score) or 2-D (rows x features); got {array.ndim} dimensions",
                            column=name)
    if np.isinf(array).any():
        raise SGIInputError(f"'{name}' holds infinite values", column=name, hint="Replace them with NaN (filled)",
                            rows=(np.flatnonzero(np.isinf(array).any(axis=1)) + 1).tolist())
    if n is not None and len(array) != n:
        raise SGIInputError(f"'{name}' has {len(array)} rows but the labels have {n}", column=name)
    if columns is not None and array.shape[1] != columns:
        raise SGIInputError(f"'{name}' has {array.shape[1]} features but the labelled scores have {columns}",
                            column=name)
    return array


def cross_fitted_predictions(score_labelled, y_labelled, score_unlabelled, *, n_folds: int = 5, seed: int = 0,
                             groups=None) -> tuple[np.ndarray, np.ndarray, float]:
    """P(y = 1) of every row from a logistic model on the scores, fitted out of fold (cross-prediction).

    Labelled rows are split into folds as every cross-fitted score is
    (:func:`~sgi_core.stats.crossval.fold_ids`: stratified by ``y``, seeded, groups
    whole). Each fold's model, the package's feature map (a NaN score gets the training
    fold's median, then a normal-quantile map: :func:`~sgi_core.stats.crossval.normal_scores`)
    and a logistic regression, is fitted on the other folds and predicts the held-out
    rows; an unlabelled row gets the mean of the fold models' predictions. Folds are at
    most the rows (or groups) of the smaller class. Below 2, or when no score varies on the
    labelled rows (both with a warning), or in a fold that trains on one class, the
    prediction is the labelled share: a constant, so PPI++ gets no spurious ``lam``.

    Parameters
    ----------
    score_labelled, score_unlabelled : array_like of shape (n,) or (n, k), (N,) or (N, k)
        One score or ``k`` features per row; the fit learns their signs.
    y_labelled : array_like of shape (n,) of 0 or 1
    n_folds, seed : int, default 5, 0
    groups : array_like of shape (n,), optional
        Rows of one group (one question) share a fold.

    Returns
    -------
    pred_labelled, pred_unlabelled : ndarray of shape (n,), (N,)
    cv_log_loss : float
        Log loss of ``pred_labelled`` (out of fold).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.r_[np.ones(20), np.zeros(20)]
    >>> f_lab, f_unlab, loss = cross_fitted_predictions(y + rng.normal(0, 0.5, 40), y, rng.normal(0.5, 0.7, 100))
    >>> f_lab.shape, f_unlab.shape, bool(loss < np.log(2))
    ((40,), (100,), True)
    """
    func = "cross_fitted_predictions"
    n_folds, seed = check_int(n_folds, "n_folds", func, minimum=2), check_int(seed, "seed", func, minimum=0)
    x_lab = _as_features(score_labelled, "score_labelled")
    y = _complete(y_labelled, "y_labelled", n=len(x_lab))
    if not np.isin(y, (0.0, 1.0)).all():
        raise SGIInputError(f"'y_labelled' of {func} must hold 0 or 1", column="y_labelled",
                            rows=(np.flatnonzero(~np.isin(y, (0.0, 1.0))) + 1).tolist())
    x_unlab = _as_features(score_unlabelled, "score_unlabelled", columns=x_lab.shape[1])
    groups = None if groups is None else np.asarray(groups, dtype=object).ravel()
    if groups is not None and len(groups) != len(y):
        raise SGIInputError(f"'groups' has {len(groups)} values but the labels have {len(y)}", column="groups")
    n_groups = len(y) if groups is None else len(set(groups.tolist()))
    n_splits = min(n_folds, int(y.sum()), int(len(y) - y.sum()), n_groups)
    share = float(y.mean()) if len(y) else math.nan
    pred_lab, pred_unlab = np.full(len(y), share), np.zeros(len(x_unlab))
    columns = (column[~np.isnan(column)] for column in x_lab.T)
    if n_splits < 2 or not any(column.size and column.min() < column.max() for column in columns):
        warn_undefined(f"{func} fits nothing with fewer than 2 labelled rows (or groups) of a class or with scores "
                       "that never vary; the predictions are the labelled share, a constant")
        return pred_lab, np.full(len(x_unlab), share), float(log_loss(y, pred_lab, labels=[0, 1])) if len(y) else share
    folds = fold_ids(y, n_splits=n_splits, seed=seed, groups=groups)
    for fold in range(n_splits):
        train, test = folds != fold, folds == fold
        if np.ptp(y[train]) == 0:  # possible when whole groups are kept together
            pred_lab[test], pred_unlab = y[train][0], pred_unlab + y[train][0] / n_splits
            continue
        mapping = normal_scores(int(train.sum()), seed).fit(x_lab[train])
        model = LogisticRegression().fit(mapping.transform(x_lab[train]), y[train])
        pred_lab[test] = model.predict_proba(mapping.transform(x_lab[test]))[:, 1]
        if len(x_unlab):
            pred_unlab += model.predict_proba(mapped_in_blocks(mapping, x_unlab))[:, 1] / n_splits
    return pred_lab, pred_unlab, float(log_loss(y, pred_lab, labels=[0, 1]))


def ppi_rate_difference(halluc_base, halluc_new, score_base, score_new, *, confidence: float = 0.95,
                        n_folds: int = 5, seed: int = 0, groups=None, power_tuning: bool = True) -> PPIEstimate:
    """PPI++ estimate of ``rate_new - rate_base`` on matched keys, powered by each run's score.

    The target is ``d = y_new - y_base`` on the keys labelled in both runs (1 =
    hallucinated); every other key is unlabelled. Each run's score is mapped to
    P(hallucinated) by :func:`cross_fitted_predictions` fitted on the keys labelled in
    both; ``p_new - p_base`` predicts ``d`` and PPI++ (:func:`ppi_mean`'s formulas) gives
    the estimate. Positive = the new run hallucinates more. The labels-only interval is
    Newcombe's paired one, as :func:`~sgi_core.runs.rates.paired_rate_difference`.

    Parameters
    ----------
    halluc_base, halluc_new : array_like of shape (n,)
        Row ``i`` of every input is the same key; 1 = hallucinated, 0 = not, NaN = unlabelled.
    score_base, score_new : array_like of shape (n,) or (n, k)
        Each run's score (or features) of every key.
    confidence, n_folds, seed, groups, power_tuning : as :func:`ppi_mean`, :func:`cross_fitted_predictions`

    Returns
    -------
    PPIEstimate
        NaN with a warning below 2 keys labelled in both runs.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> base, new = rng.binomial(1, 0.3, 300).astype(float), rng.binomial(1, 0.2, 300).astype(float)
    >>> base[60:], new[60:] = np.nan, np.nan
    >>> res = ppi_rate_difference(base, new, rng.normal(base, 1), rng.normal(new, 1))
    >>> res.n_labelled, res.n_unlabelled, res.ci[0] < res.estimate < res.ci[1]
    (60, 240, True)
    """
    confidence = check_fraction(confidence, "confidence", "ppi_rate_difference")
    base = as_halluc(halluc_base, "halluc_base")
    new = as_halluc(halluc_new, "halluc_new", base_length=len(base))
    x_base, x_new = (_as_features(score, f"score_{run}", n=len(base))
                     for score, run in ((score_base, "base"), (score_new, "new")))
    lab = ~(np.isnan(base) | np.isnan(new))
    groups_lab = None if groups is None else np.asarray(groups, dtype=object).ravel()[lab]
    method = "PPI++ on d = y_new - y_base, cross-fitted logistic predictions"
    if lab.sum() < 2:
        warn_undefined(f"the PPI++ rate difference needs at least 2 keys labelled in both runs; got {int(lab.sum())}")
        return _undefined(int(lab.sum()), int((~lab).sum()), method, confidence)
    fitted = [cross_fitted_predictions(x[lab], y[lab], x[~lab], n_folds=n_folds, seed=seed, groups=groups_lab)
              for x, y in ((x_base, base), (x_new, new))]
    d = new[lab] - base[lab]
    estimate, ci, lam, residual, unlabelled = _ppi(d, fitted[1][0] - fitted[0][0], fitted[1][1] - fitted[0][1],
                                                   confidence, power_tuning)
    table = [int(np.sum((d == 0) & (new[lab] == 1))), int(np.sum(d == -1)), int(np.sum(d == 1)),
             int(np.sum((d == 0) & (new[lab] == 0)))]
    labels_ci = paired_difference_ci(*table, confidence=confidence)
    fallback = _too_few({"keys hallucinated in one run only": int(np.sum(d != 0))})
    if fallback:
        estimate, ci, lam, method = float(d.mean()), labels_ci, 0.0, fallback
        residual, unlabelled = float(d.var()), 0.0
    return PPIEstimate(estimate, ci, float(d.mean()), labels_ci, lam, int(lab.sum()), int((~lab).sum()), method,
                       "Newcombe paired (method 10)", confidence, residual, unlabelled)
