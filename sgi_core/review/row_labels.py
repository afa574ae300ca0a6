"""The decisions in force of an annotations file on one table's rows, kept up to date one record at a time.

:func:`~sgi_core.review.label_sources.labels_from_decisions` followed by
:func:`~sgi_core.review.label_sources.join_labels` puts a file's decisions on a table's rows
from scratch: hashing every key of the file and of the table, seconds with a few hundred
thousand lines. A Review click appends one line, which changes the decision in force on
one key, hence the labels of that key's rows only. :class:`RowLabelTracker` keeps the
per-row labels and the counts of a :class:`~sgi_core.review.decision_log.DecisionLog` and,
when the log has grown, applies only the keys of the records added since it last looked
(:meth:`DecisionLog.keys_since`, :meth:`DecisionLog.in_force`): the cost of a click no
longer grows with the file. Its :meth:`RowLabelTracker.snapshot` equals the join made from
scratch (the tests hold it to that).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.results import JsonResult
from sgi_core.review.decision_log import LABEL_VALUE, DecisionLog, is_targeted
from sgi_core.review.label_sources import LabelJoin

__all__ = ["RowDecisions", "RowLabelTracker"]


@dataclass(frozen=True)
class RowDecisions(JsonResult):
    """An annotations file's decisions in force, put on a table's rows.

    Attributes
    ----------
    joined : LabelJoin
        What :func:`~sgi_core.review.label_sources.join_labels` gives for the labels of the
        decisions in force (``unsure`` counted in ``n_unsure``, not labelled).
    annotated : ndarray of bool
        Rows whose key has a decision in force, ``unsure`` included.
    n_targeted : int
        Labelled rows whose decision came from a Review queue that is not a random order
        (:func:`~sgi_core.review.decision_log.is_targeted`).
    n_records : int
        Records of the log taken in (damaged lines not counted).
    """

    joined: LabelJoin
    annotated: np.ndarray
    n_targeted: int
    n_records: int


class RowLabelTracker:
    """Per-row labels of the decisions in force of one annotations file on one table's rows.

    Parameters
    ----------
    keys : array of str
        The row key of every table row (:func:`~sgi_core.review.annotations.row_keys`); rows
        sharing a text share a key and its label.
    source : str
        The annotations file's name, for :class:`LabelJoin`.

    Examples
    --------
    >>> from sgi_core.review.decision_log import decision_line
    >>> log, a, b = DecisionLog(), "a" * 32, "b" * 32
    >>> log.feed(decision_line(a, "grounded") + decision_line(b, "unsure"))
    >>> tracker = RowLabelTracker(np.array([a, b, a, "c" * 32], dtype=object))
    >>> state = tracker.update(log)
    >>> state.joined.label[[0, 2]].tolist(), state.joined.n_labels, state.joined.n_unsure
    ([1.0, 1.0], 1, 1)
    >>> log.feed(decision_line(b, "hallucinated"))
    >>> state = tracker.update(log)
    >>> state.joined.label.tolist()[1], state.joined.n_labels, state.annotated.tolist()
    (0.0, 2, [True, True, True, False])
    """

    def __init__(self, keys, *, source: str = "<annotations>") -> None:
        keys = np.asarray(keys, dtype=object)
        self.n_rows = len(keys)
        self.source = source
        codes, uniques = pd.factorize(keys)
        self._code = dict(zip(uniques.tolist(), range(len(uniques))))
        # Rows of key code c: _order[_offsets[c]:_offsets[c + 1]].
        self._order = np.argsort(codes, kind="stable")
        self._offsets = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=len(uniques)))])
        self._lock = threading.Lock()
        self._reset(None)

    def _reset(self, log: DecisionLog | None) -> None:
        self._log, self._seen = log, 0
        self._label = np.full(self.n_rows, np.nan)
        self._annotated = np.zeros(self.n_rows, dtype=bool)
        self._targeted = np.zeros(self.n_rows, dtype=bool)
        # Keys with a decision in force: their value (NaN for unsure) and whether a targeted queue gave it.
        self._in_force: dict[str, tuple[float, bool]] = {}
        self._n_labels = self._n_matched = self._n_unsure = 0

    def update(self, log: DecisionLog) -> RowDecisions:
        """Take in the records ``log`` holds beyond those seen (all of them for a log not seen before)."""
        with self._lock:
            if log is not self._log:
                self._reset(log)
            end = log.n_records
            for key in dict.fromkeys(log.keys_since(self._seen)):
                self._apply(key, log.in_force(key))
            self._seen = max(self._seen, end)
            return self._snapshot()

    def snapshot(self) -> RowDecisions:
        """The labels as they stand, copied (later updates leave it as it is)."""
        with self._lock:
            return self._snapshot()

    def _apply(self, key: str, decision: tuple[str, str] | None) -> None:
        code = self._code.get(key)
        self._count(key, self._in_force.pop(key, None), -1, code is not None)
        if decision is not None:
            label, queue = decision
            value = LABEL_VALUE[label]
            entry = (value, not np.isnan(value) and is_targeted(queue))
            self._in_force[key] = entry
            self._count(key, entry, 1, code is not None)
        if code is None:
            return
        rows = self._order[self._offsets[code]:self._offsets[code + 1]]
        entry = self._in_force.get(key)
        self._label[rows] = np.nan if entry is None else entry[0]
        self._annotated[rows] = entry is not None
        self._targeted[rows] = entry is not None and entry[1]

    def _count(self, key: str, entry: tuple[float, bool] | None, sign: int, matched: bool) -> None:
        if entry is None:
            return
        if np.isnan(entry[0]):
            self._n_unsure += sign
        else:
            self._n_labels += sign
            self._n_matched += sign * matched

    def _snapshot(self) -> RowDecisions:
        label = self._label.copy()
        joined = LabelJoin(label, self.source, self._n_labels, self._n_matched, self._n_labels - self._n_matched, 0,
                           self._n_unsure, int(np.count_nonzero(~np.isnan(label))))
        return RowDecisions(joined, self._annotated.copy(), int(np.count_nonzero(self._targeted)), self._seen)
