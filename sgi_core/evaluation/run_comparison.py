"""What changed between two runs: paired differences per score, flags at a threshold, labels and AUROCs.

Every score is oriented **higher = grounded**, and every difference is ``new - base``
over the keys both runs answered (:func:`sgi_core.evaluation.run_matching.match_runs`):
a difference is called a *regression* only when its whole interval lies below zero,
an *improvement* when it lies above, and *no clear change* otherwise. For the
hallucination rate, where higher is worse, the call is mirrored.

Methods: percentile bootstrap over keys (Efron & Tibshirani 1993) for the mean paired
difference; Wilcoxon's signed-rank test (Wilcoxon 1945) with Holm's step-down
correction across the scores (Holm 1979); McNemar's exact test (McNemar 1947) of the
flags; DeLong, DeLong & Clarke-Pearson (1988) for the AUROCs, paired when both runs
carry the same label on every key and unpaired otherwise.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.evaluation.checks import check_fraction, check_int
from sgi_core.evaluation.paired import delong_components, delong_test, mcnemar_test
from sgi_core.evaluation.run_matching import KeyMatch, MatchedRuns
from sgi_core.results import JsonResult, UndefinedStatisticWarning, warn_undefined

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

    Replicate ``b`` draws ``k`` key indices with replacement,
    ``idx_b = rng.integers(0, k, size=k)`` (``rng = numpy.random.default_rng(seed)``,
    replicates drawn in order, in batches), and takes ``mean(d[idx_b])``; the interval
    is the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the
    replicates.

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
    d = np.asarray(differences, dtype=np.float64)
    k = len(d)
    if n_boot == 0 or k == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    batch = max(1, _BATCH_VALUES // k)
    means = np.concatenate([d[rng.integers(0, k, size=(min(batch, n_boot - start), k))].mean(axis=1)
                            for start in range(0, n_boot, batch)])
    lo, hi = np.quantile(means, [(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0])
    return (float(lo), float(hi))


def verdict(ci, *, higher_is_better: bool = True) -> str:
    """``"regression"``, ``"improvement"`` or ``"no clear change"`` from a difference's interval.

    Examples
    --------
    >>> verdict((-0.3, -0.1)), verdict((-0.3, 0.1)), verdict((0.1, 0.2), higher_is_better=False)
    ('regression', 'no clear change', 'regression')
    """
    lo, hi = ci
    if not higher_is_better:
        lo, hi = -hi, -lo
    if hi < 0:
        return "regression"
    if lo > 0:
        return "improvement"
    return "no clear change"


def wilcoxon_p(differences) -> float:
    """Two-sided Wilcoxon signed-rank p of paired differences (:func:`scipy.stats.wilcoxon`, zeros dropped).

    NaN with a warning when no difference is non-zero.
    """
    d = np.asarray(differences, dtype=np.float64)
    if not np.any(d != 0):
        warn_undefined("Wilcoxon's test is undefined: every paired difference is zero")
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
        :func:`verdict` of ``ci``.
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
    """Hallucination rates (share of label 0) of each run over keys labelled in both.

    ``difference = rate_new - rate_base``, its interval from the paired bootstrap;
    ``verdict`` calls a *rise* a regression. ``paired`` says whether both runs carry
    the same label on every such key (then DeLong's paired test applies).
    """

    n_keys: int
    rate_base: float
    rate_new: float
    difference: float
    ci: tuple[float, float]
    verdict: str
    paired: bool
    auroc: tuple[AurocShift, ...]


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


def _unpaired_delong(score: str, labels_base, base, labels_new, new, confidence: float) -> AurocShift:
    """DeLong's variance of each AUROC on its own rows; the runs are independent, so the variances add.

    A run with fewer than 2 keys of a class has a NaN AUROC; the caller warns.

    ``Var(A) = var(V10) / m + var(V01) / n`` (ddof=1) from each run's structural
    components (:func:`~sgi_core.evaluation.paired.delong_components`), and
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


def _label_shift(matched: MatchedRuns, n_boot: int, seed: int, confidence: float) -> LabelShift | None:
    if "label" not in matched.base or "label" not in matched.new:
        return None
    lab_base, lab_new = matched.base["label"].to_numpy(), matched.new["label"].to_numpy()
    both = ~(np.isnan(lab_base) | np.isnan(lab_new))
    if not both.any():
        return None
    halluc_base, halluc_new = 1.0 - lab_base[both], 1.0 - lab_new[both]
    ci = paired_bootstrap_ci(halluc_new - halluc_base, n_boot=n_boot, seed=seed, confidence=confidence)
    paired = bool(np.array_equal(lab_base[both], lab_new[both]))
    shifts = []
    with warnings.catch_warnings():
        # One warning below names every score left undefined, instead of one per score and run.
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        for score in matched.scores:
            base, new = matched.base[score].to_numpy()[both], matched.new[score].to_numpy()[both]
            if paired:
                res = delong_test(lab_base[both], new, base, confidence=confidence)
                shifts.append(AurocShift(score, res.auroc_b, res.auroc_a, res.difference, res.ci, res.p_value, True))
            else:
                shifts.append(_unpaired_delong(score, lab_base[both], base, lab_new[both], new, confidence))
    undefined = [a.score for a in shifts if math.isnan(a.p_value)]
    if undefined:
        counts = [f"{side} {int((lab[both] == 1).sum())} grounded / {int((lab[both] == 0).sum())} hallucinated"
                  for side, lab in (("base", lab_base), ("new", lab_new))]
        warn_undefined(f"DeLong's test is undefined for {', '.join(undefined)}: each run needs 2 keys of each class "
                       f"and AUROCs that vary ({'; '.join(counts)} keys labelled in both)")
    diff = float(halluc_new.mean() - halluc_base.mean())
    return LabelShift(int(both.sum()), float(halluc_base.mean()), float(halluc_new.mean()), diff, ci,
                      verdict(ci, higher_is_better=False), paired, tuple(shifts))


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


def compare_runs(matched: MatchedRuns, *, threshold: tuple[str, float] | None = None, n_boot: int = 2000,
                 seed: int = 0, confidence: float = 0.95) -> RunComparison:
    """Compare two matched runs score by score, and on their labels when both carry them.

    Parameters
    ----------
    matched : MatchedRuns
        From :func:`~sgi_core.evaluation.run_matching.match_runs`; scores higher = grounded.
    threshold : (str, float), optional
        A policy's score column and threshold: keys with ``score < threshold`` are
        flagged in each run (on the per-key mean) and compared by McNemar's exact test.
    n_boot, seed, confidence
        The paired bootstrap (:func:`paired_bootstrap_ci`).

    Returns
    -------
    RunComparison
        Scores with fewer than one key scored on both sides get NaN with a warning.

    Examples
    --------
    >>> import pandas as pd
    >>> from sgi_core.evaluation.run_matching import match_runs
    >>> base = pd.DataFrame({"q": list("abcdef"), "sgi": [1.2, 1.1, 1.3, 1.0, 1.2, 1.4]})
    >>> new = pd.DataFrame({"q": list("abcdef"), "sgi": [0.9, 0.8, 1.0, 0.9, 0.7, 1.0]})
    >>> res = compare_runs(match_runs(base, new, key="q", scores=["sgi"]), n_boot=500)
    >>> row = res.scores[0]
    >>> round(row.difference, 3), row.verdict, round(row.wilcoxon_p, 4)
    (-0.317, 'regression', 0.0312)
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
                     ci, wilcoxon_p(d)))
    holm = holm_adjust([row[-1] for row in rows])
    deltas = tuple(ScoreDelta(*row, float(h), verdict(row[5])) for row, h in zip(rows, holm))
    if threshold is not None and threshold[0] not in matched.scores:
        raise SGIInputError(f"the policy's score column '{threshold[0]}' is not a score of both runs",
                            column=threshold[0], hint=f"Scores of both runs: {', '.join(matched.scores)}")
    flags = None if threshold is None else _flag_shift(matched, *threshold)
    return RunComparison(matched.match, deltas, flags, _label_shift(matched, n_boot, seed, confidence), n_boot,
                         seed, confidence)
