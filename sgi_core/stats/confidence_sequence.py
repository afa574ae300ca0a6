"""Confidence sequences for a bounded mean: intervals that hold at every sample size at once, so one may stop any time.

A fixed-sample interval covers the mean with probability ``confidence`` at one sample
size chosen in advance; read after every label and stopped as soon as it excludes a
value, it errs far more often. A confidence sequence ``(L_t, U_t)`` covers the mean at
**every** ``t`` simultaneously with probability ``confidence`` (Ville's inequality), so
stopping whenever it is decided keeps the level.

The method is the hedged capital process of Waudby-Smith and Ramdas (2024, Section 4.3
and Remark 3), for observations in [0, 1] (values in ``[lower, upper]`` are rescaled).
For a candidate mean ``m`` on a grid of ``breaks + 1`` points::

    K+_t(m) = prod_{i<=t} (1 + l+_i(m) (x_i - m_i)),   K-_t(m) = prod_{i<=t} (1 - l-_i(m) (x_i - m_i))
    K_t(m)  = max(K+_t(m) / 2, K-_t(m) / 2)

with predictable bets ``l_i = sqrt(2 log(2 / alpha) / (i log(1 + i) s2_(i-1)))``
truncated at ``1 / (2 m_i)`` (``l+``) and ``1 / (2 (1 - m_i))`` (``l-``), where
``s2_i = (1/4 + sum_(j<=i) (x_j - mu_j)^2) / (i + 1)`` and
``mu_i = (1/2 + sum_(j<=i) x_j) / (i + 1)``. Drawn with replacement, ``m_i = m``.

**Without replacement** from a finite population of ``N`` values (Section 6: the keys of
a run, labelled one after another), the mean of the values not yet drawn is what the
next draw is centred on: ``m_i = (N m - S_(i-1)) / (N - i + 1)`` with ``S_i`` the sum of
the first ``i`` draws; a candidate with ``m_i`` outside [0, 1] is impossible
(``K = inf``), and the sequence is intersected with the logical bounds
``[S_t / N, 1 - (t - S_t) / N]``. It narrows to the population's mean as ``t`` reaches
``N``.

The sequence is the grid's hull of ``{m : K_t(m) <= 1 / alpha}`` widened by one grid
step, intersected over time: the conventions of ``hedged_cs(x, N=...)`` in the
``confseq`` package (version 0.0.11), against which the tests pin values.

References
----------
Waudby-Smith, I. and Ramdas, A. (2024). Estimating means of bounded random variables by
betting. Journal of the Royal Statistical Society, Series B 86(1), 1-27.
Howard, S. R., Ramdas, A., McAuliffe, J. and Sekhon, J. (2021). Time-uniform,
nonparametric, nonasymptotic confidence sequences. Annals of Statistics 49(2), 1055-1080.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult
from sgi_core.stats.checks import check_fraction, check_int

#: Grid values held in memory at once (floats).
_BLOCK_VALUES = 2_000_000


@dataclass(frozen=True)
class SequentialInterval(JsonResult):
    """A confidence sequence read after its last observation.

    Attributes
    ----------
    n : int
        Observations so far.
    estimate : float
        Their mean.
    ci : (float, float)
        The sequence at ``n`` (running intersection): valid whenever one stops.
    method : str
    confidence : float
    population : int or None
        ``N`` when the observations are drawn without replacement from ``N`` values
        (the sequence is of their mean); None with replacement.
    """

    n: int
    estimate: float
    ci: tuple[float, float]
    method: str
    confidence: float
    population: int | None = None


METHOD = "betting confidence sequence (Waudby-Smith and Ramdas 2024), valid when stopped at any time"
#: :data:`METHOD` over a finite population drawn without replacement.
FINITE_METHOD = ("betting confidence sequence without replacement over {population} keys (Waudby-Smith and Ramdas "
                 "2024, Section 6), valid when stopped at any time")


def _bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """The predictable plug-in bets ``l_i`` (before truncation), as ``confseq``'s ``lambda_predmix_eb``."""
    t = np.arange(1, len(x) + 1)
    mu = np.minimum((0.5 + np.cumsum(x)) / (t + 1), 1.0)
    s2 = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1)
    s2_before = np.concatenate([[0.25], s2[:-1]])
    return np.sqrt(2.0 * math.log(2.0 / alpha) / (t * np.log1p(t) * s2_before))


def betting_confidence_sequence(x, *, lower: float = 0.0, upper: float = 1.0, confidence: float = 0.95,
                                breaks: int = 1000, population: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Hedged-capital betting confidence sequence of the mean of ``x`` (see the module notes).

    Parameters
    ----------
    x : array_like of shape (n,)
        Observations in ``[lower, upper]``, in the order they arrived.
    lower, upper : float
        The bounds of every observation; paired differences of 0/1 labels lie in [-1, 1].
    confidence : float, default 0.95
        ``1 - alpha``: the chance that the sequence covers the mean at every ``t`` at once.
    breaks : int, default 1000
        Grid steps over ``[lower, upper]``; the bounds are exact to one step.
    population : int, optional
        ``N``: the observations are drawn without replacement from ``N`` values, whose
        mean the sequence bounds (``n <= N``). None: drawn with replacement.

    Returns
    -------
    ci_low, ci_high : ndarray of shape (n,)
        The sequence after each observation, in the units of ``x``; never narrower over time.

    Raises
    ------
    SGIInputError
        Values outside the bounds, bad bounds, or more observations than ``population``.

    Examples
    --------
    >>> low, high = betting_confidence_sequence(np.full(30, 0.5))
    >>> low[[4, 29]].round(3).tolist(), high[[4, 29]].round(3).tolist()
    ([0.157, 0.396], [0.843, 0.604])
    >>> low, high = betting_confidence_sequence(np.full(30, 0.5), population=40)
    >>> low[[4, 29]].round(3).tolist(), high[[4, 29]].round(3).tolist()
    ([0.175, 0.444], [0.825, 0.556])
    """
    func = "betting_confidence_sequence"
    confidence = check_fraction(confidence, "confidence", func)
    breaks = check_int(breaks, "breaks", func, minimum=2)
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise SGIInputError(f"{func} needs finite bounds with lower < upper. Got [{lower!r}, {upper!r}] instead.")
    try:
        values = np.asarray(x, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise SGIInputError(f"'x' of {func} must hold numbers", column="x") from None
    outside = ~((values >= lower) & (values <= upper))
    if outside.any():
        raise SGIInputError(f"'x' of {func} holds values outside [{lower:g}, {upper:g}] (or NaN)", column="x",
                            rows=(np.flatnonzero(outside) + 1).tolist(),
                            hint="Pass the bounds every observation lies within")
    n = len(values)
    if population is not None:
        population = check_int(population, "population", func, minimum=1)
        if n > population:
            raise SGIInputError(f"{func} drew {n} observations without replacement from a population of "
                                f"{population}", hint="Pass the number of values the observations are drawn from")
    if n == 0:
        return np.zeros(0), np.zeros(0)
    y = (values - lower) / (upper - lower)
    alpha = 1.0 - confidence
    bets = _bets(y, alpha)
    grid = np.linspace(0.0, 1.0, breaks + 1)
    threshold = math.log(1.0 / alpha) + math.log(2.0)  # K+/2 <= 1/alpha  <=>  log K+ <= log(2/alpha)
    sums = np.cumsum(y)
    first = np.full(n, breaks + 1)
    last = np.full(n, -1)
    block = max(1, _BLOCK_VALUES // n)
    with np.errstate(divide="ignore", invalid="ignore"):
        for start in range(0, breaks + 1, block):
            m = grid[start:start + block, None]
            if population is None:
                centre, possible = m, True
            else:  # the mean of the values not drawn yet, were the population's mean m
                t = np.arange(n)
                centre = (population * m - np.concatenate([[0.0], sums[:-1]])) / (population - t)
                possible = (centre >= 0.0) & (centre <= 1.0)
            step = y[None, :] - centre
            positive = np.cumsum(np.log1p(np.minimum(bets, 0.5 / centre) * step), axis=1)
            negative = np.cumsum(np.log1p(-np.minimum(bets, 0.5 / (1.0 - centre)) * step), axis=1)
            inside = (np.maximum(positive, negative) <= threshold) & possible
            hit = inside.any(axis=0)
            low_index = start + np.argmax(inside, axis=0)
            high_index = start + inside.shape[0] - 1 - np.argmax(inside[::-1], axis=0)
            first = np.where(hit, np.minimum(first, low_index), first)
            last = np.where(hit, np.maximum(last, high_index), last)
    empty = last < 0
    ci_low = np.where(empty, 0.0, np.maximum(grid[np.minimum(first, breaks)] - 1.0 / breaks, 0.0))
    ci_high = np.where(empty, 1.0, np.minimum(grid[np.maximum(last, 0)] + 1.0 / breaks, 1.0))
    if population is not None:
        drawn = np.arange(1, n + 1)
        ci_low, ci_high = np.maximum(ci_low, sums / population), np.minimum(ci_high, 1.0 - (drawn - sums) / population)
    ci_low, ci_high = np.maximum.accumulate(ci_low), np.minimum.accumulate(ci_high)
    scale = upper - lower
    return lower + scale * ci_low, lower + scale * ci_high


def sequential_mean(x, *, lower: float = -1.0, upper: float = 1.0, confidence: float = 0.95,
                    breaks: int = 1000, population: int | None = None) -> SequentialInterval:
    """The confidence sequence of the mean of ``x`` read after its last value (:func:`betting_confidence_sequence`).

    With no observation the interval is the whole range ``[lower, upper]``. With
    ``population`` the mean bounded is that of the ``N`` values ``x`` is drawn from
    without replacement.

    Examples
    --------
    >>> res = sequential_mean([1, 0, 0, 1, 0, 0, 0, 1, 0, 0] * 4)
    >>> res.n, round(res.estimate, 2), res.ci[0] < res.estimate < res.ci[1]
    (40, 0.3, True)
    """
    low, high = betting_confidence_sequence(x, lower=lower, upper=upper, confidence=confidence, breaks=breaks,
                                            population=population)
    values = np.asarray(x, dtype=np.float64).ravel()
    method = METHOD if population is None else FINITE_METHOD.format(population=population)
    if len(values) == 0:
        return SequentialInterval(0, math.nan, (float(lower), float(upper)), method, confidence, population)
    return SequentialInterval(len(values), float(values.mean()), (float(low[-1]), float(high[-1])), method,
                              confidence, population)
