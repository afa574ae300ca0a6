"""SGI's separation within strata of a covariate: the paper's Tables 2 and 3.

:func:`theta_qc_strata` (quantile edges over all rows), :func:`length_strata` (equal-size rank strata)
and :func:`group_strata` (given groups) each give n, means, Cohen's d and AUROC per stratum, so that a
confound that separates the classes by itself shows where SGI's separation comes from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.bootstrap import normal_interval
from sgi_core.stats.checks import as_labels, as_scores, check_int, validates_inputs
from sgi_core.stats.effect_size import cohens_d_along, cohens_d_variance
from sgi_core.stats.ranking import auroc_of_groups, delong_ci

#: Confidence of the per-stratum intervals.
CONFIDENCE = 0.95
NAN_PAIR = (math.nan, math.nan)


@dataclass(frozen=True)
class StratumResult(JsonResult):
    """One stratum: covariate range ``[lo, hi]``, counts, class means of the score, d and AUROC with intervals.

    ``n_degenerate`` rows of the stratum (degenerate geometry) are in ``n``, the class
    counts and the AUROC but not in the means, d or d's interval.
    """

    label: str
    lo: float
    hi: float
    n: int
    n_valid: int
    n_halluc: int
    mean_valid: float
    mean_halluc: float
    cohens_d: float
    auroc: float
    cohens_d_ci: tuple[float, float] = NAN_PAIR
    auroc_ci: tuple[float, float] = NAN_PAIR
    n_degenerate: int = 0


@dataclass(frozen=True)
class StrataResult(JsonResult):
    """Strata of one covariate (``name``), from lowest to highest."""

    name: str
    strata: tuple[StratumResult, ...]

    def to_frame(self) -> pd.DataFrame:
        """One row per stratum."""
        return pd.DataFrame([s.to_dict() for s in self.strata], columns=list(StratumResult.__dataclass_fields__))


def stratum_labels(n_strata: int) -> list[str]:
    return ["low", "medium", "high"] if n_strata == 3 else [f"q{k + 1}" for k in range(n_strata)]


def _d_and_interval(valid: np.ndarray, halluc: np.ndarray) -> tuple[float, tuple[float, float]]:
    """Cohen's d and its delta-method normal interval; NaN below 2 rows a class or with no spread."""
    if len(valid) < 2 or len(halluc) < 2:
        return math.nan, NAN_PAIR
    d = float(cohens_d_along(valid, halluc))
    if not math.isfinite(d):
        return math.nan, NAN_PAIR
    return d, normal_interval(d, cohens_d_variance(valid, halluc), CONFIDENCE)


def _summarise(name: str, codes: np.ndarray, edges: list[tuple[float, float]], labels: np.ndarray,
               scores: np.ndarray, degenerate: np.ndarray, names: list[str] | None = None) -> StrataResult:
    names = names or stratum_labels(len(edges))
    strata, undefined = [], []
    for k, (lo, hi) in enumerate(edges):
        member = codes == k
        valid, halluc = member & (labels == 1.0), member & (labels == 0.0)
        typical_valid, typical_halluc = scores[valid & ~degenerate], scores[halluc & ~degenerate]
        d, d_ci = _d_and_interval(typical_valid, typical_halluc)
        both = valid.any() and halluc.any()
        auc = auroc_of_groups(scores[valid], scores[halluc]) if both else math.nan
        auc_ci = (delong_ci(scores[valid], scores[halluc], confidence=CONFIDENCE)
                  if valid.sum() >= 2 and halluc.sum() >= 2 else NAN_PAIR)
        if math.isnan(d) or math.isnan(auc):
            undefined.append(names[k])
        strata.append(
            StratumResult(
                label=names[k], lo=float(lo), hi=float(hi), n=int(member.sum()),
                n_valid=int(valid.sum()), n_halluc=int(halluc.sum()),
                mean_valid=float(typical_valid.mean()) if len(typical_valid) else math.nan,
                mean_halluc=float(typical_halluc.mean()) if len(typical_halluc) else math.nan,
                cohens_d=d, auroc=auc, cohens_d_ci=d_ci, auroc_ci=auc_ci,
                n_degenerate=int((member & degenerate).sum()),
            )
        )
    if undefined:
        warn_undefined(
            f"{name} strata {', '.join(undefined)}: d or AUROC undefined (a class has too few rows or no spread)"
        )
    return StrataResult(name=name, strata=tuple(strata))


def _inputs(covariate, y_true, score, covariate_name: str, degenerate) -> tuple[np.ndarray, ...]:
    values = as_scores(covariate, name=covariate_name)
    labels = as_labels(y_true)
    scores = as_scores(score, n=len(labels))
    if len(values) != len(labels):
        raise SGIInputError(f"'{covariate_name}' has {len(values)} values but the labels have {len(labels)}")
    marks = np.zeros(len(labels), dtype=bool) if degenerate is None else np.asarray(degenerate, dtype=bool).ravel()
    if len(marks) != len(labels):
        raise SGIInputError(f"'degenerate' has {len(marks)} values but the labels have {len(labels)}")
    keep = ~np.isnan(values) & ~np.isnan(scores)
    return values[keep], labels[keep], scores[keep], marks[keep]


@validates_inputs
def theta_qc_strata(theta_qc, y_true, score, *, n_strata: int = 3, degenerate=None) -> StrataResult:
    """SGI separation within quantile strata of ``theta_qc`` (the paper's Table 2).

    Edges are the ``k / n_strata`` quantiles of ``theta_qc`` over all rows with a
    score (both labels and unlabelled rows pooled); stratum ``k`` holds
    ``edges[k] < theta_qc <= edges[k+1]`` (the first also its lower edge). By the
    spherical triangle inequality SGI is squeezed toward 1 when ``theta_qc`` is small,
    so separation is expected to grow from the low to the high stratum.

    Parameters
    ----------
    theta_qc, y_true, score : array_like of shape (n,)
        Question-context angle, labels (1 grounded, 0 hallucinated, NaN unlabelled)
        and score (higher = grounded).
    n_strata : int, default 3
    degenerate : array_like of bool of shape (n,), optional
        Rows kept in n and the AUROC but left out of the means and d (degenerate
        geometry, see the module docstring).

    Returns
    -------
    StrataResult
        Tied edges merge strata, with a warning.

    Examples
    --------
    >>> theta_qc = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2]
    >>> sgi = [2.0, 1.0, 4.0, 2.0, 2.0, 1.0, 5.0, 2.0, 3.0, 1.0, 6.0, 1.0]
    >>> res = theta_qc_strata(theta_qc, [1, 0, 1, 0] * 3, sgi)
    >>> [(s.label, s.n, round(s.cohens_d, 3), s.auroc) for s in res.strata]
    [('low', 4, 1.342, 0.875), ('medium', 4, 1.265, 0.875), ('high', 4, 2.333, 1.0)]
    """
    n_strata = check_int(n_strata, "n_strata", "theta_qc_strata", minimum=1)
    values, labels, scores, marks = _inputs(theta_qc, y_true, score, "theta_qc", degenerate)
    if len(values) == 0:
        warn_undefined("theta_qc strata: no row has both a theta_qc and a score")
        return StrataResult(name="theta_qc", strata=())
    if np.ptp(values) == 0:
        warn_undefined(f"theta_qc is {values[0]:.6g} on every row: one stratum instead of {n_strata}")
        return _summarise("theta_qc", np.zeros(len(values), dtype=int), [(values[0], values[0])], labels, scores, marks)
    codes, edges = pd.qcut(values, n_strata, labels=False, retbins=True, duplicates="drop")
    if len(edges) - 1 < n_strata:
        warn_undefined(f"theta_qc has tied quantile edges: {len(edges) - 1} strata instead of {n_strata}")
    return _summarise("theta_qc", codes, list(zip(edges[:-1], edges[1:])), labels, scores, marks)


@validates_inputs
def length_strata(lengths, y_true, score, *, n_strata: int = 3, name: str = "response",
                  degenerate=None) -> StrataResult:
    """SGI separation within equal-size strata of a length (the paper's Table 3).

    Rows are ranked by length, ties in input order, and the ranks cut into
    ``n_strata`` groups of equal size (sizes differ by at most one). ``lo`` and ``hi``
    are the shortest and longest length in each stratum; neighbouring strata can
    share a length value.

    Parameters
    ----------
    lengths, y_true, score : array_like of shape (n,)
        Lengths (e.g. characters of the response), labels and score.
    n_strata : int, default 3
    name : str, default "response"
        What was measured, e.g. "question", "context", "response".
    degenerate : array_like of bool of shape (n,), optional
        Rows left out of the means and d, as in :func:`theta_qc_strata`.

    Examples
    --------
    >>> lengths = [5, 5, 5, 5, 5, 5, 9, 9, 9, 9, 12, 12]
    >>> sgi = [2.0, 1.0, 4.0, 2.0, 2.0, 1.0, 5.0, 2.0, 3.0, 1.0, 6.0, 1.0]
    >>> res = length_strata(lengths, [1, 0, 1, 0] * 3, sgi)
    >>> [(s.label, s.n, s.lo, s.hi) for s in res.strata]
    [('low', 4, 5.0, 5.0), ('medium', 4, 5.0, 9.0), ('high', 4, 9.0, 12.0)]
    """
    n_strata = check_int(n_strata, "n_strata", "length_strata", minimum=1)
    values, labels, scores, marks = _inputs(lengths, y_true, score, name, degenerate)
    if len(values) < n_strata:
        warn_undefined(f"{name} length strata: {len(values)} scored rows cannot fill {n_strata} strata")
        return StrataResult(name=name, strata=())
    ranks = pd.Series(values).rank(method="first").to_numpy()
    codes = pd.qcut(ranks, n_strata, labels=False)
    edges = [(values[codes == k].min(), values[codes == k].max()) for k in range(n_strata)]
    return _summarise(name, codes, edges, labels, scores, marks)


@validates_inputs
def group_strata(groups, y_true, score, *, group_names: dict, name: str, degenerate=None) -> StrataResult:
    """SGI separation within groups given by a code per row (e.g. retrieval miss / hit).

    Parameters
    ----------
    groups : array_like of shape (n,)
        Group code of each row; NaN = no group (left out).
    y_true, score : array_like of shape (n,)
    group_names : dict of number -> str
        The codes to report, in order, and their names. ``lo`` and ``hi`` of each
        stratum are its code.
    name : str
        What the groups are, e.g. "retrieval hit@5".
    degenerate : array_like of bool of shape (n,), optional
        Rows left out of the means and d, as in :func:`theta_qc_strata`.

    Examples
    --------
    >>> res = group_strata([0, 0, 0, 0, 1, 1, 1, 1], [1, 0, 1, 0, 1, 0, 1, 0],
    ...                    [2.0, 1.0, 0.5, 3.0, 4.0, 1.0, 5.0, 2.0], group_names={0: "miss", 1: "hit"}, name="hit")
    >>> [(s.label, s.n, s.auroc) for s in res.strata]
    [('miss', 4, 0.25), ('hit', 4, 1.0)]
    """
    values, labels, scores, marks = _inputs(groups, y_true, score, name, degenerate)
    codes = np.full(len(values), -1)
    for k, code in enumerate(group_names):
        codes[values == code] = k
    edges = [(float(code), float(code)) for code in group_names]
    return _summarise(name, codes, edges, labels, scores, marks, names=list(group_names.values()))
