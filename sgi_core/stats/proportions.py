"""Hallucination rates of two runs from labels: their difference, its interval and test, and keys still needed.

Labels here are **1 = hallucinated**, 0 = not, NaN = unlabelled (the opposite of ``y_true``
elsewhere: a rate of hallucination is compared). The difference is always
``rate_new - rate_base``: positive when the new run hallucinates more.

Intervals: Wilson (1927) for one rate, Newcombe's (1998) hybrid score ("square-and-add")
interval, built from the two Wilson intervals, for a difference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.checks import check_fraction, check_int


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


def as_halluc(values, name: str, *, base_length: int | None = None) -> np.ndarray:
    """Labels (1 = hallucinated, 0, NaN) as float64, those of a second run on the same keys with ``base_length``."""
    try:
        labels = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise SGIInputError(f"'{name}' must hold numbers 1 (hallucinated), 0 (not hallucinated) or NaN (unlabelled)",
                            column=name) from None
    bad = ~(np.isnan(labels) | (labels == 0.0) | (labels == 1.0))
    if bad.any():
        raise SGIInputError(f"'{name}' holds values other than 1 (hallucinated), 0 (not hallucinated) or NaN "
                            "(unlabelled)", column=name, rows=(np.flatnonzero(bad) + 1).tolist(),
                            hint="Here 1 means hallucinated: use 1 - y_true when the labels say 1 = grounded")
    if base_length is not None and len(labels) != base_length:
        raise SGIInputError(f"'{name}' has {len(labels)} values but 'halluc_base' has {base_length}", column=name,
                            hint="Match the two runs on their keys first")
    return labels


def wilson_interval(successes, n, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson (1927) score interval of the proportion ``successes / n``.

    ``(p + z^2 / (2n) -/+ z sqrt(p (1 - p) / n + z^2 / (4 n^2))) / (1 + z^2 / n)`` with
    ``p = successes / n`` and ``z`` the standard normal quantile at ``(1 + confidence) / 2``.

    Returns
    -------
    (float, float)
        ``(nan, nan)`` with a warning when ``n`` is 0.

    Examples
    --------
    >>> [round(x, 4) for x in wilson_interval(8, 10)]
    [0.4902, 0.9433]
    """
    n = check_int(n, "n", "wilson_interval", minimum=0)
    successes = check_int(successes, "successes", "wilson_interval", minimum=0)
    confidence = check_fraction(confidence, "confidence", "wilson_interval")
    if successes > n:
        raise SGIInputError(f"wilson_interval needs successes <= n. Got successes={successes}, n={n} instead.")
    if n == 0:
        warn_undefined("the Wilson interval of a proportion is undefined with n = 0")
        return (math.nan, math.nan)
    z2 = float(stats.norm.ppf(0.5 + confidence / 2.0)) ** 2
    centre = (successes + z2 / 2.0) / (n + z2)
    half = math.sqrt(z2) / (n + z2) * math.sqrt(successes * (n - successes) / n + z2 / 4.0)
    return (max(centre - half, 0.0), min(centre + half, 1.0))


def unpaired_difference_ci(x_base: int, n_base: int, x_new: int, n_new: int, *,
                           confidence: float = 0.95) -> tuple[float, float]:
    """Newcombe (1998, independent proportions, method 10) interval of ``x_new/n_new - x_base/n_base``.

    With Wilson intervals ``(l, u)`` of each rate ``p``:
    ``L = d - sqrt((p_new - l_new)^2 + (u_base - p_base)^2)``,
    ``U = d + sqrt((u_new - p_new)^2 + (p_base - l_base)^2)``.

    Examples
    --------
    >>> [round(x, 4) for x in unpaired_difference_ci(48, 80, 56, 70)]  # Newcombe's example (a)
    [0.0524, 0.3339]
    """
    l_base, u_base = wilson_interval(x_base, n_base, confidence=confidence)
    l_new, u_new = wilson_interval(x_new, n_new, confidence=confidence)
    p_base, p_new = x_base / n_base, x_new / n_new
    d = p_new - p_base
    return (d - math.hypot(p_new - l_new, u_base - p_base), d + math.hypot(u_new - p_new, p_base - l_base))


def paired_difference_ci(n_both: int, n_base_only: int, n_new_only: int, n_neither: int, *,
                         confidence: float = 0.95) -> tuple[float, float]:
    """Newcombe (1998, paired proportions, method 10) interval of ``rate_new - rate_base`` on matched keys.

    With ``n`` keys, rates ``p_new = (both + new_only) / n`` and ``p_base = (both +
    base_only) / n``, their Wilson intervals ``(l, u)`` and ``d = p_new - p_base``:
    ``L = d - sqrt(dl_new^2 - 2 phi dl_new du_base + du_base^2)``,
    ``U = d + sqrt(du_new^2 - 2 phi du_new dl_base + dl_base^2)`` where ``dl = p - l``,
    ``du = u - p``. ``phi`` is the correlation of the 2x2 table with Newcombe's
    correction: with ``B = both * neither - base_only * new_only``, ``B`` is replaced by
    ``max(B - n/2, 0)`` when ``B > 0``; ``phi = 0`` when a margin is empty.

    Examples
    --------
    >>> [round(x, 4) for x in paired_difference_ci(59, 16, 6, 80)]  # Cavo et al. in Fagerland et al. (2017), ch. 8
    [-0.1186, -0.0046]
    """
    n = n_both + n_base_only + n_new_only + n_neither
    x_base, x_new = n_both + n_base_only, n_both + n_new_only
    l_base, u_base = wilson_interval(x_base, n, confidence=confidence)
    l_new, u_new = wilson_interval(x_new, n, confidence=confidence)
    p_base, p_new = x_base / n, x_new / n
    margins = float(x_base) * (n - x_base) * x_new * (n - x_new)
    b = float(n_both) * n_neither - float(n_base_only) * n_new_only
    phi = 0.0 if margins == 0 else (max(b - n / 2.0, 0.0) if b > 0 else b) / math.sqrt(margins)
    d = p_new - p_base
    dl_new, du_new, dl_base, du_base = p_new - l_new, u_new - p_new, p_base - l_base, u_base - p_base
    return (d - math.sqrt(max(dl_new ** 2 - 2 * phi * dl_new * du_base + du_base ** 2, 0.0)),
            d + math.sqrt(max(du_new ** 2 - 2 * phi * du_new * dl_base + dl_base ** 2, 0.0)))


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


@dataclass(frozen=True)
class KeysToDecide(JsonResult):
    """How many more keys, labelled in both runs, a paired difference of size ``effect`` needs.

    Attributes
    ----------
    n_needed : int
        Connor's (1987) total sample size; -1 when it cannot be estimated.
    n_more : int
        ``min(max(n_needed - n_labelled, 0), n_left)``; -1 when it cannot be estimated.
    capped : bool
        True when more keys are needed than ``n_left`` remain.
    discordance : float
        ``psi`` used: ``max(observed discordance rate, effect)``.
    effect, power, alpha : float
    """

    n_needed: int
    n_more: int
    capped: bool
    discordance: float
    effect: float
    power: float
    alpha: float


def keys_to_decide(n_base_only: int, n_new_only: int, n_labelled: int, *, effect: float, n_left: int,
                   power: float = 0.8, alpha: float = 0.05) -> KeysToDecide:
    """Keys labelled in both runs needed for McNemar's test to detect a rate difference of ``effect``.

    Connor (1987): ``n = (z_(1-alpha/2) sqrt(psi) + z_power sqrt(psi - effect^2))^2 / effect^2``
    where ``psi`` is the probability that a key is discordant (hallucinated in one run
    only), estimated as ``(n_base_only + n_new_only) / n_labelled`` and raised to
    ``effect`` when below it (``|rate_new - rate_base| <= psi`` always). The answer
    assumes new keys are like the labelled ones. Connor's n is for the normal-approximation
    test; the exact McNemar test is conservative (power 0.76 for 0.8 asked in the tests).

    Parameters
    ----------
    n_base_only, n_new_only : int
        Discordant keys so far (``base_only`` / ``new_only`` of :class:`RateDifference`).
    n_labelled : int
        Keys labelled in both runs so far.
    effect : float in (0, 1)
        Size of ``|rate_new - rate_base|`` to detect.
    n_left : int
        Keys that could still be labelled; ``n_more`` never exceeds it.
    power, alpha : float in (0, 1)

    Returns
    -------
    KeysToDecide
        -1 counts and a NaN discordance, with a warning, when nothing is labelled yet.

    References
    ----------
    Connor, R. J. (1987). Sample size for testing differences in proportions for the
    paired-sample design. Biometrics 43, 207-211.

    Examples
    --------
    >>> res = keys_to_decide(6, 2, 40, effect=0.1, n_left=500)
    >>> res.n_needed, res.n_more, res.capped
    (155, 115, False)
    """
    func = "keys_to_decide"
    n_base_only, n_new_only, n_labelled, n_left = (
        check_int(value, name, func, minimum=0) for value, name in
        ((n_base_only, "n_base_only"), (n_new_only, "n_new_only"), (n_labelled, "n_labelled"), (n_left, "n_left")))
    effect = check_fraction(effect, "effect", func)
    power, alpha = check_fraction(power, "power", func), check_fraction(alpha, "alpha", func)
    if n_base_only + n_new_only > n_labelled:
        raise SGIInputError(f"{func} needs n_base_only + n_new_only <= n_labelled. Got {n_base_only} + {n_new_only} "
                            f"> {n_labelled} instead.")
    if n_labelled == 0:
        warn_undefined("the keys needed are undefined: no key is labelled in both runs yet")
        return KeysToDecide(-1, -1, False, math.nan, effect, power, alpha)
    psi = max((n_base_only + n_new_only) / n_labelled, effect)
    root = stats.norm.ppf(1 - alpha / 2) * math.sqrt(psi) + stats.norm.ppf(power) * math.sqrt(psi - effect ** 2)
    # The tolerance keeps float noise in an exact integer answer from adding a key.
    needed = int(math.ceil(root ** 2 / effect ** 2 - 1e-9))
    more = max(needed - n_labelled, 0)
    return KeysToDecide(needed, min(more, n_left), more > n_left, psi, effect, power, alpha)
