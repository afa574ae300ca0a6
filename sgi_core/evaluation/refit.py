"""Intervals that include the fitting: a bootstrap that refits an out-of-fold combination in every resample.

A combination fitted on the labels it is judged on spreads wider over samples of labels than a
bootstrap of its fixed probabilities shows, so its interval refits the whole out-of-fold pipeline in
each resample (:func:`judge_combined` gives the method and its references).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from sgi_core.errors import SGIInputError
from sgi_core.evaluation.judgement import ScoreJudgement, judge_score
from sgi_core.results import JsonResult, UndefinedStatisticWarning, warn_undefined
from sgi_core.stats.checks import as_labels, as_scores, check_choice, check_int, validates_inputs
from sgi_core.stats.crossval import out_of_fold_batch
from sgi_core.stats.effect_size import cohens_d_along
from sgi_core.stats.folds import crossfit_folds
from sgi_core.stats.length_matched import length_matched_auroc
from sgi_core.stats.paired import delong_test
from sgi_core.stats.ranking import separation_floor

#: Default bootstrap resamples of an interval that refits the pipeline in each one (``n_splits`` fits each).
REFIT_N_BOOT = 200
#: Labelled rows above which the fitted probabilities are held fixed instead of refitted (module notes).
REFIT_MAX_ROWS = 2_000
#: ``ci_method`` of an interval whose every resample refits the pipeline.
REFIT_CI_NAME = "refit percentile bootstrap"
#: Appended to ``ci_method`` where, above :data:`REFIT_MAX_ROWS` rows, the fitted probabilities are held fixed.
HELD_FIXED = " (fit held fixed)"
#: The protocol a combined score is judged under (:data:`sgi_core.evaluation.judgement.PROTOCOLS`).
COMBINED_PROTOCOL = "combined (out of fold)"


def _resample(codes: np.ndarray, labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Positions of one resample of whole groups, drawn with replacement within strata of group make-up."""
    n_groups = int(codes.max()) + 1
    stratum = (2 * (np.bincount(codes, weights=labels == 1, minlength=n_groups) > 0)
               + (np.bincount(codes, weights=labels == 0, minlength=n_groups) > 0))
    drawn = np.concatenate([rng.choice(members, size=len(members)) for members in
                            (np.flatnonzero(stratum == s) for s in np.unique(stratum))])
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(n_groups + 1))
    sizes = starts[drawn + 1] - starts[drawn]
    within = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return order[np.repeat(starts[drawn], sizes) + within]


def refit_replicates(features, labels, *, groups=None, column_sets=None, n_splits: int = 5,
                     n_boot: int = REFIT_N_BOOT, seed: int = 0) -> list[tuple[np.ndarray, list[np.ndarray]]]:
    """Bootstrap resamples of the labelled rows, each with the out-of-fold pipeline refitted on it.

    Each resample draws whole groups (module notes), deals them to ``n_splits`` folds
    with :func:`~sgi_core.stats.folds.crossfit_folds` and predicts every row out of
    fold with :func:`~sgi_core.stats.crossval.out_of_fold_batch`.

    Parameters
    ----------
    features : ndarray of shape (n, k)
        Feature values of the labelled rows; NaN is filled as the pipeline fills it.
    labels : ndarray of shape (n,)
        1 = grounded, 0 = hallucinated.
    groups : array_like of shape (n,), optional
        Question group of each row; without it every row is its own group.
    column_sets : sequence of sequence of int, optional
        The models refitted in each resample; default one model on every column.
    n_splits, n_boot, seed : int
        Folds per resample, resamples, and the seed of both.

    Returns
    -------
    list of (rows, probabilities)
        ``rows``: positions into ``labels`` (repeats included); ``probabilities``: one
        array of out-of-fold P(grounded) per column set, aligned with ``rows``. A
        resample that cannot be cross-fitted (a training fold holding one class, fewer
        groups than folds) is left out and counted in an :class:`UndefinedStatisticWarning`.

    Examples
    --------
    >>> y = np.array([1.0, 0.0] * 20)
    >>> out = refit_replicates((y + np.random.default_rng(0).normal(size=40))[:, None], y, n_boot=3)
    >>> len(out), [len(rows) == len(prob[0]) == 40 for rows, prob in out]
    (3, [True, True, True])
    """
    n_splits = check_int(n_splits, "n_splits", "refit_replicates", minimum=2)
    n_boot = check_int(n_boot, "n_boot", "refit_replicates", minimum=0)
    features, labels = np.asarray(features, dtype=np.float64), np.asarray(labels, dtype=np.float64)
    column_sets = [range(features.shape[1])] if column_sets is None else column_sets
    codes = (np.arange(len(labels)) if groups is None
             else pd.factorize(pd.Series(np.asarray(groups, dtype=object).ravel()), sort=False)[0])
    rng = np.random.default_rng(seed)
    problems, kept = [], []
    for _ in range(n_boot):
        rows = _resample(codes, labels, rng)
        y = labels[rows]
        try:
            folds = crossfit_folds(codes[rows], y_true=y, n_folds=n_splits, seed=int(rng.integers(2**31)))
        except SGIInputError:
            continue
        if all(0 < y[folds != fold].mean() < 1 for fold in range(n_splits)):
            problems.append((features[rows], y, folds))
            kept.append(rows)
    if len(kept) < n_boot:
        warn_undefined(f"{n_boot - len(kept)} of {n_boot} refit resamples could not be cross-fitted (a training fold "
                       "with one class, or fewer question groups than folds); the interval uses the others")
    return list(zip(kept, out_of_fold_batch(problems, column_sets))) if problems else []


def percentile_interval(values, *, confidence: float = 0.95) -> tuple[float, float]:
    """Percentiles ``(1 -/+ confidence) / 2`` of the finite ``values``, the others counted in a warning.

    Examples
    --------
    >>> percentile_interval(np.arange(5), confidence=0.5)
    (1.0, 3.0)
    """
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    if len(finite) < len(values):
        warn_undefined(f"the statistic is undefined in {len(values) - len(finite)} of {len(values)} resamples; "
                       "the interval uses the others")
    if len(finite) == 0:
        return (math.nan, math.nan)
    alpha = 100.0 * (1.0 - confidence) / 2.0
    lo, hi = np.percentile(finite, [alpha, 100.0 - alpha])
    return (float(lo), float(hi))


def rank_auroc(labels: np.ndarray, score: np.ndarray) -> float:
    """Mann-Whitney AUROC, grounded positive: ``(R_1 - n_1 (n_1 + 1) / 2) / (n_1 n_0)``, midranks for ties.

    Examples
    --------
    >>> rank_auroc(np.array([1, 1, 0, 0]), np.array([0.9, 0.4, 0.5, 0.1]))
    0.75
    """
    positive = labels == 1
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    return float((rankdata(score)[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _refit_statistics(y, replicates, lengths) -> np.ndarray:
    """Per resample: AUROC, Cohen's d and, with lengths, the length-matched AUROC and d (NaN where undefined)."""
    out = np.full((len(replicates), 4), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)  # counted by percentile_interval
        for i, (rows, (prob,)) in enumerate(replicates):
            labels = y[rows]
            out[i, :2] = rank_auroc(labels, prob), cohens_d_along(prob[labels == 1], prob[labels == 0])
            if lengths is not None:
                matched = length_matched_auroc(labels, prob, lengths[rows], n_boot=0)
                out[i, 2:] = matched.auroc, matched.cohens_d
    return out


@validates_inputs
def judge_combined(y_true, probability, features, *, lengths=None, groups=None, n_splits: int = 5,
                   n_boot: int = 1000, n_refit: int = REFIT_N_BOOT, seed: int = 0) -> ScoreJudgement:
    """Judge a combination's out-of-fold probability with intervals that refit it in every resample.

    :func:`~sgi_core.evaluation.judgement.judge_score`'s judgement of ``probability``
    (protocol :data:`COMBINED_PROTOCOL`), whose AUROC, Cohen's d and length-matched
    intervals are the percentiles over :func:`refit_replicates` of ``n_refit``
    resamples; ``ci_method`` of each part is :data:`REFIT_CI_NAME`. Above
    :data:`REFIT_MAX_ROWS` labelled rows: judge_score's intervals of ``n_boot``
    resamples, ``ci_method`` ending in :data:`HELD_FIXED`. ``n_boot=0`` or ``n_refit=0``:
    no intervals. Returns a :class:`~sgi_core.evaluation.judgement.ScoreJudgement`. A
    combination below :mod:`~sgi_core.evaluation.events_per_feature`'s floor is withheld by
    the caller before it gets here.

    Parameters
    ----------
    y_true, probability : array_like of shape (n,)
        Labels (NaN = unlabelled) and the out-of-fold P(grounded) (NaN = not predicted).
    features : array_like of shape (n, k)
        What the combination was fitted on.
    lengths, groups : array_like of shape (n,), optional
        Response lengths (length-matched AUROC) and question groups (resampled whole).
    n_splits : int
        Folds of the combination's cross-fitting.
    n_boot, n_refit, seed : int
        Resamples of the held-fixed intervals and of the refit ones; their seed.

    Notes
    -----
    An out-of-fold AUROC is honest about each row, but over samples of labels it spreads wider
    than a bootstrap of its fixed probabilities shows: the optimism and variance of data used
    twice (Efron and Tibshirani 1997; Varma and Simon 2006). Here every bootstrap resample of the
    labelled rows refits the whole out-of-fold pipeline (:func:`refit_replicates`) as the estimate
    itself was made, and an interval is the percentiles of a statistic over the resamples (Efron
    and Tibshirani 1993, ch. 13; the bootstrap of a cross-validated procedure, ch. 17).

    Resamples draw whole question groups with replacement within strata of group make-up (the
    two-class bootstrap of :func:`~sgi_core.stats.ranking.roc_analysis`); copies of a drawn group
    share a fold, so no row is scored by a model that saw its copy. Copies leave about 63%
    distinct training rows, so the interval errs on the cautious side. The resamples' fits are
    solved together (:func:`~sgi_core.stats.crossval.out_of_fold_batch`); above
    :data:`REFIT_MAX_ROWS` labelled rows the fitted probabilities are held fixed, fitting adding
    less spread the more rows there are, and ``ci_method`` says so (:data:`HELD_FIXED`).

    References
    ----------
    Efron, B. and Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
    Efron, B. and Tibshirani, R. (1997). Improvements on cross-validation: the .632+ bootstrap
    method. *Journal of the American Statistical Association* 92(438), 548-560.
    Varma, S. and Simon, R. (2006). Bias in error estimation when using cross-validation for model
    selection. *BMC Bioinformatics* 7, 91.

    Examples
    --------
    >>> y = np.array([1.0, 0.0] * 15)
    >>> x = (y + np.random.default_rng(0).normal(size=30))[:, None]
    >>> res = judge_combined(y, np.linspace(0, 1, 30), x, n_refit=20)
    >>> res.roc.ci_method, res.roc.n_boot
    ('refit percentile bootstrap', 20)
    """
    n_refit = check_int(n_refit, "n_refit", "judge_combined", minimum=0)
    labels, prob = as_labels(y_true), as_scores(probability, name="probability")
    used = ~np.isnan(labels) & ~np.isnan(prob)
    held_fixed = int(used.sum()) > REFIT_MAX_ROWS
    judged = judge_score(labels, prob, lengths=lengths, protocol=COMBINED_PROTOCOL,
                         n_boot=n_boot if held_fixed else 0, seed=seed)
    if n_boot == 0 or n_refit == 0 or not np.isfinite(judged.auroc):
        return judged
    parts = {"roc": judged.roc, "effect": judged.effect, "length_matched": judged.length_matched}
    if held_fixed:
        parts = {name: part if part is None else replace(part, ci_method=part.ci_method + HELD_FIXED)
                 for name, part in parts.items()}
        return replace(judged, **parts)
    lengths = None if lengths is None else as_scores(lengths, name="lengths")[used]
    replicates = refit_replicates(np.asarray(features, dtype=np.float64)[used], labels[used],
                                  groups=None if groups is None else np.asarray(groups)[used], n_splits=n_splits,
                                  n_boot=n_refit, seed=seed)
    stats = _refit_statistics(labels[used], replicates, lengths)
    intervals = [percentile_interval(stats[:, j]) for j in range(2 if lengths is None else 4)]
    intervals[0] = separation_floor(judged.auroc, judged.roc.n_pos, judged.roc.n_neg, intervals[0], confidence=0.95)
    how = {"ci_method": REFIT_CI_NAME, "n_boot": len(replicates)}
    parts["roc"] = replace(judged.roc, auroc_ci=intervals[0], **how)
    parts["effect"] = replace(judged.effect, cohens_d_ci=intervals[1], **how)
    if lengths is not None:
        parts["length_matched"] = replace(judged.length_matched, auroc_ci=intervals[2], cohens_d_ci=intervals[3], **how)
    return replace(judged, auroc_ci=intervals[0], cohens_d_ci=intervals[1],
                   length_matched_auroc_ci=intervals[2] if lengths is not None else judged.length_matched_auroc_ci,
                   **parts)


@dataclass(frozen=True)
class RefitComparison(JsonResult):
    """AUROC of a fitted combination against another score on the same rows, the combination refitted per resample.

    Attributes
    ----------
    auroc_a, auroc_b, difference : float
        Grounded positive, the combination being score ``refitted``; ``difference = auroc_a - auroc_b``.
    ci : (float, float)
        Percentile interval of the difference over the refit resamples.
    p_value : float
        Two-sided, ``min(1, 2 min(1 + #{D* <= 0}, 1 + #{D* >= 0}) / (B + 1))`` over the
        ``B`` resample differences ``D*``: the smallest level at which the percentile
        interval leaves out 0 (Efron and Tibshirani 1993, ch. 16), at least ``2 / (B + 1)``.
    n_pos, n_neg, n_excluded : int
        Grounded and hallucinated rows compared; rows left out (unlabelled, or a score missing).
    refitted : {"a", "b"}
    ci_method : str
        :data:`REFIT_CI_NAME`; above :data:`REFIT_MAX_ROWS` rows DeLong's with :data:`HELD_FIXED`.
    n_boot : int
        Resamples behind ``ci`` (0 for DeLong's).
    """

    auroc_a: float
    auroc_b: float
    difference: float
    ci: tuple[float, float]
    p_value: float
    n_pos: int
    n_neg: int
    n_excluded: int
    refitted: str
    ci_method: str
    n_boot: int


@validates_inputs
def refit_auroc_difference(y_true, probability, features, other, *, refitted: str = "a", groups=None,
                           n_splits: int = 5, n_boot: int = REFIT_N_BOOT, seed: int = 0,
                           confidence: float = 0.95) -> RefitComparison:
    """Compare a combination's AUROC with another score's, refitting the combination in every resample.

    DeLong's test holds both scores fixed, which a combination fitted on these labels
    is not. Here each resample of :func:`refit_replicates` gives
    ``D* = AUROC(refitted combination) - AUROC(other)`` (sign turned when the
    combination is ``b``) on the resampled rows; ``ci`` and ``p_value`` come from the
    ``D*`` (:class:`RefitComparison`).

    Parameters
    ----------
    y_true, probability, other : array_like of shape (n,)
        Labels, the combination's out-of-fold P(grounded) and the other score (higher =
        grounded); rows where any is NaN are left out.
    features : array_like of shape (n, k)
        What the combination was fitted on.
    refitted : {"a", "b"}
        Whether the combination is score A or score B of the result.
    groups, n_splits, n_boot, seed, confidence
        As :func:`refit_replicates` and :func:`percentile_interval` take them.

    Examples
    --------
    >>> y = np.array([1.0, 0.0] * 15)
    >>> x = (y + np.random.default_rng(0).normal(size=30))[:, None]
    >>> res = refit_auroc_difference(y, x[:, 0], x, x[:, 0], n_boot=20)
    >>> res.difference, res.ci_method
    (0.0, 'refit percentile bootstrap')
    """
    check_choice(refitted, "refitted", "refit_auroc_difference", ("a", "b"))
    labels = as_labels(y_true)
    prob, other = as_scores(probability, name="probability"), as_scores(other, name="other", n=len(labels))
    keep = ~(np.isnan(labels) | np.isnan(prob) | np.isnan(other))
    y, prob, other = labels[keep], prob[keep], other[keep]
    sign, n_pos = (1.0 if refitted == "a" else -1.0), int((y == 1).sum())
    counts = {"n_pos": n_pos, "n_neg": len(y) - n_pos, "n_excluded": int((~keep).sum()), "refitted": refitted}
    if min(n_pos, len(y) - n_pos) < 2:
        warn_undefined(f"comparing AUROCs needs at least 2 rows of each class; got {n_pos} grounded and "
                       f"{len(y) - n_pos} hallucinated")
        return RefitComparison(*[math.nan] * 3, (math.nan,) * 2, math.nan, **counts, ci_method="none", n_boot=0)
    fitted, fixed = rank_auroc(y, prob), rank_auroc(y, other)
    a, b = (fitted, fixed) if refitted == "a" else (fixed, fitted)
    if len(y) > REFIT_MAX_ROWS:
        delong = delong_test(y, *((prob, other) if refitted == "a" else (other, prob)), confidence=confidence)
        return RefitComparison(a, b, a - b, delong.ci, delong.p_value, **counts, ci_method="DeLong" + HELD_FIXED,
                               n_boot=0)
    replicates = refit_replicates(np.asarray(features, dtype=np.float64)[keep], y,
                                  groups=None if groups is None else np.asarray(groups)[keep], n_splits=n_splits,
                                  n_boot=n_boot, seed=seed)
    diffs = np.array([sign * (rank_auroc(y[rows], p) - rank_auroc(y[rows], other[rows])) for rows, (p,) in replicates])
    below, above = 1 + int((diffs <= 0).sum()), 1 + int((diffs >= 0).sum())
    p_value = min(1.0, 2.0 * min(below, above) / (len(diffs) + 1))
    return RefitComparison(a, b, a - b, percentile_interval(diffs, confidence=confidence), p_value, **counts,
                           ci_method=REFIT_CI_NAME, n_boot=len(diffs))
