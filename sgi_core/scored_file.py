"""A scored file read back: its table of triples and its scores, with nothing re-embedded.

The file is the output of ``score`` (or of the dashboard's download): the roles, the
score columns (:data:`~sgi_core.columns.SCORE_COLUMNS`) and, when it was scored with the
word-overlap baseline beside the scores, :data:`~sgi_core.columns.WORD_OVERLAP_COLUMN`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sgi_core.columns import (
    INPUT_ROW,
    NOT_SCORED_PREFIX,
    NUMERIC_SCORE_COLUMNS,
    ROLES,
    SCORE_COLUMNS,
    STATUS_COLUMN,
    TEXT_COLUMNS,
    WORD_OVERLAP_COLUMN,
    is_not_scored,
)
from sgi_core.data import TripleTable, as_text
from sgi_core.errors import SGIInputError
from sgi_core.io.scored_values import numbers_in, read_word_overlap, unscore_infinite_rows
from sgi_core.labels import label_warnings
from sgi_core.mapping import ColumnMapping


def scored_table(frame: pd.DataFrame, *, source: str = "<input>") -> tuple[TripleTable, pd.DataFrame]:
    """An already scored frame (the output of ``score``) as its table and its scores, with nothing re-embedded.

    The frame must hold ``question``, ``context``, ``response``, ``label`` (1.0
    grounded, 0.0 hallucinated, empty unlabelled, as ``score`` writes it) and the
    score columns ``theta_qc``, ``theta_rq``, ``theta_rc``, ``sgi`` (numbers) and
    ``sgi_status``. Rows whose status starts ``not scored: `` are the table's
    unscorable rows. ``input_row`` is added (1, 2, ...) when absent.

    Returns
    -------
    table : TripleTable
        The frame without its score columns (shared with ``scores``, not copied).
    scores : DataFrame
        ``frame`` itself, used as the scored frame of every page.

    Raises
    ------
    SGIInputError
        A missing column, a score column that is not numeric, a label other than
        1, 0 or empty.

    Examples
    --------
    >>> frame = pd.DataFrame({"question": ["q"], "context": ["c"], "response": ["r"], "label": [1.0],
    ...                       "theta_qc": [1.0], "theta_rq": [0.9], "theta_rc": [0.6], "sgi": [1.5],
    ...                       "sgi_status": ["ok"]})
    >>> table, scores = scored_table(frame, source="s.parquet")
    >>> table.frame.columns.tolist(), scores["input_row"].tolist()
    (['question', 'context', 'response', 'label', 'input_row'], [1])
    """
    missing = [c for c in (*ROLES, *SCORE_COLUMNS) if c not in frame.columns]
    if missing:
        raise SGIInputError(f"a scored file needs the columns {', '.join(missing)}", source=source,
                            hint="Open the file written by `python -m sgi_core score`, or the unscored file to score it")
    scores = frame.reset_index(drop=True)
    for column in (*NUMERIC_SCORE_COLUMNS, "label"):
        values, bad = numbers_in(scores[column])
        if column == "label":
            bad = np.union1d(bad, np.flatnonzero(~values.isin([0.0, 1.0]).to_numpy() & values.notna().to_numpy()))
        if len(bad):
            what = "1, 0 or empty" if column == "label" else "a number or empty"
            raise SGIInputError(f"a scored file's {column} must be {what}", source=source, column=column,
                                rows=(bad + 1).tolist(), hint="Score the unscored file again with `score`")
        if values.dtype != scores[column].dtype:
            scores[column] = values.astype(np.float64)
    for role in TEXT_COLUMNS:
        if not pd.api.types.is_string_dtype(scores[role]):
            scores[role] = as_text(scores[role])
    if INPUT_ROW not in scores.columns:
        scores[INPUT_ROW] = np.arange(1, len(scores) + 1)
    elif not pd.api.types.is_integer_dtype(scores[INPUT_ROW]):
        # A CSV is read as text: row numbers compared as "7" never match the 7 a page looks up.
        rows = pd.to_numeric(scores[INPUT_ROW], errors="coerce")
        bad = np.flatnonzero((rows.isna() | (rows < 1) | (rows % 1 != 0)).to_numpy())
        if len(bad):
            raise SGIInputError("a scored file's input_row must be a whole number from 1", source=source,
                                column=INPUT_ROW, rows=(bad + 1).tolist(),
                                hint="Score the unscored file again with `score`")
        scores[INPUT_ROW] = rows.astype(np.int64)
    read_word_overlap(scores, source)
    infinite_warnings = unscore_infinite_rows(scores)
    status = scores[STATUS_COLUMN]
    not_scored = np.flatnonzero(is_not_scored(status))
    unscorable = {int(i) + 1: str(status.iloc[i]).removeprefix(NOT_SCORED_PREFIX) for i in not_scored}
    warnings = label_warnings(scores["label"].to_numpy(dtype=np.float64), "label", 1, True) + infinite_warnings
    mapping = ColumnMapping(*ROLES)
    added = scores.columns.intersection([*SCORE_COLUMNS, WORD_OVERLAP_COLUMN])
    table = TripleTable(scores.drop(columns=added), source, mapping, "grounded", unscorable, warnings)
    return table, scores
