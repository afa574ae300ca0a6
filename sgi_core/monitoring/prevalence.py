"""The hallucination rate of an unlabelled run, corrected for the policy's held-out error rates.

Hallucinated is the positive class, as in :mod:`sgi_core.policy.making`: a row is
flagged when ``score < threshold``. With ``q`` the share of the run's scored rows flagged
and the policy's held-out sensitivity ``Se = TP / (TP + FN)`` (hallucinated rows flagged)
and specificity ``Sp = TN / (TN + FP)`` (grounded rows left alone), the adjusted
classify-and-count estimate (Rogan and Gladen 1978; Forman 2008) is::

    rate = (q + Sp - 1) / (Se + Sp - 1)        clipped to [0, 1]

**Assumption**: the score behaves within each class on the run as on the policy's held-out
rows (the same ``Se`` and ``Sp``); only the share of hallucinated rows may differ (prior
shift). :mod:`sgi_core.monitoring.shift` checks what can be checked of it.

The interval takes in the sampling error of all three proportions, the run's ``q`` and the
held-out ``Se`` and ``Sp``, which are independent binomials. Its variance is the delta
method's (Rogan and Gladen 1978, eq. 4)::

    Var = [q (1 - q) / n + rate^2 Se (1 - Se) / n_h + (1 - rate)^2 Sp (1 - Sp) / n_g] / (Se + Sp - 1)^2

evaluated, as Agresti and Coull (1998) do for one proportion, at each proportion with
``z^2 / 2`` successes and ``z^2 / 2`` failures added (``n`` grows by ``z^2``), so that a
held-out sensitivity of 1 still has sampling error; the interval is ``rate~ -/+ z Var^(1/2)``
around the estimate from the adjusted proportions, brought into [0, 1] by :func:`unit_interval`,
which never leaves it narrower than its sampling half-width at a bound. Its coverage under prior
shift is measured on HaluEval in ``tests/monitoring/test_prior_shift_simulation.py``.

The estimate is withheld, with the reason, when ``Se + Sp - 1`` is too close to 0 to divide
by: when its own interval's lower bound is at most :data:`MIN_YOUDEN` (a score that barely
separates the classes on held-out rows corrects nothing), or when the policy records no
held-out counts (written before version 6).

References
----------
Rogan, W. J. and Gladen, B. (1978). Estimating prevalence from the results of a screening
test. American Journal of Epidemiology 107(1), 71-76.
Forman, G. (2008). Quantifying counts and costs via classification. Data Mining and
Knowledge Discovery 17(2), 164-206.
Agresti, A. and Coull, B. A. (1998). Approximate is better than "exact" for interval
estimation of binomial proportions. The American Statistician 52(2), 119-126.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult
from sgi_core.stats.proportions import proportion_ci

#: Lowest acceptable lower bound of ``Se + Sp - 1``: below it the corrected rate is withheld.
MIN_YOUDEN = 0.1
METHOD = "Rogan-Gladen (adjusted classify-and-count), delta method at Agresti-Coull adjusted proportions"
COUNT_NAMES = ("tp", "fp", "fn", "tn")


@dataclass(frozen=True)
class CorrectedRate(JsonResult):
    """A run's corrected hallucination rate and its raw flag share.

    Attributes
    ----------
    estimate, ci : float, (float, float)
        The corrected rate and its interval; NaN when withheld.
    flag_share, flag_share_ci : float, (float, float)
        Share of the run's scored rows flagged, with its Wilson interval.
    n_flagged, n_scored : int
    sensitivity, specificity : float
        Held-out rates of the policy (hallucinated positive); NaN without counts.
    youden, youden_ci : float, (float, float)
        ``Se + Sp - 1`` and its normal interval at the adjusted proportions.
    withheld : str
        Why no corrected rate is given; empty when it is.
    method : str
    confidence : float
    """

    estimate: float
    ci: tuple[float, float]
    flag_share: float
    flag_share_ci: tuple[float, float]
    n_flagged: int
    n_scored: int
    sensitivity: float
    specificity: float
    youden: float
    youden_ci: tuple[float, float]
    withheld: str
    method: str
    confidence: float

    @property
    def weight(self) -> float:
        """The share of hallucinated rows a mixture of the two classes gets: the estimate, or the clipped
        uncorrected one where the estimate is withheld (the flag share where no counts are recorded)."""
        if not math.isnan(self.estimate):
            return self.estimate
        if math.isnan(self.youden) or self.youden <= 0:
            return self.flag_share
        return float(np.clip((self.flag_share + self.specificity - 1.0) / self.youden, 0.0, 1.0))


def unit_interval(estimate: float, low: float, high: float) -> tuple[float, float]:
    """The interval ``(low, high)`` of a rate brought into [0, 1] without losing its width at a bound.

    Clipping alone narrows an interval that crosses 0 or 1, to zero width when it lies
    wholly outside ([0%, 0%] from 140 answers states a certainty no sample gives). With
    ``h = (high - low) / 2`` the sampling half-width and ``e`` the estimate clipped to [0, 1]::

        ci = ( clip(min(low, e, 1 - h)), clip(max(high, e, h)) )

    An interval inside [0, 1] is unchanged (there ``low <= 1 - 2h`` and ``high >= 2h``); one
    at a bound reaches at least ``h`` inside from it: the rates within one half-width of the
    bound, where the clipped estimate lies, stay in the interval. It always holds ``e`` (an
    adjusted centre can pass the estimate where a proportion is 0 or 1). Symmetric:
    ``unit_interval(1 - e, 1 - high, 1 - low)`` is ``1 - unit_interval(e, low, high)`` reversed.

    Examples
    --------
    >>> unit_interval(0.3, 0.2, 0.4)
    (0.2, 0.4)
    >>> unit_interval(0.0, -0.5, -0.25)
    (0.0, 0.125)
    >>> unit_interval(1.0, 0.875, 1.125)
    (0.875, 1.0)
    """
    if not (math.isfinite(low) and math.isfinite(high) and low <= high):
        raise SGIInputError(f"unit_interval needs finite bounds low <= high. Got ({low!r}, {high!r}) instead.")
    half = (high - low) / 2.0
    e = min(max(float(estimate), 0.0), 1.0)
    return (min(max(min(low, e, 1.0 - half), 0.0), 1.0), min(max(max(high, e, half), 0.0), 1.0))


def _adjusted(successes: int, trials: int, z2: float) -> tuple[float, float]:
    """Agresti-Coull: ``(x + z^2/2) / (n + z^2)`` and ``n + z^2``."""
    return (successes + z2 / 2.0) / (trials + z2), trials + z2


def _check_counts(counts) -> dict:
    if not isinstance(counts, dict) or set(counts) != set(COUNT_NAMES):
        raise SGIInputError(f"held-out counts must be a mapping of exactly {', '.join(COUNT_NAMES)}; got {counts!r}")
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0 for v in counts.values()):
        raise SGIInputError(f"held-out counts must be whole numbers >= 0; got {counts!r}")
    return {name: int(value) for name, value in counts.items()}


def corrected_rate(n_flagged: int, n_scored: int, counts: dict | None, *, confidence: float = 0.95) -> CorrectedRate:
    """The Rogan-Gladen rate of a run from its flags and the policy's held-out counts (see the module).

    Parameters
    ----------
    n_flagged, n_scored : int
        The run's rows flagged at the policy's threshold, of its scored rows.
    counts : dict or None
        The policy's held-out ``tp``, ``fp``, ``fn``, ``tn`` (hallucinated positive); None
        for a policy that records none (the estimate is withheld, saying so).
    confidence : float, default 0.95

    Returns
    -------
    CorrectedRate

    Examples
    --------
    >>> res = corrected_rate(30, 100, {"tp": 80, "fn": 20, "tn": 90, "fp": 10})
    >>> round(res.estimate, 4), res.sensitivity, res.specificity, res.withheld
    (0.2857, 0.8, 0.9, '')
    >>> corrected_rate(30, 100, {"tp": 50, "fn": 50, "tn": 55, "fp": 45}).withheld[:34]
    'sensitivity + specificity - 1 is 0'
    """
    if not (isinstance(confidence, float) and 0.0 < confidence < 1.0):
        raise SGIInputError(f"The 'confidence' parameter of corrected_rate must be a float in (0, 1). "
                            f"Got {confidence!r} instead.")
    if not 0 <= n_flagged <= n_scored:
        raise SGIInputError(f"corrected_rate needs 0 <= n_flagged <= n_scored. Got n_flagged={n_flagged}, "
                            f"n_scored={n_scored} instead.")
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    flag_share = n_flagged / n_scored if n_scored else math.nan
    flag_ci = proportion_ci(n_flagged, n_scored, confidence=confidence) if n_scored else (math.nan, math.nan)
    nan, nan_pair = math.nan, (math.nan, math.nan)
    if counts is None:
        return CorrectedRate(nan, nan_pair, flag_share, flag_ci, n_flagged, n_scored, nan, nan, nan, nan_pair,
                             "the policy records no held-out counts (written before version 6): write it again to "
                             "get a corrected rate", METHOD, confidence)
    counts = _check_counts(counts)
    n_h, n_g = counts["tp"] + counts["fn"], counts["tn"] + counts["fp"]
    if n_h == 0 or n_g == 0 or n_scored == 0:
        why = "the run has no scored row" if n_scored == 0 else "the policy's held-out rows lack a class"
        return CorrectedRate(nan, nan_pair, flag_share, flag_ci, n_flagged, n_scored, nan, nan, nan, nan_pair, why,
                             METHOD, confidence)
    sens, spec = counts["tp"] / n_h, counts["tn"] / n_g
    youden = sens + spec - 1.0
    z2 = z * z
    q_adj, n_q = _adjusted(n_flagged, n_scored, z2)
    se_adj, n_se = _adjusted(counts["tp"], n_h, z2)
    sp_adj, n_sp = _adjusted(counts["tn"], n_g, z2)
    j_adj = se_adj + sp_adj - 1.0
    j_half = z * math.sqrt(se_adj * (1 - se_adj) / n_se + sp_adj * (1 - sp_adj) / n_sp)
    youden_ci = (j_adj - j_half, j_adj + j_half)
    if youden_ci[0] <= MIN_YOUDEN:
        why = (f"sensitivity + specificity - 1 is {youden:.2f} [{youden_ci[0]:.2f}, {youden_ci[1]:.2f}] on the "
               f"policy's held-out rows: too close to 0 (its lower bound is not above {MIN_YOUDEN:g}), so the "
               "correction would divide by almost nothing")
        return CorrectedRate(nan, nan_pair, flag_share, flag_ci, n_flagged, n_scored, sens, spec, youden, youden_ci,
                             why, METHOD, confidence)
    estimate = float(np.clip((flag_share + spec - 1.0) / youden, 0.0, 1.0))
    centre = (q_adj + sp_adj - 1.0) / j_adj
    weight = float(np.clip(centre, 0.0, 1.0))
    variance = (q_adj * (1 - q_adj) / n_q + weight ** 2 * se_adj * (1 - se_adj) / n_se
                + (1 - weight) ** 2 * sp_adj * (1 - sp_adj) / n_sp) / j_adj ** 2
    half = z * math.sqrt(variance)
    ci = unit_interval(estimate, centre - half, centre + half)
    return CorrectedRate(estimate, ci, flag_share, flag_ci, n_flagged, n_scored, sens, spec, youden, youden_ci, "",
                         METHOD, confidence)
