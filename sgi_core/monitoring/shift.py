"""Has a run moved beyond its hallucination rate? A goodness-of-fit test per monitored feature.

Under prior shift alone a run's feature ``x`` follows the mixture of the policy's two class
references weighted by the run's rate ``r`` (:func:`~sgi_core.policy.references.mixture_cdf`);
that is what the corrected rate assumes. For each feature the run's values are tested
against that mixture with the Kolmogorov-Smirnov statistic ``D(r) = sup_x |F_run(x) - F_r(x)|``
(Kolmogorov 1933, Smirnov 1948; :func:`ks_statistics` is :func:`scipy.stats.ks_1samp`'s statistic
for every rate of a grid at once).

Two sources of error besides the run's own are taken in:

* **The reference is a sample** (``n_g`` grounded and ``n_h`` hallucinated held-out rows).
  The mixture's ECDF has at most the variance of one ECDF of
  ``m = 1 / ((1 - r) / sqrt(n_g) + r / sqrt(n_h))^2`` rows, whatever the correlation between
  the classes' references (the two answers to one question share its context), and ``D`` is
  judged as the two-sample statistic is (Smirnov 1939): by Kolmogorov's distribution at
  ``n_e = n m / (n + m)`` rows (:data:`scipy.stats.kstwo`, ``n_e`` rounded).
* **The rate is estimated.** ``r`` is a nuisance parameter, so the p-value is maximised over
  a ``1 - beta`` confidence interval ``C`` of it, the corrected rate's, and ``beta`` added
  (Berger and Boos 1994): ``p = sup_{r in C} p(r) + beta``, valid whenever ``C`` covers. Where
  the corrected rate is withheld ``C`` is [0, 1]: the test asks whether *any* mixture of the
  two classes explains the run. The supremum is taken over a grid of :data:`GRID_POINTS` rates.

The features' p-values are corrected for testing several with Holm's step-down method
(Holm 1979), which holds the family-wise error at ``alpha`` whatever their dependence; shift
is detected when any corrected p-value is below ``alpha``. The false-alarm rate under prior
shift alone is measured in ``tests/monitoring/test_prior_shift_simulation.py``.

References
----------
Smirnov, N. (1939). On the estimation of the discrepancy between empirical curves of
distribution for two independent samples. Bulletin of Moscow University 2(2), 3-14.
Berger, R. L. and Boos, D. D. (1994). P values maximized over a confidence set for the
nuisance parameter. Journal of the American Statistical Association 89(427), 1012-1016.
Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian
Journal of Statistics 6(2), 65-70.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.policy.references import CLASSES, FEATURE_NAMES, MIN_EVENTS_PER_CLASS, class_cdf
from sgi_core.results import JsonResult

#: Fewest finite values of a feature in a run for its test.
MIN_RUN_ROWS = 5
#: ``beta`` of Berger and Boos: the rate's interval is at confidence ``1 - beta``.
BETA = 0.001
#: Rates the p-value is maximised over, evenly spaced across the rate's interval.
GRID_POINTS = 41
METHOD = ("Kolmogorov-Smirnov against the class mixture, reference sampling error included, p maximised over the "
          "rate's interval (Berger-Boos); Holm-corrected")


@dataclass(frozen=True)
class FeatureShift(JsonResult):
    """One feature's test of the run against the mixture of the policy's class references.

    Attributes
    ----------
    feature : str
        :data:`~sgi_core.policy.references.FEATURE_NAMES`.
    statistic : float
        Kolmogorov-Smirnov ``D``.
    p_value, p_holm : float
        Its p-value (Berger-Boos, maximised over the rates) and the Holm-corrected one; NaN when untested.
    rate : float
        The rate in the interval where the p-value is largest (the mixture that fits best).
    n_run : int
        Run rows with a value.
    n_effective : int
        ``n_e`` the p-value is read at.
    shifted : bool
        ``p_holm < alpha``.
    untested : str
        Why the feature was not tested (too few run rows, a class reference too small); empty when tested.
    """

    feature: str
    statistic: float
    rate: float
    p_value: float
    p_holm: float
    n_run: int
    n_effective: int
    shifted: bool
    untested: str = ""


@dataclass(frozen=True)
class ShiftCheck(JsonResult):
    """Whether any feature of the run is not a mixture of what the policy was validated on.

    Attributes
    ----------
    detected : bool
    rate_range : (float, float)
        The rates the mixture may take: the corrected rate's ``1 - beta`` interval, or [0, 1].
    alpha : float
    tests : tuple of FeatureShift
    unchecked : str
        Why nothing was tested (a policy with no references, a run or references too small); empty when
        at least one feature was tested. Nothing untested counts as "no shift".
    method : str
    """

    detected: bool
    rate_range: tuple[float, float]
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


def ks_statistics(values, cdf_rows: np.ndarray, left_rows: np.ndarray | None = None) -> np.ndarray:
    """Kolmogorov-Smirnov ``D`` of ``values`` against each row of CDF values at the sorted ``values``.

    ``D = max_i max(i / n - F(x_(i)), F(x_(i)-) - (i - 1) / n)``: the statistic of
    :func:`scipy.stats.ks_1samp` for a continuous ``F`` (``F(x-) = F(x)``, the default), and
    ``sup_x |F_n(x) - F(x)|`` exactly for an ``F`` with jumps given their left limits
    ``left_rows``; for many candidate CDFs at once (one per rate of the grid).

    Examples
    --------
    >>> x = np.array([0.1, 0.4, 0.7])
    >>> ks_statistics(x, np.vstack([x, x / 2])).round(4).tolist()
    [0.3, 0.65]
    """
    n = len(values)
    above = np.arange(1, n + 1) / n - cdf_rows
    below = (cdf_rows if left_rows is None else left_rows) - np.arange(n) / n
    return np.maximum(above.max(axis=1), below.max(axis=1))


def _test(values: np.ndarray, reference: dict, rates: np.ndarray) -> tuple[float, float, float, int]:
    """``(D, rate, p, n_e)`` at the rate of ``rates`` with the largest p-value, ``beta`` not yet added."""
    values = np.sort(values)
    n_g, n_h = reference["grounded"]["n"], reference["hallucinated"]["n"]
    (grounded, grounded_left), (halluc, halluc_left) = (
        (class_cdf(reference[cls]["quantiles"], values), class_cdf(reference[cls]["quantiles"], values, left=True))
        for cls in ("grounded", "hallucinated"))
    weights, kept = rates[:, None], (1.0 - rates)[:, None]
    statistics = ks_statistics(values, kept * grounded + weights * halluc, kept * grounded_left + weights * halluc_left)
    m = 1.0 / ((1.0 - rates) / math.sqrt(n_g) + rates / math.sqrt(n_h)) ** 2
    n_e = np.maximum(1, np.round(len(values) * m / (len(values) + m))).astype(np.int64)
    p_values = stats.kstwo.sf(statistics, n_e)
    best = int(np.argmax(p_values))
    return float(statistics[best]), float(rates[best]), float(p_values[best]), int(n_e[best])


def shift_check(features: dict, references: dict | None, rate_range=(0.0, 1.0), *, alpha: float = 0.05) -> ShiftCheck:
    """Test each monitored feature of a run against the policy's class mixture (see the module).

    Parameters
    ----------
    features : dict of str to array_like
        The run's features (:func:`~sgi_core.policy.references.feature_values`); NaN left out.
    references : dict or None
        The policy's ``references``; None for a policy that keeps none (nothing is tested, saying so).
    rate_range : (float, float), default (0, 1)
        The corrected rate's ``1 - beta`` interval (:data:`BETA`); (0, 1) where it is withheld.
    alpha : float, default 0.05

    Returns
    -------
    ShiftCheck

    Examples
    --------
    >>> rng, grid = np.random.default_rng(0), np.linspace(0, 1, 101)
    >>> ref = {"score": {"grounded": {"n": 400, "quantiles": np.quantile(rng.normal(1, 1, 400), grid).tolist()},
    ...                  "hallucinated": {"n": 400, "quantiles": np.quantile(rng.normal(-1, 1, 400), grid).tolist()}}}
    >>> same = np.r_[rng.normal(1, 1, 150), rng.normal(-1, 1, 50)]
    >>> shift_check({"score": same}, ref, (0.2, 0.3)).detected, shift_check({"score": same + 2.0}, ref).detected
    (False, True)
    """
    if not (isinstance(alpha, float) and 0.0 < alpha < 1.0):
        raise SGIInputError(f"The 'alpha' parameter of shift_check must be a float in (0, 1). Got {alpha!r} instead.")
    low, high = (float(v) for v in rate_range)
    if not 0.0 <= low <= high <= 1.0:
        raise SGIInputError("The 'rate_range' parameter of shift_check must be (low, high) "
                            f"with 0 <= low <= high <= 1. Got {rate_range!r} instead.")
    rates = np.linspace(low, high, GRID_POINTS)
    if references is None:
        return ShiftCheck(False, (low, high), alpha, (), "the policy keeps no reference of its held-out rows (written "
                          "before version 6): write it again to check for shift", METHOD)
    rows = []
    for name in FEATURE_NAMES:
        if name not in references or name not in features:
            continue
        values = np.asarray(features[name], dtype=np.float64)
        values = values[np.isfinite(values)]
        why = _untested(len(values), references[name])
        if why:
            rows.append((name, math.nan, math.nan, math.nan, len(values), 0, why))
            continue
        statistic, rate, p_value, n_e = _test(values, references[name], rates)
        rows.append((name, statistic, rate, min(1.0, p_value + BETA), len(values), n_e, ""))
    if not rows:
        return ShiftCheck(False, (low, high), alpha, (), "the run and the policy share no monitored feature", METHOD)
    adjusted = holm([row[3] for row in rows])
    tests = tuple(FeatureShift(name, d, rate, p, float(p_adj), n, n_e, bool(p_adj < alpha), why)
                  for (name, d, rate, p, n, n_e, why), p_adj in zip(rows, adjusted))
    untested = sorted({t.untested for t in tests if t.untested})
    unchecked = "" if any(not t.untested for t in tests) else "; ".join(untested)
    return ShiftCheck(any(t.shifted for t in tests), (low, high), alpha, tests, unchecked, METHOD)


def _untested(n_run: int, reference: dict) -> str:
    """Why a feature cannot be tested: too few run values, or a class reference of too few held-out rows."""
    if n_run < MIN_RUN_ROWS:
        return f"{n_run} rows of the run, at least {MIN_RUN_ROWS} needed"
    small = [f"{reference[cls]['n']} {cls}" for cls in CLASSES if reference[cls]["n"] < MIN_EVENTS_PER_CLASS]
    if small:
        return (f"the policy's references are too small to test against ({' and '.join(small)} held-out rows, at "
                f"least {MIN_EVENTS_PER_CLASS} of each class needed)")
    return ""
