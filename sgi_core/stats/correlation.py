"""Agreement of per-row scores across embedding models (the paper's r = 0.85, rho = 0.87)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.checks import as_scores, validates_inputs


@dataclass(frozen=True)
class AgreementResult(JsonResult):
    """Pearson and Spearman correlation matrices of per-row scores, models in ``names`` order.

    Attributes
    ----------
    names : tuple of str
    pearson, spearman : tuple of tuple of float
        ``pearson[i][j]`` correlates model ``names[i]`` with ``names[j]``.
    mean_offdiag_pearson, mean_offdiag_spearman : float
        Mean over the pairs ``i != j``.
    n_rows : int
        Rows scored by every model and degenerate under none (the others are left out).
    n_degenerate : int
        Rows scored by every model but degenerate under one (left out: an SGI near
        1e8 would decide Pearson's r alone).
    """

    names: tuple[str, ...]
    pearson: tuple[tuple[float, ...], ...]
    spearman: tuple[tuple[float, ...], ...]
    mean_offdiag_pearson: float
    mean_offdiag_spearman: float
    n_rows: int
    n_degenerate: int = 0

    def to_frames(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The two matrices as labelled DataFrames."""
        names = list(self.names)
        return (pd.DataFrame(self.pearson, index=names, columns=names),
                pd.DataFrame(self.spearman, index=names, columns=names))


def _offdiag_mean(matrix: np.ndarray) -> float:
    mask = ~np.eye(len(matrix), dtype=bool)
    return float(matrix[mask].mean()) if mask.any() else math.nan


@validates_inputs
def cross_model_agreement(scores: dict, *, degenerate: dict | None = None) -> AgreementResult:
    """Correlate the same rows' scores across models: Pearson's r and Spearman's rho.

    Parameters
    ----------
    scores : dict of str -> array_like of shape (n,)
        Per-row scores of each model on the same rows in the same order. Rows where
        any model's score is NaN are left out.
    degenerate : dict of str -> array_like of bool of shape (n,), optional
        Per model, the rows whose geometry is degenerate (``sgi_status`` starting
        ``degenerate``); a row degenerate under any model is left out of both
        correlations and counted in ``n_degenerate``.

    Returns
    -------
    AgreementResult
        With fewer than 2 models or 3 common rows the means are NaN, with a warning.

    Examples
    --------
    >>> res = cross_model_agreement({"a": [1.0, 2.0, 3.0, 4.0], "b": [1.0, 2.0, 3.0, 8.0]})
    >>> res.mean_offdiag_spearman, round(res.mean_offdiag_pearson, 4)
    (1.0, 0.9135)
    >>> res = cross_model_agreement({"a": [1.0, 2.0, 3.0, 4.0], "b": [1.0, 2.0, 3.0, 8.0]},
    ...                             degenerate={"b": [False, False, False, True]})
    >>> res.mean_offdiag_pearson, res.n_rows, res.n_degenerate
    (1.0, 3, 1)
    """
    if not isinstance(scores, dict) or not scores:
        raise SGIInputError("cross_model_agreement needs a dict of model name -> per-row scores")
    columns = {str(name): as_scores(values, name=str(name)) for name, values in scores.items()}
    lengths = {name: len(v) for name, v in columns.items()}
    if len(set(lengths.values())) > 1:
        raise SGIInputError(
            f"models scored different numbers of rows: {lengths}",
            hint="Score the same file with every model",
        )
    frame = pd.DataFrame(columns).dropna()
    flagged = np.zeros(len(frame), dtype=bool)
    for name, marks in (degenerate or {}).items():
        marks = np.asarray(marks, dtype=bool).ravel()
        if name not in columns or len(marks) != len(columns[name]):
            raise SGIInputError(f"degenerate rows are given for '{name}', which is not a model with "
                                f"{len(next(iter(columns.values())))} scores")
        flagged |= marks[frame.index.to_numpy()]
    frame = frame[~flagged]
    names = tuple(columns)
    if len(names) < 2 or len(frame) < 3:
        warn_undefined(f"agreement needs 2 models and 3 common rows; got {len(names)} models and {len(frame)} rows")
    pearson = frame.corr(method="pearson").to_numpy()
    spearman = frame.corr(method="spearman").to_numpy()
    return AgreementResult(
        names=names,
        pearson=tuple(tuple(row) for row in pearson.tolist()),
        spearman=tuple(tuple(row) for row in spearman.tolist()),
        mean_offdiag_pearson=_offdiag_mean(pearson),
        mean_offdiag_spearman=_offdiag_mean(spearman),
        n_rows=len(frame),
        n_degenerate=int(flagged.sum()),
    )
