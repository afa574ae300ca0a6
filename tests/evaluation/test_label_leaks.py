"""Columns that determine the label, and id columns, are found; real scores and groups are not."""

import json

import numpy as np
import pandas as pd

from sgi_core.evaluation.label_leaks import (
    ColumnScreen,
    describe_leak,
    is_id_column,
    label_leaks,
    screen_columns,
)


def _frame(n_pairs=40, seed=0):
    rng = np.random.default_rng(seed)
    label = np.tile([1.0, 0.0], n_pairs)
    return pd.DataFrame({
        "answer_type": np.where(label == 1, "right", "hallucinated"),
        "input_label": label.astype(int).astype(str),
        "float_copy": label * 0.7 + 0.1,
        "near_copy": label + rng.normal(0, 0.01, len(label)),
        "judge": label * 0.8 + rng.normal(0, 0.6, len(label)),
        "system": rng.choice(["llama", "mistral", "gpt"], len(label)),
        "pair_id": np.repeat(np.arange(n_pairs), 2),
        "question_number": np.repeat(np.arange(n_pairs) + 100, 2),
        "row_uuid": [f"r{i}" for i in range(len(label))],
    }), label


def test_label_copies_are_found_and_real_scores_and_groups_are_not():
    frame, label = _frame()
    leaks = label_leaks(frame, label, frame.columns)
    assert [(leak.column, leak.how) for leak in leaks] == [
        ("answer_type", "categories"), ("input_label", "categories"), ("float_copy", "categories"),
        ("near_copy", "auroc")]
    assert leaks[3].auroc >= 0.99 and leaks[2].auroc == 1.0 and np.isnan(leaks[0].auroc)


def test_a_column_pure_only_on_values_seen_once_is_no_leak():
    # Distinct values on every row are trivially "pure": that is an id, not a label copy.
    label = [1, 0, 1, 0]
    assert label_leaks(pd.DataFrame({"text": ["a", "b", "c", "d"]}), label, ["text"]) == ()


def test_unlabelled_rows_are_left_out_and_one_class_finds_nothing():
    frame = pd.DataFrame({"kind": ["ok", "bad", "ok", "bad", "other"]})
    assert label_leaks(frame, [1, 0, 1, 0, np.nan], ["kind"])[0].column == "kind"
    assert label_leaks(frame, [1, 1, 1, 1, 1], ["kind"]) == ()


def test_id_columns():
    frame, _ = _frame()
    assert [c for c in frame.columns if is_id_column(frame[c], c)] == ["pair_id", "question_number", "row_uuid"]
    assert not is_id_column(pd.Series([1, 2, 3, 4, 5, 1, 2, 3, 4, 5]), "likert")


def test_screen_says_why_a_column_is_refused_and_round_trips():
    frame, label = _frame()
    screen = screen_columns(frame, label, ["answer_type", "judge", "pair_id", "system"])
    assert screen.leak_columns == ("answer_type",) and screen.ids == ("pair_id",)
    assert screen.refused_as_score("judge") is None and screen.refused_as_score("system") is None
    assert screen.refused_as_score("answer_type") == (
        "'answer_type' determines the label: each of its values goes with one label class only")
    assert "id column" in screen.refused_as_score("pair_id")
    back = ColumnScreen.from_dict(json.loads(json.dumps(screen.to_dict())))
    assert back.leak_columns == screen.leak_columns and back.ids == screen.ids and np.isnan(back.leaks[0].auroc)
    near = label_leaks(frame, label, ["near_copy"])[0]
    assert describe_leak(near) == ("'near_copy' nearly determines the label: its AUROC against the label is "
                                   f"{near.auroc:.3f}")
