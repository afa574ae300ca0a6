"""Agreement of two sets of labels on the same rows: Cohen's kappa with its asymptotic interval.

Two annotators, or a judge and the file's labels, agree by chance on much of a skewed label set;
kappa (Cohen 1960) counts only the agreement beyond chance (:func:`cohens_kappa` gives the formula
and the interval).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.bootstrap import normal_interval
from sgi_core.stats.checks import check_fraction
from sgi_core.stats.proportions import proportion_ci

#: Disagreements below which the kappa interval is never narrower than what ``p_o``'s Wilson interval bounds.
MIN_DISAGREEMENTS = 5


@dataclass(frozen=True)
class KappaResult(JsonResult):
    """Cohen's kappa of two raters, its interval, and where they disagree.

    Attributes
    ----------
    kappa : float
        NaN when fewer than 2 rows are rated by both, or when both raters give one
        and the same label to every row (``p_e = 1``).
    kappa_ci : tuple of float
    observed_agreement : float
        ``p_o``.
    chance_agreement : float
        ``p_e``.
    n : int
        Rows rated by both.
    n_disagree : int
    n_excluded : int
        Rows left out because one label is missing.
    disagree_rows : tuple of int
        0-based positions of the rows rated by both with different labels.
    confidence : float
    """

    kappa: float
    kappa_ci: tuple[float, float]
    observed_agreement: float
    chance_agreement: float
    n: int
    n_disagree: int
    n_excluded: int
    disagree_rows: tuple[int, ...]
    confidence: float = 0.95


def kappa_variance(table: np.ndarray) -> tuple[float, float, float]:
    """Kappa, ``p_e`` and the Fleiss-Cohen-Everitt large-sample variance from a square count table.

    ``table[i, j]`` counts rows rater A put in class ``i`` and rater B in class ``j``.

    Examples
    --------
    >>> k, p_e, var = kappa_variance(np.array([[20, 5], [10, 15]]))
    >>> round(k, 4), round(p_e, 4), round(var, 5)
    (0.4, 0.5, 0.01613)
    """
    n = table.sum()
    p = table / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    p_o, p_e = float(np.trace(p)), float(rows @ cols)
    kappa = (p_o - p_e) / (1.0 - p_e)
    a = float(np.sum(np.diag(p) * (1.0 - (rows + cols) * (1.0 - kappa)) ** 2))
    off = ~np.eye(len(p), dtype=bool)
    b = (1.0 - kappa) ** 2 * float(np.sum(p[off] * (cols[:, None] + rows[None, :])[off] ** 2))
    c = (kappa - p_e * (1.0 - kappa)) ** 2
    return float(kappa), p_e, float(max(a + b - c, 0.0) / (n * (1.0 - p_e) ** 2))


def cohens_kappa(labels_a, labels_b, *, confidence: float = 0.95) -> KappaResult:
    """Cohen's kappa of two label arrays (any category codes; NaN = not rated) with its interval.

    The point is :func:`sklearn.metrics.cohen_kappa_score`; the interval uses
    :func:`kappa_variance` (Fleiss, Cohen & Everitt 1969).

    Notes
    -----
    Cohen (1960): ``kappa = (p_o - p_e) / (1 - p_e)``, with ``p_o`` the share of rows both
    raters label alike and ``p_e = sum_k p_k. * p_.k`` the share expected by chance from
    each rater's own label frequencies. 1 = perfect agreement, 0 = chance, below 0 = worse
    than chance. The interval is ``kappa -/+ z * SE`` with the large-sample variance of
    Fleiss, Cohen & Everitt (1969), clipped to [-1, 1]:

        Var = (A + B - C) / (n (1 - p_e)^2)
        A = sum_i p_ii (1 - (p_i. + p_.i)(1 - kappa))^2
        B = (1 - kappa)^2 sum_{i != j} p_ij (p_.i + p_j.)^2
        C = (kappa - p_e (1 - kappa))^2

    Rows where either label is missing (NaN) are left out and counted.

    With fewer than :data:`MIN_DISAGREEMENTS` disagreements the large-sample variance
    collapses (to 0 at perfect agreement), so the interval is widened to the hull of it and
    the Wilson (1927) interval of ``p_o`` carried to kappa at the observed ``p_e``:
    ``((l - p_e) / (1 - p_e), (u - p_e) / (1 - p_e))``.

    Examples
    --------
    >>> r = cohens_kappa([1, 1, 0, 0, 1, float("nan")], [1, 0, 0, 0, 1, 1])
    >>> round(r.kappa, 4), r.n, r.n_excluded, r.disagree_rows
    (0.6154, 5, 1, (1,))
    """
    confidence = check_fraction(confidence, "confidence", "cohens_kappa")
    a, b = np.asarray(labels_a, dtype=np.float64), np.asarray(labels_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise SGIInputError(f"cohens_kappa needs two label arrays of one length; got shapes {a.shape} and {b.shape}")
    rated = ~np.isnan(a) & ~np.isnan(b)
    disagree = tuple(int(i) for i in np.flatnonzero(rated & (a != b)))
    n, excluded = int(rated.sum()), int((~rated).sum())
    nan = float("nan")
    if n < 2:
        warn_undefined(f"Cohen's kappa needs at least 2 rows rated by both; got {n}")
        return KappaResult(nan, (nan, nan), nan, nan, n, len(disagree), excluded, disagree, confidence)
    a, b = a[rated], b[rated]
    classes = np.union1d(a, b)
    if len(classes) < 2:
        warn_undefined("Cohen's kappa is undefined when both raters give every row the same label (chance "
                       "agreement is 1)")
        return KappaResult(nan, (nan, nan), 1.0, 1.0, n, len(disagree), excluded, disagree, confidence)
    table = confusion_matrix(a, b, labels=classes).astype(np.float64)
    p_o = float(np.trace(table) / n)
    _, p_e, variance = kappa_variance(table)
    kappa = float(cohen_kappa_score(a, b, labels=classes))
    interval = normal_interval(kappa, variance, confidence, bounds=(-1.0, 1.0)) if math.isfinite(kappa) else (nan, nan)
    if math.isfinite(kappa) and len(disagree) < MIN_DISAGREEMENTS:
        low, high = (max((bound - p_e) / (1.0 - p_e), -1.0)
                     for bound in proportion_ci(n - len(disagree), n, confidence=confidence))
        interval = (min(interval[0], low), max(interval[1], min(high, 1.0)))
    return KappaResult(kappa, interval, p_o, p_e, n, len(disagree), excluded, disagree, confidence)
