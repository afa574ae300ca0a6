"""One way to judge any score against the labels: SGI, a baseline, a computed detector, a file's column.

:func:`judge_score` gives every score, oriented higher = grounded, the same :class:`ScoreJudgement`
(AUROC, Cohen's d, the length-matched AUROC, the leaky AUROC of a reference-set score), so that no
face judges a score its own way. A score learnt from labels is given out of fold
(:mod:`sgi_core.detectors.folds`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sgi_core.results import JsonResult
from sgi_core.stats.checks import as_scores
from sgi_core.stats.effect_size import EffectSizeResult, effect_size
from sgi_core.stats.length_matched import LengthMatchedResult, length_matched_auroc
from sgi_core.stats.ranking import RocResult, roc_analysis

#: How a judged score was obtained: label-free per row, cross-fitted on question-group folds, or the
#: out-of-fold combination of other scores.
PROTOCOLS = ("label-free", "crossfit", "combined (out of fold)")


@dataclass(frozen=True)
class ScoreJudgement(JsonResult):
    """One score judged against the labels (oriented higher = grounded).

    Attributes
    ----------
    protocol : str
        One of :data:`PROTOCOLS`.
    auroc, auroc_ci : float, (float, float)
        Grounded positive; interval of :func:`~sgi_core.stats.ranking.roc_analysis`.
    cohens_d, cohens_d_ci : float, (float, float)
        Valid minus hallucinated, ddof=1; interval of
        :func:`~sgi_core.stats.effect_size.effect_size`.
    auroc_leaky : float
        The same score under the leaky protocol (reference set holding the scored
        row); NaN for scores that need no reference set.
    length_matched_auroc, length_matched_auroc_ci : float, (float, float)
        AUROC after coarsened exact matching on response length.
    roc : RocResult
        The whole ROC analysis (curve, interval, method), kept so that nothing computes it again.
    effect : EffectSizeResult
        The whole effect-size result (means, d, g, Welch's test).
    length_matched : LengthMatchedResult or None
        The whole length-matched analysis; None without lengths.
    """

    protocol: str
    auroc: float
    auroc_ci: tuple[float, float]
    cohens_d: float
    cohens_d_ci: tuple[float, float]
    auroc_leaky: float
    length_matched_auroc: float
    length_matched_auroc_ci: tuple[float, float]
    roc: RocResult
    effect: EffectSizeResult
    length_matched: LengthMatchedResult | None = None


def judge_score(y_true, y_score, *, lengths, protocol: str = "label-free", leaky_score=None, n_boot: int = 1000,
                seed: int = 0, degenerate=None) -> ScoreJudgement:
    """Judge one oriented score against the labels.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled.
    y_score : array_like of shape (n,)
        Higher = grounded; NaN = not scored.
    lengths : array_like of shape (n,) or None
        Response lengths in characters, for the length-matched AUROC (NaN without them).
    protocol : str, default "label-free"
        Recorded as is (:data:`PROTOCOLS`).
    leaky_score : array_like of shape (n,), optional
        The score under the leaky reference-set protocol; its AUROC (no interval).
    degenerate : array_like of bool, shape (n,), optional
        Rows whose geometry is degenerate (SGI's ``sgi_status``): left out of the means
        and Cohen's d, kept in the AUROCs.
    n_boot, seed : int
        Bootstrap settings of the three intervals (0: no intervals). Above
        :data:`~sgi_core.stats.bootstrap.BOOTSTRAP_MAX_ROWS` labelled rows the
        three intervals are asymptotic (DeLong's, the delta method's).

    Returns
    -------
    ScoreJudgement
        Undefined parts are NaN, each with an :class:`UndefinedStatisticWarning`.

    Examples
    --------
    >>> res = judge_score([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1], lengths=[10, 20, 10, 20], n_boot=0)
    >>> res.auroc, res.length_matched_auroc
    (0.75, 0.75)
    """
    values = as_scores(y_score, name="y_score")
    roc = roc_analysis(y_true, values, n_boot=n_boot, seed=seed)
    effect_values = values if degenerate is None else np.where(np.asarray(degenerate, dtype=bool), np.nan, values)
    es = effect_size(y_true, effect_values, n_boot=n_boot, seed=seed)
    matched = None
    matched_auroc, matched_ci = math.nan, (math.nan, math.nan)
    if lengths is not None:
        matched = length_matched_auroc(y_true, values, lengths, n_boot=n_boot, seed=seed)
        matched_auroc, matched_ci = matched.auroc, matched.auroc_ci
    leaky = roc_analysis(y_true, leaky_score, n_boot=0).auroc if leaky_score is not None else math.nan
    return ScoreJudgement(protocol, roc.auroc, roc.auroc_ci, es.cohens_d, es.cohens_d_ci, leaky, matched_auroc,
                          matched_ci, roc, es, matched)
