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
  :func:`~sgi_core.monitoring.prevalence.unit_interval`. Where the sample holds fewer
  than :data:`MIN_PER_CLASS` rows of a class the predictor has nothing to learn from and
  its interval could be narrower than the labels can bound, so the labels' own Wilson
  interval is given instead.

Labels of an **active** sample (``sample --design active``: keys drawn more often where a
predictor is unsure) are not a random sample of the run; :func:`revalidate_active` weighs
each labelled answer by the inverse of the probability it was drawn with: the AUROC, precision
and recall by :func:`~sgi_core.stats.design_weighted.design_weighted_rates` (Poisson-bootstrap
intervals), the rate by the inverse-probability-weighted prediction-powered estimate
(:func:`~sgi_core.runs.active_labels.active_run_rate`; Zrnic and Candès 2024).
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
    weighting : str
        How the labelled rows are weighted: ``""`` for a random sample (each alike), else the
        design's weighting and its intervals' method.
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
    weighting: str = ""


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


#: What the AUROC of an active sample is read on, in the validation's reason.
ACTIVE_RUN_NAME = "the active sample of this run (each answer weighted by 1 / its inclusion probability)"


def revalidate_active(frame, score, threshold: float, design, *, n_boot: int = 1000, seed: int = 0,
                      confidence: float = 0.95) -> Revalidation:
    """Judge a policy on the labels of a verified active sample of a run (see the module).

    The units are the run's distinct answers (:func:`~sgi_core.runs.design_labels.run_units`):
    rows repeating an answer's texts share its label and count once.

    Parameters
    ----------
    frame : pandas.DataFrame
        The run's rows with their ``label`` (1 grounded, 0 hallucinated, NaN) and the design's predictor column.
    score : array_like of shape (n_rows,)
        The policy's score of each row (higher = grounded); NaN rows are left out of the AUROC.
    threshold : float
    design : LabellingDesign
        The active design the labels were drawn under, verified on this run
        (:func:`~sgi_core.runs.design_labels.verified_run_design`).
    n_boot, seed : int
    confidence : float

    Returns
    -------
    Revalidation
        The rate's interval is NaN, its method saying why, where
        :func:`~sgi_core.stats.active_inference.active_mean` gives none (few labels of a class).
    """
    import warnings

    from sgi_core.results import UndefinedStatisticWarning
    from sgi_core.runs.active_labels import ACTIVE_METHOD, active_run_rate
    from sgi_core.runs.design_labels import run_units
    from sgi_core.stats.design_weighted import METHOD, design_weighted_rates

    first = run_units(frame)[1]
    y = frame["label"].to_numpy(dtype=np.float64)[first]
    s = np.asarray(score, dtype=np.float64).ravel()[first]
    keep = ~np.isnan(y) & np.isfinite(s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)  # the method and the reason say what is missing
        rates = design_weighted_rates(y[keep], s[keep], design.pi[keep], threshold, n_boot=n_boot, seed=seed,
                                      confidence=confidence)
        rate = active_run_rate(frame, design, confidence=confidence)
    validation = validate_on_labels("score", [RunAuroc(ACTIVE_RUN_NAME, rates.auroc.value, rates.auroc.interval,
                                                       rates.n_grounded, rates.n_hallucinated)])
    method = f"{ACTIVE_METHOD}, predictor {design.predictor}, {design.n_drawn} keys"
    if math.isnan(rate.ci[0]):
        method += f"; {rate.method.split('; ', 1)[1]}" if "; " in rate.method else "; no interval"
        rate_ci = (math.nan, math.nan)
    else:
        rate_ci = unit_interval(rate.estimate, *rate.ci)
    if len(first) < len(frame):
        method += f"; over the run's {len(first):,} distinct answers (rows repeating an answer count once)"
    return Revalidation(
        int(keep.sum()), rates.n_grounded, rates.n_hallucinated, rates.auroc.value, rates.auroc.interval,
        rates.precision.value, rates.precision.interval, rates.recall.value, rates.recall.interval,
        float(min(max(rate.estimate, 0.0), 1.0)), tuple(map(float, rate_ci)), method, validation.validated,
        validation.reason, f"{METHOD} ({rates.n_boot} resamples)")
