"""Flagging rows as hallucinated below a score threshold, and choosing the threshold.

A row is **flagged** (predicted hallucinated) when ``score < threshold``. The
detector's positive class is *hallucinated*:

* TP = flagged and hallucinated, FP = flagged and grounded,
  TN = not flagged and grounded, FN = not flagged and hallucinated;
* precision = TP / (TP + FP): share of flagged rows that are hallucinated;
* recall = TP / (TP + FN): share of hallucinated rows that are flagged;
* F1 = 2 TP / (2 TP + FP + FN); accuracy = (TP + TN) / labelled rows;
* flag_rate = flagged / scored rows (unlabelled rows included: the share of
  traffic a reviewer would see).

Counts use labelled, scored rows; a ratio with a zero denominator is NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.checks import as_labels, as_scores, check_choice, check_int, validates_inputs

CHOICE_METHODS = ("youden", "target_recall", "target_precision", "cost")


@dataclass(frozen=True)
class ThresholdMetrics(JsonResult):
    """Confusion counts and rates of flagging ``score < threshold`` (hallucinated positive)."""

    threshold: float
    tp: int
    fp: int
    tn: int
    fn: int
    precision: float
    recall: float
    f1: float
    flag_rate: float
    accuracy: float
    n_flagged: int
    n_scored: int


def _ratio(num, den):
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / den, np.nan)


def _prepare(y_true, score) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    labels = as_labels(y_true)
    scores = as_scores(score, n=len(labels))
    scored = ~np.isnan(scores)
    return np.sort(scores[scored & (labels == 1.0)]), np.sort(scores[scored & (labels == 0.0)]), np.sort(scores[scored])


def _metrics_frame(valid: np.ndarray, halluc: np.ndarray, scored: np.ndarray, thresholds: np.ndarray) -> pd.DataFrame:
    tp = np.searchsorted(halluc, thresholds, side="left")
    fp = np.searchsorted(valid, thresholds, side="left")
    n_flagged = np.searchsorted(scored, thresholds, side="left")
    fn = len(halluc) - tp
    tn = len(valid) - fp
    return pd.DataFrame(
        {
            "threshold": thresholds,
            "tp": tp,
            "fp": fp,
            "tn": tn,
            "fn": fn,
            "precision": _ratio(tp, tp + fp),
            "recall": _ratio(tp, len(halluc)),
            "f1": _ratio(2 * tp, 2 * tp + fp + fn),
            "flag_rate": _ratio(n_flagged, len(scored)),
            "accuracy": _ratio(tp + tn, len(valid) + len(halluc)),
            "n_flagged": n_flagged,
            "n_scored": len(scored),
        }
    )


@validates_inputs
def threshold_metrics(y_true, score, threshold: float) -> ThresholdMetrics:
    """Metrics of flagging rows with ``score < threshold`` as hallucinated.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled (counts only in flag_rate).
    score : array_like of shape (n,)
        Higher = grounded; NaN = not scored (left out).
    threshold : float

    Returns
    -------
    ThresholdMetrics
        Undefined ratios are NaN, with an :class:`UndefinedStatisticWarning`.

    Examples
    --------
    >>> m = threshold_metrics([0, 0, 1, 0, 1, 1], [0.2, 0.4, 0.5, 0.9, 1.1, 1.3], 1.0)
    >>> m.tp, m.fp, m.tn, m.fn, m.precision, m.recall, m.flag_rate
    (3, 1, 2, 0, 0.75, 1.0, 0.6666666666666666)
    """
    if not np.isfinite(threshold):
        raise SGIInputError(
            f"The 'threshold' parameter of threshold_metrics must be a finite number. Got {threshold!r} instead.")
    frame = _metrics_frame(*_prepare(y_true, score), np.array([float(threshold)]))
    row = frame.iloc[0]
    undefined = [name for name in ("precision", "recall", "f1", "flag_rate") if math.isnan(row[name])]
    if undefined:
        warn_undefined(f"at threshold {threshold:g}: {', '.join(undefined)} undefined (zero denominator)")
    return ThresholdMetrics(**{k: (int(v) if k in _INT_FIELDS else float(v)) for k, v in row.items()})


_INT_FIELDS = frozenset({"tp", "fp", "tn", "fn", "n_flagged", "n_scored"})


def _candidates(scored: np.ndarray) -> np.ndarray:
    """The thresholds where a metric changes.

    The distinct sorted ``scored`` values and the next float above the largest.
    """
    return np.append(np.unique(scored), np.nextafter(scored[-1], np.inf))


@validates_inputs
def threshold_metrics_grid(y_true, score, *, max_rows: int | None = None) -> pd.DataFrame:
    """:func:`threshold_metrics` at every threshold where a metric changes, or at ``max_rows`` of them.

    Candidates are the distinct scores (flag everything strictly below each) and
    the next float above the largest score (flag everything). Computed from sorted
    scores with binary search: O(n log n) in all.

    Parameters
    ----------
    y_true, score : array_like of shape (n,)
        As in :func:`threshold_metrics`.
    max_rows : int, optional
        When there are more candidates, keep this many spread evenly along them (the
        first and the last kept), for a chart: the metrics at each kept threshold are
        exact, and a continuous score on 2,000,000 rows would otherwise give a grid of
        2,000,001 rows (180 MB). See :func:`count_threshold_candidates` for how many
        there were.

    Returns
    -------
    DataFrame
        Columns as the fields of :class:`ThresholdMetrics`, one row per candidate,
        thresholds increasing (so flag_rate and recall never decrease).

    Examples
    --------
    >>> grid = threshold_metrics_grid([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4])
    >>> grid[["threshold", "tp", "fp", "recall"]].round(4).values.tolist()[:3]
    [[0.1, 0.0, 0.0, 0.0], [0.2, 1.0, 0.0, 0.5], [0.3, 1.0, 1.0, 0.5]]
    >>> threshold_metrics_grid([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], max_rows=3)["threshold"].round(4).tolist()
    [0.1, 0.3, 0.4]
    """
    if max_rows is not None:
        max_rows = check_int(max_rows, "max_rows", "threshold_metrics_grid", minimum=2)
    valid, halluc, scored = _prepare(y_true, score)
    if len(scored) == 0:
        warn_undefined("no scored rows: the threshold grid is empty")
        return _metrics_frame(valid, halluc, scored, np.array([], dtype=np.float64))
    candidates = _candidates(scored)
    if max_rows is not None and len(candidates) > max_rows:
        candidates = candidates[np.unique(np.linspace(0, len(candidates) - 1, max_rows).round().astype(np.int64))]
    return _metrics_frame(valid, halluc, scored, candidates)


@validates_inputs
def count_threshold_candidates(score) -> int:
    """How many rows :func:`threshold_metrics_grid` gives without ``max_rows``: distinct scores + 1 (0 if none).

    Examples
    --------
    >>> count_threshold_candidates([0.1, 0.2, 0.2, float("nan")])
    3
    """
    scored = as_scores(score)
    scored = scored[~np.isnan(scored)]
    return len(np.unique(scored)) + 1 if len(scored) else 0


@validates_inputs
def threshold_range(score, *, ordinary=None, upper_quantile: float = 1.0) -> tuple[float, float]:
    """Range over which a flagging threshold moves: from the lowest score to the highest ordinary one.

    At the lowest score nothing is flagged (rows are flagged strictly below the
    threshold). ``ordinary`` (bool per row) leaves out scores that would stretch the
    range without meaning (SGI ~1e8 where the response equals the context); the
    lowest score is taken over all scored rows. ``upper_quantile`` < 1 ends the range
    at that quantile of the ordinary scores, so that a few extreme but ordinary
    scores (SGI 25 where most lie in 0.5-2) do not squeeze the useful range.

    Examples
    --------
    >>> threshold_range([0.4, float("nan"), 1.3, 9e7], ordinary=[True, False, True, False])
    (0.4, 1.3)
    >>> threshold_range([0.5, 1.0, 1.5, 2.0, 25.0], upper_quantile=0.75)
    (0.5, 2.0)
    """
    values = as_scores(score)
    keep = ~np.isnan(values)
    if not keep.any():
        warn_undefined("no scored rows: the threshold range is undefined")
        return math.nan, math.nan
    upper = values[keep & np.asarray(ordinary, dtype=bool)] if ordinary is not None else values[keep]
    lowest = float(values[keep].min())
    return lowest, float(np.quantile(upper, upper_quantile)) if len(upper) else lowest


@dataclass(frozen=True)
class ScoreRange(JsonResult):
    """The central ``coverage`` share of the scores: ``[lo, hi]``, and how many scores lie outside it."""

    lo: float
    hi: float
    n_below: int
    n_above: int


@validates_inputs
def robust_range(score, *, coverage: float = 0.99, log: bool = False) -> ScoreRange:
    """Range of the central ``coverage`` share of the scores, for an axis or a slider a few extreme rows cannot stretch.

    ``lo`` and ``hi`` are the ``(1 - coverage) / 2`` and ``(1 + coverage) / 2``
    quantiles (linear interpolation) of the scored values; with ``log`` the positive
    values only, and the range is in log10 units. ``coverage=1`` gives the minimum and
    maximum.

    Examples
    --------
    >>> r = robust_range([1.0, 2.0, 3.0, 4.0, 1000.0], coverage=0.5)
    >>> (r.lo, r.hi, r.n_below, r.n_above)
    (2.0, 4.0, 1, 1)
    >>> robust_range([0.1, 1.0, 10.0], coverage=1.0, log=True).to_dict()
    {'lo': -1.0, 'hi': 1.0, 'n_below': 0, 'n_above': 0}
    """
    if not 0.0 < coverage <= 1.0:
        raise SGIInputError(f"The 'coverage' parameter of robust_range must be in (0, 1]. Got {coverage!r} instead.")
    values = as_scores(score)
    values = values[~np.isnan(values)]
    if log:
        values = np.log10(values[values > 0])
    if not len(values):
        warn_undefined("no positive scores: the range is undefined" if log else "no scores: the range is undefined")
        return ScoreRange(math.nan, math.nan, 0, 0)
    lo, hi = np.quantile(values, [(1.0 - coverage) / 2.0, (1.0 + coverage) / 2.0])
    return ScoreRange(float(lo), float(hi), int((values < lo).sum()), int((values > hi).sum()))


@dataclass(frozen=True)
class ThresholdChoice(JsonResult):
    """A chosen threshold, the rule that chose it and its metrics (``None`` if no threshold qualifies)."""

    method: str
    target: float
    threshold: float
    metrics: ThresholdMetrics | None


@validates_inputs
def choose_threshold(
    y_true, score, *, method: str = "youden", target: float | None = None, cost_ratio: float | None = None
) -> ThresholdChoice:
    """Pick a threshold (flag ``score < threshold``) on labelled data.

    Methods, over the candidates of :func:`threshold_metrics_grid`:

    * ``youden``: maximise J = recall - FP / (FP + TN);
    * ``target_recall``: the lowest threshold whose recall >= ``target``;
    * ``target_precision``: among thresholds with precision >= ``target``, the one
      with the highest recall;
    * ``cost``: minimise ``cost_ratio * FN + FP``, where ``cost_ratio`` is the cost of
      a missed hallucination relative to a wrongly flagged grounded answer.

    Ties go to the lowest threshold (fewest rows flagged).

    Parameters
    ----------
    y_true, score : array_like of shape (n,)
    method : {"youden", "target_recall", "target_precision", "cost"}
    target : float in (0, 1], required by the two target methods
    cost_ratio : float > 0, required by ``cost``

    Returns
    -------
    ThresholdChoice
        With NaN threshold, ``metrics=None`` and a warning when no threshold meets
        the target or a class is missing.

    Examples
    --------
    >>> c = choose_threshold([0, 0, 1, 0, 1, 1], [0.2, 0.4, 0.5, 0.9, 1.1, 1.3], method="youden")
    >>> c.threshold, c.metrics.tp, c.metrics.fp
    (0.5, 2, 0)
    """
    check_choice(method, "method", "choose_threshold", CHOICE_METHODS)
    if method in ("target_recall", "target_precision"):
        if target is None or not 0.0 < target <= 1.0:
            raise SGIInputError(
                f"choose_threshold with method='{method}' needs 'target' in (0, 1]. Got {target!r} instead.")
    if method == "cost" and (cost_ratio is None or not cost_ratio > 0):
        raise SGIInputError(f"choose_threshold with method='cost' needs 'cost_ratio' > 0. Got {cost_ratio!r} instead.")
    recorded_target = float(target) if target is not None else (float(cost_ratio) if method == "cost" else math.nan)
    valid, halluc, scored = _prepare(y_true, score)
    n_halluc, n_valid = len(halluc), len(valid)
    if n_halluc == 0 or n_valid == 0:
        warn_undefined(f"choosing a threshold needs both classes; got {n_valid} grounded and {n_halluc} hallucinated")
        return ThresholdChoice(method, recorded_target, math.nan, None)
    # The candidates of threshold_metrics_grid, with only the counts the method reads: a grid of every
    # metric is 12 columns per distinct score (180 MB on 2,000,000 rows).
    thresholds = _candidates(scored)
    tp = np.searchsorted(halluc, thresholds, side="left")
    fp = np.searchsorted(valid, thresholds, side="left")
    if method == "youden":
        # J * n_valid * n_halluc in integers, so that equal J values tie exactly.
        objective = tp * n_valid - fp * n_halluc
    elif method == "cost":
        objective = -(cost_ratio * (n_halluc - tp) + fp)
    elif method == "target_recall":
        objective = np.where(_ratio(tp, n_halluc) >= target, -thresholds, -np.inf)
    else:
        objective = np.where(_ratio(tp, tp + fp) >= target, _ratio(tp, n_halluc), -np.inf)
    objective = np.asarray(objective, dtype=np.float64)
    if not np.isfinite(objective).any():
        warn_undefined(f"no threshold reaches {method.split('_')[1]} {target:g}")
        return ThresholdChoice(method, recorded_target, math.nan, None)
    best = int(np.argmax(objective))
    row = _metrics_frame(valid, halluc, scored, thresholds[best:best + 1]).iloc[0]
    metrics = ThresholdMetrics(**{k: (int(v) if k in _INT_FIELDS else float(v)) for k, v in row.items()})
    return ThresholdChoice(method, recorded_target, metrics.threshold, metrics)
