"""Whether a score has earned a verdict word on the data at hand, and the word it earns.

A score is *validated* where its AUROC interval lies above 0.5 on the labels at hand, or a policy records
a held-out interval above 0.5 for it; otherwise it keeps its numbers and says "not validated" with the
reason. Every face that words a decision calls :func:`validate_on_labels` or :func:`validate_from_policy`
and :func:`verdict_word`; none decides on its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sgi_core.evaluation.verdict import standing_of
from sgi_core.results import JsonResult

#: The word of a difference whose score is not validated.
NOT_VALIDATED = "not validated"
#: The words of a validated difference.
VERDICT_WORDS = ("improvement", "regression", "no clear change")


@dataclass(frozen=True)
class RunAuroc(JsonResult):
    """One score's AUROC (grounded positive, oriented higher = grounded) on one run's labelled rows.

    Attributes
    ----------
    run : str
        ``"base"``, ``"new"``, ``"held-out (policy)"``, ...
    auroc : float
    auroc_ci : (float, float)
    n_grounded, n_hallucinated : int
        Labelled rows of each class behind it (-1 where a policy does not record them).
    """

    run: str
    auroc: float
    auroc_ci: tuple[float, float]
    n_grounded: int
    n_hallucinated: int


@dataclass(frozen=True)
class ScoreValidation(JsonResult):
    """Whether one score is validated, on what evidence, and why not when it is not.

    Attributes
    ----------
    score : str
    validated : bool
    reason : str
        One sentence: what validates it, or why it is not validated.
    evidence : tuple of RunAuroc
        The AUROCs the decision read (empty without labels).
    """

    score: str
    validated: bool
    reason: str
    evidence: tuple[RunAuroc, ...]


def _interval(ci) -> str:
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _why_not(item: RunAuroc) -> str | None:
    """Why one run's AUROC does not validate the score, or None when it does."""
    if item.n_grounded == 0 and item.n_hallucinated == 0:
        return f"no labels in {item.run}"
    standing = standing_of(item.auroc_ci)
    if standing == "separates":
        return None
    if standing == "undefined":
        return (f"no AUROC interval in {item.run} ({item.n_grounded} grounded / {item.n_hallucinated} "
                "hallucinated labelled rows)")
    where = "holds 0.5" if standing == "near chance" else "lies below 0.5"
    return f"AUROC {item.auroc:.2f} {_interval(item.auroc_ci)} {where} in {item.run}"


def validate_on_labels(score: str, evidence) -> ScoreValidation:
    """Validated when every run's AUROC interval lies above 0.5.

    Parameters
    ----------
    score : str
    evidence : sequence of RunAuroc
        One entry per run the score is read on; an empty sequence means no labels.

    Examples
    --------
    >>> ok = RunAuroc("base", 0.71, (0.62, 0.8), 60, 40)
    >>> weak = RunAuroc("new", 0.55, (0.46, 0.65), 70, 30)
    >>> validate_on_labels("sgi", [ok, ok]).validated
    True
    >>> validate_on_labels("sgi", [ok, weak]).reason
    'AUROC 0.55 [0.46, 0.65] holds 0.5 in new'
    >>> validate_on_labels("sgi", []).reason
    'no labels'
    """
    evidence = tuple(evidence)
    if not evidence:
        return ScoreValidation(score, False, "no labels", ())
    reasons = [why for why in map(_why_not, evidence) if why]
    if reasons:
        return ScoreValidation(score, False, "; ".join(reasons), evidence)
    shown = ", ".join(f"{e.run} {e.auroc:.2f} {_interval(e.auroc_ci)}" for e in evidence)
    return ScoreValidation(score, True, f"AUROC above 0.5 on the labels ({shown})", evidence)


def validate_from_policy(score: str, policy, *, model: str | None) -> ScoreValidation:
    """Validated by a policy that records a held-out AUROC interval above 0.5 for ``score`` and ``model``.

    Parameters
    ----------
    score : str
        The oriented score column.
    policy : Policy
        :class:`~sgi_core.policy.file.Policy`; its ``heldout_auroc_ci`` is NaN
        when the policy predates recording it.
    model : str or None
        The model that scored the runs, when known; a policy of another model does not
        validate SGI or an angle of this one.
    """
    if policy.score_column != score:
        return ScoreValidation(score, False, f"the policy holds '{policy.score_column}', not this score", ())
    if model is not None and policy.model != model:
        return ScoreValidation(score, False, f"the policy was validated with model '{policy.model}', not '{model}'",
                               ())
    evidence = RunAuroc("held-out rows of the policy", policy.heldout_auroc, tuple(policy.heldout_auroc_ci), -1, -1)
    if math.isnan(evidence.auroc_ci[0]):
        return ScoreValidation(score, False, "the policy records no held-out AUROC (write it again with this "
                                             "version)", (evidence,))
    why = _why_not(evidence)
    if why:
        return ScoreValidation(score, False, why, (evidence,))
    return ScoreValidation(score, True, f"held-out AUROC {evidence.auroc:.2f} {_interval(evidence.auroc_ci)} "
                                        "recorded in the policy", (evidence,))


def best_validation(*validations: ScoreValidation) -> ScoreValidation:
    """The first validation that validates, else the first one (its reason is the one shown)."""
    return next((v for v in validations if v.validated), validations[0])


def verdict_word(ci, validation: ScoreValidation, *, higher_is_better: bool = True) -> str:
    """``"improvement"``, ``"regression"`` or ``"no clear change"`` for a validated score, else "not validated".

    A difference is a regression only when its whole interval lies on the worse side of
    zero, an improvement on the better side.

    Examples
    --------
    >>> yes = ScoreValidation("s", True, "", ())
    >>> verdict_word((-0.3, -0.1), yes), verdict_word((-0.3, 0.1), yes)
    ('regression', 'no clear change')
    >>> verdict_word((-0.3, -0.1), ScoreValidation("s", False, "no labels", ()))
    'not validated'
    """
    if not validation.validated:
        return NOT_VALIDATED
    lo, hi = ci
    if not higher_is_better:
        lo, hi = -hi, -lo
    if hi < 0:
        return "regression"
    if lo > 0:
        return "improvement"
    return "no clear change"
