"""A score's AUROC, precision and recall on a sample drawn with known, unequal probabilities.

Under a labelling design each unit ``i`` of a run is labelled with a probability ``pi_i``
fixed before any label is seen (Bernoulli sampling, :mod:`sgi_core.stats.active_inference`).
The labelled units are then not a random sample of the run: an active design draws the units
a predictor is unsure of more often, and those are the hard ones. Weighting each labelled unit
by ``w_i = 1 / pi_i`` (Horvitz and Thompson 1952) estimates the run's own figures:

    AUROC     = sum_{i grounded, j hallucinated} w_i w_j [s_i > s_j] + 1/2 [s_i = s_j]  /  (W_g W_h)
    precision = sum w [flagged and hallucinated] / sum w [flagged]        (flagged: s < threshold)
    recall    = sum w [flagged and hallucinated] / sum w [hallucinated]

with ``W_g`` and ``W_h`` the weights of the labelled grounded and hallucinated units; with
every ``pi_i`` equal they are the unweighted figures. Each is a ratio of Horvitz-Thompson
totals: consistent, not unbiased.

**Intervals**: a Poisson bootstrap of the run's units (Hanley and MacGibbon 2006). A run's
units, each with its score, label, ``pi_i`` and draw, are independent; resampling all ``N``
of them with replacement gives each labelled unit a multiplicity close to Poisson(1), and an
unlabelled unit adds nothing to the figures. So each replicate weighs labelled unit ``i`` by
``c_i / pi_i``, ``c_i ~ Poisson(1)``, and the percentile interval of the replicates is taken.
It respects the design: a unit drawn with a small ``pi_i`` moves the figures more, and so
widens the interval more. A perfectly separating AUROC keeps at least the Wilson interval of
the Kish effective sizes ``(sum w)^2 / sum w^2`` (:func:`~sgi_core.stats.ranking.separation_floor`).

References
----------
Horvitz, D. G. and Thompson, D. J. (1952). A generalization of sampling without replacement
from a finite universe. Journal of the American Statistical Association 47(260), 663-685.
Hanley, J. A. and MacGibbon, B. (2006). Creating non-parametric bootstrap samples using
Poisson frequencies. Computer Methods and Programs in Biomedicine 83(1), 57-62.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sgi_core.errors import SGIInputError
from sgi_core.results import Estimate, JsonResult, warn_undefined
from sgi_core.stats.checks import as_scores, check_fraction, check_int
from sgi_core.stats.ranking import separation_floor

#: Labelled units of a class below which no interval is given.
MIN_PER_CLASS = 2
METHOD = "weighted by 1 / inclusion probability; Poisson bootstrap of the run's units"


@dataclass(frozen=True)
class DesignWeightedRates(JsonResult):
    """A score's figures on labels drawn under a design (:func:`design_weighted_rates`).

    Attributes
    ----------
    auroc : Estimate
        Grounded positive, higher score = grounded.
    precision, recall : Estimate
        At the threshold, hallucinated positive (flagged: ``score < threshold``).
    n_grounded, n_hallucinated : int
        Labelled units of each class.
    effective_grounded, effective_hallucinated : float
        Kish effective sizes ``(sum w)^2 / sum w^2`` of each class.
    n_boot : int
    confidence : float
    """

    auroc: Estimate
    precision: Estimate
    recall: Estimate
    n_grounded: int
    n_hallucinated: int
    effective_grounded: float
    effective_hallucinated: float
    n_boot: int
    confidence: float


def weighted_auroc(y_true, y_score, sample_weight) -> np.ndarray | float:
    """AUROC (grounded = 1 positive, ties one half) with each row weighted; one value per row of a 2-D weight.

    ``sample_weight`` of shape (n,) gives a float, equal to scikit-learn's
    ``roc_auc_score(y_true, y_score, sample_weight=sample_weight)``; of shape (B, n) it gives
    B values, one per set of weights (NaN where a class has no weight), in one sort.

    Examples
    --------
    >>> weighted_auroc([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1], [1, 1, 1, 1])
    0.75
    >>> weighted_auroc([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1], [1, 3, 1, 1])  # (1 * 2 + 3 * 1) / (4 * 2)
    0.625
    """
    y = np.asarray(y_true, dtype=np.float64).ravel()
    s = np.asarray(y_score, dtype=np.float64).ravel()
    w = np.asarray(sample_weight, dtype=np.float64)
    single = w.ndim == 1
    w = np.atleast_2d(w)
    order = np.argsort(s, kind="stable")
    levels = np.flatnonzero(np.r_[True, np.diff(s[order]) != 0])
    grounded = np.add.reduceat(w[:, order] * (y[order] == 1.0), levels, axis=1)
    halluc = np.add.reduceat(w[:, order] * (y[order] == 0.0), levels, axis=1)
    below = np.cumsum(halluc, axis=1) - halluc
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.sum(grounded * (below + 0.5 * halluc), axis=1) / (grounded.sum(axis=1) * halluc.sum(axis=1))
    return float(values[0]) if single else values


def _threshold_rates(halluc: np.ndarray, flagged: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hit = np.sum(w * (halluc & flagged), axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return hit / np.sum(w * flagged, axis=-1), hit / np.sum(w * halluc, axis=-1)


def _kish(w: np.ndarray) -> float:
    return float(w.sum() ** 2 / np.sum(w ** 2)) if w.size else 0.0


def design_weighted_rates(y_true, y_score, pi, threshold: float, *, n_boot: int = 1000, seed: int = 0,
                          confidence: float = 0.95) -> DesignWeightedRates:
    """AUROC, precision and recall of the labelled units weighted by ``1 / pi``, with Poisson-bootstrap intervals.

    See the module for the formulas and the interval.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 grounded, 0 hallucinated, of the labelled units only.
    y_score : array_like of shape (n,)
        Higher = grounded; finite.
    pi : array_like of shape (n,)
        The probability each unit was drawn with, in (0, 1].
    threshold : float
        Flag ``score < threshold``.
    n_boot : int, default 1000
        0 gives no interval.
    seed : int, default 0
    confidence : float, default 0.95

    Returns
    -------
    DesignWeightedRates
        Intervals NaN, with a warning, with fewer than :data:`MIN_PER_CLASS` units of a class.

    Examples
    --------
    >>> res = design_weighted_rates([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1], [0.5, 1.0, 1.0, 0.5], 0.45, n_boot=0)
    >>> round(res.auroc.value, 4), round(res.precision.value, 4), round(res.recall.value, 4)  # AUROC 8 / 9
    (0.8889, 0.6667, 0.6667)
    """
    func = "design_weighted_rates"
    y = as_scores(y_true, name="y_true")
    s = as_scores(y_score, name="y_score", n=len(y))
    p = as_scores(pi, name="pi", n=len(y))
    for name, wanted, bad in (("y_true", "0 or 1", ~np.isin(y, (0.0, 1.0))), ("y_score", "finite", ~np.isfinite(s)),
                              ("pi", "in (0, 1]", ~((p > 0) & (p <= 1)))):
        if bad.any():
            raise SGIInputError(f"'{name}' of {func} must be {wanted} for every labelled unit", column=name,
                                rows=(np.flatnonzero(bad) + 1).tolist(),
                                hint="Pass the labelled units only, each with its score and inclusion probability")
    n_boot = check_int(n_boot, "n_boot", func, minimum=0)
    confidence = check_fraction(confidence, "confidence", func)
    w = 1.0 / p
    halluc, flagged = y == 0.0, s < float(threshold)
    n_grounded, n_halluc = int((~halluc).sum()), int(halluc.sum())
    area = weighted_auroc(y, s, w) if min(n_grounded, n_halluc) else math.nan
    precision, recall = (float(v) for v in _threshold_rates(halluc, flagged, w))
    nan = (math.nan, math.nan)
    intervals = [nan, nan, nan]
    if min(n_grounded, n_halluc) < MIN_PER_CLASS:
        warn_undefined(f"design-weighted intervals need at least {MIN_PER_CLASS} labelled units of each class; got "
                       f"{n_grounded} grounded and {n_halluc} hallucinated")
    elif n_boot:
        weights = np.random.default_rng(seed).poisson(1.0, (n_boot, len(y))) * w
        replicates = (weighted_auroc(y, s, weights), *_threshold_rates(halluc, flagged, weights))
        tail = (1.0 - confidence) / 2.0 * 100.0
        intervals = [_percentile(r, tail) for r in replicates]
        effective = (round(_kish(w[~halluc])), round(_kish(w[halluc])))
        intervals[0] = separation_floor(area, *effective, intervals[0], confidence=confidence)
    method = METHOD if n_boot and not math.isnan(intervals[0][0]) else ""
    return DesignWeightedRates(Estimate(area, intervals[0], method), Estimate(precision, intervals[1], method),
                               Estimate(recall, intervals[2], method), n_grounded, n_halluc, _kish(w[~halluc]),
                               _kish(w[halluc]), n_boot if n_boot else 0, confidence)


def _percentile(replicates: np.ndarray, tail: float) -> tuple[float, float]:
    """The percentile interval of the defined replicates (a replicate whose denominator weighs 0 is undefined)."""
    finite = replicates[np.isfinite(replicates)]
    if finite.size < 2:
        return (math.nan, math.nan)
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return (float(low), float(high))
