"""Columns that are the label in disguise, and id columns: neither is a group nor a score.

Grouped by a column that determines the label, every group is one class and reads as a confound that is
only the label; taken as a detector it scores AUROC 1 and teaches nothing. An id column names rows and
its order says nothing about grounding. :func:`label_leaks` and :func:`screen_columns` say which is which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from sgi_core.results import JsonResult
from sgi_core.stats.checks import as_labels

#: AUROC (either direction) at or above which a numeric column is taken for the label.
LEAK_AUROC = 0.99
#: Rows a pairing id's value may recur on (a question's answers: two, sometimes a few).
MAX_PAIRING_ROWS = 4
#: Distinct values a whole-number column needs before its recurring values read as a pairing id, not a scale.
MIN_PAIRING_IDS = 10
_ID_NAME = re.compile(r"(^|_)(id|idx|index|row|uuid|key)$", re.IGNORECASE)


@dataclass(frozen=True)
class LabelLeak(JsonResult):
    """A column that determines the label.

    Attributes
    ----------
    column : str
    how : {"categories", "auroc"}
        Each value one class, or a numeric AUROC at or above :data:`LEAK_AUROC`.
    auroc : float
        ``max(AUROC, 1 - AUROC)`` of the column as numbers; NaN when it is not numeric.
    """

    column: str
    how: str
    auroc: float


def _text_values(series: pd.Series) -> pd.Series:
    """Each cell as its stripped text (``str(value).strip()``); NA where it is missing or blank."""
    text = series.astype("string").str.strip()
    return text.mask(text == "")


def _numeric_auroc(series: pd.Series, text: pd.Series, labels: np.ndarray) -> float:
    """``max(AUROC, 1 - AUROC)`` of ``series`` as numbers; NaN when a filled cell (``text``) is no number."""
    numbers = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
    filled = text.notna().to_numpy()
    if np.isnan(numbers[filled]).any():
        return np.nan
    keep = ~np.isnan(labels) & ~np.isnan(numbers)
    if len(np.unique(labels[keep])) < 2:
        return np.nan
    auroc = float(roc_auc_score(labels[keep], numbers[keep]))
    return max(auroc, 1.0 - auroc)


def _categories_determine(values: pd.Series, labels: np.ndarray) -> bool:
    """Whether every labelled value (of :func:`_text_values`) recurs on 2 or more labelled rows, each with one class."""
    keep = ~np.isnan(labels) & values.notna().to_numpy()
    if keep.sum() < 2 or len(np.unique(labels[keep])) < 2:
        return False
    codes = pd.factorize(values[keep])[0]
    if (np.bincount(codes) < 2).any():
        return False
    grounded = np.bincount(codes, weights=labels[keep] == 1.0)
    hallucinated = np.bincount(codes, weights=labels[keep] == 0.0)
    return bool(((grounded == 0) | (hallucinated == 0)).all())


def label_leaks(frame: pd.DataFrame, y_true, columns) -> tuple[LabelLeak, ...]:
    """The ``columns`` of ``frame`` that determine the label ``y_true``, or nearly.

    A column leaks the label as categories when every value met on two or more labelled
    rows occurs with one class only and such values cover every labelled row (``answer_type``
    = right/hallucinated, a recoded label), or as numbers when its AUROC against the label is
    at least :data:`LEAK_AUROC` in either direction (a float copy of the label).

    Parameters
    ----------
    frame : DataFrame
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled (left out).
    columns : iterable of str
        Candidates (the input columns other than the mapped ones).

    Returns
    -------
    tuple of LabelLeak
        In the order of ``columns``; empty when the file has fewer than two classes.

    Examples
    --------
    >>> f = pd.DataFrame({"answer_type": ["right", "hallucinated"] * 3, "judge": [0.9, 0.2, 0.4, 0.6, 0.8, 0.3]})
    >>> [leak.column for leak in label_leaks(f, [1, 0] * 3, ["answer_type", "judge"])]
    ['answer_type']
    """
    labels = as_labels(y_true)
    leaks = []
    for column in columns:
        series = frame[column]
        text = _text_values(series)
        auroc = _numeric_auroc(series, text, labels)
        if _categories_determine(text, labels):
            leaks.append(LabelLeak(str(column), "categories", auroc))
        elif auroc >= LEAK_AUROC:
            leaks.append(LabelLeak(str(column), "auroc", auroc))
    return tuple(leaks)


def is_id_column(series: pd.Series, name: str) -> bool:
    """Whether a column names rows rather than measuring them.

    True for a name like ``id``, ``pair_id``, ``row``, ``doc_index``; text or whole
    numbers with a distinct value per row; or more than :data:`MIN_PAIRING_IDS` whole
    numbers each recurring on at most :data:`MAX_PAIRING_ROWS` rows (a pairing id).

    Examples
    --------
    >>> is_id_column(pd.Series(range(6)), "n"), is_id_column(pd.Series([0.2, 0.7]), "judge")
    (True, False)
    """
    if _ID_NAME.search(str(name)):
        return True
    values = _text_values(series).dropna()
    if values.empty:
        return False
    counts = values.value_counts()
    numbers = pd.to_numeric(values, errors="coerce")
    numeric = bool(numbers.notna().all())
    whole = numeric and bool((numbers == numbers.round()).all())
    if counts.max() == 1 and len(values) > 1 and (whole or not numeric):  # distinct measurements are no id
        return True
    return whole and len(counts) > MIN_PAIRING_IDS and counts.max() <= MAX_PAIRING_ROWS


@dataclass(frozen=True)
class ColumnScreen(JsonResult):
    """Which candidate columns are the label in disguise and which name rows.

    Attributes
    ----------
    leaks : tuple of LabelLeak
        Kept out of groups and detector scores.
    ids : tuple of str
        Id columns (not leaks), kept out of detector scores.
    """

    leaks: tuple[LabelLeak, ...]
    ids: tuple[str, ...]

    def refused_as_score(self, column: str) -> str | None:
        """Why ``column`` cannot be a detector score, or None."""
        for leak in self.leaks:
            if leak.column == column:
                return describe_leak(leak)
        if column in self.ids:
            return f"'{column}' is an id column: it names rows, and its order says nothing about grounding"
        return None

    @property
    def leak_columns(self) -> tuple[str, ...]:
        return tuple(leak.column for leak in self.leaks)


def describe_leak(leak: LabelLeak) -> str:
    """One sentence on how ``leak.column`` determines the label."""
    if leak.how == "categories":
        return f"'{leak.column}' determines the label: each of its values goes with one label class only"
    return f"'{leak.column}' nearly determines the label: its AUROC against the label is {leak.auroc:.3f}"


def screen_columns(frame: pd.DataFrame, y_true, columns) -> ColumnScreen:
    """:func:`label_leaks` and :func:`is_id_column` over the candidate ``columns``."""
    leaks = label_leaks(frame, y_true, columns)
    leaked = {leak.column for leak in leaks}
    ids = tuple(str(c) for c in columns if str(c) not in leaked and is_id_column(frame[c], str(c)))
    return ColumnScreen(leaks, ids)
