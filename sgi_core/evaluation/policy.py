"""Thresholds that hold on new data, and the policy file that carries them.

The labelled rows are split into a **development** half and a **held-out** half
(stratified by label; whole groups stay on one side when a group column such as the
question or ``pair_id`` is given, so that the two answers to one question never land
on both sides; seeded). The threshold is chosen on development with
:func:`~sgi_core.evaluation.thresholds.choose_threshold` and judged on held-out rows.

Flagging follows :mod:`sgi_core.evaluation.thresholds`: a row is flagged
hallucinated when ``score < threshold``, and **hallucinated is the positive class**:
precision = share of flagged rows that are hallucinated, recall = share of
hallucinated rows that are flagged, flag rate = share of rows flagged. Their
intervals are Wilson score intervals.

A :class:`Policy` is that threshold with its calibrator and held-out numbers, stored as
strict JSON: unknown, missing or mistyped fields are refused; nothing is evaluated or
unpickled.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from scipy import stats
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

from sgi_core.errors import SGIInputError
from sgi_core.evaluation._common import as_labels, as_scores, check_fraction
from sgi_core.evaluation.calibration import METHODS as CALIBRATION_METHODS
from sgi_core.evaluation.calibration import Calibrator, fit_calibrator
from sgi_core.evaluation.thresholds import CHOICE_METHODS, ThresholdMetrics, choose_threshold, threshold_metrics
from sgi_core.results import JsonResult

POLICY_SCHEMA = "sgi-workbench/policy"
POLICY_VERSION = 1


def proportion_ci(successes: int, trials: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of ``successes / trials``; ``(nan, nan)`` when ``trials`` is 0.

    Examples
    --------
    >>> [round(x, 4) for x in proportion_ci(8, 10)]
    [0.4902, 0.9433]
    """
    if trials == 0:
        return (math.nan, math.nan)
    ci = stats.binomtest(int(successes), int(trials)).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(ci.low), float(ci.high))


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
        As in :func:`~sgi_core.evaluation.thresholds.choose_threshold`.
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


@dataclass(frozen=True)
class Policy(JsonResult):
    """A flagging rule to apply to new data, with what it achieved on held-out rows.

    Attributes
    ----------
    model : str
        Embedding model the scores come from (``"minilm"``, ...).
    score_column : str
        ``"sgi"`` or another column of the file, higher = grounded.
    calibrator : dict
        :meth:`Calibrator.to_dict` of a calibrator fitted on the development half.
    threshold : float
        Flag ``score < threshold`` as hallucinated.
    threshold_method : str
    precision, recall, flag_rate : float
        Held-out values at the threshold (hallucinated positive); NaN if undefined.
    min_auroc : float or None
        Lowest acceptable lower 95% bound of the AUROC, if any.
    created : str
        ISO 8601 UTC time.
    schema, version : str, int
    """

    model: str
    score_column: str
    calibrator: dict
    threshold: float
    threshold_method: str
    precision: float
    recall: float
    flag_rate: float
    min_auroc: float | None
    created: str
    schema: str = POLICY_SCHEMA
    version: int = POLICY_VERSION

    @classmethod
    def from_dict(cls, data: dict, *, source: str = "<policy>") -> Policy:
        """Strict reading: every field present with the right type, nothing else."""
        if not isinstance(data, dict):
            raise SGIInputError("a policy must be a JSON object", source=source)
        expected = {f.name for f in fields(cls)}
        unknown, missing = sorted(set(data) - expected), sorted(expected - set(data))
        if unknown or missing:
            raise SGIInputError(
                "the policy has " + "; ".join(
                    part for part in (unknown and f"unknown fields {', '.join(unknown)}",
                                      missing and f"missing fields {', '.join(missing)}") if part),
                source=source, hint="Write policies with `python -m sgi_core gate FILE --write-policy OUT`",
            )
        if data["schema"] != POLICY_SCHEMA or data["version"] != POLICY_VERSION:
            raise SGIInputError(f"not a policy of this tool: schema {data['schema']!r} version {data['version']!r}, "
                                f"expected {POLICY_SCHEMA!r} version {POLICY_VERSION}", source=source)
        for name in ("model", "score_column", "threshold_method", "created"):
            _check(isinstance(data[name], str) and data[name], name, "a non-empty string", source)
        _check(data["threshold_method"] in CHOICE_METHODS, "threshold_method", f"one of {CHOICE_METHODS}", source)
        _check(_is_number(data["threshold"]), "threshold", "a number", source)
        for name in ("precision", "recall", "flag_rate", "min_auroc"):
            value = data[name]
            _check(value is None or (_is_number(value) and 0.0 <= value <= 1.0), name, "null or in [0, 1]", source)
        calibrator = _read_calibrator(data["calibrator"], source)
        nan = math.nan
        return cls(
            model=data["model"], score_column=data["score_column"], calibrator=calibrator.to_dict(),
            threshold=float(data["threshold"]), threshold_method=data["threshold_method"],
            precision=nan if data["precision"] is None else float(data["precision"]),
            recall=nan if data["recall"] is None else float(data["recall"]),
            flag_rate=nan if data["flag_rate"] is None else float(data["flag_rate"]),
            min_auroc=None if data["min_auroc"] is None else float(data["min_auroc"]),
            created=data["created"],
        )


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check(ok: bool, name: str, what: str, source: str) -> None:
    if not ok:
        raise SGIInputError(f"policy field '{name}' must be {what}", source=source)


def _read_calibrator(data, source: str) -> Calibrator:
    names = {f.name for f in fields(Calibrator)}
    _check(isinstance(data, dict) and set(data) == names, "calibrator",
           f"an object with exactly the fields {', '.join(sorted(names))}", source)
    _check(data["method"] in CALIBRATION_METHODS, "calibrator.method", f"one of {CALIBRATION_METHODS}", source)
    for name in ("knots_x", "knots_y"):
        _check(isinstance(data[name], list) and all(_is_number(v) for v in data[name]), f"calibrator.{name}",
               "a list of numbers", source)
    _check(len(data["knots_x"]) == len(data["knots_y"]), "calibrator.knots_y", "as long as knots_x", source)
    for name in ("slope", "intercept"):
        _check(data[name] is None or _is_number(data[name]), f"calibrator.{name}", "null or a number", source)
    return Calibrator.from_dict(data)


def policy_to_json(policy: Policy) -> str:
    """The policy as indented JSON (NaN written as null)."""
    return json.dumps(policy.to_dict(), indent=2, allow_nan=False)


def policy_from_json(text: str, *, source: str = "<policy>") -> Policy:
    """Read a policy written by :func:`policy_to_json`; refuses anything else with :class:`SGIInputError`."""

    def refuse_constant(name):
        raise SGIInputError(f"the policy holds {name}, which is not JSON", source=source)

    try:
        data = json.loads(text, parse_constant=refuse_constant)
    except json.JSONDecodeError as err:
        raise SGIInputError(f"the policy is not valid JSON: {err}", source=source) from None
    return Policy.from_dict(data, source=source)


def save_policy(policy: Policy, path) -> None:
    Path(path).write_text(policy_to_json(policy) + "\n", encoding="utf-8")


def load_policy(path) -> Policy:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise SGIInputError(f"cannot read the policy: {err}", source=str(path)) from None
    return policy_from_json(text, source=str(path))


def make_policy(
    y_true, score, *, model: str, score_column: str = "sgi", calibration: str = "platt", method: str = "youden",
    target: float | None = None, cost_ratio: float | None = None, groups=None, min_auroc: float | None = None,
    seed: int = 0,
) -> tuple[Policy, HeldOutThreshold]:
    """Fit a calibrator and choose a threshold on the development half; record held-out results.

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
    labels = as_labels(y_true)
    scores = as_scores(score, n=len(labels))
    holdout = holdout_threshold(labels, scores, groups=groups, method=method, target=target, cost_ratio=cost_ratio,
                                seed=seed)
    if holdout.heldout is None:
        raise SGIInputError(f"no threshold meets the '{method}' rule on the development half",
                            hint="Relax the target or use method 'youden'")
    dev, _ = development_split(labels, groups=groups, seed=seed)
    calibrator = fit_calibrator(scores[dev], labels[dev], method=calibration)
    policy = Policy(
        model=model, score_column=score_column, calibrator=calibrator.to_dict(), threshold=holdout.threshold,
        threshold_method=method, precision=holdout.heldout.precision, recall=holdout.heldout.recall,
        flag_rate=holdout.heldout.flag_rate, min_auroc=None if min_auroc is None else float(min_auroc),
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    return policy, holdout
