"""One run held to a policy: its rate, the shift check, a re-validation, and the verdict.

:func:`monitor_run` is the one function the ``monitor`` command and the Monitor page call.

**The headline rate** (:class:`HeadlineRate`) is the one every face shows first and the one a
``max_rate`` is checked against. With labels on the seeded random sample the run asks for
(:mod:`sgi_core.monitoring.sample`) it is the re-validated, prediction-powered rate: *verified*;
with labels of an active sample drawn by ``sample`` it is the inverse-probability-weighted
prediction-powered rate (:func:`~sgi_core.monitoring.revalidation.revalidate_active`).
Otherwise it is the Rogan-Gladen corrected rate, which holds only if the score behaves within
each class as on the policy's held-out rows, an assumption the run cannot check when the
answering system changed: shown "if only the rate changed", never *verified*, and it decides
no limit and no ``"holds"``.

The verdict (:data:`STATUSES`), first that applies:

* ``"not validated"``: the policy's own record does not validate its score (a forced policy's
  held-out AUROC interval holds 0.5, or its held-out rows hold fewer than
  :data:`~sgi_core.policy.references.MIN_EVENTS_PER_CLASS` rows of a class), or the run's
  labelled sample does not (its AUROC interval holds 0.5 or lies below it);
* with the labelled sample: ``"over limit"`` when the verified rate or the flag share lies above
  a limit beyond its sampling error (the interval's lower bound is above it), else ``"holds"``;
* without it: ``"shift detected"`` when a feature of the run is not a mixture of the policy's class
  references (:mod:`sgi_core.monitoring.shift`); ``"over limit"`` when the flag share is;
  ``"unverified"`` otherwise: the run's rate is not known until :attr:`MonitorSummary.plan`'s
  rows are labelled. A shift check that could not be made (a run too small, references too
  small) is said so, and counts as nothing.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

from sgi_core.evaluation.validation import ScoreValidation, validate_from_policy
from sgi_core.monitoring.prevalence import CorrectedRate, corrected_rate
from sgi_core.monitoring.revalidation import Revalidation, revalidate, revalidate_active
from sgi_core.monitoring.sample import RATE_HALF_WIDTH, LabelPlan, plan_sample, sample_order, sample_problem
from sgi_core.monitoring.shift import BETA, ShiftCheck, shift_check
from sgi_core.policy.file import policy_to_json
from sgi_core.policy.references import (
    MIN_EVENTS_PER_CLASS,
    answering_systems,
    feature_label,
    feature_values,
)
from sgi_core.results import JsonResult

STATUSES = ("holds", "over limit", "shift detected", "not validated", "unverified")
#: What the unverified rate is called wherever it is shown.
IF_ONLY_THE_RATE_CHANGED = "if only the rate changed"


@dataclass(frozen=True)
class HeadlineRate(JsonResult):
    """The run's hallucination rate every face shows first (see the module).

    Attributes
    ----------
    estimate, ci : float, (float, float)
        NaN where no rate can be given (the corrected rate withheld, without labels).
    method : str
    verified : bool
        From labels of the seeded random sample of this run; False for the corrected rate.
    """

    estimate: float
    ci: tuple[float, float]
    method: str
    verified: bool


@dataclass(frozen=True)
class MonitorSummary(JsonResult):
    """A run held to a policy (see the module).

    Attributes
    ----------
    policy_id : str
        First 16 hex digits of the SHA-256 of the policy's JSON: the runs of one policy share it.
    score_column : str
    threshold : float
    n_rows, n_scored, n_flagged : int
    headline : HeadlineRate
    corrected : CorrectedRate
        The Rogan-Gladen rate, "if only the rate changed", and the flag share.
    shift : ShiftCheck
    validation : ScoreValidation
        What the policy's own record vouches for on this run: never a forced policy or one of too
        few held-out rows, nor under detected or unchecked shift.
    revalidation : Revalidation or None
        With labels on the seeded random sample of the run (:attr:`plan`).
    plan : LabelPlan
        The sample to label.
    labels_refused : str
        Why labels given are no re-validation (not the seeded sample, fewer rows than it needs); empty otherwise.
    answering_note : str
        Where the run names the systems that answered it and they are not the policy's (or the policy records
        none), what that means for the corrected rate; empty otherwise.
    max_rate, max_flag_rate : float or None
    over_limits, unchecked_limits : tuple of str
    status : str
        One of :data:`STATUSES`.
    """

    policy_id: str
    score_column: str
    threshold: float
    n_rows: int
    n_scored: int
    n_flagged: int
    headline: HeadlineRate
    corrected: CorrectedRate
    shift: ShiftCheck
    validation: ScoreValidation
    revalidation: Revalidation | None
    plan: LabelPlan
    labels_refused: str
    answering_note: str
    max_rate: float | None
    max_flag_rate: float | None
    over_limits: tuple[str, ...]
    unchecked_limits: tuple[str, ...]
    status: str


def policy_id(policy) -> str:
    """The policy's identity in the run history: its JSON's SHA-256, first 16 hex digits."""
    return hashlib.sha256(policy_to_json(policy).encode("utf-8")).hexdigest()[:16]


def record_validation(policy) -> ScoreValidation:
    """What the policy's own record validates: its held-out AUROC interval above 0.5 from enough rows of each class.

    A forced ("offer anyway") policy records a held-out AUROC interval that holds 0.5 and is
    refused by :func:`~sgi_core.evaluation.validation.validate_from_policy`; a policy whose held-out
    rows hold fewer than :data:`~sgi_core.policy.references.MIN_EVENTS_PER_CLASS` rows of a
    class is refused here, whatever its AUROC.
    """
    validation = validate_from_policy(policy.score_column, policy, model=None)
    counts = policy.heldout_counts
    if not validation.validated or counts is None:
        return validation
    classes = {"hallucinated": counts["tp"] + counts["fn"], "grounded": counts["tn"] + counts["fp"]}
    small = [f"{n} {name}" for name, n in classes.items() if n < MIN_EVENTS_PER_CLASS]
    if small:
        return ScoreValidation(policy.score_column, False, f"the policy's held-out rows hold {' and '.join(small)}, "
                               f"fewer than {MIN_EVENTS_PER_CLASS} of each class: too few to validate its score",
                               validation.evidence)
    return validation


def _over(ci, limit: float | None) -> bool:
    return limit is not None and not math.isnan(ci[0]) and ci[0] > limit


def monitor_run(policy, frame, scores, *, y_true=None, max_rate: float | None = None,
                max_flag_rate: float | None = None, rate_half_width: float = RATE_HALF_WIDTH, alpha: float = 0.05,
                seed: int = 0, n_boot: int = 1000, features: dict | None = None, keys=None,
                systems: tuple | None = None, drawn_design=None) -> MonitorSummary:
    """Hold a run to a policy: flags, rates, shift check, re-validation and verdict (see the module).

    Parameters
    ----------
    policy : Policy
    frame : pandas.DataFrame
        The run's rows (``question``, ``context``, ``response``; ``theta_qc`` where scored by SGI).
    scores : array_like of shape (n,)
        The policy's score of each row; NaN = not scored.
    y_true : array_like of shape (n,), optional
        Labels (1 grounded, 0 hallucinated, NaN unlabelled); they re-validate the policy only when
        they are the seeded random sample of :func:`~sgi_core.monitoring.sample.plan_sample`, or a
        verified sample drawn by ``sample`` (``drawn_design``), of at least the size the plan needs.
    max_rate, max_flag_rate : float, optional
        Limits in [0, 1]; ``max_rate`` is checked on the verified rate only.
    rate_half_width : float, default :data:`~sgi_core.monitoring.sample.RATE_HALF_WIDTH`
        Half-width of the rate's interval the sample to label is sized for.
    alpha : float, default 0.05
        Family-wise level of the shift tests.
    seed : int, default 0
        Seed of the sample to label and of the re-validation's folds.
    features, keys, systems : optional
        The rows' monitored features, row keys and answering systems, computed beforehand (a
        sharded run read in batches: :func:`sgi_core.pipelines.sharded_runs.run_digest`); with all
        three, ``frame`` may be None.
    drawn_design : LabellingDesign, optional
        The design of a sample of the run drawn and verified by the labelling design
        (:func:`~sgi_core.runs.design_labels.verified_run_design`): the labels are that sample, not
        the seeded order's prefix. A uniform one is a random sample of the run; an active one is
        weighed back by its inclusion probabilities, and where it gives no rate interval (too few
        labels of a class) the labels are refused, saying so.
    """
    scores = np.asarray(scores, dtype=np.float64).ravel()
    scored = np.isfinite(scores)
    n_flagged = int(np.count_nonzero(scores[scored] < policy.threshold))
    corrected = corrected_rate(n_flagged, int(scored.sum()), policy.heldout_counts)
    wide = corrected_rate(n_flagged, int(scored.sum()), policy.heldout_counts, confidence=1.0 - BETA)
    rate_range = (0.0, 1.0) if math.isnan(wide.ci[0]) else wide.ci
    features = feature_values(frame, scores) if features is None else features
    shift = shift_check(features, policy.references, rate_range, alpha=alpha)
    record = record_validation(policy)
    validation = record if not record.validated else _carried_over(record, shift)
    plan = plan_sample(len(scores), half_width=rate_half_width, seed=seed)
    labels = None if y_true is None else np.asarray(y_true, dtype=np.float64).ravel()
    labelled = np.zeros(len(scores), dtype=bool) if labels is None else ~np.isnan(labels)
    order = sample_order(frame, seed, keys=keys) if drawn_design is None else None
    refused = sample_problem(labelled, order, plan) if labelled.any() else ""
    revalidation, active = None, drawn_design is not None and drawn_design.design == "active"
    if labelled.any() and not refused:
        revalidation = (revalidate_active(frame, scores, policy.threshold, drawn_design, n_boot=n_boot, seed=seed)
                        if active else revalidate(labels, scores, policy.threshold, n_boot=n_boot, seed=seed))
    if revalidation is not None and math.isnan(revalidation.rate_ci[0]):
        refused = f"the active sample gives no interval of the run's rate: {revalidation.rate_method}"
        revalidation = None
    if revalidation is not None:
        sample = ("the seeded random sample" if drawn_design is None else
                  f"{'an active' if active else 'a uniform random'} sample drawn by `sample` "
                  f"(seed {drawn_design.seed})")
        headline = HeadlineRate(revalidation.rate, revalidation.rate_ci, f"re-validated on {revalidation.n_labelled:,} "
                                f"rows of {sample}: {revalidation.rate_method}", True)
    else:
        headline = HeadlineRate(corrected.estimate, corrected.ci, f"{corrected.method}, {IF_ONLY_THE_RATE_CHANGED}",
                                False)
    over = tuple(name for name, ci, limit in (("max_rate", headline.ci, max_rate if headline.verified else None),
                                              ("max_flag_rate", corrected.flag_share_ci, max_flag_rate))
                 if _over(ci, limit))
    unchecked = ("max_rate",) if max_rate is not None and not headline.verified else ()
    if not record.validated or (revalidation is not None and not revalidation.validated):
        status = "not validated"
    elif revalidation is not None:
        status = "over limit" if over else "holds"
    else:
        status = "shift detected" if shift.detected else "over limit" if over else "unverified"
    systems = systems if frame is None else answering_systems(frame)
    return MonitorSummary(policy_id(policy), policy.score_column, float(policy.threshold), len(scores),
                          int(scored.sum()), n_flagged, headline, corrected, shift, validation, revalidation, plan,
                          refused, answering_note(policy.answering_systems, systems), max_rate,
                          max_flag_rate, over, unchecked, status)


def answering_note(recorded, run) -> str:
    """What the run's answering systems say about the corrected rate, given the policy's ``recorded`` ones.

    Examples
    --------
    >>> answering_note(("model-a",), ("model-a",))
    ''
    >>> answering_note(("model-a",), ("model-a", "model-b"))[:58]
    "the run's answers come from model-b, the policy's rows' fr"
    """
    if not run:
        return ""
    if recorded is None:
        return (f"the run names its answering systems ({', '.join(run)}) and the policy records none: whether the "
                "score's error rates carry over to them is not known")
    new = [system for system in run if system not in recorded]
    if not new:
        return ""
    return (f"the run's answers come from {', '.join(new)}, the policy's rows' from {', '.join(recorded)}: a score's "
            "sensitivity and specificity do not carry over between answering systems, so the corrected rate can be "
            "far off with no shift test noticing; only the labelled sample can say")


def _carried_over(record: ScoreValidation, shift: ShiftCheck) -> ScoreValidation:
    """The policy's record on this run: withdrawn under detected shift, or where the check could not be made."""
    if shift.detected:
        moved = ", ".join(feature_label(name) for name in shift.shifted_features)
        why = f"the run's distribution is not a mixture of what the policy was validated on ({moved})"
    elif shift.unchecked:
        why = f"whether the run resembles what the policy was validated on is not known (shift not checked: " \
              f"{shift.unchecked})"
    else:
        return record
    return ScoreValidation(record.score, False, why, ())


def flagged_positions(scores, threshold: float) -> np.ndarray:
    """0-based positions of the rows a policy flags (``score < threshold``; NaN never).

    Examples
    --------
    >>> flagged_positions([0.2, float("nan"), 0.9, 0.4], 0.5).tolist()
    [0, 3]
    """
    return np.flatnonzero(np.asarray(scores, dtype=np.float64) < threshold)
