"""ROC curve and AUROC with grounded as the positive class and the score as given.

AUROC = P(score of a random grounded row > score of a random hallucinated row),
ties counting one half. With SGI (high = grounded) 0.5 is chance and values above
0.5 mean SGI ranks grounded answers higher. (The paper's reference code scores SGI
as a hallucination score and reports 1 - AUROC; this module never flips.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import percentileofscore
from sklearn.metrics import auc, roc_auc_score, roc_curve

from sgi_core.results import JsonResult, frozen_array, same_fields, warn_undefined
from sgi_core.stats.bootstrap import CI_METHODS, interval_kind, normal_interval, two_sample_ci
from sgi_core.stats.checks import as_scores, check_choice, check_fraction, check_int, labelled_groups, validates_inputs
from sgi_core.stats.paired import delong_components
from sgi_core.stats.proportions import proportion_ci

#: ``RocResult.ci_method`` for each kind of interval.
AUROC_CI_NAMES = {"bootstrap": "percentile bootstrap", "asymptotic": "DeLong", "none": "none"}


def _auroc_of_levels(valid_levels: np.ndarray, halluc_levels: np.ndarray, n_levels: int, axis: int = -1) -> np.ndarray:
    """AUROC of integer score levels ``0..n_levels-1``, one value per row of a batch.

    The Mann-Whitney count ``sum over valid v of #(halluc < v) + #(halluc == v) / 2``
    from a histogram of the hallucinated levels: linear time per resample, where
    ``scipy.stats.mannwhitneyu`` sorts each one (20 times slower on 20,000 rows).
    """
    batched = np.ndim(valid_levels) > 1
    valid_levels = np.atleast_2d(np.moveaxis(valid_levels, axis, -1)).astype(np.int64)
    halluc_levels = np.atleast_2d(np.moveaxis(halluc_levels, axis, -1)).astype(np.int64)
    batch = valid_levels.shape[0]
    offsets = np.arange(batch)[:, None] * n_levels
    counts = np.bincount((halluc_levels + offsets).ravel(), minlength=batch * n_levels).reshape(batch, n_levels)
    below = np.cumsum(counts, axis=1) - counts
    wins = np.take_along_axis(below, valid_levels, axis=1) + 0.5 * np.take_along_axis(counts, valid_levels, axis=1)
    values = wins.sum(axis=1) / (valid_levels.shape[1] * halluc_levels.shape[1])
    return values if batched else values[0]


def auroc_ci(valid: np.ndarray, halluc: np.ndarray, *, n_boot: int, seed: int,
             confidence: float) -> tuple[float, float]:
    """Percentile bootstrap interval of the AUROC, classes resampled independently.

    AUROC depends on the scores only through their order, so both samples are
    replaced by their dense ranks in the pooled data before resampling. The ranks are
    resampled in the orientation where the AUROC is at least 0.5 (an interval of the
    other orientation is ``1 - ci`` reversed): the resamples of a score and of its
    negation are then the same, and their intervals mirror each other exactly.
    """
    levels = np.unique(np.concatenate([valid, halluc]), return_inverse=True)[1]
    n_levels = int(levels.max()) + 1

    def statistic(v, h, axis=-1):
        return _auroc_of_levels(v, h, n_levels, axis=axis)

    valid_levels, halluc_levels = levels[: len(valid)], levels[len(valid) :]
    flip = bool(len(valid_levels) and len(halluc_levels) and statistic(valid_levels, halluc_levels) < 0.5)
    if flip:
        valid_levels, halluc_levels = n_levels - 1 - valid_levels, n_levels - 1 - halluc_levels
    lo, hi = two_sample_ci(valid_levels, halluc_levels, statistic, n_boot=n_boot, seed=seed, confidence=confidence)
    return (1.0 - hi, 1.0 - lo) if flip else (lo, hi)


def delong_ci(valid: np.ndarray, halluc: np.ndarray, *, confidence: float) -> tuple[float, float]:
    """Normal interval of the AUROC with DeLong's variance, in O(n log n).

    ``Var(AUROC) = s10**2 / m + s01**2 / n``, with ``s10**2`` and ``s01**2`` the
    sample variances (ddof=1) of the structural components of the ``m`` grounded and
    ``n`` hallucinated rows (:func:`~sgi_core.stats.paired.delong_components`);
    the interval ``AUROC -/+ z * sqrt(Var)`` is clipped to [0, 1]. Each class needs
    at least 2 rows.

    Examples
    --------
    >>> [round(x, 4) for x in delong_ci(np.array([0.9, 0.4, 0.8]), np.array([0.5, 0.1, 0.2]), confidence=0.95)]
    [0.5809, 1.0]
    """
    auc, v10, v01 = delong_components(valid, halluc)
    variance = np.var(v10, ddof=1) / len(valid) + np.var(v01, ddof=1) / len(halluc)
    return normal_interval(auc, float(variance), confidence, bounds=(0.0, 1.0))


def separation_floor(auroc_value: float, n_pos: int, n_neg: int, interval, *,
                     confidence: float) -> tuple[float, float]:
    """Widen the interval of a perfectly separating AUROC (0 or 1), where resampling and DeLong collapse to a point.

    Birnbaum and Klose (1957) bound the AUROC's variance by ``A (1 - A) / min(m, n)``:
    no sample of ``m`` and ``n`` rows says more than ``min(m, n)`` independent trials,
    so the interval is widened to the Wilson interval of ``round(A k)`` successes in
    ``k = min(m, n)`` trials (:func:`~sgi_core.stats.proportions.proportion_ci`).
    Other AUROCs keep ``interval``.

    Examples
    --------
    >>> [round(x, 3) for x in separation_floor(1.0, 15, 15, (1.0, 1.0), confidence=0.95)]
    [0.796, 1.0]
    """
    if auroc_value not in (0.0, 1.0) or math.isnan(interval[0]):
        return interval
    k = min(n_pos, n_neg)
    low, high = proportion_ci(int(round(auroc_value * k)), k, confidence=confidence)
    return (min(interval[0], low), max(interval[1], high))


def _why_auroc_undefined(valid: np.ndarray, halluc: np.ndarray) -> str | None:
    if len(valid) == 0 or len(halluc) == 0:
        return f"AUROC needs both classes; got {len(valid)} valid and {len(halluc)} hallucinated rows"
    return None


def auroc_of_groups(valid: np.ndarray, halluc: np.ndarray) -> float:
    """AUROC of grounded scores ``valid`` against hallucinated ``halluc``; both must be non-empty."""
    labels = np.concatenate([np.ones(len(valid)), np.zeros(len(halluc))])
    return float(roc_auc_score(labels, np.concatenate([valid, halluc])))


@validates_inputs
def auroc(y_true, y_score) -> float:
    """AUROC of a score against labels (grounded positive); NaN with a warning if one class.

    Examples
    --------
    >>> auroc([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1])
    0.75
    """
    valid, halluc, _ = labelled_groups(y_true, y_score, score_name="y_score")
    reason = _why_auroc_undefined(valid, halluc)
    if reason:
        warn_undefined(reason)
        return math.nan
    return auroc_of_groups(valid, halluc)


@dataclass(frozen=True, eq=False)
class RocResult(JsonResult):
    """ROC curve of a score, grounded positive.

    The curve is held in read-only float64 arrays: a continuous score on 2,000,000 rows
    has a curve of about 1,000,000 points, 24 MB as arrays and 96 MB as Python floats.
    Two results are equal when every field is (:func:`~sgi_core.results.same_fields`).

    Attributes
    ----------
    fpr, tpr : numpy.ndarray of float
        False and true positive rates (share of hallucinated / grounded rows with
        score >= threshold), from :func:`sklearn.metrics.roc_curve`.
    thresholds : numpy.ndarray of float
        Decreasing; the first is ``inf`` (nothing called grounded).
    auroc : float
    auroc_ci : (float, float)
        Percentile bootstrap interval, classes resampled independently, or DeLong's
        normal interval (see ``ci_method``).
    n_pos, n_neg : int
        Grounded and hallucinated rows used.
    n_excluded : int
        Rows left out (unlabelled or not scored).
    ci_method : {"percentile bootstrap", "DeLong", "none"}
        How ``auroc_ci`` was computed.
    n_boot : int
        Bootstrap resamples behind ``auroc_ci`` (0 unless it is a bootstrap interval).
    """

    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray
    auroc: float
    auroc_ci: tuple[float, float]
    n_pos: int
    n_neg: int
    n_excluded: int
    ci_method: str = "none"
    n_boot: int = 0

    def __eq__(self, other):
        return same_fields(self, other) if type(other) is type(self) else NotImplemented

    __hash__ = None

    @classmethod
    def undefined(cls, n_pos: int, n_neg: int, n_excluded: int) -> RocResult:
        """The result where the AUROC is undefined: empty curve, NaN AUROC and interval."""
        empty = frozen_array([])
        return cls(empty, empty, empty, math.nan, (math.nan, math.nan), n_pos, n_neg, n_excluded)


@validates_inputs
def roc_analysis(y_true, y_score, *, n_boot: int = 1000, seed: int = 0, confidence: float = 0.95,
                 ci_method: str = "auto") -> RocResult:
    """ROC curve, AUROC and its bootstrap interval, grounded as the positive class.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled (left out, counted).
    y_score : array_like of shape (n,)
        Higher = more grounded. NaN = not scored (left out, counted).
    n_boot : int, default 1000
        Bootstrap resamples; 0 skips the interval (unless ``ci_method="asymptotic"``).
    seed : int, default 0
    confidence : float, default 0.95
    ci_method : {"auto", "bootstrap", "asymptotic"}, default "auto"
        ``"bootstrap"``: percentile bootstrap of ``n_boot`` resamples;
        ``"asymptotic"``: DeLong's normal interval (:func:`delong_ci`);
        ``"auto"``: the bootstrap up to
        :data:`~sgi_core.stats.bootstrap.BOOTSTRAP_MAX_ROWS` labelled rows,
        DeLong's above. ``RocResult.ci_method`` and ``n_boot`` say which was used.

    Returns
    -------
    RocResult
        With one class only: empty curve, NaN AUROC and an
        :class:`UndefinedStatisticWarning`.

    Examples
    --------
    >>> res = roc_analysis([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1], n_boot=0)
    >>> res.auroc, res.n_pos, res.n_neg
    (0.75, 2, 2)
    """
    n_boot = check_int(n_boot, "n_boot", "roc_analysis", minimum=0)
    confidence = check_fraction(confidence, "confidence", "roc_analysis")
    ci_method = check_choice(ci_method, "ci_method", "roc_analysis", CI_METHODS)
    valid, halluc, n_excluded = labelled_groups(y_true, y_score, score_name="y_score")
    reason = _why_auroc_undefined(valid, halluc)
    if reason:
        warn_undefined(reason)
        return RocResult.undefined(len(valid), len(halluc), n_excluded)
    labels = np.concatenate([np.ones(len(valid)), np.zeros(len(halluc))])
    scores = np.concatenate([valid, halluc])
    fpr, tpr, thresholds = roc_curve(labels, scores, pos_label=1)
    kind = interval_kind(len(scores), ci_method=ci_method, n_boot=n_boot)
    # A class of one row has no sampling spread to resample: no interval, as with DeLong.
    too_few = min(len(valid), len(halluc)) < 2
    if kind != "none" and too_few:
        warn_undefined(f"a {'bootstrap' if kind == 'bootstrap' else 'DeLong'} interval needs at least 2 rows of each "
                       f"class; got {len(valid)} grounded and "
                       f"{len(halluc)} hallucinated, so the interval is undefined")
    if kind == "bootstrap" and not too_few:
        interval = auroc_ci(valid, halluc, n_boot=n_boot, seed=seed, confidence=confidence)
    elif kind == "asymptotic" and not too_few:
        interval = delong_ci(valid, halluc, confidence=confidence)
    else:
        interval, kind = (math.nan, math.nan), "none"
    area = float(auc(fpr, tpr))
    interval = separation_floor(area, len(valid), len(halluc), interval, confidence=confidence)
    return RocResult(
        fpr=frozen_array(fpr),
        tpr=frozen_array(tpr),
        thresholds=frozen_array(thresholds),
        # roc_auc_score is auc() of this same curve: reading it off saves a second sort of every score.
        auroc=area,
        auroc_ci=interval,
        n_pos=len(valid),
        n_neg=len(halluc),
        n_excluded=n_excluded,
        ci_method=AUROC_CI_NAMES[kind],
        n_boot=n_boot if kind == "bootstrap" else 0,
    )


@validates_inputs
def score_percentile(scores, value: float) -> float:
    """Percentage of scored rows whose score is at or below ``value`` (NaN rows left out).

    Uses :func:`scipy.stats.percentileofscore` with ``kind="weak"``: 100 * share of
    scores ``<= value``. NaN when no row is scored.

    Examples
    --------
    >>> score_percentile([0.5, 1.0, float("nan"), 1.5, 2.0], 1.0)
    50.0
    """
    values = as_scores(scores)
    values = values[~np.isnan(values)]
    if len(values) == 0:
        warn_undefined("score_percentile: no scored row")
        return math.nan
    return float(percentileofscore(values, float(value), kind="weak"))
