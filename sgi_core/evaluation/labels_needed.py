"""How many labelled rows an AUROC interval of a chosen half-width needs, from the labels so far.

Labelling costs people's time, so the Review page says how many more labels a target half-width
takes, from DeLong's variance of the AUROC estimated on the labels so far (:func:`labels_needed`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.checks import check_fraction, check_int, labelled_groups
from sgi_core.stats.paired import delong_components


@dataclass(frozen=True)
class LabelsNeeded(JsonResult):
    """The labelled rows an AUROC interval of half-width ``target_half_width`` needs.

    Attributes
    ----------
    auroc : float
    half_width : float
        DeLong half-width on the ``n_labelled`` rows so far.
    target_half_width : float
    n_labelled, n_grounded, n_hallucinated : int
    n_needed : int
        ``N*``; -1 when it cannot be estimated (NaN statistics).
    n_more : int
        ``min(max(N* - n_labelled, 0), n_left)``; -1 when it cannot be estimated.
    confidence : float
    n_left : int
        Rows left to label; -1 when not given (no cap).
    capped : bool
        ``N* - n_labelled`` is more than the rows left: labelling every one of them
        falls short of the target.
    half_width_all : float
        The half-width with every row left labelled, ``w(n_labelled + n_left)``; NaN without ``n_left``.
    """

    auroc: float
    half_width: float
    target_half_width: float
    n_labelled: int
    n_grounded: int
    n_hallucinated: int
    n_needed: int
    n_more: int
    confidence: float = 0.95
    n_left: int = -1
    capped: bool = False
    half_width_all: float = float("nan")


def labels_needed(y_true, y_score, *, target_half_width: float = 0.05, confidence: float = 0.95,
                  n_left: int | None = None) -> LabelsNeeded:
    """Labelled rows needed for an AUROC interval of half-width ``target_half_width`` (see the module).

    ``n_left``, the rows left to label, caps ``n_more`` (see the module); ``None`` sets no cap.

    Each class needs at least 2 labelled rows with a score; otherwise the counts are
    -1 and the statistics NaN, with a warning. When every grounded row outranks every
    hallucinated one the variance estimate is 0 and one more row is never asked for.

    Notes
    -----
    DeLong (1988): ``Var(AUROC) = s10^2 / m + s01^2 / n`` for ``m`` grounded and ``n``
    hallucinated rows (:func:`~sgi_core.stats.ranking.delong_ci`). At a fixed share
    ``pi = m / N`` of grounded rows among ``N`` labelled ones this is ``V1 / N`` with
    ``V1 = s10^2 / pi + s01^2 / (1 - pi)``, so the normal interval's half-width is
    ``w(N) = z * sqrt(V1 / N)`` and a target half-width ``w*`` needs

        N* = ceil(z^2 * V1 / w*^2)

    labelled rows, assuming the new labels come from the same rows as the old ones (same
    class balance, same score distributions). The structural components' variances are
    estimated on the labels so far, so a small first sample gives a rough answer.

    No more rows can be asked for than are left to label: with ``n_left`` rows left the
    answer is capped there, and the half-width all of them would give, ``w(n + n_left)``,
    is reported beside it.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.r_[np.ones(100), np.zeros(100)]
    >>> r = labels_needed(y, rng.normal(y, 1.0), target_half_width=0.03)
    >>> r.n_labelled, r.n_needed > r.n_labelled
    (200, True)
    >>> capped = labels_needed(y, rng.normal(y, 1.0), target_half_width=0.01, n_left=50)
    >>> capped.n_more, capped.capped, capped.half_width_all < capped.half_width
    (50, True, True)
    """
    target = check_fraction(target_half_width, "target_half_width", "labels_needed")
    confidence = check_fraction(confidence, "confidence", "labels_needed")
    left = -1 if n_left is None else check_int(n_left, "n_left", "labels_needed", minimum=0)
    valid, halluc, _ = labelled_groups(y_true, y_score)
    m, n = len(valid), len(halluc)
    nan = float("nan")
    if m < 2 or n < 2:
        warn_undefined(f"the labels needed need 2 labelled rows of each class; got {m} grounded and {n} hallucinated")
        return LabelsNeeded(nan, nan, target, m + n, m, n, -1, -1, confidence, left)
    auc, v10, v01 = delong_components(valid, halluc)
    total = m + n
    share = m / total
    per_row = float(np.var(v10, ddof=1) / share + np.var(v01, ddof=1) / (1.0 - share))
    z = float(stats.norm.ppf((1.0 + confidence) / 2.0))
    half_width = z * math.sqrt(per_row / total)
    needed = int(math.ceil(z * z * per_row / (target * target)))
    more = max(needed - total, 0)
    if left < 0:
        return LabelsNeeded(auc, half_width, target, total, m, n, needed, more, confidence)
    return LabelsNeeded(auc, half_width, target, total, m, n, needed, min(more, left), confidence, left, more > left,
                        z * math.sqrt(per_row / (total + left)))
