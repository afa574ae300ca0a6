"""Cached calls behind the Review page, and the label source every page's statistics use.

Labels come from the file's label column, the annotations made on the Review page
(:mod:`sgi_core.review.annotations`, one file per data set under the app's data folder), or
both where they agree (:func:`sgi_core.review.label_sources.combine_labels`). With labels
other than the file's, :func:`apply_label_source` hands the pages the file's table and
scores with their ``label`` column replaced, under a :class:`~dashboard.state.DataKey`
whose ``labels`` field names the source and the annotations' version, so every cached
statistic is computed again on the new labels and on nothing else.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import services, state
from sgi_core.columns import ANGLE_COLUMNS, GROUNDING_PREFIX, is_ordinary
from sgi_core.evaluation.labels_needed import LabelsNeeded, labels_needed
from sgi_core.geometry import canonical_triangle
from sgi_core.io.triples import TripleTable
from sgi_core.judge.cache import AnswerCache
from sgi_core.judge.statements import cached_statements
from sgi_core.render.names import display_name
from sgi_core.review.annotations import MAX_NOTE_CHARS, AnnotationStore, annotations_path, row_key, row_keys
from sgi_core.review.decision_log import LABEL_VALUE
from sgi_core.review.label_exchange import id_column
from sgi_core.review.label_sources import (
    LABEL_SOURCES,
    CombinedLabels,
    LabelJoin,
    combine_labels,
)
from sgi_core.review.queues import STRATEGIES, ReviewQueue, RowProfile, review_queue, row_profile
from sgi_core.review.row_labels import RowLabelTracker
from sgi_core.scores import BASELINES
from sgi_core.scores.baselines import response_length
from sgi_core.scores.oriented import oriented_scores
from sgi_core.scores.selection import is_score_column, judged_scores
from sgi_core.stats.kappa import KappaResult, cohens_kappa

#: The score the uncertainty queue follows and calibrates.
UNCERTAIN_SCORE = "sgi"

__all__ = ["LABEL_SOURCES", "MAX_NOTE_CHARS", "STRATEGIES", "UNCERTAIN_SCORE", "LabelState", "annotation_store",
           "apply_label_source", "has_annotations", "has_triangle", "judge_statements", "judge_verdict_columns",
           "key_of_row", "label_source_line", "label_state", "kappa", "more_labels", "profile", "queue", "queue_scores",
           "retract", "row_id", "row_triangle", "verdict_labels"]

#: How each label source is named on screen.
SOURCE_NAMES = {"file": "the file's label column", "annotations": "the annotations made on the Review page",
                "both": "the file's label column and the annotations, where they agree"}


def annotation_store(key: state.DataKey) -> AnnotationStore:
    return AnnotationStore(annotations_path(key.name))


def store_version(store: AnnotationStore) -> str:
    """Inode, size and modification time of the annotations file: changes with every decision appended."""
    try:
        info = os.lstat(store.path)  # a link is not followed; reading it is refused with the reason
    except FileNotFoundError:
        return "empty"
    return f"{info.st_ino}-{info.st_size}-{info.st_mtime_ns}"


def retract(path: str, key: str, decision_id: str, *, annotator: str) -> None:
    """Retract one decision, by its id, from the annotation store at ``path`` (others' decisions on the row stay)."""
    AnnotationStore(Path(path)).retract(key, decision_id, annotator=annotator)


def has_triangle(status: str) -> bool:
    """Whether a row of this ``sgi_status`` has a canonical triangle to draw (its SGI is an ordinary number)."""
    return bool(is_ordinary(status))


def has_annotations(store: AnnotationStore) -> bool:
    """Whether the annotations file exists (it may hold only undone decisions)."""
    return store_version(store) != "empty"


@st.cache_resource(show_spinner=False, max_entries=4)
def table_keys(key: state.DataKey, _table: TripleTable) -> np.ndarray:
    """Row key of every row (:func:`sgi_core.review.annotations.row_keys`); ``key`` is the file's, labels aside."""
    return row_keys(_table.frame)


@dataclass(frozen=True)
class LabelState:
    """The file's labels, the annotations' and the labels the pages use, one per row.

    ``keys`` holds every row's key once the file has annotations, else nothing;
    ``annotated`` marks the rows with a decision in force (``unsure`` included), which
    the queues skip; ``damaged`` holds the warning about skipped lines of the file.
    """

    keys: np.ndarray
    file_label: np.ndarray
    annotations: LabelJoin
    combined: CombinedLabels
    annotated: np.ndarray
    damaged: tuple
    path: str
    #: Rows labelled from a Review queue that is not a random order (no prediction-powered estimate uses them).
    n_targeted: int = 0

    @property
    def n_annotated(self) -> int:
        """Rows with a decision in force, ``unsure`` included."""
        return int(np.count_nonzero(self.annotated))

    @property
    def n_labelled(self) -> int:
        """Rows annotated grounded or hallucinated: ``unsure`` is no label."""
        return self.annotations.n_rows_labelled

    @property
    def n_unsure(self) -> int:
        """Rows whose decision in force is ``unsure``."""
        return int(np.count_nonzero(self.annotated & np.isnan(self.annotations.label)))

    def decision(self, position: int) -> str | None:
        """The decision in force on row ``position``: ``grounded``, ``hallucinated``, ``unsure``, or None."""
        if not self.annotated[position]:
            return None
        value = self.annotations.label[position]
        return "unsure" if np.isnan(value) else "grounded" if value == LABEL_VALUE["grounded"] else "hallucinated"

    @property
    def n_left(self) -> int:
        """Rows neither labelled (by the pages' label source) nor annotated (``unsure`` included): left to label."""
        return int(np.count_nonzero(np.isnan(self.combined.label) & ~self.annotated))


@st.cache_resource(show_spinner=False, max_entries=4)
def _tracker(key: state.DataKey, path: str, _table: TripleTable) -> RowLabelTracker:
    """The rows' labels from the annotations file at ``path``, kept up to date as decisions are appended."""
    return RowLabelTracker(table_keys(key, _table), source=path)


@st.cache_resource(show_spinner=False, max_entries=8)
def _label_state(key: state.DataKey, version: str, source: str, path: str, _table: TripleTable) -> LabelState:
    store = AnnotationStore(annotations_path(key.name))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log = store.log()
    file_label = _table.frame["label"].to_numpy(dtype=np.float64)
    # Hashing every row's texts costs seconds on millions of rows: done only once there are annotations to join.
    if log.n_records:
        rows = _tracker(key, path, _table).update(log)
        keys, joined, annotated, targeted = table_keys(key, _table), rows.joined, rows.annotated, rows.n_targeted
    else:
        keys, joined = np.array([], dtype=object), LabelJoin(np.full(_table.n_rows, np.nan), path, 0, 0, 0, 0, 0, 0)
        annotated, targeted = np.zeros(_table.n_rows, dtype=bool), 0
    return LabelState(keys, file_label, joined, combine_labels(file_label, joined.label, source=source), annotated,
                      tuple(dict.fromkeys(str(w.message) for w in caught)), path, targeted)


def label_state(key: state.DataKey) -> LabelState:
    """The label state of the current file (``key``'s ``labels`` field is ignored).

    Read from the file's own table, never from a relabelled one, so that the file's
    labels stay the file's whatever source the pages use.
    """
    base = key._replace(labels="file")
    table = services.triple_table(base, state.raw_file()[1], services.input_limits())
    store = annotation_store(base)
    source = st.session_state.get(state.LABEL_SOURCE, "both")
    return _label_state(base, store_version(store), source, str(store.path), table)


@st.cache_resource(show_spinner=False, max_entries=4)
def _relabelled(key: state.DataKey, _label: np.ndarray, _table: TripleTable, _frames: dict):
    # assign() shares every other column with the cached frames (copy-on-write): only the labels are new.
    table = replace(_table, frame=_table.frame.assign(label=_label))
    return table, {name: frame.assign(label=_label) for name, frame in _frames.items()}


def apply_label_source(key: state.DataKey, table: TripleTable, frames: dict) -> tuple:
    """``(key, table, frames)`` with the labels of the chosen source; unchanged when they are the file's."""
    labels = label_state(key)
    if np.array_equal(labels.combined.label, labels.file_label, equal_nan=True):
        return key, table, frames
    source = st.session_state.get(state.LABEL_SOURCE, "both")
    new_key = key._replace(labels=f"{source}:{store_version(annotation_store(key))}")
    new_table, new_frames = _relabelled(new_key, labels.combined.label, table, frames)
    return new_key, new_table, new_frames


def label_source_line(data) -> str:
    """Which labels the statistics use and how many, for the caption under every page's title."""
    combined = label_state(data.key).combined
    # Without annotations "both" is the file's labels, and says so.
    source = "file" if combined.source == "both" and not combined.n_annotations else combined.source
    line = f"labels: {SOURCE_NAMES[source]} ({combined.n_labelled:,} rows"
    if combined.n_annotations:
        line += f"; {combined.n_file:,} in the file, {combined.n_annotations:,} annotated"
        if combined.n_disagree:
            line += f", {combined.n_disagree:,} disagreeing" + (" left unlabelled" if combined.source == "both" else "")
    return line + "; source chosen on the Review page)"


@st.cache_resource(show_spinner=False, max_entries=4)
def queue_scores(key: state.DataKey, model_name: str, _table: TripleTable, _frame: pd.DataFrame) -> dict:
    """Scores a queue can follow by name, each oriented higher = grounded, as the report judges them.

    The chooser (:func:`sgi_core.scores.selection.judged_scores`) names them: SGI, the
    trivial scores, the registered, judge and grounding-model columns the file carries but the
    angles, then its other numeric columns as they are; :func:`~sgi_core.scores.oriented.oriented_scores`
    orients them. The baselines are the app's cached ones, not computed again.
    """
    file_only = [column for column in _table.frame.columns if column not in _frame.columns]
    both = _frame.join(_table.frame[file_only]) if file_only else _frame
    others = [column for column in services.numeric_columns(_table) if not is_score_column(str(column))
              and not str(column).startswith(GROUNDING_PREFIX)]  # a grounding model's chunk count is not a score
    # The angles are drawn raw beside the scores (``row_profile``), so they are not followed as scores twice.
    specs = [spec for spec in judged_scores(both.columns, trivial=False, others=others)
             if spec.name not in ANGLE_COLUMNS]
    oriented = oriented_scores(both, specs, source=_table.source)
    scores = {"sgi": oriented["sgi"].to_numpy()}
    base = services.baselines(key, model_name, _frame)
    if base is not None:
        scores.update({name: base[name].to_numpy(dtype=np.float64) for name in BASELINES})
    scores.update({name: oriented[name].to_numpy() for name in oriented.columns if name not in scores})
    return scores


@st.cache_data(show_spinner=False, max_entries=32)
def queue(key: state.DataKey, model_name: str, strategy: str, seed: int, score: str, second: str | None,
          threshold: float | None, calibration: str | None, _scores: dict, _labels: np.ndarray,
          _probability, _table: TripleTable) -> ReviewQueue:
    """Every row in the order of ``strategy``; the page skips the rows already annotated.

    ``calibration`` names the calibrator that made ``_probability``, for the cache. The
    seeded order follows each row's key (its texts), so the same rows in any order come
    in the same order.
    """
    return review_queue(len(_labels), strategy=strategy, seed=seed, score=_scores[score],
                        second_score=_scores.get(second), threshold=threshold, labels=_labels,
                        probability=_probability, keys=table_keys(key._replace(labels="file"), _table))


def profile(key: state.DataKey, model_name: str, position: int, table: TripleTable, frame: pd.DataFrame) -> RowProfile:
    """Where the row stands in the file on its length, word overlap, SGI, angles and every score column."""
    columns = {"response length (characters)": response_length(frame["response"]).astype(np.float64)}
    scores = queue_scores(key, model_name, table, frame)
    columns.update({display_name(name): values for name, values in scores.items() if name != "neg_response_length"})
    columns.update({f"θ({name[-2]},{name[-1]})": frame[name].to_numpy(dtype=np.float64) for name in ANGLE_COLUMNS})
    return row_profile(columns, position)


def key_of_row(row) -> str:
    """The row key of one row (:func:`sgi_core.review.annotations.row_key`)."""
    return row_key(row["question"], row["context"], row["response"])


def row_triangle(theta_qc: float, theta_rq: float, theta_rc: float) -> np.ndarray:
    """The response's place in the row's canonical triangle (q at (0, 0), c at (1, 0))."""
    return canonical_triangle([theta_qc], [theta_rq], [theta_rc], normalize=True)[1]


def judge_statements(row, model: str) -> tuple | None:
    """The judge's statements of the row with their verdicts, from the answer cache (None when it holds none).

    Looked up under the endpoint the Judge page names (the operator's by default) and
    the row's ``judge_model``.
    """
    from dashboard.services.judging import default_endpoint

    endpoint = st.session_state.get(state.JUDGE_ENDPOINT) or default_endpoint()
    cache = AnswerCache()
    try:
        return cached_statements(row["question"], row["context"], row["response"], endpoint=endpoint, model=model,
                                 cache=cache)
    finally:
        cache.close()


def judge_verdict_columns(table: TripleTable) -> list[str]:
    """Judge columns holding verdicts (only 0, 1 or empty), such as ``judge_answer_consistency_binary``."""
    found = []
    for column in table.frame.columns:
        if str(column).startswith("judge_") and column != "judge_status":
            values = pd.to_numeric(table.frame[column], errors="coerce")
            if values.notna().any() and values.dropna().isin([0.0, 1.0]).all():
                found.append(column)
    return found


def verdict_labels(table: TripleTable, column: str) -> np.ndarray:
    """A judge verdict column as labels: 1.0 grounded, 0.0 hallucinated, NaN not judged."""
    return pd.to_numeric(table.frame[column], errors="coerce").to_numpy(dtype=np.float64)


@st.cache_data(show_spinner=False, max_entries=32)
def kappa(key: state.DataKey, what: str, version: str, _a: np.ndarray, _b: np.ndarray) -> KappaResult:
    """Cohen's kappa of two per-row label arrays (``what`` and ``version`` name them for the cache)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cohens_kappa(_a, _b)


@st.cache_data(show_spinner=False, max_entries=32)
def more_labels(key: state.DataKey, model_name: str, score: str, half_width: float, n_left: int, _labels: np.ndarray,
                _score: np.ndarray) -> LabelsNeeded:
    """Labels needed for the half-width, never more than the ``n_left`` rows left to label."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return labels_needed(_labels, _score, target_half_width=half_width, n_left=n_left)


def row_id(table: TripleTable, position: int) -> tuple[str, str] | None:
    """The file's own id column (request_id, trace_id, id, ...) and its cell on row ``position``; None without one."""
    column = id_column(table.frame.columns)
    if column is None:
        return None
    return column, str(table.frame[column].iloc[position])
