"""From a score to P(grounded): calibrators, ECE, Brier score and reliability data.

Three calibrators, all monotone non-decreasing in the score:

* ``minmax``: ``P = clip((s - min) / (max - min), 0, 1)``, the paper's method. It is
  not a probability model; fitted and measured on the same rows it also leaks.
* ``platt``: ``P = 1 / (1 + exp(-(a * s + b)))``, a one-feature unpenalised logistic
  regression.
* ``isotonic``: the isotonic regression of the label on the score, linear between
  its knots and flat beyond them.

Every calibrator is stored as plain numbers (``knots_x``/``knots_y`` for the two
piecewise-linear ones, ``slope``/``intercept`` for Platt), never pickled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss
from sklearn.model_selection import train_test_split

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.checks import (
    as_labels,
    as_probabilities,
    as_scores,
    check_choice,
    check_fraction,
    check_int,
    validates_inputs,
)

METHODS = ("minmax", "platt", "isotonic")
STRATEGIES = ("quantile", "uniform")


@dataclass(frozen=True)
class Calibrator(JsonResult):
    """A fitted map from score to P(grounded).

    Attributes
    ----------
    method : {"minmax", "platt", "isotonic"}
    knots_x, knots_y : tuple of float
        Piecewise-linear map (``minmax``: ``(min, max) -> (0, 1)``; ``isotonic``: its
        thresholds), flat outside the knots. Empty for ``platt``.
    slope, intercept : float
        Platt's logistic ``a`` and ``b``; NaN for the others.
    """

    method: str
    knots_x: tuple[float, ...]
    knots_y: tuple[float, ...]
    slope: float
    intercept: float

    def predict(self, score) -> np.ndarray:
        """P(grounded) for each score (NaN stays NaN)."""
        values = np.asarray(score, dtype=np.float64)
        if self.method == "platt":
            return expit(self.slope * values + self.intercept)
        return np.where(np.isnan(values), np.nan, np.interp(values, self.knots_x, self.knots_y))

    def probability(self, score: float) -> float:
        """P(grounded) of one score."""
        return float(self.predict([score])[0])


def _labelled(score, y_true) -> tuple[np.ndarray, np.ndarray]:
    labels = as_labels(y_true)
    scores = as_scores(score, n=len(labels))
    keep = ~np.isnan(labels) & ~np.isnan(scores)
    return scores[keep], labels[keep]


@validates_inputs
def fit_calibrator(score, y_true, *, method: str = "minmax") -> Calibrator:
    """Fit a map from score (higher = grounded) to P(grounded) on labelled rows.

    Parameters
    ----------
    score : array_like of shape (n,)
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated; rows with a NaN label or score are ignored
        (``minmax`` uses the scores of all scored rows).
    method : {"minmax", "platt", "isotonic"}

    Returns
    -------
    Calibrator

    Raises
    ------
    SGIInputError
        If ``platt`` or ``isotonic`` get fewer than two classes, or ``minmax`` gets
        constant scores.

    Examples
    --------
    >>> cal = fit_calibrator([0.5, 1.0, 1.5], [0, 1, 1], method="minmax")
    >>> cal.predict([0.5, 1.0, 2.0]).tolist()
    [0.0, 0.5, 1.0]
    """
    check_choice(method, "method", "fit_calibrator", METHODS)
    if method == "minmax":
        scores = as_scores(score)
        scores = scores[~np.isnan(scores)]
        if len(scores) == 0 or np.ptp(scores) == 0:
            raise SGIInputError("min-max calibration needs scores that are not all equal")
        return Calibrator("minmax", (float(scores.min()), float(scores.max())), (0.0, 1.0), math.nan, math.nan)
    scores, labels = _labelled(score, y_true)
    if len(np.unique(labels)) < 2:
        raise SGIInputError(
            f"{method} calibration needs grounded and hallucinated rows; got {int((labels == 1).sum())} "
            f"grounded and {int((labels == 0).sum())} hallucinated",
            hint="Label rows of both classes, or use method='minmax'",
        )
    if method == "platt":
        model = LogisticRegression(C=np.inf).fit(scores[:, None], labels)
        return Calibrator("platt", (), (), float(model.coef_[0, 0]), float(model.intercept_[0]))
    iso = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(scores, labels)
    return Calibrator(
        "isotonic", tuple(iso.X_thresholds_.tolist()), tuple(iso.y_thresholds_.tolist()), math.nan, math.nan
    )


def _bin_ids(prob: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    # The same bins as sklearn.calibration.calibration_curve, which does not return its counts.
    if strategy == "quantile":
        edges = np.percentile(prob, np.linspace(0, 100, n_bins + 1))
    else:
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.searchsorted(edges[1:-1], prob)


@dataclass(frozen=True)
class ReliabilityBins(JsonResult):
    """Reliability-diagram data: per non-empty bin, mean predicted P, observed share grounded, count."""

    prob_pred: tuple[float, ...]
    prob_true: tuple[float, ...]
    counts: tuple[int, ...]


@validates_inputs
def reliability_bins(y_true, y_prob, *, n_bins: int = 10, strategy: str = "quantile") -> ReliabilityBins:
    """Bin predictions as :func:`sklearn.calibration.calibration_curve` does, with counts.

    Examples
    --------
    >>> reliability_bins([0, 1, 1, 1], [0.25, 0.25, 0.75, 0.75], n_bins=2, strategy="uniform")
    ReliabilityBins(prob_pred=(0.25, 0.75), prob_true=(0.5, 1.0), counts=(2, 2))
    """
    n_bins = check_int(n_bins, "n_bins", "reliability_bins", minimum=1)
    check_choice(strategy, "strategy", "reliability_bins", STRATEGIES)
    labels, prob = as_probabilities(y_true, y_prob, func="reliability_bins")
    ids = _bin_ids(prob, n_bins, strategy)
    counts = np.bincount(ids, minlength=n_bins)
    filled = counts > 0
    prob_pred = np.bincount(ids, weights=prob, minlength=n_bins)[filled] / counts[filled]
    prob_true = np.bincount(ids, weights=labels, minlength=n_bins)[filled] / counts[filled]
    return ReliabilityBins(tuple(prob_pred.tolist()), tuple(prob_true.tolist()), tuple(counts[filled].tolist()))


@validates_inputs
def expected_calibration_error(y_true, y_prob, *, n_bins: int = 10, strategy: str = "uniform") -> float:
    """ECE = sum over bins of ``(n_bin / n) * |share grounded - mean predicted P|``.

    Parameters
    ----------
    y_true : array_like
        1 = grounded, 0 = hallucinated (no NaN).
    y_prob : array_like
        Predicted P(grounded) in [0, 1].
    n_bins : int, default 10
    strategy : {"uniform", "quantile"}
        Equal-width bins on [0, 1] or equal-frequency bins (quantiles of ``y_prob``).

    Examples
    --------
    >>> expected_calibration_error([0, 1, 1, 1], [0.25, 0.25, 0.75, 0.75], n_bins=2)
    0.25
    """
    n_bins = check_int(n_bins, "n_bins", "expected_calibration_error", minimum=1)
    check_choice(strategy, "strategy", "expected_calibration_error", STRATEGIES)
    labels, prob = as_probabilities(y_true, y_prob, func="expected_calibration_error")
    bins = reliability_bins(labels, prob, n_bins=n_bins, strategy=strategy)
    counts = np.asarray(bins.counts, dtype=np.float64)
    if counts.sum() == 0:
        warn_undefined("ECE of an empty set of predictions is undefined")
        return math.nan
    gaps = np.abs(np.asarray(bins.prob_true) - np.asarray(bins.prob_pred))
    return float(np.sum(counts / counts.sum() * gaps))


@validates_inputs
def halluc_rate_by_quantile(y_true, score, *, n_groups: int = 10) -> tuple[float, ...]:
    """Share of hallucinated rows in each score decile (lowest scores first).

    Labelled, scored rows are ranked by score (ties in input order) and cut into
    ``n_groups`` equal-size groups. With a score that works the rate falls from the
    first group to the last.

    Examples
    --------
    >>> halluc_rate_by_quantile([0, 0, 1, 0, 1, 1], [1, 2, 3, 4, 5, 6], n_groups=3)
    (1.0, 0.5, 0.0)
    """
    n_groups = check_int(n_groups, "n_groups", "halluc_rate_by_quantile", minimum=1)
    scores, labels = _labelled(score, y_true)
    if len(scores) < n_groups:
        warn_undefined(f"{len(scores)} labelled rows cannot fill {n_groups} score groups")
        return tuple([math.nan] * n_groups)
    groups = pd.qcut(pd.Series(scores).rank(method="first"), n_groups, labels=False)
    rates = pd.Series(1.0 - labels).groupby(groups.to_numpy()).mean()
    return tuple(rates.reindex(range(n_groups)).tolist())


@dataclass(frozen=True)
class CalibrationResult(JsonResult):
    """A calibrator fitted on one split and measured on the other.

    Attributes
    ----------
    method : str
    calibrator : Calibrator
        Fitted on the fit split.
    in_sample : bool
        True when fit and evaluation rows are the same (``test_size=None``), the
        paper's protocol; the numbers are then optimistic.
    n_fit, n_eval : int
    ece_uniform, ece_quantile : float
        ECE on the evaluation split with equal-width / equal-frequency bins.
    brier : float
        Mean squared error of P(grounded) on the evaluation split.
    bins : ReliabilityBins
        Reliability-diagram data on the evaluation split (``strategy`` bins).
    halluc_rate_by_decile : tuple of float
        Share hallucinated per decile of the raw score, over all labelled rows.
    """

    method: str
    calibrator: Calibrator
    in_sample: bool
    n_fit: int
    n_eval: int
    ece_uniform: float
    ece_quantile: float
    brier: float
    bins: ReliabilityBins
    halluc_rate_by_decile: tuple[float, ...]


@validates_inputs
def calibration_analysis(
    y_true,
    score,
    *,
    method: str = "platt",
    n_bins: int = 10,
    strategy: str = "quantile",
    test_size: float | None = 0.5,
    seed: int = 0,
) -> CalibrationResult:
    """Fit a calibrator on one split of the labelled rows and measure it on the other.

    The split is stratified by label. ``test_size=None`` fits and measures on all
    rows, which is what the paper does with min-max: optimistic, flagged by
    ``in_sample=True``.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled (left out).
    score : array_like of shape (n,)
        Higher = grounded.
    method : {"minmax", "platt", "isotonic"}, default "platt"
    n_bins : int, default 10
    strategy : {"quantile", "uniform"}, default "quantile"
        Bins of the reliability data in ``bins``; both ECEs are always reported.
    test_size : float in (0, 1) or None, default 0.5
    seed : int, default 0

    Returns
    -------
    CalibrationResult

    Examples
    --------
    >>> y = [0, 0, 0, 1, 0, 1, 1, 1] * 5
    >>> s = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8] * 5
    >>> res = calibration_analysis(y, s, method="isotonic", test_size=None)
    >>> res.n_fit, res.n_eval, round(res.ece_uniform, 6)
    (40, 40, 0.0)
    """
    check_choice(method, "method", "calibration_analysis", METHODS)
    check_choice(strategy, "strategy", "calibration_analysis", STRATEGIES)
    n_bins = check_int(n_bins, "n_bins", "calibration_analysis", minimum=1)
    scores, labels = _labelled(score, y_true)
    if test_size is None:
        fit_s, fit_y, eval_s, eval_y = scores, labels, scores, labels
    else:
        test_size = check_fraction(test_size, "test_size", "calibration_analysis")
        if min((labels == 1).sum(), (labels == 0).sum()) < 2:
            raise SGIInputError(
                "a split calibration needs at least 2 grounded and 2 hallucinated labelled rows",
                hint="Label more rows, or use test_size=None to fit and measure on the same rows",
            )
        fit_s, eval_s, fit_y, eval_y = train_test_split(
            scores, labels, test_size=test_size, random_state=seed, stratify=labels
        )
    calibrator = fit_calibrator(fit_s, fit_y, method=method)
    prob = calibrator.predict(eval_s)
    return CalibrationResult(
        method=method,
        calibrator=calibrator,
        in_sample=test_size is None,
        n_fit=len(fit_s),
        n_eval=len(eval_s),
        ece_uniform=expected_calibration_error(eval_y, prob, n_bins=n_bins, strategy="uniform"),
        ece_quantile=expected_calibration_error(eval_y, prob, n_bins=n_bins, strategy="quantile"),
        brier=float(brier_score_loss(eval_y, prob)),
        bins=reliability_bins(eval_y, prob, n_bins=n_bins, strategy=strategy),
        halluc_rate_by_decile=halluc_rate_by_quantile(labels, scores, n_groups=10),
    )
