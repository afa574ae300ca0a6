"""A score within the groups of any categorical column, and whether the group alone gives the label away.

When answers of different authors (models, people) carry different labels, a detector can score well
by recognising the author instead of the grounding; :func:`group_confound` measures that, and
:func:`group_analysis` judges the score within each group.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult, UndefinedStatisticWarning
from sgi_core.stats.checks import as_labels, as_scores, check_fraction, check_int
from sgi_core.stats.effect_size import effect_size
from sgi_core.stats.ranking import auroc, roc_analysis

#: Name given to rows whose group value is missing.
MISSING_GROUP = "(missing)"
#: Columns that hold the answers to one question together, in order of preference: what a development /
#: held-out split keeps on one side unless told otherwise. Never a generator or label-like column, whose
#: whole groups on one side would make each half one generator's rows or one label.
KEEP_TOGETHER = ("pair_id", "question")


def default_keep_together(columns) -> str | None:
    """The first of :data:`KEEP_TOGETHER` among ``columns``, or None.

    Examples
    --------
    >>> default_keep_together(["question", "system", "pair_id"]), default_keep_together(["question", "system"])
    ('pair_id', 'question')
    """
    present = set(columns)
    return next((column for column in KEEP_TOGETHER if column in present), None)


@dataclass(frozen=True)
class GroupResult(JsonResult):
    """A score's separation inside one group.

    Attributes
    ----------
    group : str
    n_valid, n_halluc : int
        Labelled, scored rows of each class in the group.
    grounded_rate : float
        ``n_valid / (n_valid + n_halluc)``.
    auroc, auroc_ci : float, (float, float)
    cohens_d, cohens_d_ci : float, (float, float)
        NaN (with a warning) when the group lacks a class or has fewer than 2 of one.
    """

    group: str
    n_valid: int
    n_halluc: int
    grounded_rate: float
    auroc: float
    auroc_ci: tuple[float, float]
    cohens_d: float
    cohens_d_ci: tuple[float, float]


@dataclass(frozen=True)
class GroupConfound(JsonResult):
    """How well the group identity alone predicts the label.

    Attributes
    ----------
    column : str
    auroc : float
        AUROC of each row's group grounded rate as a score (in-sample).
    n_groups : int
    pure_groups : tuple of str
        Groups with at least ``min_group_rows`` labelled rows, ``purity`` or more of
        them one class.
    level : {"warning", "ok"}
    message : str
    """

    column: str
    auroc: float
    n_groups: int
    pure_groups: tuple[str, ...]
    level: str
    message: str


@dataclass(frozen=True)
class GroupAnalysis(JsonResult):
    """Per-group results of a score and the group-only confound check."""

    column: str
    groups: tuple[GroupResult, ...]
    confound: GroupConfound
    n_excluded: int


def _group_names(groups, n: int, column: str) -> np.ndarray:
    """Each row's group name (``str`` of its value, :data:`MISSING_GROUP` for a missing one).

    The rows share one Python string per distinct group (pandas factorizes the
    column), so millions of rows of a text column cost pointers, not strings.
    """
    values = groups if isinstance(groups, pd.Series) else pd.Series(np.asarray(groups, dtype=object).ravel())
    if len(values) != n:
        raise SGIInputError(f"group column '{column}' has {len(values)} values but the labels have {n}",
                            column=column)
    codes, distinct = pd.factorize(values)
    # Code -1 (a missing value) takes the last name.
    return np.array([*(str(v) for v in distinct), MISSING_GROUP], dtype=object)[codes]


def group_confound(
    y_true, groups, *, column: str = "group", purity: float = 0.95, min_group_rows: int = 20
) -> GroupConfound:
    """AUROC of the group identity alone as a predictor of the label.

    Each labelled row is scored with its group's grounded rate
    ``n_valid(g) / n(g)`` (in-sample), and the AUROC of that score against the
    labels is reported: 0.5 when every group has the same mix, 1.0 when each group is
    all one class. The level is ``"warning"`` when some group of at least
    ``min_group_rows`` labelled rows has ``max(rate, 1 - rate) >= purity``.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled (left out).
    groups : array_like of shape (n,)
        Group of each row; missing values form the group ``"(missing)"``.
    column : str, default "group"
        Name used in the message.
    purity : float in (0.5, 1), default 0.95
    min_group_rows : int, default 20

    Returns
    -------
    GroupConfound

    Notes
    -----
    The **authorship confound**: when one group is almost all grounded and another almost
    all hallucinated (answers written by different models or people), a detector can score
    well by recognising the author instead of the grounding. :func:`group_confound`
    measures how much the group identity alone predicts the label: each row's score is
    its group's share of grounded rows, and the AUROC of that score is reported. It is
    computed in-sample, the best any group-only rule can do on these rows; with many tiny
    groups (one per question) it is optimistic by construction, so the warning is raised
    only by groups of at least ``min_group_rows`` rows whose labels are at least
    ``purity`` (default 95%) one class.

    Examples
    --------
    >>> res = group_confound([1] * 30 + [0] * 30, ["gpt"] * 30 + ["llama"] * 30, column="generator")
    >>> res.level, res.message
    ('warning', "group column 'generator' alone predicts the label with AUROC 1.000 (nearly one class: gpt, llama)")
    """
    purity = check_fraction(purity, "purity", "group_confound")
    if purity <= 0.5:
        raise SGIInputError(
            f"The 'purity' parameter of group_confound must be a float in (0.5, 1). Got {purity!r} instead.")
    min_group_rows = check_int(min_group_rows, "min_group_rows", "group_confound", minimum=1)
    labels = as_labels(y_true)
    names = _group_names(groups, len(labels), column)
    keep = ~np.isnan(labels)
    frame = pd.DataFrame({"group": names[keep], "label": labels[keep]})
    stats = frame.groupby("group", sort=True)["label"].agg(["mean", "size"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        value = auroc(frame["label"].to_numpy(), frame["group"].map(stats["mean"]).to_numpy(dtype=np.float64))
    big = stats[stats["size"] >= min_group_rows]
    pure = tuple(big.index[np.maximum(big["mean"], 1.0 - big["mean"]) >= purity].tolist())
    if math.isnan(value):
        message = f"group column '{column}': the group-only AUROC is undefined (one label class)"
    else:
        message = f"group column '{column}' alone predicts the label with AUROC {value:.3f}"
    if pure:
        message += f" (nearly one class: {', '.join(pure)})"
    return GroupConfound(column, value, len(stats), pure, "warning" if pure else "ok", message)


def group_analysis(
    y_true,
    y_score,
    groups,
    *,
    column: str = "group",
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    purity: float = 0.95,
    min_group_rows: int = 20,
    degenerate=None,
) -> GroupAnalysis:
    """AUROC and Cohen's d of a score within each group, and the group-only confound.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled (left out, counted).
    y_score : array_like of shape (n,)
        Higher = grounded; NaN = not scored (left out, counted).
    groups : array_like of shape (n,)
        Any categorical values; groups are listed in sorted order of their names.
    column : str, default "group"
    n_boot, seed, confidence
        Bootstrap of each group's intervals (classes resampled independently).
    purity, min_group_rows
        Passed to :func:`group_confound`.
    degenerate : array_like of bool of shape (n,), optional
        Rows with degenerate geometry (SGI near 1e8 where the response equals the
        context): kept in the counts and the AUROC, left out of d, which one such
        row would swamp.

    Returns
    -------
    GroupAnalysis
        A group missing a class has NaN statistics; their warnings are collected
        silently, the counts say why.

    Notes
    -----
    Per group (generator model, domain, task type, ...): AUROC (grounded positive) and
    Cohen's d (valid minus hallucinated) with their bootstrap intervals, from
    :func:`~sgi_core.stats.ranking.roc_analysis` and
    :func:`~sgi_core.stats.effect_size.effect_size`.

    Examples
    --------
    >>> res = group_analysis([1, 0, 1, 0, 1, 0], [0.9, 0.1, 0.8, 0.3, 0.2, 0.7], ["a", "a", "a", "a", "b", "b"],
    ...                      column="domain", n_boot=0)
    >>> [(g.group, g.auroc) for g in res.groups]
    [('a', 1.0), ('b', 0.0)]
    """
    n_boot = check_int(n_boot, "n_boot", "group_analysis", minimum=0)
    confidence = check_fraction(confidence, "confidence", "group_analysis")
    labels = as_labels(y_true)
    scores = as_scores(y_score, name="y_score", n=len(labels))
    names = _group_names(groups, len(labels), column)
    keep = ~np.isnan(labels) & ~np.isnan(scores)
    typical = scores if degenerate is None else np.where(np.asarray(degenerate, dtype=bool), np.nan, scores)
    results = []
    for name in sorted(set(names[keep])):
        rows = keep & (names == name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedStatisticWarning)
            roc = roc_analysis(labels[rows], scores[rows], n_boot=n_boot, seed=seed, confidence=confidence)
            eff = effect_size(labels[rows], typical[rows], n_boot=n_boot, seed=seed, confidence=confidence)
        results.append(GroupResult(
            group=name, n_valid=roc.n_pos, n_halluc=roc.n_neg, grounded_rate=roc.n_pos / (roc.n_pos + roc.n_neg),
            auroc=roc.auroc, auroc_ci=roc.auroc_ci, cohens_d=eff.cohens_d, cohens_d_ci=eff.cohens_d_ci,
        ))
    confound = group_confound(labels[keep], names[keep], column=column, purity=purity, min_group_rows=min_group_rows)
    return GroupAnalysis(column, tuple(results), confound, int((~keep).sum()))
