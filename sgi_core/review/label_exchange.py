"""Labels into and out of a file's annotations: an import that adds only what is new, an export people can read.

An import (:func:`import_lines`) keeps the labels of the rows the file holds and, of
those, only the ones not already in force, so importing the same labels twice adds
nothing and labels of other data never enter the store. The readable export
(:func:`annotation_table`) lists the file's rows with a decision in force, with their
texts and the file's own id column; it imports back as a labels table. Labels given on keys
of a design's sample (the Review page's ``active`` queue) are exported with their design's
columns (:data:`~sgi_core.columns.DESIGN_COLUMNS`), so the table is a ``--labels`` file whose
design ``compare`` and ``monitor`` verify; a row labelled otherwise beside them has those cells
empty, and such a table is refused there rather than read as a uniform sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.columns import ADDED_COLUMNS, DESIGN_COLUMNS, INPUT_ROW, TEXT_COLUMNS
from sgi_core.results import JsonResult
from sgi_core.review.annotations import decision_line
from sgi_core.review.label_sources import LabelSet, join_labels

#: Names of a file's own row id, most telling first (matched ignoring case); else the first ``*_id`` column.
ID_COLUMN_NAMES = ("request_id", "trace_id", "id", "row_id", "record_id", "sample_id", "example_id", "item_id", "uuid",
                   "question_id", "qid")
#: The columns of the readable export (the file's id column, where it has one, follows ``key``).
EXPORT_COLUMNS = ("key", *TEXT_COLUMNS, "label", "note", "annotator", "time")
_WORDS = {1.0: "grounded", 0.0: "hallucinated"}


def id_column(columns) -> str | None:
    """The column that names a file's rows (``request_id``, ``trace_id``, ``id``, ...), or None.

    Examples
    --------
    >>> id_column(["question", "context", "response", "Trace_ID", "id"])
    'Trace_ID'
    >>> id_column(["question", "doc_id"]), id_column(["question", "answer"])
    ('doc_id', None)
    """
    own = [str(c) for c in columns if str(c) not in ADDED_COLUMNS and str(c) != INPUT_ROW]
    lowered = {name.lower(): name for name in reversed(own)}
    for wanted in ID_COLUMN_NAMES:
        if wanted in lowered:
            return lowered[wanted]
    return next((name for name in own if name.lower().endswith("_id")), None)


@dataclass(frozen=True)
class LabelImport(JsonResult):
    """What an import of labels into a file's annotations did.

    Attributes
    ----------
    source : str
    n_labels : int
        Keys the source labels (conflicting and unsure ones not counted).
    n_matched : int
        Those keys among the file's rows: the only ones imported.
    n_unmatched : int
        Labels of rows the file does not hold, left out.
    n_added : int
        Decisions appended: keys without a decision in force, or with another one.
    n_replaced : int
        Of ``n_added``, keys whose decision in force was another (an earlier label replaced).
    n_already : int
        Keys whose decision in force already was the imported label: nothing appended.
    n_conflicting, n_unsure : int
        Keys the source labels both ways, and keys it leaves unlabelled: not imported.
    """

    source: str
    n_labels: int
    n_matched: int
    n_unmatched: int
    n_added: int
    n_replaced: int
    n_already: int
    n_conflicting: int
    n_unsure: int


def import_lines(labels: LabelSet, keys, current: pd.DataFrame, *, annotator: str) -> tuple[list[bytes], LabelImport]:
    """The decision lines that import ``labels`` into the annotations of a file whose rows have ``keys``.

    ``current`` is the decisions in force (:meth:`~sgi_core.review.annotations.AnnotationStore.current`).
    Only keys among ``keys`` are kept, and of those only the ones whose decision in
    force is not already the label given.

    Raises
    ------
    SGIInputError
        When the source labels rows and none of them is among ``keys``: it comes from other data.

    Examples
    --------
    >>> from sgi_core.review.annotations import row_key
    >>> k1, k2, k3 = (row_key("q", "c", r) for r in "abc")
    >>> source = LabelSet(pd.DataFrame({"key": [k1, k2, k3], "value": [1.0, 0.0, 1.0]}), "l.csv")
    >>> current = pd.DataFrame({"key": [k1], "label": ["grounded"]})
    >>> lines, done = import_lines(source, [k1, k2], current, annotator="me")
    >>> len(lines), done.n_added, done.n_already, done.n_unmatched
    (1, 1, 1, 1)
    """
    join_labels(keys, labels)  # refuses labels of other data only
    given = labels.labels[labels.labels["key"].isin(pd.Index(np.asarray(keys, dtype=object)))]
    in_force = pd.Series(current["label"].to_numpy(), index=current["key"].to_numpy()) if len(current) else pd.Series(
        dtype=object)
    words = given["value"].map(_WORDS)
    before = in_force.reindex(given["key"].to_numpy()).to_numpy()
    new = words.to_numpy() != before
    note = f"imported from {labels.source}"[:200]
    lines = [decision_line(key, word, annotator=annotator, note=note)
             for key, word in zip(given["key"].to_numpy()[new], words.to_numpy()[new])]
    replaced = int(np.count_nonzero(new & pd.notna(before)))
    return lines, LabelImport(labels.source, len(labels.labels), len(given), len(labels.labels) - len(given),
                              len(lines), replaced, len(given) - len(lines), len(labels.conflicting_keys),
                              labels.n_unsure)


def annotation_table(frame: pd.DataFrame, keys, current: pd.DataFrame) -> pd.DataFrame:
    """The file's rows with a decision in force, as a table another tool can read, in file order.

    Columns :data:`EXPORT_COLUMNS`, with the file's :func:`id_column` after ``key``;
    ``label`` is ``grounded`` or ``hallucinated``, and empty for ``unsure`` (a labels
    table's empty cell: the table imports back with those rows unlabelled). Where a
    decision carries a design, :data:`~sgi_core.columns.DESIGN_COLUMNS` follow.

    Examples
    --------
    >>> from sgi_core.review.annotations import row_keys
    >>> frame = pd.DataFrame({"question": ["q", "q"], "context": ["c", "c"], "response": ["a", "b"],
    ...                       "request_id": ["r1", "r2"]})
    >>> keys = row_keys(frame)
    >>> current = pd.DataFrame({"key": [keys[1]], "label": ["unsure"], "note": ["?"], "annotator": ["me"],
    ...                         "time": ["t"]})
    >>> annotation_table(frame, keys, current)[["request_id", "response", "label", "note"]].values.tolist()
    [['r2', 'b', '', '?']]
    """
    keys = np.asarray(keys, dtype=object)
    decided = current.drop_duplicates("key", keep="last").set_index("key")
    rows = np.flatnonzero(pd.Index(keys).isin(decided.index))
    chosen = decided.reindex(keys[rows])
    table = pd.DataFrame({"key": keys[rows]})
    identifier = id_column(frame.columns)
    if identifier is not None:
        table[identifier] = frame[identifier].to_numpy()[rows]
    for column in TEXT_COLUMNS:
        table[column] = frame[column].to_numpy()[rows]
    table["label"] = chosen["label"].where(chosen["label"] != "unsure", "").to_numpy()
    for column in ("note", "annotator", "time"):
        table[column] = chosen[column].to_numpy()
    if "design" in chosen and (chosen["design"].fillna("") != "").any():
        for column in DESIGN_COLUMNS:
            table[column] = chosen[column].fillna("").to_numpy()
    return table
