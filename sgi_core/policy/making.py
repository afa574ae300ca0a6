"""Thresholds that hold on new data, and the policy file that carries them.

The labelled rows are split into a **development** half and a **held-out** half
(stratified by label; whole groups stay on one side when a group column such as the
question or ``pair_id`` is given, so that the two answers to one question never land
on both sides; seeded). The threshold is chosen on development with
:func:`~sgi_core.stats.thresholds.choose_threshold` and judged on held-out rows.

Flagging follows :mod:`sgi_core.stats.thresholds`: a row is flagged
hallucinated when ``score < threshold``, and **hallucinated is the positive class**:
precision = share of flagged rows that are hallucinated, recall = share of
hallucinated rows that are flagged, flag rate = share of rows flagged. Their
intervals are Wilson score intervals.

:func:`make_policy` turns that threshold, with a calibrator and the held-out numbers,
into a :class:`~sgi_core.policy.file.Policy`, the file ``gate`` reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

from sgi_core.errors import SGIInputError
from sgi_core.policy.file import NOT_SCORE_COLUMNS, Policy
from sgi_core.policy.references import class_references
from sgi_core.results import JsonResult
from sgi_core.stats.calibration import fit_calibrator
from sgi_core.stats.checks import as_labels, as_scores, check_fraction
from sgi_core.stats.proportions import proportion_ci
from sgi_core.stats.ranking import roc_analysis
from sgi_core.stats.thresholds import ThresholdMetrics, choose_threshold, threshold_metrics

#: Bootstrap resamples of the held-out AUROC's interval a policy records.
HELDOUT_N_BOOT = 1000


def development_split(y_true, *, groups=None, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the development and held-out halves of the labelled rows.

    Stratified by label (:class:`sklearn.model_selection.StratifiedKFold`, 2 folds,
    shuffled) or, with ``groups``, by label with whole groups on one side
    (:class:`~sklearn.model_selection.StratifiedGroupKFold`). Unlabelled rows are in
    neither half.

    Returns
    -------
    dev, heldout : ndarray of int
        0-based positions into ``y_true``, sorted.

    Raises
    ------
    SGIInputError
        Fewer than 2 labelled rows of either class; with ``groups``, fewer than 2
        groups, or a half holding one label class only.

    Examples
    --------
    >>> dev, held = development_split([1, 0, 1, 0, 1, 0, 1, 0], groups=[1, 1, 2, 2, 3, 3, 4, 4])
    >>> len(dev), len(held), all(d // 2 != h // 2 for d in dev for h in held)
    (4, 4, True)
    """
    labels = as_labels(y_true)
    rows = np.flatnonzero(~np.isnan(labels))
    counts = np.bincount(labels[rows].astype(np.int64), minlength=2)
    if counts.min() < 2:
        raise SGIInputError(
            f"a development/held-out split needs at least 2 grounded and 2 hallucinated labelled rows; "
            f"got {counts[1]} grounded and {counts[0]} hallucinated",
            hint="Label more rows of the missing class",
        )
    if groups is None:
        splitter = StratifiedKFold(n_splits=2, shuffle=True, random_state=seed)
        dev, held = next(splitter.split(rows, labels[rows]))
    else:
        names = np.asarray(groups, dtype=object).ravel()
        if len(names) != len(labels):
            raise SGIInputError(f"'groups' has {len(names)} values but the labels have {len(labels)}")
        if len(set(names[rows].tolist())) < 2:
            raise SGIInputError("a grouped split needs at least 2 groups among the labelled rows")
        splitter = StratifiedGroupKFold(n_splits=2, shuffle=True, random_state=seed)
        dev, held = next(splitter.split(rows, labels[rows], names[rows]))
        for half, positions in (("development", rows[dev]), ("held-out", rows[held])):
            n_grounded = int(labels[positions].sum())
            if n_grounded in (0, len(positions)):  # whole groups of one label fell on one side
                raise SGIInputError(
                    f"the {half} half of the grouped split has only one label class ({n_grounded} grounded, "
                    f"{len(positions) - n_grounded} hallucinated), so no threshold can be chosen and judged",
                    hint="Label more rows of both kinds, spread over more groups, or split by a different group "
                         "column (or none)")
    return np.sort(rows[dev]), np.sort(rows[held])


@dataclass(frozen=True)
class HeldOutThreshold(JsonResult):
    """A threshold chosen on the development half and measured on the held-out half.

    Attributes
    ----------
    method : str
        Rule of :func:`choose_threshold`.
    target : float
    threshold : float
        Flag ``score < threshold``; NaN when no threshold met the rule.
    grouped : bool
        Whether whole groups were kept on one side.
    n_dev, n_heldout : int
    dev, heldout : ThresholdMetrics or None
        Metrics at the threshold on each half (hallucinated positive).
    precision_ci, recall_ci, flag_rate_ci : (float, float)
        Wilson intervals of the held-out precision, recall and flag rate.
    """

    method: str
    target: float
    threshold: float
    grouped: bool
    n_dev: int
    n_heldout: int
    dev: ThresholdMetrics | None
    heldout: ThresholdMetrics | None
    precision_ci: tuple[float, float]
    recall_ci: tuple[float, float]
    flag_rate_ci: tuple[float, float]


def _rates_ci(metrics: ThresholdMetrics, confidence: float) -> tuple[tuple[float, float], ...]:
    return (
        proportion_ci(metrics.tp, metrics.tp + metrics.fp, confidence=confidence),
        proportion_ci(metrics.tp, metrics.tp + metrics.fn, confidence=confidence),
        proportion_ci(metrics.n_flagged, metrics.n_scored, confidence=confidence),
    )


def holdout_threshold(
    y_true, score, *, groups=None, method: str = "youden", target: float | None = None,
    cost_ratio: float | None = None, seed: int = 0, confidence: float = 0.95,
) -> HeldOutThreshold:
    """Choose a threshold on the development half, report it on the held-out half.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled (in neither half).
    score : array_like of shape (n,)
        Higher = grounded; NaN rows are left out of both halves' metrics.
    groups : array_like of shape (n,), optional
        Question or pair id: rows of one group stay on the same side.
    method, target, cost_ratio
        As in :func:`~sgi_core.stats.thresholds.choose_threshold`.
    seed : int, default 0
    confidence : float, default 0.95

    Returns
    -------
    HeldOutThreshold

    Examples
    --------
    >>> y = [0, 1] * 20
    >>> s = [0.2, 0.8] * 20
    >>> res = holdout_threshold(y, s)
    >>> res.threshold, res.heldout.precision, res.heldout.recall, res.n_heldout
    (0.8, 1.0, 1.0, 20)
    """
    confidence = check_fraction(confidence, "confidence", "holdout_threshold")
    labels = as_labels(y_true)
    scores = as_scores(score, n=len(labels))
    dev, held = development_split(labels, groups=groups, seed=seed)
    choice = choose_threshold(labels[dev], scores[dev], method=method, target=target, cost_ratio=cost_ratio)
    nan_pair = (math.nan, math.nan)
    if choice.metrics is None:
        return HeldOutThreshold(method, choice.target, math.nan, groups is not None, len(dev), len(held), None, None,
                                nan_pair, nan_pair, nan_pair)
    heldout = threshold_metrics(labels[held], scores[held], choice.threshold)
    return HeldOutThreshold(method, choice.target, choice.threshold, groups is not None, len(dev), len(held),
                            choice.metrics, heldout, *_rates_ci(heldout, confidence))


def make_policy(
    y_true, score, *, model: str, model_precision: str | None = None, model_backend: str | None = None,
    context_strategy: str = "joined", score_column: str = "sgi",
    calibration: str = "platt", method: str = "youden",
    target: float | None = None, cost_ratio: float | None = None, groups=None, min_auroc: float | None = None,
    seed: int = 0, features: dict | None = None, answering_systems: tuple[str, ...] | None = None,
) -> tuple[Policy, HeldOutThreshold]:
    """Fit a calibrator and choose a threshold on the development half; record held-out results.

    Besides the held-out rates the policy records the confusion counts behind them
    (what :func:`~sgi_core.monitoring.prevalence.corrected_rate` needs) and, per class, the
    quantiles of the score and of ``features`` on the held-out rows
    (:func:`~sgi_core.policy.references.class_references`), which the monitor tests a
    new run against.

    Parameters
    ----------
    features : dict of str to array_like of shape (n,), optional
        Further monitored features of every row (:func:`~sgi_core.policy.references.feature_values`:
        response and context length, theta(q,c)); the score is always kept.
    answering_systems : tuple of str, optional
        The models or systems that wrote the answers (:func:`~sgi_core.policy.references.answering_systems`
        of the file), recorded so that the monitor can say when a run's answers come from another.

    Returns
    -------
    policy : Policy
    holdout : HeldOutThreshold
        The split's full numbers, intervals included.

    Raises
    ------
    SGIInputError
        When no threshold meets the rule on the development half.
    """
    if min_auroc is not None and not 0.0 <= min_auroc <= 1.0:
        raise SGIInputError(f"The 'min_auroc' parameter of make_policy must be in [0, 1]. Got {min_auroc!r} instead.")
    if score_column in NOT_SCORE_COLUMNS:
        raise SGIInputError(f"'{score_column}' is the label or a row number, not a score", column=score_column,
                            hint="Give the column of a detector's score (higher = grounded), e.g. sgi")
    labels = as_labels(y_true)
    scores = as_scores(score, n=len(labels))
    holdout = holdout_threshold(labels, scores, groups=groups, method=method, target=target, cost_ratio=cost_ratio,
                                seed=seed)
    if holdout.heldout is None:
        raise SGIInputError(f"no threshold meets the '{method}' rule on the development half",
                            hint="Relax the target or use method 'youden'")
    dev, heldout = development_split(labels, groups=groups, seed=seed)
    calibrator = fit_calibrator(scores[dev], labels[dev], method=calibration)
    # The held-out AUROC is what validates the score for this model (sgi_core.evaluation.validation).
    heldout_roc = roc_analysis(labels[heldout], scores[heldout], n_boot=HELDOUT_N_BOOT, seed=seed)
    for name, values in (features or {}).items():
        if len(np.asarray(values).ravel()) != len(labels):
            raise SGIInputError(f"feature '{name}' has {len(np.asarray(values).ravel())} values but the labels have "
                                f"{len(labels)}")
    monitored = {"score": scores, **{name: values for name, values in (features or {}).items() if name != "score"}}
    # The references describe the rows the held-out counts do: those with a score.
    scored = heldout[np.isfinite(scores[heldout])]
    references = class_references(labels[scored], {name: np.asarray(values, dtype=np.float64)[scored]
                                                   for name, values in monitored.items()})
    counts = holdout.heldout
    policy = Policy(
        model=model, model_precision=model_precision, model_backend=model_backend,
        context_strategy=context_strategy, score_column=score_column,
        calibrator=calibrator.to_dict(),
        threshold=holdout.threshold,
        threshold_method=method, precision=holdout.heldout.precision, recall=holdout.heldout.recall,
        flag_rate=holdout.heldout.flag_rate, min_auroc=None if min_auroc is None else float(min_auroc),
        heldout_auroc=heldout_roc.auroc, heldout_auroc_ci=tuple(heldout_roc.auroc_ci),
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        heldout_counts={"tp": counts.tp, "fp": counts.fp, "fn": counts.fn, "tn": counts.tn}, references=references,
        answering_systems=None if answering_systems is None else tuple(sorted(map(str, answering_systems))),
    )
    return policy, holdout
