"""Per-row labels kept one record at a time equal the join made from scratch after every append.

The oracle is the path every other reader takes: the decisions in force of the whole file
(:meth:`AnnotationStore.current`), :func:`labels_from_decisions` and :func:`join_labels`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sgi_core.review.annotations import AnnotationStore, annotations_path
from sgi_core.review.decision_log import DecisionLog, decision_line
from sgi_core.review.label_sources import join_labels, labels_from_decisions
from sgi_core.review.row_labels import RowLabelTracker

QUEUES = ("random", "uncertain", "")


def rebuilt(store: AnnotationStore, keys: np.ndarray) -> dict:
    """What the labels are when made from the whole file: the oracle."""
    current = store.current()
    labels = labels_from_decisions(current, source=str(store.path))
    joined = join_labels(keys, labels, require_match=False)
    return {"joined": joined, "annotated": pd.Index(keys).isin(current["key"]),
            "n_targeted": int(pd.Index(keys).isin(list(labels.targeted_keys)).sum())}


def assert_same(state, oracle: dict) -> None:
    np.testing.assert_array_equal(state.joined.label, oracle["joined"].label)  # NaN where NaN
    assert state.joined.to_dict() == oracle["joined"].to_dict()
    np.testing.assert_array_equal(state.annotated, oracle["annotated"])
    assert state.n_targeted == oracle["n_targeted"]


def random_step(rng, store: AnnotationStore, pool: list[str], given: list[tuple[str, str]]) -> None:
    """One click: a label (from some queue) on a random key, or an undo of an earlier decision."""
    if given and rng.random() < 0.25:
        key, decision_id = given.pop(int(rng.integers(len(given))))
        store.retract(key, decision_id)
        return
    key = pool[int(rng.integers(len(pool)))]
    label = ("grounded", "hallucinated", "unsure")[int(rng.integers(3))]
    given.append((key, store.add(key, label, queue=QUEUES[int(rng.integers(3))])))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_after_every_append_the_kept_state_equals_a_full_rebuild(tmp_path, seed):
    rng = np.random.default_rng(seed)
    table_keys = [f"{i:032x}" for i in range(40)]
    # Rows repeat keys (the same texts twice), and the file labels keys the table does not hold.
    keys = np.array([table_keys[int(i)] for i in rng.integers(0, 40, size=60)], dtype=object)
    pool = table_keys + [f"{i:032x}" for i in range(100, 115)]
    store = AnnotationStore(tmp_path / f"run{seed}.jsonl")
    tracker, given = RowLabelTracker(keys, source=str(store.path)), []
    for step in range(150):
        random_step(rng, store, pool, given)
        state = tracker.update(store.log())
        assert state.n_records == step + 1
        assert_same(state, rebuilt(store, keys))
    assert state.joined.n_unmatched > 0 and state.joined.n_unsure > 0 and state.n_targeted > 0  # all cases met


def test_a_tracker_started_late_or_updated_rarely_catches_up_in_one_step(tmp_path):
    rng = np.random.default_rng(7)
    keys = np.array([f"{i:032x}" for i in range(30)], dtype=object)
    store, given = AnnotationStore(tmp_path / "late.jsonl"), []
    for _ in range(80):
        random_step(rng, store, list(keys), given)
    late = RowLabelTracker(keys, source=str(store.path))
    assert_same(late.update(store.log()), rebuilt(store, keys))
    for _ in range(25):  # many appends between two looks
        random_step(rng, store, list(keys), given)
    assert_same(late.update(store.log()), rebuilt(store, keys))


def test_a_file_replaced_under_the_tracker_is_taken_in_whole_again(tmp_path):
    key_a, key_b = "a" * 32, "b" * 32
    keys = np.array([key_a, key_b], dtype=object)
    store = AnnotationStore(tmp_path / "replaced.jsonl")
    store.add(key_a, "grounded")
    store.add(key_b, "hallucinated")
    tracker = RowLabelTracker(keys, source=str(store.path))
    assert tracker.update(store.log()).joined.label.tolist() == [1.0, 0.0]
    store.path.write_bytes(decision_line(key_b, "grounded"))  # shorter: read whole again, a new log
    state = tracker.update(store.log())
    assert np.isnan(state.joined.label[0]) and state.joined.label[1] == 1.0
    assert_same(state, rebuilt(store, keys))


def test_a_snapshot_is_not_changed_by_later_appends():
    key = "c" * 32
    log = DecisionLog()
    log.feed(decision_line(key, "grounded"))
    tracker = RowLabelTracker(np.array([key], dtype=object))
    first = tracker.update(log)
    log.feed(decision_line(key, "hallucinated"))
    second = tracker.update(log)
    assert first.joined.label.tolist() == [1.0] and second.joined.label.tolist() == [0.0]
    assert first.n_records == 1 and second.n_records == 2


def test_a_hand_counted_case():
    a, b, c, d = "a" * 32, "b" * 32, "c" * 32, "d" * 32
    log = DecisionLog()
    log.feed(decision_line(a, "grounded", queue="uncertain", decision_id="1" * 16)
             + decision_line(a, "hallucinated", queue="random")
             + decision_line(b, "unsure", queue="uncertain")
             + decision_line(d, "grounded")  # a key the table does not hold
             + decision_line(c, "hallucinated", queue="uncertain", decision_id="2" * 16)
             + decision_line(c, "retract", retracts="2" * 16))
    state = RowLabelTracker(np.array([a, b, c, a], dtype=object), source="x").update(log)
    # a: hallucinated (latest, random queue) on rows 0 and 3; b: unsure; c: retracted; d: not in the table.
    assert state.joined.label[[0, 3]].tolist() == [0.0, 0.0] and np.isnan(state.joined.label[[1, 2]]).all()
    assert state.annotated.tolist() == [True, True, False, True]
    assert (state.joined.n_labels, state.joined.n_matched, state.joined.n_unmatched, state.joined.n_unsure,
            state.joined.n_rows_labelled, state.n_targeted) == (2, 1, 1, 1, 2, 0)


def test_the_store_hands_back_one_log_while_the_file_grows(tmp_path, monkeypatch):
    """So a tracker takes in only what an append added; a missing file is an empty log."""
    monkeypatch.setenv("SGI_DATA_DIR", str(tmp_path))
    store = AnnotationStore(annotations_path("qa.csv"))
    assert store.log().n_records == 0
    store.add("e" * 32, "grounded")
    first = store.log()
    store.add("f" * 32, "unsure")
    assert store.log() is first and first.n_records == 2 and first.keys_since(1) == ["f" * 32]
