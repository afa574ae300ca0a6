"""Labels in and out: ``--labels FILE`` opened safely, an import that adds only this file's new labels, a readable
export."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.io.triples import load_triples
from sgi_core.review.annotations import AnnotationStore, append_lines, row_keys
from sgi_core.review.label_sources import LabelSet, labels_from_table, read_label_source
from tests.conftest import SAMPLE_CSV
from tests.review.test_annotations_store import within


@pytest.fixture
def labels_csv(tmp_path):
    frame = load_triples(SAMPLE_CSV).frame.head(5)
    path = tmp_path / "labels.csv"
    frame[["question", "context", "response", "label"]].to_csv(path, index=False)
    return path


def test_labels_file_behind_a_link_is_refused(tmp_path, labels_csv):
    assert len(read_label_source(labels_csv).labels) == 5
    link = tmp_path / "link.csv"
    link.symlink_to(labels_csv)
    with pytest.raises(SGIInputError, match="the labels file is a symbolic link, which is not followed"):
        read_label_source(link)


def test_labels_file_that_is_a_device_or_a_pipe_is_refused_without_reading(tmp_path):
    zero = tmp_path / "zero.csv"
    zero.symlink_to("/dev/zero")
    with pytest.raises(SGIInputError, match="symbolic link"):
        read_label_source(zero)
    with pytest.raises(SGIInputError, match="the labels file is not a regular file"):
        read_label_source("/dev/zero")
    pipe = tmp_path / "pipe.csv"
    os.mkfifo(pipe)
    with within(10), pytest.raises(SGIInputError, match="not a regular file"):
        read_label_source(pipe)  # returns at once: a pipe is not waited on
    with pytest.raises(SGIInputError, match="no labels file at this path"):
        read_label_source(tmp_path / "absent.csv")


def sample_labels(rows) -> LabelSet:
    frame = load_triples(SAMPLE_CSV).frame.iloc[rows]
    return labels_from_table(frame[["question", "context", "response", "label"]], source="l.csv")


def test_an_import_adds_only_this_files_rows_and_only_once(tmp_path):
    from sgi_core.review.label_exchange import import_lines

    frame = load_triples(SAMPLE_CSV).frame
    keys = row_keys(frame.head(100))  # "this file" holds the first 100 rows; the labels cover 150
    store = AnnotationStore(tmp_path / "a.jsonl")
    store.add(keys[0], "unsure")
    labels = sample_labels(range(150))
    lines, done = import_lines(labels, keys, store.current(), annotator="import")
    assert (done.n_labels, done.n_matched, done.n_unmatched, done.n_added, done.n_replaced, done.n_already) == (
        150, 100, 50, 100, 1, 0)
    append_lines(store.path, lines)
    current = store.current()
    assert set(current["key"]) == set(keys)
    lines, again = import_lines(labels, keys, store.current(), annotator="import")
    assert lines == [] and (again.n_added, again.n_already) == (0, 100)
    with pytest.raises(SGIInputError, match="the labels come from other data"):
        import_lines(sample_labels(range(200, 210)), keys, current, annotator="import")


@pytest.mark.parametrize(("columns", "expected"), [
    (["question", "request_id", "id"], "request_id"),
    (["question", "ID", "doc_id"], "ID"),
    (["question", "doc_id", "chunk_id"], "doc_id"),
    (["question", "context", "response", "label", "input_row"], None),
])
def test_the_files_own_id_column(columns, expected):
    from sgi_core.review.label_exchange import id_column

    assert id_column(columns) == expected


def test_the_readable_export_imports_back_to_the_same_labels(tmp_path):
    from sgi_core.review.label_exchange import annotation_table

    frame = load_triples(SAMPLE_CSV).frame
    keys = row_keys(frame)
    store = AnnotationStore(tmp_path / "a.jsonl")
    given = {3: "grounded", 7: "hallucinated", 11: "unsure", 20: "grounded"}
    for row, word in given.items():
        store.add(keys[row], word, note=f"row {row}", annotator="ann")
    store.add(keys[20], "hallucinated", annotator="bob")
    store.add("0" * 32, "grounded")  # a label of other data: not a row of this file
    table = annotation_table(frame, keys, store.current())
    assert list(table.columns) == ["key", "id", "question", "context", "response", "label", "note", "annotator", "time"]
    assert table["id"].tolist() == frame["id"].iloc[[3, 7, 11, 20]].tolist()
    assert table["label"].tolist() == ["grounded", "hallucinated", "", "hallucinated"]
    assert table["annotator"].tolist() == ["ann", "ann", "ann", "bob"]
    back = read_label_source(table.to_csv(index=False).encode(), name="export.csv")
    assert back.n_unsure == 1
    expected = pd.DataFrame({"key": keys[[3, 7, 20]], "value": [1.0, 0.0, 0.0]})
    pd.testing.assert_frame_equal(back.labels.sort_values("key").reset_index(drop=True),
                                  expected.sort_values("key").reset_index(drop=True), check_dtype=False)
    assert np.isin(table["key"], keys).all()
