"""Labels from elsewhere joined to a table of triples by row key, and combined with the file's own labels.

A labels source is either an annotations file (:mod:`sgi_core.review.annotations`) or any
table (CSV, TSV, Parquet, JSON Lines) with question, context, response and label
columns, such as another tool's labelling export. Both become one label per row key
(1.0 grounded, 0.0 hallucinated); :func:`join_labels` puts them on the rows of a table
whatever their order, counting the labels that matched a row, those that matched none
and the keys a table labels both ways.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from sgi_core.columns import LABELLED_AT
from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult
from sgi_core.review.annotations import current_decisions, read_decisions, row_keys
from sgi_core.review.decision_log import is_targeted
from sgi_core.review.store_files import read_regular_file

#: What the pages and commands may take their labels from.
LABEL_SOURCES = ("file", "annotations", "both")


@dataclass(frozen=True)
class LabelSet:
    """One label per row key, from one source.

    Attributes
    ----------
    labels : DataFrame
        ``key`` and ``value`` (1.0 grounded, 0.0 hallucinated), one row per key.
    source : str
    n_unsure : int
        Keys marked unsure (annotations) or with an empty label cell (tables): not in ``labels``.
    conflicting_keys : tuple of str
        Keys a table labels both grounded and hallucinated: not in ``labels``.
    targeted_keys : frozenset of str
        Labelled keys whose decision came from a Review queue that is not a random order
        (:func:`~sgi_core.review.decision_log.is_targeted`): not a random sample of the rows.
    """

    labels: pd.DataFrame
    source: str
    n_unsure: int = 0
    conflicting_keys: tuple = ()
    targeted_keys: frozenset = frozenset()


def labels_from_annotations(raw: bytes, *, source: str = "<annotations>") -> LabelSet:
    """The decisions in force of an annotations file (:func:`~sgi_core.review.annotations.current_decisions`)."""
    return labels_from_decisions(current_decisions(read_decisions(raw, source=source)), source=source)


def labels_from_decisions(current: pd.DataFrame, *, source: str = "<annotations>") -> LabelSet:
    """The labels of the decisions in force (``key`` and ``value``, as :meth:`AnnotationStore.current` gives them)."""
    decided = current["value"].notna().to_numpy()
    queues = current["queue"] if "queue" in current else pd.Series([""] * len(current), index=current.index)
    targeted = frozenset(current.loc[decided & queues.map(is_targeted).to_numpy(dtype=bool), "key"])
    return LabelSet(current.loc[decided, ["key", "value"]].reset_index(drop=True), source,
                    n_unsure=int((~decided).sum()), targeted_keys=targeted)


def labels_from_table(frame: pd.DataFrame, *, source: str = "<labels>", label_positive: str | None = None) -> LabelSet:
    """Labels of a table with question, context, response and label columns (names as ``validate_triples`` finds them).

    Rows repeating a key with the same label count once; a key labelled both ways
    is conflicting and left out. The labels keep the order they were given: by the
    ``labelled_at`` column when the table has one, else the rows' order.

    Raises
    ------
    SGIInputError
        No label column, or the columns or labels ``validate_triples`` refuses.
    """
    from sgi_core.io.triples import validate_triples

    table = validate_triples(frame, label_positive=label_positive, source=source)
    if table.mapping.label is None:
        raise SGIInputError("a labels table needs a label column", source=source,
                            hint="Name it label (1 = grounded, 0 = hallucinated, or grounded / hallucinated)")
    values = table.frame["label"].to_numpy(dtype=np.float64)
    keyed = pd.DataFrame({"key": row_keys(table.frame), "value": values})
    if LABELLED_AT in table.frame.columns:  # the labels in the order they were given, ties in row order
        times = _label_times(table.frame[LABELLED_AT], ~np.isnan(values), source)
        keyed = keyed.iloc[np.argsort(times, kind="stable")]
        values = keyed["value"].to_numpy()
    labelled = keyed[~np.isnan(values)]
    kinds = labelled.groupby("key", sort=False)["value"].nunique()
    conflicting = kinds.index[kinds.to_numpy() > 1]
    unique = labelled.drop_duplicates("key")
    unique = unique[~unique["key"].isin(conflicting)].reset_index(drop=True)
    n_unsure = int(keyed.loc[np.isnan(values), "key"].nunique())
    return LabelSet(unique, source, n_unsure=n_unsure, conflicting_keys=tuple(conflicting))


def _label_times(cells: pd.Series, labelled: np.ndarray, source: str) -> np.ndarray:
    """The ``labelled_at`` cells as UTC nanoseconds; a labelled row's cell that is not a date and time is refused."""
    times = pd.to_datetime(cells, errors="coerce", utc=True, format="mixed")
    bad = np.flatnonzero(times.isna().to_numpy() & labelled)
    if len(bad):
        raise SGIInputError(f"a labels table's {LABELLED_AT} must hold a date and time on every labelled row",
                            source=source,
                            column=LABELLED_AT, rows=(bad + 1).tolist(),
                            hint="Write ISO 8601 times (2026-11-24T07:00:00Z), or drop the column to keep the rows' "
                                 "order")
    return times.to_numpy(dtype="datetime64[ns]").astype(np.int64)


def looks_like_annotations(raw: bytes) -> bool:
    """Whether a file's first non-blank line is an annotations decision (a JSON object with ``key`` and ``label``)."""
    first = next((line.strip() for line in raw.split(b"\n", 50)[:50] if line.strip()), b"")
    return first.startswith(b'{"key":') and b'"label":' in first


def read_label_source(source: str | os.PathLike | bytes, *, name: str | None = None,
                      label_positive: str | None = None, limits=None) -> LabelSet:
    """An annotations file or a labels table, told apart by content, as a :class:`LabelSet`.

    A path is opened without following a symbolic link and must be a regular file of at
    most :func:`~sgi_core.io.reading.max_input_bytes` bytes.
    """
    from sgi_core.io.reading import max_input_bytes, read_table, source_name

    name = name or source_name(source)
    if isinstance(source, bytes):
        raw = source
    else:
        if not os.path.lexists(source):
            raise SGIInputError("no labels file at this path", source=str(source),
                                hint="Give an annotations file or a table with question, context, response and label")
        # Not followed if a link, refused unless a regular file, never read past the cap (a link to /dev/zero).
        raw = read_regular_file(source, limit=max_input_bytes(), what="labels file")
    if looks_like_annotations(raw):
        return labels_from_annotations(raw, source=name)
    frame = read_table(raw, name=name, limits=limits)
    return labels_from_table(frame, source=name, label_positive=label_positive)


@dataclass(frozen=True)
class LabelJoin(JsonResult):
    """Labels of a source put on the rows of a table.

    Attributes
    ----------
    label : ndarray
        One per table row: 1.0 grounded, 0.0 hallucinated, NaN unlabelled.
    n_labels : int
        Keys the source labels (conflicting and unsure ones not counted).
    n_matched : int
        Those keys found among the table's rows.
    n_unmatched : int
        ``n_labels - n_matched``: labels of rows the table does not hold.
    n_conflicting : int
        Keys the source labels both ways, left unlabelled.
    n_unsure : int
    n_rows_labelled : int
        Table rows given a label (rows repeating a text share its label).
    """

    label: np.ndarray
    source: str
    n_labels: int
    n_matched: int
    n_unmatched: int
    n_conflicting: int
    n_unsure: int
    n_rows_labelled: int


def join_labels(keys, labels: LabelSet, *, require_match: bool = True) -> LabelJoin:
    """Put ``labels`` on the rows whose :func:`~sgi_core.review.annotations.row_key` is in ``keys``.

    Raises
    ------
    SGIInputError
        With ``require_match``, when the source labels rows and none of them is in
        the table: it comes from other data.
    """
    keys = pd.Index(np.asarray(keys, dtype=object))
    by_key = pd.Series(labels.labels["value"].to_numpy(dtype=np.float64), index=labels.labels["key"].to_numpy())
    label = by_key.reindex(keys).to_numpy(dtype=np.float64)
    n_matched = int(by_key.index.isin(keys).sum())
    if require_match and len(by_key) and not n_matched:
        raise SGIInputError(f"none of the {len(by_key):,} labelled rows is in this table: the labels come from "
                            "other data", source=labels.source,
                            hint="Use the labels made for this file; rows match on their question, context and "
                                 "response texts")
    return LabelJoin(label, labels.source, len(by_key), n_matched, len(by_key) - n_matched,
                     len(labels.conflicting_keys), labels.n_unsure, int((~np.isnan(label)).sum()))


def join_label_sets(keys, label_sets) -> LabelJoin:
    """Put the labels of several sources on the rows of one table; a row two sources label differently stays unlabelled.

    Each source is joined by :func:`join_labels` without requiring a match (one source
    may hold the rows of another run); the counts are summed over the sources, and the
    rows the sources disagree on are added to ``n_conflicting``.

    Examples
    --------
    >>> a = LabelSet(pd.DataFrame({"key": ["k1", "k2"], "value": [1.0, 0.0]}), "a")
    >>> b = LabelSet(pd.DataFrame({"key": ["k2", "k3"], "value": [1.0, 0.0]}), "b")
    >>> joined = join_label_sets(["k1", "k2", "k3", "k4"], [a, b])
    >>> joined.label.tolist()[0], bool(np.isnan(joined.label[1])), joined.label.tolist()[2], joined.n_conflicting
    (1.0, True, 0.0, 1)
    """
    joins = [join_labels(keys, labels, require_match=False) for labels in label_sets]
    if not joins:
        raise SGIInputError("no labels source given")
    stacked = np.vstack([j.label for j in joins])
    labelled = ~np.isnan(stacked)
    first = np.where(labelled.any(axis=0), stacked[labelled.argmax(axis=0), np.arange(stacked.shape[1])], np.nan)
    disagree = (labelled & (stacked != first)).any(axis=0)
    label = np.where(disagree, np.nan, first)
    return LabelJoin(label, ", ".join(j.source for j in joins), sum(j.n_labels for j in joins),
                     sum(j.n_matched for j in joins), sum(j.n_unmatched for j in joins),
                     sum(j.n_conflicting for j in joins) + int(disagree.sum()), sum(j.n_unsure for j in joins),
                     int((~np.isnan(label)).sum()))


@dataclass(frozen=True)
class CombinedLabels(JsonResult):
    """The labels an evaluation uses, from the file's label column, the annotations, or both.

    ``both`` takes every row labelled by either source, except the rows where the
    two disagree, which stay unlabelled and are counted in ``n_disagree``.
    """

    label: np.ndarray
    source: str
    n_file: int
    n_annotations: int
    n_both: int
    n_disagree: int

    @property
    def n_labelled(self) -> int:
        return int((~np.isnan(self.label)).sum())


def combine_labels(file_label, annotation_label, *, source: str) -> CombinedLabels:
    """The labels of ``source`` (one of :data:`LABEL_SOURCES`) from the two per-row label arrays.

    Examples
    --------
    >>> nan = float("nan")
    >>> both = combine_labels([1, 0, nan, 1], [1, 1, 0, nan], source="both")
    >>> both.label.tolist()[0], bool(np.isnan(both.label[1])), both.label.tolist()[2:], both.n_disagree
    (1.0, True, [0.0, 1.0], 1)
    """
    if source not in LABEL_SOURCES:
        raise SGIInputError(f"unknown label source {source!r}", hint=f"Choose among {', '.join(LABEL_SOURCES)}")
    file_label = np.asarray(file_label, dtype=np.float64)
    annotation_label = np.asarray(annotation_label, dtype=np.float64)
    in_file, annotated = ~np.isnan(file_label), ~np.isnan(annotation_label)
    both = in_file & annotated
    disagree = both & (file_label != annotation_label)
    if source == "file":
        label = file_label.copy()
    elif source == "annotations":
        label = annotation_label.copy()
    else:
        label = np.where(in_file, file_label, annotation_label)
        label[disagree] = np.nan
    return CombinedLabels(label, source, int(in_file.sum()), int(annotated.sum()), int(both.sum()),
                          int(disagree.sum()))


def with_labels(table, source: str | os.PathLike | bytes, *, label_positive: str | None = None,
                limits=None) -> tuple:
    """A :class:`~sgi_core.io.triples.TripleTable` whose ``label`` column holds the labels of ``source``, joined by
    row key.

    ``source`` is an annotations file or a labels table (:func:`read_label_source`);
    the table's own labels are replaced, and its rows without a label in ``source``
    become unlabelled. Returns the new table and the :class:`LabelJoin`.

    Raises
    ------
    SGIInputError
        When ``source`` cannot be read, or none of its labelled rows is in the table.
    """
    joined = join_labels(row_keys(table.frame), read_label_source(source, label_positive=label_positive,
                                                                   limits=limits))
    return replace(table, frame=table.frame.assign(label=joined.label)), joined
