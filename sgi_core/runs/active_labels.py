"""Two runs' hallucination rates from labels drawn under an active design: the inverse-probability-weighted estimate.

Under an active design (:mod:`sgi_core.runs.sampling_design`) the labelled keys are not a
random sample: the design's probabilities ``pi`` weigh them back. Each run's predictor
column is mapped to P(hallucinated) by a logistic model cross-fitted over the design's
folds, so that no key's prediction depends on its own draw or label
(:func:`~sgi_core.stats.active_inference.design_cross_fit`); the difference
``d = y_new - y_base`` (1 = hallucinated) is predicted by ``p_new - p_base`` and estimated
by :func:`~sgi_core.stats.active_inference.active_mean`, as is each run's rate. The
labels-only figures become the same estimator without the predictor (Horvitz-Thompson).
The confidence sequence assumes keys labelled in a uniformly random order, which an active
design is not: it is left out, as is the check that the keys labelled in both runs are a
random sample of the changed and unchanged keys (the design draws changed keys more often on
purpose, and its probabilities are verified instead), and McNemar's test of the labelled
keys, which would test the drawn keys, not the runs. A uniform design keeps the prediction-powered estimate
of :func:`~sgi_core.runs.labels.label_shift`, which its keys are a random sample for.

Reference: Zrnic, T. and Candès, E. J. (2024). Active Statistical Inference. ICML.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np

from sgi_core.results import UndefinedStatisticWarning
from sgi_core.runs.labels import LabelShift, rate_verdict
from sgi_core.runs.sampling_design import LabellingDesign, plan_labels
from sgi_core.stats.active_inference import ActiveEstimate, active_mean, design_cross_fit
from sgi_core.stats.margin_power import MarginPower

ACTIVE_METHOD = "active (inverse-probability-weighted prediction-powered)"


def active_estimates(matched, design: LabellingDesign, *, confidence: float = 0.95) -> dict[str, ActiveEstimate]:
    """The active estimates of the base rate, the new rate and their difference (keys ``base``, ``new``,
    ``difference``).

    ``matched`` holds a per-key ``label`` (1 grounded, 0 hallucinated, NaN) in both runs,
    on exactly the keys ``design`` draws (:func:`~sgi_core.runs.design_labels.verified_pair_design`).
    """
    folds = design.folds()
    halluc, predicted = {}, {}
    for side, frame in (("base", matched.base), ("new", matched.new)):
        halluc[side] = 1.0 - frame["label"].to_numpy(dtype=np.float64)
        predicted[side] = design_cross_fit(frame[design.predictor].to_numpy(dtype=np.float64), halluc[side],
                                           design.pi, folds)
    out = {side: active_mean(halluc[side], predicted[side], design.pi, confidence=confidence)
           for side in ("base", "new")}
    # An unchanged key's difference is 0 whatever its label: predicted so, it adds nothing to the variance.
    difference = np.where(design.unchanged, 0.0, predicted["new"] - predicted["base"])
    out["difference"] = active_mean(halluc["new"] - halluc["base"], difference, design.pi, confidence=confidence)
    return out


def active_run_rate(frame, design: LabellingDesign, *, confidence: float = 0.95) -> ActiveEstimate:
    """One run's hallucination rate from the labels of a verified active design's units
    (:func:`~sgi_core.runs.design_labels.verified_run_design`), its predictor cross-fitted."""
    from sgi_core.runs.design_labels import run_units

    rows = frame.iloc[run_units(frame)[1]]
    halluc = 1.0 - rows["label"].to_numpy(dtype=np.float64)
    predicted = design_cross_fit(rows[design.predictor].to_numpy(dtype=np.float64), halluc, design.pi,
                                 design.folds())
    return active_mean(halluc, predicted, design.pi, confidence=confidence)


def active_label_shift(shift: LabelShift, matched, design: LabellingDesign, *,
                       confidence: float = 0.95) -> LabelShift:
    """``shift`` with its estimates replaced by the active ones where ``design`` is active; unchanged if uniform.

    The method reads "active (inverse-probability-weighted prediction-powered), predictor
    P, N keys; planned +/-h" (``h`` the half-width the design planned before any label,
    :func:`~sgi_core.runs.sampling_design.plan_labels`, beside the realised ``ci``); the rates
    of the labels-only line become the Horvitz-Thompson ones; ``power`` reads the active
    estimate's variance.
    """
    if design.design != "active":
        return replace(shift, method=f"{shift.method}; uniform sample, seed {design.seed}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)  # the method says why an interval is left out
        est = active_estimates(matched, design, confidence=confidence)
    diff = est["difference"]
    planned = plan_labels(design, 1.0, confidence=confidence).planned_half_width
    method = f"{ACTIVE_METHOD}, predictor {design.predictor}, {design.n_drawn} keys; planned +/-{planned:.3f}"
    if "no interval" in diff.method:
        method += f"; {diff.method.split('; ', 1)[1]}"
    # Without an interval nothing is detectable yet: an infinite margin, as the other designs say it.
    half = (diff.ci[1] - diff.ci[0]) / 2
    half = math.inf if math.isnan(half) else half
    # One drawn key's share of the variance, so that the gate's keys-needed reads this design's variance.
    power = MarginPower(design.n_drawn, "active", diff.variance * design.n_drawn, 0.0,
                        "observed: the active estimate's per-unit terms", half, confidence, shift.power.power
                        if shift.power is not None else 0.8)
    return replace(shift, rate_base=est["base"].estimate, rate_new=est["new"].estimate, difference=diff.estimate,
                   ci=diff.ci, labels_only_ci=diff.labels_only_ci, verdict=rate_verdict(diff.ci), method=method,
                   predictor_loss={}, power=power, sequential=None, sequential_verdict="", sequence_order="",
                   sequential_power=None, sample=None, mcnemar_p=math.nan,
                   labels_rate_base=est["base"].labels_only_estimate, labels_rate_new=est["new"].labels_only_estimate,
                   labels_difference=diff.labels_only_estimate)


def design_comparison(comparison, pair, label_paths, *, policy=None):
    """``comparison`` (:func:`~sgi_core.runs.comparison.compare_runs` of ``pair``) with its labels' estimate
    taken under the design the ``label_paths`` were drawn under; unchanged when they record none.

    Raises
    ------
    SGIInputError
        Labels whose design cannot be verified (:func:`~sgi_core.runs.design_labels.verified_pair_design`).
    """
    from sgi_core.runs.design_labels import verified_pair_design

    design = verified_pair_design(label_paths, pair, policy=policy)
    if design is None or comparison.labels is None:
        return comparison
    return replace(comparison, labels=active_label_shift(comparison.labels, pair.matched, design,
                                                         confidence=comparison.confidence))
