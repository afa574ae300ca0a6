"""Effect sizes between grounded and hallucinated scores: Cohen's d, Hedges' g, Welch's t.

Sign convention: **valid minus hallucinated**. With SGI (high = grounded) a positive
d means grounded answers score higher, the expected direction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.bootstrap import CI_METHODS, DELTA_METHOD_CI_NAMES, interval_kind, normal_interval, two_sample_ci
from sgi_core.stats.checks import check_choice, check_fraction, check_int, labelled_groups, validates_inputs


def cohens_d_along(valid: np.ndarray, halluc: np.ndarray, axis: int = -1) -> np.ndarray:
    """Cohen's d along an axis, NaN where the pooled SD is 0, without warnings.

    Vectorised for bootstrap batches; callers make sure each group has at least 2 values.
    """
    n1, n2 = valid.shape[axis], halluc.shape[axis]
    pooled_var = ((n1 - 1) * np.var(valid, axis=axis, ddof=1) + (n2 - 1) * np.var(halluc, axis=axis, ddof=1)) / (
        n1 + n2 - 2
    )
    diff = np.mean(valid, axis=axis) - np.mean(halluc, axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = diff / np.sqrt(pooled_var)
    return np.where(pooled_var > 0, d, np.nan)


def _why_d_undefined(valid: np.ndarray, halluc: np.ndarray) -> str | None:
    if len(valid) < 2 or len(halluc) < 2:
        return f"Cohen's d needs at least 2 rows of each class; got {len(valid)} valid and {len(halluc)} hallucinated"
    if np.var(valid) == 0 and np.var(halluc) == 0:
        return "Cohen's d is undefined: both classes have zero spread (pooled SD = 0)"
    return None


@validates_inputs
def cohens_d(valid, halluc) -> float:
    """Cohen's d with the pooled standard deviation (ddof=1).

    ``d = (mean(valid) - mean(halluc)) / s_pooled``, with
    ``s_pooled**2 = ((n1 - 1) * s1**2 + (n2 - 1) * s2**2) / (n1 + n2 - 2)`` and
    ``s**2`` the unbiased (ddof=1) sample variances. Positive when valid answers
    score higher. Undefined (NaN and a warning) with fewer than 2 values in a group
    or a pooled SD of 0.

    Parameters
    ----------
    valid, halluc : array_like
        Scores of grounded and of hallucinated answers.

    Returns
    -------
    float

    Examples
    --------
    >>> round(cohens_d([3.2, 6.4, 1.8, 2.4, 5.8, 6.5], [2.4, 3.2, 3.2, 1.4, 2.8, 3.5]), 6)
    1.002549
    """
    valid = np.asarray(valid, dtype=np.float64).ravel()
    halluc = np.asarray(halluc, dtype=np.float64).ravel()
    reason = _why_d_undefined(valid, halluc)
    if reason:
        warn_undefined(reason)
        return math.nan
    return float(cohens_d_along(valid, halluc))


@validates_inputs
def hedges_g(valid, halluc) -> float:
    """Hedges' g: Cohen's d times the small-sample correction ``1 - 3 / (4 * (n1 + n2) - 9)``.

    Same sign convention as :func:`cohens_d` (valid minus hallucinated).

    Examples
    --------
    >>> round(hedges_g([3.2, 6.4, 1.8, 2.4, 5.8, 6.5], [2.4, 3.2, 3.2, 1.4, 2.8, 3.5]), 7)
    0.9254296
    """
    valid = np.asarray(valid, dtype=np.float64).ravel()
    halluc = np.asarray(halluc, dtype=np.float64).ravel()
    return cohens_d(valid, halluc) * _hedges_correction(len(valid) + len(halluc))


def _hedges_correction(n_total: int) -> float:
    return 1.0 - 3.0 / (4.0 * n_total - 9.0)


def cohens_d_variance(valid: np.ndarray, halluc: np.ndarray) -> float:
    """Large-sample variance of Cohen's d by the delta method, with no assumption on the distributions.

    With ``S`` the pooled variance, ``w_k = (n_k - 1) / (n_1 + n_2 - 2)`` and, per
    class ``k``, its variance ``s_k**2`` (ddof=1) and central moments ``mu2_k``,
    ``mu3_k``, ``mu4_k`` (means of the centred powers; sign ``e_1 = +1`` for grounded,
    ``e_2 = -1`` for hallucinated):

        Var(d) = sum_k [ s_k**2 / S + d**2 w_k**2 (mu4_k - mu2_k**2) / (4 S**2)
                         - e_k d w_k mu3_k / S**1.5 ] / n_k

    (``mu4 - mu2**2``, never negative, estimates the variance of a sample variance.)

    For normal classes with one variance (``mu3 = 0``, ``mu4 = 3 s**4``) this is
    Hedges & Olkin's ``1 / n_1 + 1 / n_2 + d**2 / (2 (n_1 + n_2))``. Each class
    needs at least 2 values and ``S`` must be positive.

    Examples
    --------
    >>> round(cohens_d_variance(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 2.0])), 6)
    0.675926
    """
    d = float(cohens_d_along(valid, halluc))
    n_1, n_2 = len(valid), len(halluc)
    pooled = ((n_1 - 1) * np.var(valid, ddof=1) + (n_2 - 1) * np.var(halluc, ddof=1)) / (n_1 + n_2 - 2)
    total = 0.0
    for sign, x in ((1.0, valid), (-1.0, halluc)):
        weight = (len(x) - 1) / (n_1 + n_2 - 2)
        variance = np.var(x, ddof=1)
        centred = x - x.mean()
        mu2, mu3, mu4 = np.mean(centred**2), np.mean(centred**3), np.mean(centred**4)
        total += (variance / pooled + d**2 * weight**2 * (mu4 - mu2**2) / (4.0 * pooled**2)
                  - sign * d * weight * mu3 / pooled**1.5) / len(x)
    return float(total)


@dataclass(frozen=True)
class EffectSizeResult(JsonResult):
    """Separation of grounded and hallucinated scores (valid minus hallucinated).

    Attributes
    ----------
    n_valid, n_halluc : int
        Labelled, scored rows of each class.
    n_excluded : int
        Rows left out (unlabelled or not scored).
    mean_valid, mean_halluc, sd_valid, sd_halluc : float
        Class means and standard deviations (ddof=1).
    cohens_d : float
    cohens_d_ci : (float, float)
        Percentile bootstrap interval, classes resampled independently, or the
        delta method's normal interval (see ``ci_method``).
    hedges_g : float
    welch_t, welch_p : float
        Welch's unequal-variance t statistic and two-sided p-value.
    ci_method : {"percentile bootstrap", "delta method", "none"}
        How ``cohens_d_ci`` was computed.
    n_boot : int
        Bootstrap resamples behind ``cohens_d_ci`` (0 unless it is a bootstrap interval).
    """

    n_valid: int
    n_halluc: int
    n_excluded: int
    mean_valid: float
    mean_halluc: float
    sd_valid: float
    sd_halluc: float
    cohens_d: float
    cohens_d_ci: tuple[float, float]
    hedges_g: float
    welch_t: float
    welch_p: float
    ci_method: str = "none"
    n_boot: int = 0


def _mean(x: np.ndarray) -> float:
    return float(np.mean(x)) if len(x) else math.nan


def _sd(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1)) if len(x) >= 2 else math.nan


@validates_inputs
def effect_size(y_true, score, *, n_boot: int = 1000, seed: int = 0, confidence: float = 0.95,
                ci_method: str = "auto") -> EffectSizeResult:
    """Cohen's d, Hedges' g and Welch's t of a score between grounded and hallucinated rows.

    ``d = (mean_valid - mean_halluc) / s_pooled`` (ddof=1, see :func:`cohens_d`); the
    interval is a percentile bootstrap resampling each class independently, or above
    :data:`~sgi_core.stats.bootstrap.BOOTSTRAP_MAX_ROWS` labelled rows the normal
    interval ``d -/+ z * sqrt(Var(d))`` of :func:`cohens_d_variance`.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled (left out, counted).
    score : array_like of shape (n,)
        Higher = more grounded (e.g. SGI). NaN = not scored (left out, counted).
    n_boot : int, default 1000
        Bootstrap resamples; 0 skips the interval (unless ``ci_method="asymptotic"``).
    seed : int, default 0
    confidence : float, default 0.95
    ci_method : {"auto", "bootstrap", "asymptotic"}, default "auto"
        ``"auto"``: the bootstrap up to
        :data:`~sgi_core.stats.bootstrap.BOOTSTRAP_MAX_ROWS` labelled rows, the
        delta method above. ``EffectSizeResult.ci_method`` and ``n_boot`` say which.

    Returns
    -------
    EffectSizeResult
        Undefined parts are NaN, with an :class:`UndefinedStatisticWarning`.

    Examples
    --------
    >>> res = effect_size([1, 1, 1, 0, 0, 0], [3.0, 4.0, 5.0, 1.0, 2.0, 3.0], n_boot=0)
    >>> res.cohens_d, res.mean_valid, res.mean_halluc
    (2.0, 4.0, 2.0)
    """
    n_boot = check_int(n_boot, "n_boot", "effect_size", minimum=0)
    confidence = check_fraction(confidence, "confidence", "effect_size")
    ci_method = check_choice(ci_method, "ci_method", "effect_size", CI_METHODS)
    valid, halluc, n_excluded = labelled_groups(y_true, score)
    reason = _why_d_undefined(valid, halluc)
    d, ci, welch_t, welch_p = math.nan, (math.nan, math.nan), math.nan, math.nan
    kind = "none"
    if reason:
        warn_undefined(reason)
    else:
        d = float(cohens_d_along(valid, halluc))
        kind = interval_kind(len(valid) + len(halluc), ci_method=ci_method, n_boot=n_boot)
        if kind == "bootstrap":
            ci = two_sample_ci(valid, halluc, cohens_d_along, n_boot=n_boot, seed=seed, confidence=confidence)
        elif kind == "asymptotic":
            ci = normal_interval(d, cohens_d_variance(valid, halluc), confidence)
        welch = stats.ttest_ind(valid, halluc, equal_var=False)
        welch_t, welch_p = float(welch.statistic), float(welch.pvalue)
    return EffectSizeResult(
        n_valid=len(valid),
        n_halluc=len(halluc),
        n_excluded=n_excluded,
        mean_valid=_mean(valid),
        mean_halluc=_mean(halluc),
        sd_valid=_sd(valid),
        sd_halluc=_sd(halluc),
        cohens_d=d,
        cohens_d_ci=ci,
        hedges_g=d * _hedges_correction(len(valid) + len(halluc)),
        welch_t=welch_t,
        welch_p=welch_p,
        ci_method=DELTA_METHOD_CI_NAMES[kind],
        n_boot=n_boot if kind == "bootstrap" else 0,
    )


@dataclass(frozen=True)
class AngleEffectsResult(JsonResult):
    """The paper's Table 5: each angle on its own, valid minus hallucinated.

    A positive ``cohens_d_theta_rq`` means grounded answers lie farther from the
    question; a positive ``cohens_d_theta_rc`` that they lie farther from the context.
    """

    n_valid: int
    n_halluc: int
    mean_theta_rq_valid: float
    mean_theta_rq_halluc: float
    mean_theta_rc_valid: float
    mean_theta_rc_halluc: float
    cohens_d_theta_rq: float
    cohens_d_theta_rc: float


@validates_inputs
def angle_effects(theta_rq, theta_rc, y_true) -> AngleEffectsResult:
    """Cohen's d (valid minus hallucinated, ddof=1) of ``theta_rq`` and of ``theta_rc`` separately.

    Rows with a NaN label or angle are left out.

    Examples
    --------
    >>> res = angle_effects([1.2, 1.4, 0.8, 1.0], [0.6, 0.8, 0.6, 0.8], [1, 1, 0, 0])
    >>> round(res.cohens_d_theta_rq, 6), round(res.cohens_d_theta_rc, 6)
    (2.828427, 0.0)
    """
    rq_valid, rq_halluc, _ = labelled_groups(y_true, theta_rq, score_name="theta_rq")
    rc_valid, rc_halluc, _ = labelled_groups(y_true, theta_rc, score_name="theta_rc")
    return AngleEffectsResult(
        n_valid=len(rq_valid),
        n_halluc=len(rq_halluc),
        mean_theta_rq_valid=_mean(rq_valid),
        mean_theta_rq_halluc=_mean(rq_halluc),
        mean_theta_rc_valid=_mean(rc_valid),
        mean_theta_rc_halluc=_mean(rc_halluc),
        cohens_d_theta_rq=cohens_d(rq_valid, rq_halluc),
        cohens_d_theta_rc=cohens_d(rc_valid, rc_halluc),
    )
