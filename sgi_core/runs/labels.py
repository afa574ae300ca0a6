"""What the labels say about two runs: each run's hallucination rate, their difference, and each score's AUROC.

Labels are the ground truth of a comparison. Over the matched keys
(:func:`sgi_core.runs.matching.match_runs`), with ``label`` 1 grounded and 0
hallucinated per key:

* keys labelled in **both** runs are compared paired: exact McNemar test of the
  discordant keys and Newcombe's (1998) hybrid score interval for the paired
  difference (:func:`~sgi_core.runs.rates.paired_rate_difference`);
* without such keys, each run's labelled keys are compared unpaired
  (:func:`~sgi_core.runs.rates.unpaired_rate_difference`);
* when only a sample of the matched keys is labelled in both runs, the difference is
  also estimated on every matched key by prediction-powered inference
  (:func:`~sgi_core.stats.prediction_powered.ppi_rate_difference`, PPI++ with the
  compared scores' mapping to P(hallucinated) cross-fitted on the labels): its interval
  is ``ci``, the labels-only one ``labels_only_ci``.

``difference = rate_new - rate_base`` (a rise is a regression); every interval is at
``confidence`` and assumes a number of labelled keys fixed in advance. Beside it:

* ``power``: the smallest change these labels can detect, and what a margin needs
  (:mod:`~sgi_core.stats.margin_power`);
* ``sequential``: a confidence sequence of the paired difference over the keys labelled
  in both, drawn without replacement from the matched keys
  (:func:`~sgi_core.runs.label_order.sequential_difference`), valid however the number
  of labels was chosen, even by stopping as soon as it looked decided. The keys enter in
  the order they were labelled (:mod:`~sgi_core.runs.label_order`).

Each score's AUROC (grounded positive) on each run's labelled keys feeds
:func:`sgi_core.evaluation.validation.validate_on_labels`, and DeLong's test
(DeLong, DeLong & Clarke-Pearson 1988) compares the two AUROCs, paired when both runs
carry the same label on every key labelled in both.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sgi_core.evaluation.validation import RunAuroc, ScoreValidation, verdict_word
from sgi_core.results import JsonResult, UndefinedStatisticWarning, warn_undefined
from sgi_core.runs.label_order import LABEL_ORDER, LABELLING_ORDER, sequential_difference
from sgi_core.runs.label_sample import LabelledSample, labelled_sample
from sgi_core.runs.matching import MatchedRuns
from sgi_core.runs.rates import RateDifference, paired_rate_difference, unpaired_rate_difference
from sgi_core.stats.confidence_sequence import SequentialInterval
from sgi_core.stats.margin_power import (
    MarginPower,
    SequentialPower,
    paired_power,
    ppi_power,
    sequential_power,
    unpaired_power,
)
from sgi_core.stats.paired import delong_components, delong_test
from sgi_core.stats.prediction_powered import cross_fitted_predictions, ppi_mean, ppi_rate_difference
from sgi_core.stats.ranking import roc_analysis

#: Keys labelled in both runs below which no prediction-powered estimate is attempted (too few to cross-fit).
MIN_PPI_KEYS = 20


@dataclass(frozen=True)
class AurocShift(JsonResult):
    """A score's AUROC (grounded positive) in each run and DeLong's test of ``auroc_new - auroc_base``."""

    score: str
    auroc_base: float
    auroc_new: float
    difference: float
    ci: tuple[float, float]
    p_value: float
    paired: bool


@dataclass(frozen=True)
class LabelShift(JsonResult):
    """Hallucination rates (share of label 0) of the two runs and their difference.

    Attributes
    ----------
    n_keys : int
        Keys behind the labels-only difference: labelled in both runs (paired), else
        labelled in either (unpaired).
    n_labelled_base, n_labelled_new : int
        Matched keys labelled in each run.
    rate_base, rate_new, difference : float
        The estimates of ``method``.
    ci : (float, float)
        The interval of ``difference`` by ``method``.
    labels_only_ci : (float, float)
        The interval from the labels alone (equal to ``ci`` when ``method`` is a labels one).
    verdict : str
        "improvement" (the rate fell), "regression" (it rose) or "no clear change", from ``ci``.
    paired : bool
        Whether the labels-only difference is paired.
    method : str
        ``"labels (paired)"``, ``"labels (unpaired)"`` or ``"prediction-powered (cross-fitted logistic on N scores)"``.
    mcnemar_p : float
        Exact McNemar p of the paired keys (NaN unpaired or without discordant keys).
    base_only, new_only : int
        Paired keys hallucinated in the base run only, in the new run only (-1 unpaired).
    predictor_loss : dict of str -> float
        Out-of-fold log loss of each run's predictor of the prediction-powered estimate (``base``, ``new``).
    auroc : tuple of AurocShift
    power : MarginPower or None
        What ``ci``'s design can detect: its half-width were the difference zero, and the keys a margin needs.
    sequential : SequentialInterval or None
        The confidence sequence of the paired difference at ``n_keys`` keys (None unpaired).
    sequential_verdict : str
        :func:`rate_verdict` of ``sequential.ci`` ("" unpaired).
    sequential_power : SequentialPower or None
        What the sequence can detect: its upper bound on a typical unchanged run at ``n_keys``, and the keys a
        margin needs (:func:`~sgi_core.stats.margin_power.sequential_power`; None unpaired).
    sample : LabelledSample or None
        How the keys labelled in both runs sit among the keys whose answer changed (None without the texts).
    sequence_order : str
        How the sequence's keys were ordered (:data:`~sgi_core.runs.label_order.LABELLING_ORDER`, or a fixed order
        and why); "" unpaired.
    labels_rate_base, labels_rate_new, labels_difference : float
        The rates and their difference from the labels alone, on the keys behind ``labels_only_ci``
        (equal to ``rate_base``, ``rate_new``, ``difference`` when ``method`` is a labels one).
    """

    n_keys: int
    n_labelled_base: int
    n_labelled_new: int
    rate_base: float
    rate_new: float
    difference: float
    ci: tuple[float, float]
    labels_only_ci: tuple[float, float]
    verdict: str
    paired: bool
    method: str
    mcnemar_p: float
    base_only: int
    new_only: int
    predictor_loss: dict[str, float]
    auroc: tuple[AurocShift, ...]
    power: MarginPower | None = None
    sequential: SequentialInterval | None = None
    sequential_verdict: str = ""
    labels_rate_base: float = math.nan
    labels_rate_new: float = math.nan
    labels_difference: float = math.nan
    sequence_order: str = ""
    sequential_power: SequentialPower | None = None
    sample: LabelledSample | None = None


#: The labels are the ground truth: their difference always earns its word.
LABELS_VALIDATION = ScoreValidation("hallucination rate", True, "the labels are the ground truth", ())


def rate_verdict(ci) -> str:
    """The word of a hallucination-rate difference ``new - base`` (:func:`verdict_word`): a rise is a regression.

    Examples
    --------
    >>> rate_verdict((0.02, 0.2)), rate_verdict((-0.2, -0.01)), rate_verdict((-0.1, 0.1))
    ('regression', 'improvement', 'no clear change')
    """
    return verdict_word(ci, LABELS_VALIDATION, higher_is_better=False)


def run_aurocs(matched: MatchedRuns, score: str, *, n_boot: int, seed: int) -> tuple[RunAuroc, ...]:
    """The score's AUROC with its interval on each run's labelled keys (empty where a run has no labels)."""
    out = []
    for side, frame in (("base", matched.base), ("new", matched.new)):
        labels = frame["label"].to_numpy() if "label" in frame else np.full(len(frame), np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedStatisticWarning)
            roc = roc_analysis(labels, frame[score].to_numpy(), n_boot=n_boot, seed=seed)
        out.append(RunAuroc(side, roc.auroc, roc.auroc_ci, roc.n_pos, roc.n_neg))
    return tuple(out)


def _unpaired_delong(score: str, labels_base, base, labels_new, new, confidence: float) -> AurocShift:
    """DeLong's variance of each AUROC on its own keys; the runs are independent, so the variances add.

    ``Var(A) = var(V10) / m + var(V01) / n`` (ddof=1) from each run's structural
    components (:func:`~sgi_core.stats.paired.delong_components`), and
    ``Var(A_new - A_base) = Var(A_new) + Var(A_base)``.
    """
    aurocs, variances = [], []
    for labels, values in ((labels_base, base), (labels_new, new)):
        keep = ~np.isnan(values)
        pos, neg = values[keep & (labels == 1.0)], values[keep & (labels == 0.0)]
        if len(pos) < 2 or len(neg) < 2:
            aurocs.append(math.nan)
            variances.append(math.nan)
            continue
        auroc, v10, v01 = delong_components(pos, neg)
        aurocs.append(auroc)
        variances.append(np.var(v10, ddof=1) / len(pos) + np.var(v01, ddof=1) / len(neg))
    diff = aurocs[1] - aurocs[0]
    se = math.sqrt(sum(variances))
    if not se > 0:
        return AurocShift(score, aurocs[0], aurocs[1], diff, (math.nan, math.nan), math.nan, False)
    half = float(stats.norm.ppf(0.5 + confidence / 2.0)) * se
    return AurocShift(score, aurocs[0], aurocs[1], diff, (diff - half, diff + half),
                      float(2.0 * stats.norm.sf(abs(diff / se))), False)


def _auroc_shifts(matched: MatchedRuns, lab_base, lab_new, confidence: float) -> tuple[AurocShift, ...]:
    """DeLong's test per score: paired on the keys labelled alike in both runs, else unpaired on each run's labels."""
    both = ~(np.isnan(lab_base) | np.isnan(lab_new))
    paired = bool(both.any() and np.array_equal(lab_base[both], lab_new[both]))
    keep_base, keep_new = (both, both) if both.any() else (~np.isnan(lab_base), ~np.isnan(lab_new))
    shifts = []
    with warnings.catch_warnings():
        # One warning below names every score left undefined, instead of one per score and run.
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        for score in matched.scores:
            base, new = matched.base[score].to_numpy()[keep_base], matched.new[score].to_numpy()[keep_new]
            if paired:
                res = delong_test(lab_base[both], new, base, confidence=confidence)
                shifts.append(AurocShift(score, res.auroc_b, res.auroc_a, res.difference, res.ci, res.p_value, True))
            else:
                shifts.append(_unpaired_delong(score, lab_base[keep_base], base, lab_new[keep_new], new, confidence))
    undefined = [a.score for a in shifts if math.isnan(a.p_value)]
    if undefined:
        counts = [f"{side} {int((lab[keep] == 1).sum())} grounded / {int((lab[keep] == 0).sum())} hallucinated"
                  for side, lab, keep in (("base", lab_base, keep_base), ("new", lab_new, keep_new))]
        warn_undefined(f"DeLong's test is undefined for {', '.join(undefined)}: each run needs 2 keys of each class "
                       f"and AUROCs that vary ({'; '.join(counts)} labelled keys)")
    return tuple(shifts)


@dataclass(frozen=True)
class _PredictionPowered:
    rate_base: float
    rate_new: float
    difference: float
    ci: tuple[float, float]
    method: str
    predictor_loss: dict[str, float]
    power: MarginPower


def _prediction_powered(matched: MatchedRuns, halluc_base, halluc_new, confidence: float,
                        seed: int) -> _PredictionPowered | str | None:
    """PPI++ estimates over every matched key, or None when every key is labelled in both runs (or too few are).

    When the labels hold too few keys hallucinated in one run only to bound it
    (:data:`~sgi_core.stats.prediction_powered.MIN_CLASS_COUNT`), the reason, a string:
    the labels alone are reported then.

    The predictor of each run is one logistic model of P(hallucinated) on every compared
    score of that run, cross-fitted on the labels (each labelled key predicted by the model
    of the folds it is not in): nothing is chosen outside the folds, so the interval holds
    whatever the scores are worth. Each run's rate is estimated from its own labelled keys,
    the difference from the keys labelled in both
    (:func:`~sgi_core.stats.prediction_powered.ppi_rate_difference`).
    """
    both = ~(np.isnan(halluc_base) | np.isnan(halluc_new))
    if both.sum() < MIN_PPI_KEYS or both.all() or not matched.scores:
        return None
    features = {side: np.column_stack([frame[score].to_numpy(dtype=np.float64) for score in matched.scores])
                for side, frame in (("base", matched.base), ("new", matched.new))}
    rates, losses = [], {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        for side, y in (("base", halluc_base), ("new", halluc_new)):
            lab = ~np.isnan(y)
            pred_lab, pred_unlab, losses[side] = cross_fitted_predictions(features[side][lab], y[lab],
                                                                          features[side][~lab], seed=seed)
            rates.append(ppi_mean(y[lab], pred_lab, pred_unlab, confidence=confidence).estimate)
        diff = ppi_rate_difference(halluc_base, halluc_new, features["base"], features["new"], confidence=confidence,
                                   seed=seed)
    if diff.method.startswith("labels only"):
        return diff.method
    method = f"prediction-powered (cross-fitted logistic on {len(matched.scores)} scores)"
    return _PredictionPowered(rates[0], rates[1], diff.estimate, diff.ci, method, losses,
                              ppi_power(diff.residual_variance, diff.unlabelled_variance, diff.n_labelled,
                                        confidence=confidence))


def _labels_power(rates: RateDifference, confidence: float) -> MarginPower:
    if rates.paired:
        return paired_power(max(rates.base_only, 0), max(rates.new_only, 0), rates.n_keys, confidence=confidence)
    return unpaired_power(round(rates.rate_base * rates.n_base), rates.n_base, round(rates.rate_new * rates.n_new),
                          rates.n_new, confidence=confidence)


def label_shift(matched: MatchedRuns, *, confidence: float = 0.95, seed: int = 0,
                prediction_powered: bool = True, order=None, label_order: str = LABELLING_ORDER) -> LabelShift | None:
    """What the labels of both runs say (see the module notes); None when neither run has a labelled key.

    Parameters
    ----------
    matched : MatchedRuns
        Per-key ``label`` (1.0 / 0.0 / NaN) in either frame; scores oriented higher = grounded.
    confidence : float, default 0.95
    seed : int, default 0
        Folds of the cross-fitted predictors.
    prediction_powered : bool, default True
        Estimate the difference over every matched key when only some are labelled in both.
    order : array_like of int, optional
        Positions of the matched keys in the order they were labelled (the confidence
        sequence's order); default: by each run's ``label_order`` column, the later of a
        key's two labels first (:func:`~sgi_core.runs.label_order.sequence_order`), else
        a fixed order (a hash of each key).
    label_order : str
        How the ``label_order`` columns were made, as the result will say.
    """
    n = len(matched.keys)
    lab_base = matched.base["label"].to_numpy() if "label" in matched.base else np.full(n, np.nan)
    lab_new = matched.new["label"].to_numpy() if "label" in matched.new else np.full(n, np.nan)
    has_base, has_new = ~np.isnan(lab_base), ~np.isnan(lab_new)
    if not (has_base.any() and has_new.any()):
        return None
    both = has_base & has_new
    if both.any():
        rates = paired_rate_difference(1.0 - lab_base[both], 1.0 - lab_new[both], confidence=confidence)
    else:
        rates = unpaired_rate_difference(1.0 - lab_base[has_base], 1.0 - lab_new[has_new], confidence=confidence)
    estimate = (rates.rate_base, rates.rate_new, rates.difference, rates.ci,
                "labels (paired)" if rates.paired else "labels (unpaired)")
    losses, power = {}, _labels_power(rates, confidence)
    ppi = _prediction_powered(matched, 1.0 - lab_base, 1.0 - lab_new, confidence, seed) if prediction_powered else None
    if isinstance(ppi, str):
        estimate = (*estimate[:4], f"{estimate[4]}; prediction-powered left out, {ppi}")
    elif ppi is not None:
        estimate = (ppi.rate_base, ppi.rate_new, ppi.difference, ppi.ci, ppi.method)
        losses, power = dict(ppi.predictor_loss), ppi.power
    rate_base, rate_new, difference, ci, method = estimate
    sequential, described = None, ""
    if rates.paired:
        orders = tuple(frame[LABEL_ORDER].to_numpy() if LABEL_ORDER in frame else None
                       for frame in (matched.base, matched.new))
        sequential, described = sequential_difference(1.0 - lab_base, 1.0 - lab_new, both, keys=matched.keys,
                                                      order=order, orders=orders, label_order=label_order,
                                                      confidence=confidence)
    return LabelShift(rates.n_keys, int(has_base.sum()), int(has_new.sum()), rate_base, rate_new, difference, ci,
                      rates.ci, rate_verdict(ci), rates.paired, method,
                      rates.p_value if rates.paired else math.nan, rates.base_only, rates.new_only, losses,
                      _auroc_shifts(matched, lab_base, lab_new, confidence), power, sequential,
                      rate_verdict(sequential.ci) if sequential is not None else "", rates.rate_base, rates.rate_new,
                      rates.difference, described,
                      sequential_power(rates.base_only, rates.new_only, rates.n_keys, len(both), confidence=confidence)
                      if rates.paired else None,
                      None if matched.changed is None else labelled_sample(matched.changed, has_base, has_new))
