"""Two scores on the same rows: DeLong's test, McNemar's test and the rows where they disagree.

Both scores are oriented **higher = grounded** (orient a detector first); AUROCs have grounded as
the positive class; a row is flagged hallucinated when its score is below the threshold.
Only rows labelled and scored by both are used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.checks import as_labels, as_scores, check_fraction, check_int


@dataclass(frozen=True)
class DeLongResult(JsonResult):
    """DeLong's test of ``AUROC(a) - AUROC(b)`` on the same rows.

    Attributes
    ----------
    auroc_a, auroc_b : float
    difference : float
        ``auroc_a - auroc_b``.
    se : float
        Standard error of the difference.
    z, p_value : float
        ``z = difference / se``; two-sided normal p-value.
    ci : (float, float)
        Normal interval ``difference +/- z_(1 - alpha/2) * se``.
    n_pos, n_neg : int
        Grounded and hallucinated rows used.
    n_excluded : int
    """

    auroc_a: float
    auroc_b: float
    difference: float
    se: float
    z: float
    p_value: float
    ci: tuple[float, float]
    n_pos: int
    n_neg: int
    n_excluded: int


def _paired_rows(y_true, score_a, score_b):
    labels = as_labels(y_true)
    a = as_scores(score_a, name="score_a", n=len(labels))
    b = as_scores(score_b, name="score_b", n=len(labels))
    keep = ~(np.isnan(labels) | np.isnan(a) | np.isnan(b))
    return labels[keep], a[keep], b[keep], int((~keep).sum())


def delong_components(pos: np.ndarray, neg: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """AUROC and DeLong's structural components by the midrank method of Sun & Xu (2014).

    With ``T_z`` the midranks of the pooled scores, ``T_x`` those among the ``m``
    grounded scores and ``T_y`` among the ``n`` hallucinated ones:
    ``V10_i = (T_z(x_i) - T_x(x_i)) / n`` (share of hallucinated rows that grounded row
    ``i`` beats, ties 1/2), ``V01_j = 1 - (T_z(y_j) - T_y(y_j)) / m``, and
    ``AUROC = mean(V10) = mean(V01)``.

    Examples
    --------
    >>> auc, v10, v01 = delong_components(np.array([0.9, 0.4]), np.array([0.5, 0.1]))
    >>> auc, v10.tolist(), v01.tolist()
    (0.75, [1.0, 0.5], [0.5, 1.0])
    """
    m, n = len(pos), len(neg)
    t_z = stats.rankdata(np.concatenate([pos, neg]))
    v10 = (t_z[:m] - stats.rankdata(pos)) / n
    v01 = 1.0 - (t_z[m:] - stats.rankdata(neg)) / m
    return float(v10.mean()), v10, v01


def delong_test(y_true, score_a, score_b, *, confidence: float = 0.95) -> DeLongResult:
    """DeLong, DeLong & Clarke-Pearson (1988) test of two correlated AUROCs.

    ``S10`` and ``S01`` are the 2x2 sample covariances (ddof=1) of the structural
    components ``V10`` (over grounded rows) and ``V01`` (over hallucinated rows) of the
    two scores (:func:`delong_components`); ``Var(A - B) = c' (S10 / m + S01 / n) c`` with
    ``c = (1, -1)``. ``z = (A - B) / sqrt(Var)``, p from the standard normal.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled (left out).
    score_a, score_b : array_like of shape (n,)
        Two scores of the same rows, higher = grounded; rows where either is NaN are left out.
    confidence : float, default 0.95

    Returns
    -------
    DeLongResult
        NaN with a warning with fewer than 2 rows of a class, or a zero variance
        (identical or perfectly separating scores).

    Examples
    --------
    >>> res = delong_test([1, 1, 1, 0, 0, 0], [3, 2, 5, 1, 4, 0], [3, 1, 4, 2, 5, 0])
    >>> round(res.auroc_a, 4), round(res.auroc_b, 4), round(res.p_value, 4)
    (0.7778, 0.5556, 0.1573)
    """
    confidence = check_fraction(confidence, "confidence", "delong_test")
    labels, a, b, n_excluded = _paired_rows(y_true, score_a, score_b)
    pos, neg = labels == 1.0, labels == 0.0
    m, n = int(pos.sum()), int(neg.sum())
    nan_pair = (math.nan, math.nan)
    if m < 2 or n < 2:
        warn_undefined(f"DeLong's test needs at least 2 rows of each class; got {m} grounded and {n} hallucinated")
        return DeLongResult(math.nan, math.nan, math.nan, math.nan, math.nan, math.nan, nan_pair, m, n, n_excluded)
    auc_a, v10_a, v01_a = delong_components(a[pos], a[neg])
    auc_b, v10_b, v01_b = delong_components(b[pos], b[neg])
    s10 = np.cov(np.vstack([v10_a, v10_b]), ddof=1)
    s01 = np.cov(np.vstack([v01_a, v01_b]), ddof=1)
    contrast = np.array([1.0, -1.0])
    variance = float(contrast @ (s10 / m + s01 / n) @ contrast)
    diff = auc_a - auc_b
    if not variance > 0:
        warn_undefined("DeLong's test is undefined: the AUROC difference has zero variance")
        return DeLongResult(auc_a, auc_b, diff, 0.0, math.nan, math.nan, nan_pair, m, n, n_excluded)
    se = math.sqrt(variance)
    z = diff / se
    half = float(stats.norm.ppf(0.5 + confidence / 2.0)) * se
    return DeLongResult(auc_a, auc_b, diff, se, z, float(2.0 * stats.norm.sf(abs(z))), (diff - half, diff + half),
                        m, n, n_excluded)


@dataclass(frozen=True)
class McNemarResult(JsonResult):
    """McNemar's test of two detectors' correctness at fixed thresholds.

    Attributes
    ----------
    threshold_a, threshold_b : float
        Each flags ``score < threshold`` as hallucinated.
    both_right, a_only_right, b_only_right, both_wrong : int
        The paired 2x2 table of correct decisions against the labels.
    accuracy_a, accuracy_b : float
    statistic : float
        ``a_only_right`` for the exact test; the chi-square statistic otherwise.
    p_value : float
    method : {"exact", "chi2"}
    """

    threshold_a: float
    threshold_b: float
    both_right: int
    a_only_right: int
    b_only_right: int
    both_wrong: int
    accuracy_a: float
    accuracy_b: float
    statistic: float
    p_value: float
    method: str


def mcnemar_test(y_true, score_a, score_b, threshold_a: float, threshold_b: float, *,
                 exact: bool = True) -> McNemarResult:
    """McNemar's test on the rows one detector gets right and the other wrong.

    A decision is right when a flagged row (``score < threshold``) is hallucinated or
    an unflagged row is grounded. With ``b = a_only_right`` and ``c = b_only_right``:

    * exact: two-sided binomial test of ``b`` out of ``b + c`` at p = 1/2
      (:func:`scipy.stats.binomtest`);
    * chi2: ``(|b - c| - 1)**2 / (b + c)`` with continuity correction, 1 degree of freedom.

    Examples
    --------
    >>> res = mcnemar_test([0, 0, 1, 1, 0, 1], [0.1, 0.2, 0.8, 0.9, 0.3, 0.7], [0.6, 0.7, 0.8, 0.2, 0.3, 0.7], 0.5, 0.5)
    >>> res.both_right, res.a_only_right, res.b_only_right, res.both_wrong, res.p_value
    (3, 3, 0, 0, 0.25)
    """
    for name, value in (("threshold_a", threshold_a), ("threshold_b", threshold_b)):
        if not np.isfinite(value):
            raise SGIInputError(
                f"The '{name}' parameter of mcnemar_test must be a finite number. Got {value!r} instead.")
    labels, a, b, _ = _paired_rows(y_true, score_a, score_b)
    right_a = (a < threshold_a) == (labels == 0.0)
    right_b = (b < threshold_b) == (labels == 0.0)
    table = [int(np.sum(right_a & right_b)), int(np.sum(right_a & ~right_b)), int(np.sum(~right_a & right_b)),
             int(np.sum(~right_a & ~right_b))]
    only_a, only_b = table[1], table[2]
    accuracy = (float(right_a.mean()), float(right_b.mean())) if len(labels) else (math.nan, math.nan)
    method = "exact" if exact else "chi2"
    if only_a + only_b == 0:
        warn_undefined("McNemar's test is undefined: no row is decided differently by the two detectors")
        statistic, p_value = math.nan, math.nan
    elif exact:
        statistic, p_value = float(only_a), float(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue)
    else:
        statistic = (abs(only_a - only_b) - 1.0) ** 2 / (only_a + only_b)
        p_value = float(stats.chi2.sf(statistic, df=1))
    return McNemarResult(float(threshold_a), float(threshold_b), *table, *accuracy, statistic, p_value, method)


@dataclass(frozen=True)
class Disagreements(JsonResult):
    """Rows where two scores disagree most, most first.

    Attributes
    ----------
    positions : tuple of int
        0-based row positions in the input.
    rank_a, rank_b : tuple of float
        Each score's percentile rank in (0, 1] among the rows scored by both
        (average ranks for ties, divided by the row count).
    gap : tuple of float
        ``rank_a - rank_b``: positive where ``a`` finds the row more grounded than ``b``.
    """

    positions: tuple[int, ...]
    rank_a: tuple[float, ...]
    rank_b: tuple[float, ...]
    gap: tuple[float, ...]


def disagreements(data, score_a, score_b, *, n: int = 20) -> Disagreements:
    """The ``n`` rows where two scores' percentile ranks differ most.

    Scores on different scales (SGI around 1, a judge's 0-1 probability) are compared
    through their ranks, so only their order matters. Ties in ``|gap|`` keep row order.

    Parameters
    ----------
    data : DataFrame or None
        With a DataFrame, ``score_a`` and ``score_b`` are column names; with None,
        they are arrays.
    score_a, score_b : str or array_like of shape (n,)
        Higher = grounded; NaN rows are left out.
    n : int, default 20

    Returns
    -------
    Disagreements

    Examples
    --------
    >>> res = disagreements(None, [0.1, 0.5, 0.9, 0.3], [0.2, 0.6, 0.1, 0.4], n=2)
    >>> res.positions, res.gap
    ((2, 0), (0.75, -0.25))
    """
    n = check_int(n, "n", "disagreements", minimum=1)
    if isinstance(data, pd.DataFrame):
        for column in (score_a, score_b):
            if column not in data.columns:
                raise SGIInputError(f"column '{column}' is not in the table", column=str(column),
                                    hint=f"Columns present: {', '.join(map(str, data.columns))}")
        score_a, score_b = data[score_a].to_numpy(), data[score_b].to_numpy()
    elif data is not None:
        raise SGIInputError("disagreements needs a DataFrame with column names, or data=None with two arrays")
    a = as_scores(score_a, name="score_a")
    b = as_scores(score_b, name="score_b", n=len(a))
    rows = np.flatnonzero(~(np.isnan(a) | np.isnan(b)))
    rank_a = stats.rankdata(a[rows]) / len(rows) if len(rows) else np.zeros(0)
    rank_b = stats.rankdata(b[rows]) / len(rows) if len(rows) else np.zeros(0)
    gap = rank_a - rank_b
    order = np.argsort(-np.abs(gap), kind="stable")[:n]
    return Disagreements(tuple(rows[order].tolist()), tuple(rank_a[order].tolist()), tuple(rank_b[order].tolist()),
                         tuple(gap[order].tolist()))
