"""Percentile bootstrap confidence intervals for two-sample statistics, and when to use them.

The grounded and hallucinated samples are resampled independently (a stratified
bootstrap), so every replicate keeps the observed class sizes and both classes.
Above :data:`BOOTSTRAP_MAX_ROWS` labelled rows, ``ci_method="auto"`` hands the
interval to an asymptotic method with a closed form (DeLong's variance for the
AUROC, the delta method for Cohen's d): at that size both agree with the bootstrap
to the third decimal, and 1,000 resamples of millions of rows take minutes.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
from scipy import stats

from sgi_core.results import warn_undefined

#: Upper bound on resampled values held in memory at once (floats), per batch.
_BATCH_VALUES = 2_000_000
#: Labelled rows above which ``ci_method="auto"`` gives the asymptotic interval instead of the bootstrap.
BOOTSTRAP_MAX_ROWS = 100_000
#: Values of the ``ci_method`` parameter of the functions that report an interval.
CI_METHODS = ("auto", "bootstrap", "asymptotic")
#: ``ci_method`` recorded by a result whose asymptotic interval is the delta method's, for each :func:`interval_kind`.
DELTA_METHOD_CI_NAMES = {"bootstrap": "percentile bootstrap", "asymptotic": "delta method", "none": "none"}


def interval_kind(n_rows: int, *, ci_method: str, n_boot: int) -> str:
    """Which interval a statistic on ``n_rows`` labelled rows gets: ``"bootstrap"``, ``"asymptotic"`` or ``"none"``.

    ``"auto"`` is the bootstrap up to :data:`BOOTSTRAP_MAX_ROWS` rows and the
    asymptotic interval above; ``n_boot=0`` asks for no interval unless
    ``ci_method="asymptotic"``, which needs no resamples.

    Examples
    --------
    >>> [interval_kind(n, ci_method="auto", n_boot=1000) for n in (100_000, 100_001)]
    ['bootstrap', 'asymptotic']
    >>> interval_kind(10**6, ci_method="auto", n_boot=0), interval_kind(50, ci_method="asymptotic", n_boot=0)
    ('none', 'asymptotic')
    """
    if ci_method == "asymptotic":
        return "asymptotic"
    if n_boot == 0:
        return "none"
    return "asymptotic" if ci_method == "auto" and n_rows > BOOTSTRAP_MAX_ROWS else "bootstrap"


def normal_interval(estimate: float, variance: float, confidence: float, *,
                    bounds: tuple[float, float] = (-math.inf, math.inf)) -> tuple[float, float]:
    """``estimate -/+ z * sqrt(variance)``, z the ``(1 + confidence) / 2`` normal quantile, clipped to ``bounds``.

    Examples
    --------
    >>> [round(x, 4) for x in normal_interval(0.9, 0.0004, 0.95, bounds=(0.0, 1.0))]
    [0.8608, 0.9392]
    """
    half = stats.norm.ppf((1.0 + confidence) / 2.0) * math.sqrt(variance)
    return (float(max(estimate - half, bounds[0])), float(min(estimate + half, bounds[1])))


def two_sample_ci(
    valid: np.ndarray,
    halluc: np.ndarray,
    statistic: Callable[[np.ndarray, np.ndarray], np.ndarray],
    *,
    n_boot: int,
    seed: int,
    confidence: float,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(valid, halluc)``.

    Parameters
    ----------
    valid, halluc : ndarray
        The two samples. Each is sorted before resampling: the statistic of a
        resample depends on its values only, so the interval is the same whatever
        the order of the rows.
    statistic : callable
        Vectorised: ``statistic(x, y, axis=-1)`` on arrays of shape ``(batch, n)``.
    n_boot : int
        Number of resamples; 0 gives ``(nan, nan)``.
    seed : int
        Seed of the resampling generator (same seed, same interval).
    confidence : float
        Coverage of the interval, e.g. 0.95.

    Returns
    -------
    (lo, hi) : tuple of float
        Percentiles ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` of the
        replicates. Replicates where the statistic is undefined (e.g. a resample of a
        tiny class with zero spread) are left out with a warning; ``(nan, nan)`` when
        ``n_boot`` is 0 or no replicate is defined, and (with a warning) when a
        sample has fewer than 2 values: resampling one value gives one value back,
        so the replicates would show no sampling error at all.
    """
    if n_boot == 0:
        return (math.nan, math.nan)
    if min(len(valid), len(halluc)) < 2:
        warn_undefined(f"a bootstrap interval needs at least 2 rows of each class; got {len(valid)} grounded and "
                       f"{len(halluc)} hallucinated, so the interval is undefined")
        return (math.nan, math.nan)
    valid, halluc = np.sort(valid), np.sort(halluc)
    batch = max(1, _BATCH_VALUES // (len(valid) + len(halluc)))
    with warnings.catch_warnings():
        # scipy warns about undefined replicates itself; the count is reported below instead.
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(
            (valid, halluc),
            statistic,
            n_resamples=n_boot,
            batch=batch,
            vectorized=True,
            paired=False,
            axis=-1,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    replicates = result.bootstrap_distribution
    defined = replicates[np.isfinite(replicates)]
    if len(defined) < len(replicates):
        warn_undefined(
            f"the statistic is undefined in {len(replicates) - len(defined)} of {len(replicates)} bootstrap "
            "resamples; the interval uses the others"
        )
    if len(defined) == 0:
        return (math.nan, math.nan)
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.percentile(defined, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return (float(lo), float(hi))
