"""Holding a labelled, scored file to a policy: the checks behind ``python -m sgi_core gate``.

Checks (:func:`sgi_core.render.lines.gate_lines` words them, one line each), exit status 1 when any fails
(0 otherwise, 2 on bad input):

* **auroc**: the lower bound of the AUROC's bootstrap 95% interval must reach the
  minimum (``--min-auroc``, else the policy's ``min_auroc``); with no minimum the check
  is reported as unchecked and cannot fail;
* **precision** and **recall** of flagging ``score < policy.threshold`` (hallucinated
  positive) on the file: each fails when the upper bound of its Wilson 95% interval is
  below the value the policy recorded on its held-out half, i.e. when the file is worse
  than the policy by more than the file's own sampling error. A point-against-point
  rule would fail half of all files drawn from the very same distribution.

* **flag rate**, on a file without labels (the next release's output): the share of rows
  the policy flags, with its Wilson 95% interval, beside the flag rate the policy recorded on
  its held-out half; it fails only when a maximum is given (``--max-flag-rate``) and even
  the interval's lower bound is above it. The flags say something about grounding only
  where the policy records a held-out validation of its score
  (:func:`~sgi_core.evaluation.validation.validate_from_policy`); the command says so either way.

The command itself (reading the file, ``--write-policy``) is :mod:`sgi_core.commands.gate`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sgi_core.results import JsonResult

# The statistics are imported inside the functions: the CLI's parser imports this module on every
# call, and sgi_core.evaluation with scikit-learn would add seconds to `compute`.


@dataclass(frozen=True)
class GateCheck(JsonResult):
    """One check: the statistic held to a bound, with what its printed line reports.

    Attributes
    ----------
    name : {"auroc", "precision", "recall"}
    passed : bool
    value : float
        What is held to ``bound``: the lower end of the AUROC's 95% interval, or the
        rate on the file (NaN when its denominator is zero, which fails).
    bound : float
        The minimum AUROC (NaN: none set, which passes), or the rate the policy
        recorded on its held-out half (the upper end of ``ci`` must reach it).
    estimate : float
        The AUROC, or the rate.
    ci : (float, float)
        The AUROC's bootstrap 95% interval, or the rate's Wilson 95% interval.
    """

    name: str
    passed: bool
    value: float
    bound: float
    estimate: float
    ci: tuple[float, float]


@dataclass(frozen=True)
class GateResult(JsonResult):
    """Every check of one file against a policy.

    Attributes
    ----------
    checks : tuple of GateCheck
    passed : bool
        Whether every check passed.
    score_column : str
    threshold : float
        Rows scoring below it are flagged (hallucinated positive).
    n_grounded, n_hallucinated : int
        Labelled rows of each class behind the AUROC.
    """

    checks: tuple[GateCheck, ...]
    passed: bool
    score_column: str
    threshold: float
    n_grounded: int
    n_hallucinated: int


def _auroc_check(roc, minimum) -> GateCheck:
    lower = roc.auroc_ci[0]
    passed = True if minimum is None else bool(lower >= minimum)
    return GateCheck("auroc", passed, lower, math.nan if minimum is None else minimum, roc.auroc, roc.auroc_ci)


def _rate_check(name: str, successes: int, trials: int, recorded: float) -> GateCheck:
    from sgi_core.stats.proportions import proportion_ci

    value = successes / trials if trials else math.nan
    ci = proportion_ci(successes, trials)
    passed = not math.isnan(value) and bool(ci[1] >= recorded)
    return GateCheck(name, passed, value, recorded, value, ci)


def run_unlabelled_gate(score, policy, *, max_flag_rate: float | None = None) -> GateResult:
    """An unlabelled file's share of rows flagged at the policy's threshold, held to ``max_flag_rate`` when given.

    The share is of the scored rows (``score < policy.threshold``) with its Wilson 95%
    interval; the check fails only when ``max_flag_rate`` is given and the interval's lower
    bound is above it (the file is flagged more than allowed beyond its sampling error).
    Its ``bound`` is ``max_flag_rate`` (NaN without one).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> policy = SimpleNamespace(threshold=0.5, flag_rate=0.2, score_column="sgi")
    >>> scores = [0.1] * 50 + [0.9] * 50
    >>> run_unlabelled_gate(scores, policy).passed, run_unlabelled_gate(scores, policy, max_flag_rate=0.3).passed
    (True, False)
    """
    from sgi_core.stats.proportions import proportion_ci

    scores = np.asarray(score, dtype=np.float64)
    scored = ~np.isnan(scores)
    flagged, n = int(np.count_nonzero(scores[scored] < policy.threshold)), int(scored.sum())
    value = flagged / n if n else math.nan
    ci = proportion_ci(flagged, n)
    bound = math.nan if max_flag_rate is None else float(max_flag_rate)
    passed = not math.isnan(value) and (max_flag_rate is None or bool(ci[0] <= max_flag_rate))
    check = GateCheck("flag rate", passed, value, bound, value, ci)
    return GateResult((check,), passed, policy.score_column, float(policy.threshold), 0, 0)


def run_gate(y_true, score, policy=None, *, min_auroc: float | None = None, n_boot: int = 1000,
             seed: int = 0, score_column: str = "sgi") -> GateResult:
    """Hold a labelled, scored file to a policy (see the module docstring for the rules).

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled (left out).
    score : array_like of shape (n,)
        Higher = grounded, in the policy's score units.
    policy : sgi_core.policy.file.Policy, optional
        Without one, only the AUROC is checked (against ``min_auroc``).
    min_auroc : float, optional
        Overrides ``policy.min_auroc``.
    n_boot, seed
        Bootstrap of the AUROC interval.
    score_column : str, default "sgi"
        Name of the score without a policy (a policy names its own).

    Returns
    -------
    GateResult
        The precision or recall check is left out when the policy recorded NaN for it.
    """
    from sgi_core.evaluation.judgement import judge_score
    from sgi_core.stats.thresholds import threshold_metrics

    labels = np.asarray(y_true, dtype=np.float64)
    scores = np.asarray(score, dtype=np.float64)
    minimum = min_auroc if min_auroc is not None or policy is None else policy.min_auroc
    # The file's score is judged as every score is (the report's judgement), its AUROC read from there.
    roc = judge_score(labels, scores, lengths=None, n_boot=n_boot, seed=seed).roc
    checks = [_auroc_check(roc, minimum)]
    if policy is None:
        return GateResult(tuple(checks), checks[0].passed, score_column, math.nan, roc.n_pos, roc.n_neg)
    m = threshold_metrics(labels, scores, policy.threshold)
    if not math.isnan(policy.precision):
        checks.append(_rate_check("precision", m.tp, m.tp + m.fp, policy.precision))
    if not math.isnan(policy.recall):
        checks.append(_rate_check("recall", m.tp, m.tp + m.fn, policy.recall))
    return GateResult(tuple(checks), all(c.passed for c in checks), policy.score_column, float(policy.threshold),
                      roc.n_pos, roc.n_neg)
