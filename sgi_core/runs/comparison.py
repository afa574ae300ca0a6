"""What changed between two runs: the labels first, then each score's paired difference where the score is validated.

The labels are the ground truth: each run's hallucination rate and their difference
(:func:`sgi_core.runs.labels.label_shift`) lead. Every score is oriented
**higher = grounded**, and every difference is ``new - base`` over the keys both runs
answered (:func:`sgi_core.runs.matching.match_runs`). A score's difference
earns a word only when the score is validated on the labels at hand (its AUROC's
interval above 0.5 in both runs) or by a policy's held-out record
(:mod:`sgi_core.evaluation.validation`): a *regression* when the whole interval lies
below zero, an *improvement* above, *no clear change* otherwise; an unvalidated score
keeps its numbers and says "not validated" with the reason.

Methods: percentile bootstrap over keys (Efron & Tibshirani 1993) for the mean paired
difference; Wilcoxon's signed-rank test (Wilcoxon 1945) with Holm's step-down
correction across the scores (Holm 1979); McNemar's exact test (McNemar 1947) of the
flags.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.evaluation.validation import (
    RunAuroc,
    best_validation,
    validate_from_policy,
    validate_on_labels,
    verdict_word,
)
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.runs.label_order import LABELLING_ORDER
from sgi_core.runs.labels import LabelShift, label_shift, run_aurocs
from sgi_core.runs.matching import KeyMatch, MatchedRuns
from sgi_core.stats.checks import check_fraction, check_int
from sgi_core.stats.paired import mcnemar_test

#: Resampled values held in memory at once by the bootstrap (floats).
_BATCH_VALUES = 2_000_000


def holm_adjust(p_values) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values; NaN entries stay NaN and are not counted.

    With the ``m`` finite p-values sorted ascending, ``p_(1) <= ... <= p_(m)``:
    ``adj_(i) = max_{j <= i} min(1, (m - j + 1) * p_(j))``, then put back in input order.

    Examples
    --------
    >>> holm_adjust([0.01, 0.04, 0.03, float("nan")]).tolist()
    [0.03, 0.06, 0.06, nan]
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    finite = np.flatnonzero(~np.isnan(p))
    order = finite[np.argsort(p[finite], kind="stable")]
    m = len(order)
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled)
    return out


def paired_bootstrap_ci(differences, *, n_boot: int = 2000, seed: int = 0,
                        confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of paired differences, resampling keys.

    With the differences sorted ascending (``d``), replicate ``b`` draws ``k`` indices with
    replacement, ``idx_b = rng.integers(0, k, size=k)`` (``rng =
    numpy.random.default_rng(seed)``, replicates drawn in order, in batches), and takes
    ``mean(d[idx_b])``; the interval is the ``(1 - confidence) / 2`` and
    ``(1 + confidence) / 2`` quantiles of the replicates. Sorting first changes nothing in
    the bootstrap's law (the mean depends on the resampled values only) and makes the
    interval the same whatever the order the keys come in.

    Parameters
    ----------
    differences : array_like of shape (k,)
        ``new - base`` per key, finite.
    n_boot : int, default 2000
        0 gives ``(nan, nan)``.
    seed : int, default 0
    confidence : float, default 0.95

    Examples
    --------
    >>> paired_bootstrap_ci([1.0, 1.0, 1.0], n_boot=100)
    (1.0, 1.0)
    """
    n_boot = check_int(n_boot, "n_boot", "paired_bootstrap_ci", minimum=0)
    confidence = check_fraction(confidence, "confidence", "paired_bootstrap_ci")
    d = np.sort(np.asarray(differences, dtype=np.float64))
    k = len(d)
    if n_boot == 0 or k == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    batch = max(1, _BATCH_VALUES // k)
    means = np.concatenate([d[rng.integers(0, k, size=(min(batch, n_boot - start), k))].mean(axis=1)
                            for start in range(0, n_boot, batch)])
    lo, hi = np.quantile(means, [(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0])
    return (float(lo), float(hi))


def wilcoxon_p(differences, *, score: str = "the score") -> float:
    """Two-sided Wilcoxon signed-rank p of paired differences (:func:`scipy.stats.wilcoxon`, zeros dropped).

    NaN with a warning naming ``score`` when no difference is non-zero.
    """
    d = np.asarray(differences, dtype=np.float64)
    if not np.any(d != 0):
        warn_undefined(f"Wilcoxon's test is undefined for {score}: every paired difference is zero")
        return math.nan
    return float(stats.wilcoxon(d).pvalue)


@dataclass(frozen=True)
class ScoreDelta(JsonResult):
    """One score in two runs: ``difference = mean(new - base)`` over the keys both scored.

    Attributes
    ----------
    score : str
        Column name, oriented higher = grounded.
    n_keys : int
        Matched keys with a value on both sides.
    mean_base, mean_new, difference : float
    ci : (float, float)
        Bootstrap interval of ``difference`` (:func:`paired_bootstrap_ci`).
    wilcoxon_p, holm_p : float
        Signed-rank p and its Holm adjustment across the compared scores.
    verdict : str
        :func:`~sgi_core.evaluation.validation.verdict_word` of ``ci``: "improvement",
        "regression" or "no clear change" when the score is validated, else "not validated".
    validated : bool
    validation : str
        Why the score is validated, or why not (the reason shown beside "not validated").
    auroc_base, auroc_new : float
        The score's AUROC (grounded positive) on each run's labelled keys (NaN without labels).
    auroc_base_ci, auroc_new_ci : (float, float)
    """

    score: str
    n_keys: int
    mean_base: float
    mean_new: float
    difference: float
    ci: tuple[float, float]
    wilcoxon_p: float
    holm_p: float
    verdict: str
    validated: bool
    validation: str
    auroc_base: float
    auroc_base_ci: tuple[float, float]
    auroc_new: float
    auroc_new_ci: tuple[float, float]


@dataclass(frozen=True)
class FlagShift(JsonResult):
    """Keys flagged ``score < threshold`` (hallucinated) in each run, and McNemar's exact test.

    ``flagged_base_only`` and ``flagged_new_only`` are the discordant keys; the p-value
    is the two-sided binomial test of one of them out of their sum at 1/2.
    """

    score: str
    threshold: float
    n_keys: int
    share_base: float
    share_new: float
    flagged_base_only: int
    flagged_new_only: int
    mcnemar_p: float


@dataclass(frozen=True)
class RunComparison(JsonResult):
    """Everything :func:`compare_runs` finds; ``scores`` in the order given."""

    match: KeyMatch
    scores: tuple[ScoreDelta, ...]
    flags: FlagShift | None
    labels: LabelShift | None
    n_boot: int
    seed: int
    confidence: float


def _flag_shift(matched: MatchedRuns, score: str, threshold: float) -> FlagShift:
    base, new = matched.base[score].to_numpy(), matched.new[score].to_numpy()
    keep = ~(np.isnan(base) | np.isnan(new))
    # With every key labelled hallucinated, mcnemar_test's "right" means "flagged": its table is the flag table.
    res = mcnemar_test(np.zeros(int(keep.sum())), base[keep], new[keep], threshold, threshold, exact=True)
    n = int(keep.sum())
    share_base = (res.both_right + res.a_only_right) / n if n else math.nan
    share_new = (res.both_right + res.b_only_right) / n if n else math.nan
    return FlagShift(score, float(threshold), n, share_base, share_new, res.a_only_right, res.b_only_right,
                     res.p_value)


def _validation(matched: MatchedRuns, score: str, policy, model, labelled: bool, n_boot: int, seed: int):
    """The score's per-run AUROCs and its validation: on the labels, else by the policy, else none."""
    nan_run = RunAuroc("", math.nan, (math.nan, math.nan), 0, 0)
    aurocs = run_aurocs(matched, score, n_boot=max(n_boot, 200), seed=seed) if labelled else (nan_run, nan_run)
    checks = [validate_on_labels(score, aurocs if labelled else ())]
    if policy is not None:
        checks.append(validate_from_policy(score, policy, model=model))
    return aurocs, best_validation(*checks)


def compare_runs(matched: MatchedRuns, *, threshold: tuple[str, float] | None = None, policy=None,
                 model: str | None = None, n_boot: int = 2000, seed: int = 0, confidence: float = 0.95,
                 prediction_powered: bool = True, label_order: str = LABELLING_ORDER) -> RunComparison:
    """Compare two matched runs on their labels, and score by score where a score is validated.

    Parameters
    ----------
    matched : MatchedRuns
        From :func:`~sgi_core.runs.matching.match_runs`; scores higher = grounded.
    threshold : (str, float), optional
        A policy's score column and threshold: keys with ``score < threshold`` are
        flagged in each run (on the per-key mean) and compared by McNemar's exact test.
    policy : Policy, optional
        A policy whose recorded held-out AUROC may validate its score
        (:func:`~sgi_core.evaluation.validation.validate_from_policy`).
    model : str, optional
        The model that scored the runs, checked against the policy's.
    n_boot, seed, confidence
        The paired bootstrap (:func:`paired_bootstrap_ci`) and the AUROC intervals.
    prediction_powered : bool, default True
        Estimate the rate difference over every key when only some are labelled
        (:func:`~sgi_core.runs.labels.label_shift`).
    label_order : str
        How the runs' ``label_order`` columns were made (:mod:`~sgi_core.runs.label_order`).

    Returns
    -------
    RunComparison
        Scores with fewer than one key scored on both sides get NaN with a warning.

    Examples
    --------
    >>> import pandas as pd
    >>> from sgi_core.runs.matching import match_runs
    >>> base = pd.DataFrame({"q": list("abcdef"), "sgi": [1.2, 1.1, 1.3, 1.0, 1.2, 1.4]})
    >>> new = pd.DataFrame({"q": list("abcdef"), "sgi": [0.9, 0.8, 1.0, 0.9, 0.7, 1.0]})
    >>> res = compare_runs(match_runs(base, new, key="q", scores=["sgi"]), n_boot=500)
    >>> row = res.scores[0]
    >>> round(row.difference, 3), row.verdict, row.validation, round(row.wilcoxon_p, 4)
    (-0.317, 'not validated', 'no labels', 0.0312)
    """
    n_boot = check_int(n_boot, "n_boot", "compare_runs", minimum=0)
    confidence = check_fraction(confidence, "confidence", "compare_runs")
    rows = []
    for score in matched.scores:
        base, new = matched.base[score].to_numpy(), matched.new[score].to_numpy()
        keep = ~(np.isnan(base) | np.isnan(new))
        d = new[keep] - base[keep]
        if not keep.any():
            warn_undefined(f"no matched key has a '{score}' value in both runs")
            rows.append((score, 0, math.nan, math.nan, math.nan, (math.nan, math.nan), math.nan))
            continue
        ci = paired_bootstrap_ci(d, n_boot=n_boot, seed=seed, confidence=confidence)
        rows.append((score, int(keep.sum()), float(base[keep].mean()), float(new[keep].mean()), float(d.mean()),
                     ci, wilcoxon_p(d, score=score)))
    holm = holm_adjust([row[-1] for row in rows])
    labels = label_shift(matched, confidence=confidence, seed=seed, prediction_powered=prediction_powered,
                         label_order=label_order)
    deltas = []
    for row, h in zip(rows, holm):
        aurocs, validation = _validation(matched, row[0], policy, model, labels is not None, n_boot, seed)
        deltas.append(ScoreDelta(*row, float(h), verdict_word(row[5], validation), validation.validated,
                                 validation.reason, aurocs[0].auroc, aurocs[0].auroc_ci, aurocs[1].auroc,
                                 aurocs[1].auroc_ci))
    if threshold is not None and threshold[0] not in matched.scores:
        raise SGIInputError(f"the policy's score column '{threshold[0]}' is not a score of both runs",
                            column=threshold[0], hint=f"Scores of both runs: {', '.join(matched.scores)}")
    flags = None if threshold is None else _flag_shift(matched, *threshold)
    return RunComparison(matched.match, tuple(deltas), flags, labels, n_boot, seed, confidence)
