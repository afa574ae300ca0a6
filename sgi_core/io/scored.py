"""A scored file read back: its table of triples, its scores and the model that made them, nothing re-embedded.

The file is the output of ``score`` (or of the dashboard's download): the roles, the
score columns (:data:`~sgi_core.columns.SCORE_COLUMNS`) and, when it was scored with the
word-overlap baseline beside the scores, :data:`~sgi_core.columns.WORD_OVERLAP_COLUMN`.
Scores that ``score`` could not have written (infinite values, text) are kept as rows
without scores or refused with their rows. A scored Parquet file written by ``score``
records the embedding model, precision and backend behind its angles and SGI in its
key-value metadata (:data:`SCORED_WITH_KEY`), so a policy or a comparison can refuse
scores made by another model. A CSV file has no place for it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

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
    not_scored_status,
)
from sgi_core.errors import SGIInputError, format_rows
from sgi_core.io.labels import label_warnings
from sgi_core.io.mapping import ColumnMapping
from sgi_core.io.table_formats import PARQUET_SUFFIXES
from sgi_core.io.triples import TripleTable, as_text

#: Parquet key-value metadata naming the embedding model and precision behind a scored file's angles and SGI.
SCORED_WITH_KEY = b"sgi_core.scored_with"


#: What a scored file recorded before the backend and the context strategy were recorded: files
#: scored then were all scored by torch, with the context embedded whole.
SCORED_WITH_DEFAULTS = {"backend": "torch", "context_strategy": "joined"}


def scored_with(path: str | os.PathLike) -> dict | None:
    """``{"model", "precision", "backend", "context_strategy"}`` recorded in a scored Parquet file, else None
    (CSV, older files).

    A file scored with a resource given by name also records it under the resource's field
    (the declared resources' ``provenance``; JSON text, e.g. ``grounding_models``: each
    model's folder, fingerprint, adapter and self-test, :func:`sgi_core.grounding.family.provenance`).

    A record without ``backend`` or ``context_strategy`` gets :data:`SCORED_WITH_DEFAULTS`.

    Raises
    ------
    SGIInputError
        A recorded value that is not such an object.
    """
    if Path(path).suffix.lower() not in PARQUET_SUFFIXES:
        return None
    import pyarrow.parquet as pq

    try:
        raw = (pq.read_schema(path).metadata or {}).get(SCORED_WITH_KEY)
    except (OSError, ValueError):  # not readable as Parquet: the reader says why
        return None
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    keys = {"model", "precision"}
    # Other keys are the records of resources given by name, each read by its field where it is used.
    if not (isinstance(value, dict) and keys <= set(value) and all(isinstance(v, str) for v in value.values())):
        raise SGIInputError("the file's record of the model that scored it cannot be read", source=str(path),
                            hint="Score the file again with `python -m sgi_core score`")
    return {**SCORED_WITH_DEFAULTS, **value}

#: The status of a row whose score in the file is infinite.
INFINITE_SCORE_STATUS = not_scored_status("an infinite score in the file")


def unscore_infinite_rows(scores: pd.DataFrame) -> list[str]:
    """Keep rows with an infinite angle or SGI as rows without scores, in place; the warning, if any.

    ``score`` never writes an infinite value (a degenerate row gets NaN and a status), so
    such a file was edited; an infinite score cannot be ranked, binned or averaged, and
    the row is kept as ``score`` keeps a row it cannot score: NaN scores and the status
    :data:`INFINITE_SCORE_STATUS`.

    Examples
    --------
    >>> scores = pd.DataFrame({"theta_qc": [1.0, 1.0], "theta_rq": [0.5, 0.5], "theta_rc": [0.5, 0.5],
    ...                        "sgi": [1.0, float("inf")], "sgi_status": ["ok", "ok"]})
    >>> unscore_infinite_rows(scores)
    ["the file's scores are infinite in row 2: those rows are kept as not scored"]
    >>> scores["sgi_status"].tolist()
    ['ok', 'not scored: an infinite score in the file']
    """
    infinite = np.isinf(scores[list(NUMERIC_SCORE_COLUMNS)].to_numpy(dtype=np.float64)).any(axis=1)
    if not infinite.any():
        return []
    for column in NUMERIC_SCORE_COLUMNS:
        scores[column] = scores[column].mask(infinite)
    scores[STATUS_COLUMN] = scores[STATUS_COLUMN].mask(infinite, INFINITE_SCORE_STATUS)
    rows = format_rows((np.flatnonzero(infinite) + 1).tolist())
    return [f"the file's scores are infinite in {rows}: those rows are kept as not scored"]


def numbers_in(cells: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """A scored file's numeric column as numbers, and the positions of the cells that are not one.

    A CSV is read as text, so an empty cell (a row without a label, or without scores)
    arrives as ``""``: blank cells are empty, as missing values of a Parquet file are,
    and become NaN. Any other cell that is not a number is returned by position.

    Examples
    --------
    >>> numbers, bad = numbers_in(pd.Series(["0.5", "", " ", "x"]))
    >>> numbers.tolist(), bad.tolist()
    ([0.5, nan, nan, nan], [3])
    """
    numbers = pd.to_numeric(cells, errors="coerce")
    if pd.api.types.is_numeric_dtype(cells):
        return numbers, np.array([], dtype=np.int64)
    filled = cells.notna() & cells.astype(str).str.strip().ne("")
    return numbers, np.flatnonzero((numbers.isna() & filled).to_numpy())


def read_word_overlap(scores: pd.DataFrame, source: str) -> None:
    """Check a scored file's word-overlap column, when it has one, and hold it as float64, in place.

    ``score`` writes :data:`~sgi_core.columns.WORD_OVERLAP_COLUMN` as a share from 0 to 1,
    or empty where the response has no content word; anything else was not written by it.

    Raises
    ------
    SGIInputError
        Naming the rows whose share is not a number from 0 to 1 or empty.

    Examples
    --------
    >>> scores = pd.DataFrame({"lexical_groundedness": ["0.5", None]})
    >>> read_word_overlap(scores, "s.csv"); scores["lexical_groundedness"].tolist()
    [0.5, nan]
    """
    if WORD_OVERLAP_COLUMN not in scores.columns:
        return
    shares, not_numbers = numbers_in(scores[WORD_OVERLAP_COLUMN])
    bad = np.union1d(not_numbers, np.flatnonzero(((shares < 0) | (shares > 1)).to_numpy()))
    if len(bad):
        raise SGIInputError(f"a scored file's {WORD_OVERLAP_COLUMN} must be a share from 0 to 1 or empty",
                            source=source, column=WORD_OVERLAP_COLUMN, rows=(bad + 1).tolist(),
                            hint="Score the unscored file again with `score`, or drop the column to have it computed")
    scores[WORD_OVERLAP_COLUMN] = shares.astype(np.float64)


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
                            hint="Open the file written by `python -m sgi_core score`, "
                                 "or the unscored file to score it")
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
    labels = scores["label"].to_numpy(dtype=np.float64)
    # `score` writes a label column whatever its input held; an empty one was reported when it read the user's file.
    warnings = (label_warnings(labels, "label", 1, True) if not np.isnan(labels).all() else []) + infinite_warnings
    mapping = ColumnMapping(*ROLES)
    added = scores.columns.intersection([*SCORE_COLUMNS, WORD_OVERLAP_COLUMN])
    table = TripleTable(scores.drop(columns=added), source, mapping, "grounded", unscorable, warnings)
    return table, scores


def file_score_column(table: TripleTable, column: str, *, recorded: dict | None) -> str | None:
    """The column of ``table.frame`` that holds the file's own ``column``, or None where the file has none.

    The reader keeps a file's column named like one it adds under an ``input_`` prefix
    (``table.renamed``), and a file scored by ``score`` keeps a column the input already
    held under that prefix too: a file holding both ``sgi`` and ``input_sgi`` holds the
    fresh scores and the user's old column. The fresh one is read where the file records
    its scoring (``recorded``, :func:`scored_with`); without a record nothing says which is
    which, and the file is refused. A file holding only ``input_<column>`` is read from it.

    Raises
    ------
    SGIInputError
        Both columns, and no scoring record.
    """
    prefixed = f"input_{column}"
    own = table.renamed.get(column, column if column in table.frame.columns and column not in table.renamed.values()
                            else None)
    old = prefixed if prefixed in table.frame.columns and prefixed not in table.renamed.values() else None
    if own is not None and old is not None and recorded is None:
        raise SGIInputError(f"the file holds both '{column}' and '{prefixed}' (a column it held before it was scored) "
                            "and no record of its scoring says which is fresh", source=table.source,
                            column=prefixed, hint=f"Drop or rename '{prefixed}', or score the file again to Parquet "
                                                  "(`python -m sgi_core score`), which records its scoring")
    return own if own is not None else old


def file_scores(table: TripleTable, column: str, *, recorded: dict | None) -> np.ndarray | None:
    """The file's values of the score named ``column`` (:func:`file_score_column`), else a baseline computed from its
    texts; None otherwise (SGI to be scored).

    Either is oriented higher = grounded as the score's registry entry says
    (:func:`~sgi_core.scores.selection.named_score`): ``theta_rc`` and ``neg_theta_rc`` both
    read the column ``theta_rc``, negated.

    Raises
    ------
    SGIInputError
        Both columns without a scoring record, or cells of the column that are not numbers (with their rows).
    """
    from sgi_core.scores.selection import named_score

    spec = named_score(column)
    present = file_score_column(table, spec.name, recorded=recorded)
    if present is not None:
        values, bad = numbers_in(table.frame[present])
        if len(bad):
            raise SGIInputError(f"score column '{column}' holds values that are not numbers", source=table.source,
                                column=column, rows=(bad + 1).tolist())
        return spec.oriented(values.to_numpy(dtype=np.float64))
    if spec.kind == "baseline":  # computed from the texts, as for the policy's own file
        return spec.oriented(spec.raw_values(table.frame))
    return None
