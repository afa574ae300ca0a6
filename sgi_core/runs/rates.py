"""Hallucination rates of two runs from labels: their difference with its interval and exact test.

Labels are **1 = hallucinated**, 0 = not, NaN = unlabelled (the opposite of ``y_true``
elsewhere: a rate of hallucination is compared). The difference is always
``rate_new - rate_base``: positive when the new run hallucinates more. The intervals are
Newcombe's (1998) from :mod:`sgi_core.stats.proportions`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.checks import check_fraction
from sgi_core.stats.proportions import as_halluc, paired_difference_ci, unpaired_difference_ci


@dataclass(frozen=True)
class RateDifference(JsonResult):
    """Hallucination rates of two runs and ``rate_new - rate_base``.

    Attributes
    ----------
    n_keys : int
        Paired: keys labelled in both runs. Unpaired: ``n_base + n_new``.
    n_base, n_new : int
        Labelled rows of each run that were used (both ``n_keys`` when paired).
    rate_base, rate_new : float
        Share of used rows labelled hallucinated.
    difference : float
        ``rate_new - rate_base``; positive = the new run hallucinates more.
    ci : (float, float)
        Newcombe's hybrid score interval of ``difference``.
    base_only, new_only : int
        Paired: keys hallucinated in that run only (the discordant pairs).
        Unpaired: -1 (not defined for independent samples).
    p_value : float
        Paired: exact McNemar test; unpaired: Fisher's exact test (both two-sided).
    paired : bool
    method : str
    confidence : float
    """

    n_keys: int
    n_base: int
    n_new: int
    rate_base: float
    rate_new: float
    difference: float
    ci: tuple[float, float]
    base_only: int
    new_only: int
    p_value: float
    paired: bool
    method: str
    confidence: float


def paired_rate_difference(halluc_base, halluc_new, *, confidence: float = 0.95) -> RateDifference:
    """Hallucination rates of two runs on the same keys, over the keys labelled in both.

    ``difference = rate_new - rate_base = (new_only - base_only) / n_keys``; its interval
    is :func:`paired_difference_ci` (Newcombe 1998, paired, method 10); the p-value is the
    exact McNemar test, a two-sided binomial test of ``new_only`` out of the
    ``base_only + new_only`` discordant keys at 1/2 (:func:`scipy.stats.binomtest`).

    Parameters
    ----------
    halluc_base, halluc_new : array_like of shape (n,)
        Row ``i`` of both is the same key; 1 = hallucinated, 0 = not, NaN = unlabelled.
    confidence : float, default 0.95

    Returns
    -------
    RateDifference
        With no key labelled in both, everything is NaN; with no discordant key the
        p-value is NaN; both with a warning.

    References
    ----------
    Newcombe, R. G. (1998). Improved confidence intervals for the difference between
    binomial proportions based on paired data. Statistics in Medicine 17, 2635-2650.
    McNemar, Q. (1947). Psychometrika 12, 153-157.

    Examples
    --------
    >>> res = paired_rate_difference([1, 1, 0, 0, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, float("nan")])
    >>> res.n_keys, res.difference, res.base_only, res.new_only, res.p_value
    (7, -0.2857142857142857, 2, 0, 0.5)
    """
    confidence = check_fraction(confidence, "confidence", "paired_rate_difference")
    base = as_halluc(halluc_base, "halluc_base")
    new = as_halluc(halluc_new, "halluc_new", base_length=len(base))
    both = ~(np.isnan(base) | np.isnan(new))
    base, new = base[both] == 1.0, new[both] == 1.0
    n = len(base)
    method = "Newcombe paired hybrid score interval (method 10); exact McNemar test"
    if n == 0:
        warn_undefined("the rate difference is undefined: no key is labelled in both runs")
        nan = math.nan
        return RateDifference(0, 0, 0, nan, nan, nan, (nan, nan), 0, 0, nan, True, method, confidence)
    table = [int(np.sum(base & new)), int(np.sum(base & ~new)), int(np.sum(~base & new)), int(np.sum(~base & ~new))]
    base_only, new_only = table[1], table[2]
    if base_only + new_only == 0:
        warn_undefined("McNemar's test is undefined: no key is hallucinated in one run only")
    p_value = float(stats.binomtest(new_only, base_only + new_only, 0.5).pvalue) if base_only + new_only else math.nan
    rate_base, rate_new = float(base.mean()), float(new.mean())
    return RateDifference(n, n, n, rate_base, rate_new, (new_only - base_only) / n,
                          paired_difference_ci(*table, confidence=confidence), base_only, new_only, p_value, True,
                          method, confidence)


def unpaired_rate_difference(halluc_base, halluc_new, *, confidence: float = 0.95) -> RateDifference:
    """Hallucination rates of two independent samples (different keys) and their difference.

    ``difference = rate_new - rate_base`` over each run's labelled rows; its interval is
    :func:`unpaired_difference_ci` (Newcombe 1998, independent proportions, method 10);
    the p-value is Fisher's exact test (two-sided, :func:`scipy.stats.fisher_exact`),
    which is conservative. ``base_only`` and ``new_only`` are -1: discordance needs pairs.

    Parameters
    ----------
    halluc_base, halluc_new : array_like
        1 = hallucinated, 0 = not, NaN = unlabelled (left out); lengths may differ.
    confidence : float, default 0.95

    Returns
    -------
    RateDifference
        NaN with a warning when a run has no labelled row.

    References
    ----------
    Newcombe, R. G. (1998). Interval estimation for the difference between independent
    proportions: comparison of eleven methods. Statistics in Medicine 17, 873-890.

    Examples
    --------
    >>> res = unpaired_rate_difference([1] * 48 + [0] * 32, [1] * 56 + [0] * 14)
    >>> round(res.difference, 4), [round(x, 4) for x in res.ci]
    (0.2, [0.0524, 0.3339])
    """
    confidence = check_fraction(confidence, "confidence", "unpaired_rate_difference")
    base, new = as_halluc(halluc_base, "halluc_base"), as_halluc(halluc_new, "halluc_new")
    base, new = base[~np.isnan(base)], new[~np.isnan(new)]
    n_base, n_new = len(base), len(new)
    method = "Newcombe unpaired hybrid score interval (method 10); Fisher's exact test"
    if n_base == 0 or n_new == 0:
        warn_undefined(f"the rate difference is undefined: {n_base} labelled rows in base, {n_new} in new")
        return RateDifference(n_base + n_new, n_base, n_new, math.nan, math.nan, math.nan, (math.nan, math.nan), -1,
                              -1, math.nan, False, method, confidence)
    x_base, x_new = int(base.sum()), int(new.sum())
    p_value = float(stats.fisher_exact([[x_new, n_new - x_new], [x_base, n_base - x_base]]).pvalue)
    rate_base, rate_new = x_base / n_base, x_new / n_new
    return RateDifference(n_base + n_new, n_base, n_new, rate_base, rate_new, rate_new - rate_base,
                          unpaired_difference_ci(x_base, n_base, x_new, n_new, confidence=confidence), -1, -1, p_value,
                          False, method, confidence)
