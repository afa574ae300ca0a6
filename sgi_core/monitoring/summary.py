"""One run held to a policy: its corrected rate, the shift check, a re-validation, and the verdict.

:func:`monitor_run` is the one function the ``monitor`` command and the Monitor page call.
Its verdict (:data:`STATUSES`):

* ``"not validated"``: a labelled random sample of the run does not validate the score
  (its AUROC interval holds 0.5 or lies below it); the policy does not hold on this run;
* ``"shift detected"``: without such a sample, a feature of the run is not a mixture of
  the policy's class references (:mod:`sgi_core.monitoring.shift`): the policy's validation
  may not carry over, and no face may say it validates its score. What to do: label a
  seeded random sample of :attr:`MonitorSummary.sample_size` rows and re-validate;
* ``"over limit"``: the corrected rate (the re-validated one where a sample is labelled)
  or the flag share is above a limit the user set, beyond its sampling error (the
  interval's lower bound is above it); ``"limit unchecked"`` where a limit was set on a
  corrected rate that is withheld;
* ``"holds"`` otherwise.

A labelled random sample supersedes the shift check: the run's own labels say whether the
score still separates the classes there.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

from sgi_core.evaluation.labels_needed import labels_needed
from sgi_core.evaluation.validation import ScoreValidation, validate_from_policy
from sgi_core.monitoring.prevalence import CorrectedRate, corrected_rate
from sgi_core.monitoring.references import feature_label, feature_values
from sgi_core.monitoring.revalidation import Revalidation, revalidate
from sgi_core.monitoring.shift import BETA, ShiftCheck, shift_check
from sgi_core.policy.file import policy_to_json
from sgi_core.results import JsonResult

STATUSES = ("holds", "over limit", "limit unchecked", "shift detected", "not validated")
#: Half-width of the AUROC interval the sample to label is sized for.
SAMPLE_HALF_WIDTH = 0.1
#: Rows of each class rebuilt from the references to size that sample.
_PSEUDO_ROWS = 200


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
    corrected : CorrectedRate
    shift : ShiftCheck
    validation : ScoreValidation
        What validates the score on this run: the policy's held-out record, never under
        detected shift.
    revalidation : Revalidation or None
        With labels on a random sample of the run.
    sample_size, sample_seed : int
        Rows to label (a seeded random sample) to re-validate; -1 when it cannot be sized.
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
    corrected: CorrectedRate
    shift: ShiftCheck
    validation: ScoreValidation
    revalidation: Revalidation | None
    sample_size: int
    sample_seed: int
    max_rate: float | None
    max_flag_rate: float | None
    over_limits: tuple[str, ...]
    unchecked_limits: tuple[str, ...]
    status: str


def policy_id(policy) -> str:
    """The policy's identity in the run history: its JSON's SHA-256, first 16 hex digits."""
    return hashlib.sha256(policy_to_json(policy).encode("utf-8")).hexdigest()[:16]


def _quantile_rows(quantiles, n: int) -> np.ndarray:
    quantiles = np.asarray(quantiles, dtype=np.float64)
    return np.interp((np.arange(n) + 0.5) / n, np.linspace(0.0, 1.0, len(quantiles)), quantiles)


def sample_size(policy, rate: float, n_left: int) -> int:
    """Labelled rows for an AUROC interval of half-width :data:`SAMPLE_HALF_WIDTH` on the run.

    :func:`~sgi_core.evaluation.labels_needed.labels_needed` on rows rebuilt from the
    policy's score references (each class's quantile function at evenly spaced
    probabilities), in the run's estimated class shares: how the score ranked the policy's
    held-out rows, the best guess before any label of the run. Capped at ``n_left``; -1
    without references.
    """
    score = (policy.references or {}).get("score")
    if score is None or n_left <= 0:
        return -1
    n_halluc = max(2, int(round(_PSEUDO_ROWS * rate)))
    n_grounded = max(2, _PSEUDO_ROWS - n_halluc)
    rows = np.r_[_quantile_rows(score["grounded"]["quantiles"], n_grounded),
                 _quantile_rows(score["hallucinated"]["quantiles"], n_halluc)]
    y = np.r_[np.ones(n_grounded), np.zeros(n_halluc)]
    needed = labels_needed(y, rows, target_half_width=SAMPLE_HALF_WIDTH).n_needed
    return min(needed, n_left) if needed >= 0 else n_left


def _over(ci, limit: float | None) -> bool:
    return limit is not None and not math.isnan(ci[0]) and ci[0] > limit


def monitor_run(policy, frame, scores, *, y_true=None, max_rate: float | None = None,
                max_flag_rate: float | None = None, alpha: float = 0.05, seed: int = 0,
                n_boot: int = 1000) -> MonitorSummary:
    """Hold a run to a policy: flags, corrected rate, shift check, re-validation and verdict.

    Parameters
    ----------
    policy : Policy
    frame : pandas.DataFrame
        The run's rows (``response``, ``context``, ``theta_qc`` where scored by SGI).
    scores : array_like of shape (n,)
        The policy's score of each row; NaN = not scored.
    y_true : array_like of shape (n,), optional
        Labels of a random sample of the run (1 grounded, 0 hallucinated, NaN unlabelled).
    max_rate, max_flag_rate : float, optional
        Limits in [0, 1].
    alpha : float, default 0.05
        Family-wise level of the shift tests.
    seed : int, default 0
        Seed of the sample to label and of the re-validation's folds.
    """
    scores = np.asarray(scores, dtype=np.float64).ravel()
    scored = np.isfinite(scores)
    n_flagged = int(np.count_nonzero(scores[scored] < policy.threshold))
    corrected = corrected_rate(n_flagged, int(scored.sum()), policy.heldout_counts)
    wide = corrected_rate(n_flagged, int(scored.sum()), policy.heldout_counts, confidence=1.0 - BETA)
    rate_range = (0.0, 1.0) if math.isnan(wide.ci[0]) else wide.ci
    shift = shift_check(feature_values(frame, scores), policy.references, rate_range, alpha=alpha)
    if shift.detected:
        moved = ", ".join(feature_label(name) for name in shift.shifted_features)
        validation = ScoreValidation(policy.score_column, False, f"the run's distribution is not a mixture of what the "
                                     f"policy was validated on ({moved})", ())
    else:
        validation = validate_from_policy(policy.score_column, policy, model=None)
    labelled = y_true is not None and bool(np.any(~np.isnan(np.asarray(y_true, dtype=np.float64))))
    revalidation = revalidate(y_true, scores, policy.threshold, n_boot=n_boot, seed=seed) if labelled else None
    rate_ci = revalidation.rate_ci if revalidation is not None else corrected.ci
    over = tuple(name for name, ci, limit in (("max_rate", rate_ci, max_rate),
                                              ("max_flag_rate", corrected.flag_share_ci, max_flag_rate))
                 if _over(ci, limit))
    unchecked = ("max_rate",) if max_rate is not None and math.isnan(rate_ci[0]) else ()
    if revalidation is not None and not revalidation.validated:
        status = "not validated"
    elif revalidation is None and shift.detected:
        status = "shift detected"
    else:
        status = "over limit" if over else "limit unchecked" if unchecked else "holds"
    return MonitorSummary(policy_id(policy), policy.score_column, float(policy.threshold), len(scores),
                          int(scored.sum()), n_flagged, corrected, shift, validation, revalidation,
                          sample_size(policy, corrected.weight, int(scored.sum())), seed, max_rate, max_flag_rate,
                          over, unchecked, status)


def flagged_positions(scores, threshold: float) -> np.ndarray:
    """0-based positions of the rows a policy flags (``score < threshold``; NaN never).

    Examples
    --------
    >>> flagged_positions([0.2, float("nan"), 0.9, 0.4], 0.5).tolist()
    [0, 3]
    """
    return np.flatnonzero(np.asarray(scores, dtype=np.float64) < threshold)
