"""The sequence reads the keys in the order their labels were given: one nested sequence as labels arrive."""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.errors import SGIInputError
from sgi_core.review.label_sources import labels_from_table
from sgi_core.runs.label_order import fixed_order, label_order, sequence_order
from sgi_core.stats.confidence_sequence import sequential_mean
from tests.runs.test_compare_cli import scored_run

N = 24
TEXTS = ["question", "context", "response", "label"]


@pytest.fixture
def runs(tmp_path):
    """Two unlabelled scored runs of N questions with an id column, and every answer's label in labelling order."""
    rng = np.random.default_rng(4)
    labels = {}
    for name, rate in (("base", 0.45), ("new", 0.15)):
        label = (rng.random(N) >= rate).astype(float)
        run = scored_run(rng.normal(1.0, 0.1, N), label=label, responses=[f"{name} answer {i}" for i in range(N)])
        run.insert(0, "id", [f"k{i:02d}" for i in range(N)])
        run.assign(label=np.nan).to_csv(tmp_path / f"{name}.csv", index=False)
        run.to_csv(tmp_path / f"{name}_labelled.csv", index=False)
        labels[name] = run[TEXTS]
    # A reviewer labels both answers of one question after the other, questions in a random order.
    order = rng.permutation(N)
    given = pd.concat([pd.concat([labels["base"].iloc[[i]], labels["new"].iloc[[i]]]) for i in order])
    return tmp_path, given.reset_index(drop=True), labels, order


def sequence(folder, *args):
    out = folder / "out.json"
    assert main(["compare", str(folder / "base.csv"), str(folder / "new.csv"), *args, "--n-boot", "0",
                 "--sequential", "--json", str(out)]) == 0
    return json.loads(out.read_text())["labels"]


def test_re_running_after_each_new_label_gives_nested_intervals(runs):
    folder, given, labels, order = runs
    intervals = []
    for n_given in range(2, len(given) + 1, 2):
        given.iloc[:n_given].to_csv(folder / "labels.csv", index=False)
        res = sequence(folder, "--labels", str(folder / "labels.csv"), "--key", "id")
        assert res["sequence_order"] == "the order the labels were given"
        intervals.append(res["sequential"]["ci"])
    low, high = np.array(intervals).T
    assert np.all(np.diff(low) >= 0) and np.all(np.diff(high) <= 0)
    # The last look is the sequence of the reviewer's order, drawn without replacement from the N keys.
    halluc = {name: 1.0 - labels[name]["label"].to_numpy()[order] for name in labels}
    expected = sequential_mean(halluc["new"] - halluc["base"], population=N)
    assert tuple(intervals[-1]) == pytest.approx(expected.ci)


def test_the_order_is_the_same_whatever_column_matches_the_runs(runs):
    folder, given, _, _ = runs
    given.iloc[:30].to_csv(folder / "labels.csv", index=False)
    by_id = sequence(folder, "--labels", str(folder / "labels.csv"), "--key", "id")["sequential"]
    by_question = sequence(folder, "--labels", str(folder / "labels.csv"), "--key", "question")["sequential"]
    assert by_id["ci"] == by_question["ci"] and by_id["n"] == 15


def test_without_a_known_order_a_fixed_one_is_used_and_said(runs):
    folder, _, _, _ = runs
    runs_in_files = [str(folder / "base_labelled.csv"), str(folder / "new_labelled.csv")]
    out = []
    for key in ("id", "question"):
        assert main(["compare", *runs_in_files, "--key", key, "--n-boot", "0", "--sequential", "--json",
                     str(folder / f"{key}.json")]) == 0
        out.append(json.loads((folder / f"{key}.json").read_text())["labels"])
    assert out[0]["sequence_order"].startswith("a fixed order (a hash of each row's texts): the labels carry no order")
    assert out[0]["sequential"] == out[1]["sequential"]


def test_a_labelled_at_column_orders_the_labels_whatever_the_rows_order(runs):
    folder, given, _, _ = runs
    timed = given.iloc[:30].assign(labelled_at=pd.date_range("2026-11-01", periods=30, freq="min", tz="UTC"))
    timed.to_csv(folder / "in_order.csv", index=False)
    timed.sample(frac=1.0, random_state=1).to_csv(folder / "shuffled.csv", index=False)
    given.iloc[:30].iloc[::-1].to_csv(folder / "reversed.csv", index=False)
    in_order = sequence(folder, "--labels", str(folder / "in_order.csv"))["sequential"]
    assert sequence(folder, "--labels", str(folder / "shuffled.csv"))["sequential"] == in_order
    # Without times, the rows' order is the order: reversed rows are another sequence.
    assert sequence(folder, "--labels", str(folder / "reversed.csv"))["sequential"]["ci"] != in_order["ci"]


def test_a_labelled_row_without_a_time_is_refused():
    frame = pd.DataFrame({"question": ["a", "b", "c"], "context": "x", "response": "r", "label": [1, 0, None],
                          "labelled_at": ["2026-11-24T07:00:00Z", "yesterday", ""]})
    with pytest.raises(SGIInputError, match=r"labelled_at must hold a date and time on every labelled row.*row 2\b"):
        labels_from_table(frame, source="labels.csv")


def test_the_order_of_sources_then_of_labels_within_each():
    from sgi_core.review.label_sources import LabelSet

    first = LabelSet(pd.DataFrame({"key": ["b", "a"], "value": [1.0, 0.0]}), "first")
    second = LabelSet(pd.DataFrame({"key": ["a", "c", "d"], "value": [0.0, 1.0, 1.0]}), "second")
    assert label_order(["a", "b", "c", "d", "e"], [first, second]).tolist()[:4] == [1.0, 0.0, 4.0, 5.0]
    # A key enters the sequence at the later of its two labels.
    assert sequence_order([0.0, 5.0, 2.0], [4.0, 1.0, 3.0], np.array([True, True, True])).tolist() == [2, 0, 1]
    assert np.isnan(fixed_order(["ab", "cd"], [np.nan, 1.0])[0])
