"""Whether a score adds anything beyond response length: cross-validated AUROC with and without it.

On HaluEval the grounded answers are short gold spans and the hallucinated ones are
sentences, so response length alone separates the labels; a score is only worth
reading where it adds signal beyond it (:func:`beyond_length`). The length baseline
itself is computed in :mod:`sgi_core.scores.baselines`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import roc_auc_score

from sgi_core.results import JsonResult, warn_undefined
from sgi_core.scores.registry import SCORES
from sgi_core.stats.checks import as_labels, as_scores, check_int, validates_inputs
from sgi_core.stats.crossval import fold_ids, out_of_fold_probabilities

#: Mean cross-validated AUROC gain below which SGI is said to add nothing beyond length.
NEGLIGIBLE_GAIN = 0.005
#: Gain below which the addition is called small.
SMALL_GAIN = 0.02
#: Length-alone AUROC from which the labels are called confounded with length.
CONFOUNDED_AUROC = 0.8


@dataclass(frozen=True)
class BeyondLengthResult(JsonResult):
    """Cross-validated AUROC of a logistic model on length alone vs length + score.

    Attributes
    ----------
    n : int
        Labelled rows with both features.
    n_splits : int
    auroc_length, auroc_length_score : float
        Mean AUROC over the folds.
    delta : float
        ``auroc_length_score - auroc_length``.
    fold_deltas : tuple of float
        The gain in each fold (same folds for both models).
    level : {"clear", "small", "none", "undefined"}
        The verdict as data: ``"clear"`` when the mean gain is at least
        :data:`SMALL_GAIN` and positive in every fold, ``"small"`` when it is at
        least :data:`NEGLIGIBLE_GAIN` and positive in every fold, else ``"none"``.
    verdict : str
        Plain-language reading of the numbers (it says what ``level`` says).
    """

    n: int
    n_splits: int
    auroc_length: float
    auroc_length_score: float
    delta: float
    fold_deltas: tuple[float, ...]
    level: str
    verdict: str


def length_level(delta: float, fold_deltas) -> str:
    """``"clear"``, ``"small"`` or ``"none"``: how much a score adds beyond length (see :class:`BeyondLengthResult`).

    Examples
    --------
    >>> length_level(0.05, [0.04, 0.06]), length_level(0.05, [-0.01, 0.11]), length_level(0.01, [0.01, 0.01])
    ('clear', 'none', 'small')
    """
    if delta < NEGLIGIBLE_GAIN or min(fold_deltas) <= 0:
        return "none"
    return "small" if delta < SMALL_GAIN else "clear"


def length_verdict(auroc_length: float, auroc_length_score: float, fold_deltas, score_name: str = "sgi") -> str:
    """The sentence a report prints for a :class:`BeyondLengthResult` (a registered score named by its label)."""
    score_name = SCORES[score_name].label if score_name in SCORES else score_name
    level = length_level(auroc_length_score - auroc_length, fold_deltas)
    numbers = (f"(AUROC {auroc_length:.3f} with response length alone, "
               f"{auroc_length_score:.3f} with length + {score_name})")
    adds = {"none": "adds no consistent signal", "small": "adds a small signal", "clear": "adds clear signal"}[level]
    text = f"{score_name} {adds} beyond response length {numbers}."
    if auroc_length >= CONFOUNDED_AUROC:
        text += (
            f" Response length alone already separates the labels (AUROC {auroc_length:.3f}): "
            "in this data the labels are confounded with answer length."
        )
    return text


@validates_inputs
def beyond_length(lengths, score, y_true, *, n_splits: int = 5, seed: int = 0,
                  score_name: str = "sgi") -> BeyondLengthResult:
    """Does the score add signal beyond length? Cross-validated AUROC with and without it.

    Two logistic regressions (grounded = 1) on the same stratified folds: one on
    length alone, one on length and the score. Each feature is first mapped to
    normal quantiles (fitted on the training fold), which keeps SGI's rare huge
    values (response = context) from dominating the fit.

    Parameters
    ----------
    lengths : array_like of shape (n,)
        E.g. response length in characters.
    score : array_like of shape (n,)
        E.g. SGI.
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled (left out).
    n_splits : int, default 5
    seed : int, default 0
        Seeds the fold shuffling.
    score_name : str, default "sgi"
        The score's column, named in the verdict (a registered score by its label).

    Returns
    -------
    BeyondLengthResult
        NaN with a warning when a class has fewer rows than ``n_splits``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([1, 0], 100)
    >>> res = beyond_length(rng.normal(size=200), y + rng.normal(size=200), y)
    >>> res.delta > 0.2
    True
    """
    n_splits = check_int(n_splits, "n_splits", "beyond_length", minimum=2)
    labels = as_labels(y_true)
    length_values = as_scores(lengths, name="lengths", n=len(labels))
    score_values = as_scores(score, n=len(labels))
    keep = ~np.isnan(labels) & ~np.isnan(length_values) & ~np.isnan(score_values)
    labels = labels[keep]
    n_min = int(min((labels == 1).sum(), (labels == 0).sum()))
    if n_min < n_splits:
        warn_undefined(f"beyond_length needs at least {n_splits} rows of each class; the smaller class has {n_min}")
        nan = math.nan
        return BeyondLengthResult(int(keep.sum()), n_splits, nan, nan, nan, (), "undefined",
                                  f"undefined: too few labelled rows ({n_min} in the smaller class)")
    features = np.column_stack([length_values[keep], score_values[keep]])
    folds = fold_ids(labels, n_splits=n_splits, seed=seed)

    def fold_aurocs(prob: np.ndarray) -> np.ndarray:
        return np.array([roc_auc_score(labels[folds == k], prob[folds == k]) for k in range(n_splits)])

    length_only, with_score = map(fold_aurocs, out_of_fold_probabilities(features, labels, folds, [[0], [0, 1]],
                                                                         seed=seed))
    fold_deltas = tuple((with_score - length_only).tolist())
    return BeyondLengthResult(
        n=len(labels),
        n_splits=n_splits,
        auroc_length=float(length_only.mean()),
        auroc_length_score=float(with_score.mean()),
        delta=float(with_score.mean() - length_only.mean()),
        fold_deltas=fold_deltas,
        level=length_level(float(with_score.mean() - length_only.mean()), fold_deltas),
        verdict=length_verdict(float(length_only.mean()), float(with_score.mean()), fold_deltas, score_name),
    )
