"""Holding a labelled, scored file to a policy: the checks behind ``python -m sgi_core gate``.

Checks, one printed line each, exit status 1 when any fails (0 otherwise, 2 on bad input):

* **auroc**: the lower bound of the AUROC's bootstrap 95% interval must reach the
  minimum (``--min-auroc``, else the policy's ``min_auroc``); with no minimum the line
  says ``UNCHECKED`` and the check cannot fail;
* **precision** and **recall** of flagging ``score < policy.threshold`` (hallucinated
  positive) on the file: each fails when the upper bound of its Wilson 95% interval is
  below the value the policy recorded on its held-out half, i.e. when the file is worse
  than the policy by more than the file's own sampling error. A point-against-point
  rule would fail half of all files drawn from the very same distribution.

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
    """One check: its statistic, the bound it is held to and the printed line."""

    name: str
    passed: bool
    value: float
    bound: float
    line: str


@dataclass(frozen=True)
class GateResult(JsonResult):
    checks: tuple[GateCheck, ...]
    passed: bool


def _fmt_ci(ci) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _auroc_check(labels, scores, minimum, n_boot: int, seed: int) -> GateCheck:
    from sgi_core.evaluation.ranking import roc_analysis

    roc = roc_analysis(labels, scores, n_boot=n_boot, seed=seed)
    lower = roc.auroc_ci[0]
    about = f"AUROC {roc.auroc:.3f} {_fmt_ci(roc.auroc_ci)}, {roc.n_pos} grounded / {roc.n_neg} hallucinated rows"
    if lower <= 0.5 <= roc.auroc_ci[1]:
        about += "; the interval holds 0.5: the score is near chance on this file"
    if minimum is None:
        return GateCheck("auroc", True, lower, math.nan,
                         f"UNCHECKED auroc: {about}; no minimum is set (neither --min-auroc nor the policy's "
                         "min_auroc), so this check cannot fail")
    passed = bool(lower >= minimum)
    verdict = ">=" if passed else "<"
    return GateCheck("auroc", passed, lower, minimum,
                     f"{'PASS' if passed else 'FAIL'} auroc: lower 95% bound {lower:.3f} {verdict} minimum "
                     f"{minimum:.3f} ({about})")


def _rate_check(name: str, successes: int, trials: int, recorded: float, where: str) -> GateCheck:
    from sgi_core.evaluation.policy import proportion_ci

    value = successes / trials if trials else math.nan
    ci = proportion_ci(successes, trials)
    if math.isnan(value):
        return GateCheck(name, False, value, recorded, f"FAIL {name}: undefined {where} (zero denominator)")
    passed = bool(ci[1] >= recorded)
    verdict = "reaches" if passed else "is below"
    return GateCheck(name, passed, value, recorded,
                     f"{'PASS' if passed else 'FAIL'} {name}: {value:.3f} {_fmt_ci(ci)} {where}; upper bound "
                     f"{verdict} the policy's held-out {recorded:.3f}")


def run_gate(y_true, score, policy=None, *, min_auroc: float | None = None, n_boot: int = 1000,
             seed: int = 0) -> GateResult:
    """Hold a labelled, scored file to a policy (see the module docstring for the rules).

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled (left out).
    score : array_like of shape (n,)
        Higher = grounded, in the policy's score units.
    policy : sgi_core.evaluation.policy_file.Policy, optional
        Without one, only the AUROC is checked (against ``min_auroc``).
    min_auroc : float, optional
        Overrides ``policy.min_auroc``.
    n_boot, seed
        Bootstrap of the AUROC interval.

    Returns
    -------
    GateResult
        The precision or recall check is left out when the policy recorded NaN for it.
    """
    from sgi_core.evaluation.thresholds import threshold_metrics

    labels = np.asarray(y_true, dtype=np.float64)
    scores = np.asarray(score, dtype=np.float64)
    minimum = min_auroc if min_auroc is not None or policy is None else policy.min_auroc
    checks = [_auroc_check(labels, scores, minimum, n_boot, seed)]
    if policy is None:
        return GateResult(tuple(checks), all(c.passed for c in checks))
    m = threshold_metrics(labels, scores, policy.threshold)
    where = f"flagging {policy.score_column} < {policy.threshold:.4g}"
    if not math.isnan(policy.precision):
        checks.append(_rate_check("precision", m.tp, m.tp + m.fp, policy.precision, where))
    if not math.isnan(policy.recall):
        checks.append(_rate_check("recall", m.tp, m.tp + m.fn, policy.recall, where))
    return GateResult(tuple(checks), all(c.passed for c in checks))
