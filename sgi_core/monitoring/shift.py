"""Has a run moved beyond its hallucination rate? A goodness-of-fit test per monitored feature.

Under prior shift alone a run's feature ``x`` follows the mixture of the policy's two class
references weighted by the run's rate ``r`` (:func:`~sgi_core.monitoring.references.mixture_cdf`);
that is what the corrected rate assumes. For each feature the run's values are tested
against that mixture with the Kolmogorov-Smirnov statistic ``D = sup_x |F_run(x) - F(x)|``
(:func:`scipy.stats.ks_1samp`; Kolmogorov 1933, Smirnov 1948).

The reference is itself a sample (``n_g`` grounded and ``n_h`` hallucinated held-out rows),
so its mixture has sampling error of its own; treating it as exact would flag prior shift
alone whenever the reference is small. The mixture's ECDF has the variance of one ECDF of
``m = 1 / ((1 - r)^2 / n_g + r^2 / n_h)`` rows, and ``D`` is judged as the two-sample
statistic is (Smirnov 1939): by Kolmogorov's distribution at ``n_e = n m / (n + m)`` rows
(:data:`scipy.stats.kstwo`, ``n_e`` rounded). Plugging in the rate estimated from the
same run, as Lilliefors (1967) notes for estimated parameters, makes the test conservative.

The features' p-values are corrected for testing several with Holm's step-down method
(Holm 1979), which holds the family-wise error at ``alpha`` whatever their dependence; shift
is detected when any corrected p-value is below ``alpha``. The false-alarm rate under prior
shift alone is measured in ``tests/monitoring/test_prior_shift_simulation.py``.

References
----------
Smirnov, N. (1939). On the estimation of the discrepancy between empirical curves of
distribution for two independent samples. Bulletin of Moscow University 2(2), 3-14.
Lilliefors, H. W. (1967). On the Kolmogorov-Smirnov test for normality with mean and variance
unknown. Journal of the American Statistical Association 62(318), 399-402.
Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian
Journal of Statistics 6(2), 65-70.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.monitoring.references import FEATURE_NAMES, mixture_cdf
from sgi_core.results import JsonResult

#: Fewest finite values of a feature in a run for its test.
MIN_RUN_ROWS = 5
METHOD = "Kolmogorov-Smirnov against the class mixture, reference sampling error included; Holm-corrected"


@dataclass(frozen=True)
class FeatureShift(JsonResult):
    """One feature's test of the run against the mixture of the policy's class references.

    Attributes
    ----------
    feature : str
        :data:`~sgi_core.monitoring.references.FEATURE_NAMES`.
    statistic : float
        Kolmogorov-Smirnov ``D``.
    p_value, p_holm : float
        Its p-value and the Holm-corrected one; NaN when untested.
    n_run : int
        Run rows with a value.
    n_effective : int
        ``n_e`` the p-value is read at.
    shifted : bool
        ``p_holm < alpha``.
    """

    feature: str
    statistic: float
    p_value: float
    p_holm: float
    n_run: int
    n_effective: int
    shifted: bool


@dataclass(frozen=True)
class ShiftCheck(JsonResult):
    """Whether any feature of the run is not a mixture of what the policy was validated on.

    Attributes
    ----------
    detected : bool
    weight : float
        The hallucination rate the mixture is weighted with.
    alpha : float
    tests : tuple of FeatureShift
    unchecked : str
        Why nothing was tested (a policy with no references); empty when tested.
    method : str
    """

    detected: bool
    weight: float
    alpha: float
    tests: tuple[FeatureShift, ...]
    unchecked: str
    method: str

    @property
    def shifted_features(self) -> tuple[str, ...]:
        return tuple(test.feature for test in self.tests if test.shifted)


def holm(p_values) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values; NaN stays NaN and is not counted.

    The ``i``-th smallest of ``m`` p-values becomes ``max_{j <= i} min(1, (m - j + 1) p_(j))``.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03, float("nan")]).round(4).tolist()
    [0.03, 0.06, 0.06, nan]
    """
    p = np.asarray(p_values, dtype=np.float64)
    adjusted = np.full_like(p, np.nan)
    finite = np.flatnonzero(~np.isnan(p))
    order = finite[np.argsort(p[finite], kind="stable")]
    m = len(order)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    return adjusted


def _test(values: np.ndarray, reference: dict, weight: float) -> tuple[float, float, int]:
    n_g, n_h = reference["grounded"]["n"], reference["hallucinated"]["n"]
    m = 1.0 / ((1.0 - weight) ** 2 / n_g + weight ** 2 / n_h)
    n_e = max(1, int(round(len(values) * m / (len(values) + m))))
    statistic = float(stats.ks_1samp(values, lambda x: mixture_cdf(reference, weight, x)).statistic)
    return statistic, float(stats.kstwo.sf(statistic, n_e)), n_e


def shift_check(features: dict, references: dict | None, weight: float, *, alpha: float = 0.05) -> ShiftCheck:
    """Test each monitored feature of a run against the policy's class mixture (see the module).

    Parameters
    ----------
    features : dict of str to array_like
        The run's features (:func:`~sgi_core.monitoring.references.feature_values`); NaN left out.
    references : dict or None
        The policy's ``references``; None for a policy that keeps none (nothing is tested, saying so).
    weight : float
        The hallucination rate in [0, 1] the mixture is weighted with (the corrected rate).
    alpha : float, default 0.05

    Returns
    -------
    ShiftCheck

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> ref = {"score": {"grounded": {"n": 400, "quantiles": np.quantile(rng.normal(1, 1, 400), np.linspace(0, 1, 101)).tolist()},
    ...                  "hallucinated": {"n": 400, "quantiles": np.quantile(rng.normal(-1, 1, 400), np.linspace(0, 1, 101)).tolist()}}}
    >>> same = np.r_[rng.normal(1, 1, 150), rng.normal(-1, 1, 50)]
    >>> shift_check({"score": same}, ref, 0.25).detected, shift_check({"score": same + 2.0}, ref, 0.25).detected
    (False, True)
    """
    if not (isinstance(alpha, float) and 0.0 < alpha < 1.0):
        raise SGIInputError(f"The 'alpha' parameter of shift_check must be a float in (0, 1). Got {alpha!r} instead.")
    if not 0.0 <= weight <= 1.0:
        raise SGIInputError(f"The 'weight' parameter of shift_check must be in [0, 1]. Got {weight!r} instead.")
    if references is None:
        return ShiftCheck(False, weight, alpha, (), "the policy keeps no reference of its held-out rows (written "
                          "before version 6): write it again to check for shift", METHOD)
    rows = []
    for name in FEATURE_NAMES:
        if name not in references or name not in features:
            continue
        values = np.asarray(features[name], dtype=np.float64)
        values = values[np.isfinite(values)]
        if len(values) < MIN_RUN_ROWS:
            rows.append((name, math.nan, math.nan, len(values), 0))
            continue
        statistic, p_value, n_e = _test(values, references[name], weight)
        rows.append((name, statistic, p_value, len(values), n_e))
    if not rows:
        return ShiftCheck(False, weight, alpha, (), "the run and the policy share no monitored feature", METHOD)
    adjusted = holm([row[2] for row in rows])
    tests = tuple(FeatureShift(name, d, p, float(p_adj), n, n_e, bool(p_adj < alpha))
                  for (name, d, p, n, n_e), p_adj in zip(rows, adjusted))
    return ShiftCheck(any(t.shifted for t in tests), weight, alpha, tests, "", METHOD)
