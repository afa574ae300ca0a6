"""What a comparison of two runs' hallucination rates can detect: the smallest passable margin and the keys a
margin needs.

The gate passes a run when the upper bound of the interval of ``d = rate_new - rate_base``
is at most a margin ``M``. Write ``v`` for the variance of one key's contribution to the
estimate of ``d``, ``n`` for the keys labelled in both runs and
``z = Phi^-1((1 + confidence) / 2)``. The interval's half-width is about
``h(n) = z sqrt(v / n)``, so:

* were the difference zero, the smallest margin the gate could pass is ``h(n)``
  (an unchanged run passes about half of the time at that margin);
* an unchanged run passes with probability ``power`` at margin ``M`` once
  ``n >= (z + z_power)^2 v / M^2`` with ``z_power = Phi^-1(power)``: the sample size of
  a paired test of non-inferiority (Nam 1997) with the Wald variance of Connor (1987)
  at a zero difference.

``v`` by design:

* **labels, paired** (McNemar's design): one key's ``y_new - y_base`` lies in
  {-1, 0, 1}; at a zero difference its variance is the discordance ``psi``, the share of
  keys hallucinated in one run only (Connor 1987). With fewer than
  :data:`MIN_PAIRED_KEYS` keys or :data:`MIN_DISCORDANT` discordant keys the observed
  share is too rough, and the upper Wilson bound of it is used (with no key at all, the
  prior :data:`PRIOR_DISCORDANCE`, the discordance of two independent runs at a 50% rate);
* **labels, unpaired**: ``2 p (1 - p)`` with ``p`` the pooled rate, so that the
  half-width is ``z sqrt(p (1 - p) (1 / n_base + 1 / n_new))`` and ``n`` counts keys
  labelled in each run (``p (1 - p) = 1/4`` with fewer than :data:`MIN_PAIRED_KEYS`
  labelled rows in all or :data:`MIN_DISCORDANT` of a class);
* **prediction-powered** (PPI++): the measured variance of the rectified differences
  ``d - lam f`` per labelled key (:class:`~sgi_core.stats.prediction_powered.PPIEstimate`);
  the smallest margin adds the unlabelled keys' term as measured, the keys needed leave
  it out (it shrinks as keys move from unlabelled to labelled).

References
----------
Connor, R. J. (1987). Sample size for testing differences in proportions for the
paired-sample design. Biometrics 43, 207-211.
Nam, J. (1997). Establishing equivalence of two treatments and sample size requirements
in matched-pairs design. Biometrics 53, 1422-1430.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult
from sgi_core.stats.checks import check_fraction, check_int
from sgi_core.stats.proportions import proportion_ci

#: Keys labelled in both runs below which the observed discordance is replaced by a conservative one.
MIN_PAIRED_KEYS = 20
#: Discordant keys below which the observed discordance is replaced by a conservative one.
MIN_DISCORDANT = 5
#: Discordance assumed with no key labelled in both runs: two independent runs at a 50% rate.
PRIOR_DISCORDANCE = 0.5


@dataclass(frozen=True)
class MarginPower(JsonResult):
    """What a rate comparison on ``n_keys`` labelled keys can detect.

    Attributes
    ----------
    n_keys : int
        Keys labelled in both runs (paired, prediction-powered); labelled rows of both runs (unpaired).
    design : str
        ``"paired"``, ``"unpaired"`` or ``"prediction-powered"``.
    variance : float
        ``v``, the variance of one key's contribution (see the module notes).
    extra_variance : float
        The variance of the estimate from the unlabelled keys (PPI's second term; 0 otherwise).
    variance_source : str
        Where ``v`` came from: "observed", "conservative: ..." or "prior: ...".
    smallest_margin : float
        ``h(n) = z sqrt(v / n + extra_variance)``: the smallest margin the gate could pass were the difference zero.
    confidence, power : float
    """

    n_keys: int
    design: str
    variance: float
    extra_variance: float
    variance_source: str
    smallest_margin: float
    confidence: float
    power: float

    def keys_needed(self, margin: float) -> int:
        """Keys labelled in both runs for an unchanged run to pass at ``margin`` with probability ``power``.

        ``ceil((z + z_power)^2 v / M^2)`` (:func:`keys_for_margin`). PPI's unlabelled term
        is left out: it shrinks as keys move from unlabelled to labelled, and vanishes
        when every key is labelled.
        """
        return keys_for_margin(self.variance, margin, confidence=self.confidence, power=self.power)


def _z(confidence: float) -> float:
    return float(stats.norm.ppf(0.5 + confidence / 2.0))


def zero_difference_half_width(variance: float, n_keys: int, *, confidence: float = 0.95) -> float:
    """The interval's half-width were the difference zero, ``z sqrt(v / n)``: the smallest passable margin.

    Examples
    --------
    >>> round(zero_difference_half_width(0.2, 40), 4)  # 1.96 * sqrt(0.2 / 40)
    0.1386
    """
    n_keys = check_int(n_keys, "n_keys", "zero_difference_half_width", minimum=1)
    confidence = check_fraction(confidence, "confidence", "zero_difference_half_width")
    if not variance >= 0:
        raise SGIInputError(f"zero_difference_half_width needs a variance >= 0. Got {variance!r} instead.")
    return _z(confidence) * math.sqrt(variance / n_keys)


def keys_for_margin(variance: float, margin: float, *, confidence: float = 0.95, power: float = 0.8) -> int:
    """Keys for an unchanged run to pass a margin with probability ``power``: ``ceil((z + z_power)^2 v / M^2)``.

    Parameters
    ----------
    variance : float >= 0
        ``v``, one key's variance.
    margin : float > 0
    confidence, power : float in (0, 1)

    Returns
    -------
    int

    Examples
    --------
    >>> keys_for_margin(0.25, 0.1)  # (1.96 + 0.8416)^2 * 0.25 / 0.01 = 196.2
    197
    """
    margin = float(margin)
    if not (math.isfinite(margin) and margin > 0):
        raise SGIInputError(f"the margin must be a finite number > 0; got {margin!r}",
                            hint="Pass --max-rate-increase X with X > 0")
    confidence = check_fraction(confidence, "confidence", "keys_for_margin")
    power = check_fraction(power, "power", "keys_for_margin")
    factor = (_z(confidence) + float(stats.norm.ppf(power))) ** 2
    # The tolerance keeps float noise in an exact integer answer from adding a key.
    return max(1, int(math.ceil(factor * variance / margin ** 2 - 1e-9)))


def paired_discordance(n_base_only: int, n_new_only: int, n_keys: int, *,
                       confidence: float = 0.95) -> tuple[float, str]:
    """The discordance ``psi`` a paired design plans with, and where it came from (see the module notes).

    Examples
    --------
    >>> paired_discordance(6, 4, 40)
    (0.25, 'observed')
    >>> psi, source = paired_discordance(1, 0, 40)
    >>> round(psi, 4), source.split(":")[0]
    (0.1288, 'conservative')
    """
    func = "paired_discordance"
    n_base_only, n_new_only, n_keys = (check_int(v, name, func, minimum=0) for v, name in
                                       ((n_base_only, "n_base_only"), (n_new_only, "n_new_only"), (n_keys, "n_keys")))
    discordant = n_base_only + n_new_only
    if discordant > n_keys:
        raise SGIInputError(f"{func} needs n_base_only + n_new_only <= n_keys. Got {discordant} > {n_keys} instead.")
    if n_keys == 0:
        return PRIOR_DISCORDANCE, "prior: no key labelled in both runs; two independent runs at a 50% rate"
    if n_keys < MIN_PAIRED_KEYS or discordant < MIN_DISCORDANT:
        upper = proportion_ci(discordant, n_keys, confidence=confidence)[1]
        return upper, (f"conservative: upper Wilson bound of {discordant} discordant of {n_keys} keys (fewer than "
                       f"{MIN_PAIRED_KEYS} keys or {MIN_DISCORDANT} discordant)")
    return discordant / n_keys, "observed"


def paired_power(n_base_only: int, n_new_only: int, n_keys: int, *, confidence: float = 0.95,
                 power: float = 0.8) -> MarginPower:
    """What McNemar's design on ``n_keys`` keys labelled in both runs can detect.

    ``smallest_margin = z sqrt(psi / n)`` with ``psi`` from :func:`paired_discordance`;
    with no key, ``inf``.

    Examples
    --------
    >>> res = paired_power(6, 4, 40)
    >>> round(res.smallest_margin, 4), res.keys_needed(0.05)  # 1.96 * sqrt(0.25 / 40)
    (0.1549, 785)
    """
    confidence = check_fraction(confidence, "confidence", "paired_power")
    power = check_fraction(power, "power", "paired_power")
    psi, source = paired_discordance(n_base_only, n_new_only, n_keys, confidence=confidence)
    margin = zero_difference_half_width(psi, n_keys, confidence=confidence) if n_keys else math.inf
    return MarginPower(n_keys, "paired", psi, 0.0, source, margin, confidence, power)


def unpaired_power(x_base: int, n_base: int, x_new: int, n_new: int, *, confidence: float = 0.95,
                   power: float = 0.8) -> MarginPower:
    """What two independent labelled samples can detect: ``z sqrt(p (1 - p) (1/n_base + 1/n_new))``.

    ``variance`` is ``2 p (1 - p)``: one label in each run per key, so
    :meth:`MarginPower.keys_needed` counts keys to label in each run.

    Examples
    --------
    >>> round(unpaired_power(10, 40, 10, 40).smallest_margin, 4)  # 1.96 * sqrt(0.1875 * 2 / 40)
    0.1898
    """
    func = "unpaired_power"
    x_base, n_base, x_new, n_new = (check_int(v, name, func, minimum=0) for v, name in
                                    ((x_base, "x_base"), (n_base, "n_base"), (x_new, "x_new"), (n_new, "n_new")))
    confidence, power = check_fraction(confidence, "confidence", func), check_fraction(power, "power", func)
    if x_base > n_base or x_new > n_new:
        raise SGIInputError(f"{func} needs x <= n in each run. Got {x_base}/{n_base} and {x_new}/{n_new} instead.")
    if n_base == 0 or n_new == 0:
        return MarginPower(n_base + n_new, "unpaired", 0.5, 0.0, "prior: a run has no label; a 50% rate", math.inf,
                           confidence, power)
    pooled = (x_base + x_new) / (n_base + n_new)
    events = min(x_base + x_new, n_base + n_new - x_base - x_new)
    spread, source = pooled * (1 - pooled), "observed"
    if n_base + n_new < MIN_PAIRED_KEYS or events < MIN_DISCORDANT:
        spread, source = 0.25, f"conservative: a 50% rate (fewer than {MIN_PAIRED_KEYS} labels or {MIN_DISCORDANT} " \
                               "of a class)"
    margin = _z(confidence) * math.sqrt(spread * (1 / n_base + 1 / n_new))
    return MarginPower(n_base + n_new, "unpaired", 2 * spread, 0.0, source, margin, confidence, power)


def ppi_power(residual_variance: float, unlabelled_variance: float, n_keys: int, *, confidence: float = 0.95,
              power: float = 0.8) -> MarginPower:
    """What a prediction-powered difference can detect, from the predictor's measured residual variance.

    ``smallest_margin = z sqrt(residual_variance / n + unlabelled_variance)`` (the
    PPI++ half-width, :func:`~sgi_core.stats.prediction_powered.ppi_mean`).

    Examples
    --------
    >>> round(ppi_power(0.16, 0.0004, 40).smallest_margin, 4)  # 1.96 * sqrt(0.004 + 0.0004)
    0.13
    """
    n_keys = check_int(n_keys, "n_keys", "ppi_power", minimum=1)
    confidence = check_fraction(confidence, "confidence", "ppi_power")
    power = check_fraction(power, "power", "ppi_power")
    if not (residual_variance >= 0 and unlabelled_variance >= 0):
        raise SGIInputError(f"ppi_power needs variances >= 0. Got {residual_variance!r} and {unlabelled_variance!r}.")
    margin = _z(confidence) * math.sqrt(residual_variance / n_keys + unlabelled_variance)
    return MarginPower(n_keys, "prediction-powered", float(residual_variance), float(unlabelled_variance),
                       "observed: the predictor's residual variance on the labelled keys", margin, confidence, power)


def _unchanged_differences(discordance: float, n: int) -> np.ndarray:
    """``n`` paired differences with no change: a share ``discordance`` non-zero, spread evenly, +1 and -1 in turn."""
    discordant = np.floor(discordance * np.arange(1, n + 1) + 0.5)
    steps = np.diff(np.concatenate([[0.0], discordant])) > 0
    signs = np.where(np.cumsum(steps) % 2 == 1, 1.0, -1.0)
    return np.where(steps, signs, 0.0)


@dataclass(frozen=True)
class SequentialPower(JsonResult):
    """What a confidence sequence of a paired difference over ``population`` keys can detect after ``n_keys``.

    The sequence is :func:`~sgi_core.stats.confidence_sequence.betting_confidence_sequence`
    without replacement over the ``population`` matched keys, read on a typical unchanged
    run: paired differences with the discordance ``psi`` (:func:`paired_discordance`), the
    discordant keys spread evenly and alternately +1 and -1. ``smallest_margin`` is that
    sequence's upper bound after ``n_keys`` keys: the smallest margin it could pass were
    the difference zero; :meth:`keys_needed` is the first number of keys at which it reaches a
    margin (about half of the orders need fewer, half more).

    Attributes
    ----------
    n_keys, population : int
    discordance : float
    variance_source : str
    smallest_margin : float
    confidence : float
    design : str
        ``"sequential"``.
    """

    n_keys: int
    population: int
    discordance: float
    variance_source: str
    smallest_margin: float
    confidence: float
    design: str = "sequential"

    def _upper(self) -> np.ndarray:
        from sgi_core.stats.confidence_sequence import betting_confidence_sequence

        x = _unchanged_differences(self.discordance, self.population)
        return betting_confidence_sequence(x, lower=-1.0, upper=1.0, confidence=self.confidence,
                                           population=self.population)[1]

    def keys_needed(self, margin: float) -> int:
        """Keys labelled in both runs at which the typical unchanged sequence's upper bound is at most ``margin``.

        -1 when no number of the ``population`` keys reaches it.
        """
        reached = np.flatnonzero(self._upper() <= margin)
        return int(reached[0]) + 1 if len(reached) else -1


def sequential_power(n_base_only: int, n_new_only: int, n_keys: int, population: int, *,
                     confidence: float = 0.95) -> SequentialPower:
    """What the confidence sequence of McNemar's design can detect after ``n_keys`` of ``population`` keys.

    Examples
    --------
    >>> res = sequential_power(6, 4, 40, 150)
    >>> round(res.smallest_margin, 3), res.keys_needed(0.1)
    (0.218, 110)
    """
    population = check_int(population, "population", "sequential_power", minimum=1)
    psi, source = paired_discordance(n_base_only, n_new_only, n_keys, confidence=confidence)
    res = SequentialPower(n_keys, population, psi, source, math.inf, confidence)
    if n_keys == 0:
        return res
    if n_keys > population:
        raise SGIInputError(f"sequential_power needs n_keys <= population. Got {n_keys} > {population} instead.")
    return SequentialPower(n_keys, population, psi, source, float(res._upper()[n_keys - 1]), confidence)
