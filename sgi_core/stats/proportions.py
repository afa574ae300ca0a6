"""Proportions and their differences: one interval of a proportion, Newcombe's intervals of a difference, and
the keys a paired difference still needs.

Labels given to :func:`as_halluc` are **1 = hallucinated**, 0 = not, NaN = unlabelled (a rate of
hallucination is counted). Intervals: Wilson (1927) for one proportion (and the others scipy
computes), Newcombe's (1998) hybrid score ("square-and-add") interval, built from the two Wilson
intervals, for a difference. The two runs' rates built on them live in :mod:`sgi_core.runs.rates`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.checks import check_fraction, check_int


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


#: The methods of :func:`proportion_ci`, as scipy's ``BinomTestResult.proportion_ci`` names them.
PROPORTION_CI_METHODS = ("wilson", "wilsoncc", "exact")


def proportion_ci(count, nobs, *, confidence: float = 0.95, method: str = "wilson") -> tuple[float, float]:
    """Confidence interval of the proportion ``count / nobs`` (statsmodels' ``proportion_confint`` shape).

    Computed by scipy (``binomtest(count, nobs).proportion_ci``). ``method``: ``"wilson"``, the
    Wilson (1927) score interval,
    ``(p + z^2 / (2n) -/+ z sqrt(p (1 - p) / n + z^2 / (4 n^2))) / (1 + z^2 / n)`` with ``p = count / n``
    and ``z`` the standard normal quantile at ``(1 + confidence) / 2``; ``"wilsoncc"``, the same with
    Newcombe's (1998) continuity correction; ``"exact"``, Clopper and Pearson (1934).

    Returns
    -------
    (float, float)
        ``(nan, nan)`` with a warning when ``nobs`` is 0.

    Examples
    --------
    >>> [round(x, 4) for x in proportion_ci(8, 10)]
    [0.4902, 0.9433]
    >>> [round(x, 4) for x in proportion_ci(8, 10, method="exact")]
    [0.4439, 0.9748]
    """
    nobs = check_int(nobs, "nobs", "proportion_ci", minimum=0)
    count = check_int(count, "count", "proportion_ci", minimum=0)
    confidence = check_fraction(confidence, "confidence", "proportion_ci")
    if method not in PROPORTION_CI_METHODS:
        raise SGIInputError(f"The 'method' parameter of proportion_ci must be one of {PROPORTION_CI_METHODS}. "
                            f"Got {method!r} instead.")
    if count > nobs:
        raise SGIInputError(f"proportion_ci needs count <= nobs. Got count={count}, nobs={nobs} instead.")
    if nobs == 0:
        warn_undefined("the interval of a proportion is undefined with nobs = 0")
        return (math.nan, math.nan)
    ci = stats.binomtest(count, nobs).proportion_ci(confidence_level=confidence, method=method)
    return (float(ci.low), float(ci.high))


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
    l_base, u_base = proportion_ci(x_base, n_base, confidence=confidence)
    l_new, u_new = proportion_ci(x_new, n_new, confidence=confidence)
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
    l_base, u_base = proportion_ci(x_base, n, confidence=confidence)
    l_new, u_new = proportion_ci(x_new, n, confidence=confidence)
    p_base, p_new = x_base / n, x_new / n
    margins = float(x_base) * (n - x_base) * x_new * (n - x_new)
    b = float(n_both) * n_neither - float(n_base_only) * n_new_only
    phi = 0.0 if margins == 0 else (max(b - n / 2.0, 0.0) if b > 0 else b) / math.sqrt(margins)
    d = p_new - p_base
    dl_new, du_new, dl_base, du_base = p_new - l_new, u_new - p_new, p_base - l_base, u_base - p_base
    return (d - math.sqrt(max(dl_new ** 2 - 2 * phi * dl_new * du_base + du_base ** 2, 0.0)),
            d + math.sqrt(max(du_new ** 2 - 2 * phi * du_new * dl_base + dl_base ** 2, 0.0)))


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
