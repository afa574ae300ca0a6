"""Row keys, the append-only annotations file, and labels joined to a table by key."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.io.triples import load_triples
from sgi_core.review.annotations import (
    AnnotationFileWarning,
    AnnotationStore,
    annotations_path,
    decision_line,
    normalise_text,
    read_decisions,
    row_key,
    row_keys,
)
from sgi_core.review.label_sources import (
    combine_labels,
    join_labels,
    labels_from_annotations,
    labels_from_table,
    read_label_source,
)
from tests.conftest import REPO, SAMPLE_CSV

KEY_A, KEY_B, KEY_C = (row_key("q", "c", r) for r in ("a", "b", "c"))


def test_row_keys_are_the_same_in_csv_and_parquet_and_in_any_row_order(tmp_path):
    sample = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    shuffled = sample.sample(frac=1.0, random_state=3).reset_index(drop=True)
    shuffled.to_parquet(tmp_path / "s.parquet")
    from_csv = load_triples(SAMPLE_CSV).frame
    from_parquet = load_triples(tmp_path / "s.parquet").frame
    keys_csv = dict(zip(row_keys(from_csv), from_csv["response"]))
    keys_parquet = dict(zip(row_keys(from_parquet), from_parquet["response"]))
    assert len(keys_csv) > 50
    assert keys_csv == keys_parquet


def test_row_key_normalisation_is_whitespace_and_nfc_only():
    assert normalise_text(" a\u00a0\n\tb ") == "a b"
    assert row_key("Caf\u00e9?", "c", "r") == row_key("Cafe\u0301?", "c", "r")  # NFC
    assert row_key("q", "c", "r") != row_key("Q", "c", "r")
    assert row_key("a b", "c", "r") != row_key("a", "b c", "r")  # length prefixes keep fields apart
    assert row_key(None, "c", "r") == row_key("", "c", "r")
    assert len(row_key("q", "c", "r")) == 32


def test_latest_decision_wins_and_a_retraction_takes_back_its_own_decision(tmp_path):
    store = AnnotationStore(tmp_path / "a.jsonl")
    first = store.add(KEY_A, "grounded", annotator="ann")
    second = store.add(KEY_A, "hallucinated", note="wrong year")
    store.add(KEY_B, "unsure")
    assert store.current().set_index("key")["label"].to_dict() == {KEY_A: "hallucinated", KEY_B: "unsure"}
    store.retract(KEY_A, second)
    assert store.current().set_index("key")["label"].to_dict() == {KEY_A: "grounded", KEY_B: "unsure"}
    store.retract(KEY_A, first)
    store.retract(KEY_A, first)  # already undone: ignored
    assert store.current()["key"].tolist() == [KEY_B]
    assert len(store.read()) == 6  # every decision kept
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600


def test_bad_decisions_are_refused():
    with pytest.raises(SGIInputError, match="32 lowercase hex digits"):
        decision_line("xyz", "grounded")
    with pytest.raises(SGIInputError, match="unknown decision 'maybe'"):
        decision_line(KEY_A, "maybe")
    with pytest.raises(SGIInputError, match="note is 2,001 characters"):
        decision_line(KEY_A, "grounded", note="x" * 2001)


def test_damaged_lines_are_skipped_by_line_number_and_the_rest_kept(tmp_path):
    good = [decision_line(k, "grounded") for k in (KEY_A, KEY_B)]
    raw = good[0] + b'{"key": "' + KEY_C.encode() + b'", "lab\n' + b"\xff\xfe\n" + b"[1, 2]\n" + good[1]
    with pytest.warns(AnnotationFileWarning) as caught:
        read = read_decisions(raw, source="a.jsonl")
    (message,) = [str(w.message) for w in caught]  # one warning for all of them
    assert message.startswith("a.jsonl: 3 damaged lines skipped, every other decision kept: line 2 (invalid JSON: "
                              "Unterminated string")
    assert message.endswith("line 3 (not valid UTF-8 (byte 1)), line 4 (not a JSON object)")
    assert read["key"].tolist() == [KEY_A, KEY_B]
    assert read["line"].tolist() == [1, 5]


WRITER = textwrap.dedent("""
    import os, sys
    from sgi_core.review.annotations import append_lines, decision_line, row_key
    path, start, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    for i in range(start, start + count):
        append_lines(path, [decision_line(row_key("q", "c", str(i)), "grounded", annotator=str(start))])
    if len(sys.argv) > 4:  # a line cut short, then killed before it ends
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        os.write(fd, decision_line(row_key("q", "c", "cut"), "hallucinated")[:30])
        os.kill(os.getpid(), 9)
""")


def run_writer(path, start, count, *extra) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(start), str(count), *extra],
                            env={**os.environ, "PYTHONPATH": str(REPO)})


def test_a_writer_killed_in_the_middle_of_a_line_loses_no_earlier_decision(tmp_path):
    path = tmp_path / "a.jsonl"
    writer = run_writer(path, 0, 20, "kill")
    assert writer.wait(timeout=60) == -signal.SIGKILL
    assert not path.read_bytes().endswith(b"\n")
    store = AnnotationStore(path)
    store.add(row_key("q", "c", "after"), "hallucinated")  # the next append starts on a line of its own
    with pytest.warns(AnnotationFileWarning, match=r"line 21 skipped"):
        current = store.current()
    assert len(current) == 21
    assert set(current["key"]) == {row_key("q", "c", str(i)) for i in [*range(20), "after"]}


def test_two_processes_appending_at_once_lose_nothing(tmp_path):
    path = tmp_path / "a.jsonl"
    writers = [run_writer(path, start, 150) for start in (0, 1000)]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        current = AnnotationStore(path).current()
    assert len(current) == 300
    assert sorted(current["annotator"].value_counts().tolist()) == [150, 150]


def test_the_store_lives_under_the_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SGI_DATA_DIR", str(tmp_path))
    assert annotations_path("/x/My QA.parquet") == tmp_path / "annotations" / "My_QA.jsonl"
    assert annotations_path("qa.csv") == annotations_path("qa.parquet")


def sample_frame() -> pd.DataFrame:
    return load_triples(SAMPLE_CSV).frame


def test_joining_counts_matched_unmatched_and_conflicting(tmp_path):
    frame = sample_frame()
    labels = frame[["question", "context", "response", "label"]].head(10).copy()
    stranger = pd.DataFrame({"question": ["elsewhere"], "context": ["c"], "response": ["r"], "label": [1]})
    clash = pd.concat([labels.iloc[[0]], labels.iloc[[0]].assign(label=1.0 - labels["label"].iloc[0])])
    table = pd.concat([labels.iloc[1:], stranger, clash]).sample(frac=1.0, random_state=0)
    joined = join_labels(row_keys(frame), labels_from_table(table, source="t.csv"))
    assert (joined.n_labels, joined.n_matched, joined.n_unmatched, joined.n_conflicting) == (10, 9, 1, 1)
    expected = np.full(len(frame), np.nan)
    expected[1:10] = frame["label"].to_numpy()[1:10]
    np.testing.assert_array_equal(joined.label, expected)


def test_labels_from_other_data_say_so():
    frame = sample_frame()
    other = pd.DataFrame({"question": ["q1", "q2"], "context": ["c", "c"], "response": ["r", "s"], "label": [1, 0]})
    with pytest.raises(SGIInputError, match="none of the 2 labelled rows is in this table: the labels come from other"):
        join_labels(row_keys(frame), labels_from_table(other, source="other.csv"))


def test_a_labels_table_needs_a_label_column():
    with pytest.raises(SGIInputError, match="a labels table needs a label column"):
        labels_from_table(pd.DataFrame({"question": ["q"], "context": ["c"], "response": ["r"]}))


def test_annotations_file_and_table_are_told_apart(tmp_path):
    frame = sample_frame().head(4)
    keys = row_keys(frame)
    store = AnnotationStore(tmp_path / "a.jsonl")
    for key, label in zip(keys, ["grounded", "hallucinated", "unsure", "grounded"]):
        store.add(key, label)
    from_store = read_label_source(store.path)
    assert from_store.n_unsure == 1
    assert join_labels(keys, from_store).label.tolist()[:2] == [1.0, 0.0]
    table_path = tmp_path / "labels.jsonl"
    table_path.write_text("".join(json.dumps({"question": q, "context": c, "response": r, "label": "grounded"}) + "\n"
                                  for q, c, r in frame[["question", "context", "response"]].to_numpy()))
    assert join_labels(keys, read_label_source(table_path)).label.tolist() == [1.0] * 4
    assert labels_from_annotations(b"").labels.empty


def test_combined_labels_drop_disagreements_only_when_both():
    file_label, annotated = [1, 0, np.nan, 1, np.nan], [1, 1, 0, np.nan, np.nan]
    both = combine_labels(file_label, annotated, source="both")
    np.testing.assert_array_equal(both.label, [1.0, np.nan, 0.0, 1.0, np.nan])
    assert (both.n_file, both.n_annotations, both.n_both, both.n_disagree, both.n_labelled) == (3, 3, 2, 1, 3)
    np.testing.assert_array_equal(combine_labels(file_label, annotated, source="annotations").label, annotated)
    with pytest.raises(SGIInputError, match="unknown label source 'mine'"):
        combine_labels(file_label, annotated, source="mine")


def test_every_test_keeps_annotations_in_its_own_folder_never_the_users():
    from sgi_core.review.annotations import data_dir

    assert Path.home() / ".local" not in data_dir().parents
