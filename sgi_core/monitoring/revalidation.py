"""A policy judged again on a labelled random sample of the run it is applied to.

A policy's held-out validation belongs to the data it was written on. With labels on a
**random** sample of the new run (the Review page's ``random`` queue, seeded), the run
itself says whether the policy still holds:

* the score's AUROC on the sample (grounded positive) with its interval
  (:func:`~sgi_core.stats.ranking.roc_analysis`), read by
  :func:`~sgi_core.evaluation.validation.validate_on_labels`: the policy holds on the run
  when that interval lies above 0.5;
* the policy's precision and recall at its threshold on the sample (hallucinated
  positive), with Wilson intervals;
* the run's hallucination rate by prediction-powered inference (PPI++; Angelopoulos, Duchi
  and Zrnic 2023), the score mapped to P(hallucinated) by cross-fitted logistic predictions
  (:func:`~sgi_core.stats.prediction_powered.cross_fitted_predictions`) and every
  unlabelled row's prediction used: valid whatever the score is worth, narrower when it
  is worth something; estimate and interval brought into [0, 1] by
  :func:`~sgi_core.monitoring.prevalence.unit_interval`. Where the sample holds fewer than :data:`MIN_PER_CLASS` rows of a
  class the predictor has nothing to learn from and its interval could be narrower than
  the labels can bound, so the labels' own Wilson interval is given instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sgi_core.errors import SGIInputError
from sgi_core.evaluation.validation import RunAuroc, validate_on_labels
from sgi_core.monitoring.prevalence import unit_interval
from sgi_core.results import JsonResult
from sgi_core.stats.prediction_powered import cross_fitted_predictions, ppi_mean
from sgi_core.stats.proportions import proportion_ci
from sgi_core.stats.ranking import roc_analysis
from sgi_core.stats.thresholds import threshold_metrics

#: Fewest labelled rows of each class for the prediction-powered rate.
MIN_PER_CLASS = 5
RUN_NAME = "the labelled sample of this run"


@dataclass(frozen=True)
class Revalidation(JsonResult):
    """The policy on a labelled random sample of a run.

    Attributes
    ----------
    n_labelled, n_grounded, n_hallucinated : int
    auroc, auroc_ci : float, (float, float)
        The score's AUROC on the sample (grounded positive).
    precision, precision_ci, recall, recall_ci : float, (float, float)
        At the policy's threshold (hallucinated positive), Wilson intervals.
    rate, rate_ci : float, (float, float)
        The run's hallucination rate.
    rate_method : str
    validated : bool
        The AUROC's interval lies above 0.5 on the sample.
    reason : str
    """

    n_labelled: int
    n_grounded: int
    n_hallucinated: int
    auroc: float
    auroc_ci: tuple[float, float]
    precision: float
    precision_ci: tuple[float, float]
    recall: float
    recall_ci: tuple[float, float]
    rate: float
    rate_ci: tuple[float, float]
    rate_method: str
    validated: bool
    reason: str


def revalidate(y_true, score, threshold: float, *, n_boot: int = 1000, seed: int = 0) -> Revalidation:
    """Judge a policy on the labelled rows of a run (see the module).

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled, over every row of the run; the
        labelled rows must be a random sample of it.
    score : array_like of shape (n,)
        The policy's score (higher = grounded); NaN rows (not scored) are left out.
    threshold : float
        The policy's: flag ``score < threshold``.
    n_boot, seed : int

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.binomial(1, 0.7, 400).astype(float)
    >>> s = rng.normal(y, 0.6)
    >>> y[80:] = np.nan
    >>> res = revalidate(y, s, 0.5, n_boot=200)
    >>> res.n_labelled, res.validated, res.rate_ci[0] < res.rate < res.rate_ci[1]
    (80, True, True)
    """
    labels = np.asarray(y_true, dtype=np.float64).ravel()
    scores = np.asarray(score, dtype=np.float64).ravel()
    if len(labels) != len(scores):
        raise SGIInputError(f"revalidate needs one label per score; got {len(labels)} labels and {len(scores)} scores")
    scored = np.isfinite(scores)
    labelled = scored & ~np.isnan(labels)
    y, s = labels[labelled], scores[labelled]
    n_grounded, n_halluc = int((y == 1.0).sum()), int((y == 0.0).sum())
    roc = roc_analysis(y, s, n_boot=n_boot, seed=seed)
    validation = validate_on_labels("score", [RunAuroc(RUN_NAME, roc.auroc, tuple(roc.auroc_ci), n_grounded,
                                                       n_halluc)])
    metrics = threshold_metrics(y, s, threshold)
    halluc = 1.0 - y
    labels_ci = proportion_ci(n_halluc, len(y)) if len(y) else (math.nan, math.nan)
    if min(n_grounded, n_halluc) < MIN_PER_CLASS:
        rate, rate_ci = (n_halluc / len(y) if len(y) else math.nan), labels_ci
        method = f"labels only (Wilson): fewer than {MIN_PER_CLASS} labelled rows of a class for PPI++"
    else:
        pred_lab, pred_unlab, _ = cross_fitted_predictions(s, halluc, scores[scored & ~labelled], seed=seed)
        ppi = ppi_mean(halluc, pred_lab, pred_unlab)
        rate, rate_ci = min(max(ppi.estimate, 0.0), 1.0), unit_interval(ppi.estimate, *ppi.ci)
        method = f"{ppi.method}, the score's cross-fitted P(hallucinated) as predictor"
    return Revalidation(
        len(y), n_grounded, n_halluc, roc.auroc, tuple(roc.auroc_ci),
        metrics.precision, _wilson(metrics.tp, metrics.tp + metrics.fp),
        metrics.recall, _wilson(metrics.tp, metrics.tp + metrics.fn),
        float(rate), tuple(map(float, rate_ci)), method, validation.validated, validation.reason)


def _wilson(successes: int, trials: int) -> tuple[float, float]:
    return proportion_ci(successes, trials) if trials else (math.nan, math.nan)
