"""The Review page's active queue: the keys and probabilities ``sample --design active`` draws, kept with each label
in the annotations and carried by the exported labels, which ``monitor --labels`` verifies as their design."""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.errors import SGIInputError
from sgi_core.io.triples import load_triples
from sgi_core.review.annotations import AnnotationStore, row_keys
from sgi_core.review.decision_log import check_design, read_decisions
from sgi_core.review.label_exchange import annotation_table
from sgi_core.review.queues import review_queue
from sgi_core.runs.design_labels import recorded_design, verified_run_design
from sgi_core.runs.review_designs import active_run_queue

N_ROWS, BUDGET, SEED = 300, 40, 11


@pytest.fixture
def run(tmp_path):
    rng = np.random.default_rng(2)
    label = (rng.random(N_ROWS) > 0.3).astype(int)
    frame = pd.DataFrame({"question": [f"question {i}" for i in range(N_ROWS)], "context": "the context",
                          "response": [f"answer {i}" for i in range(N_ROWS)],
                          "model_prob": np.clip(0.5 + 0.3 * (2 * label - 1) + rng.normal(0, 0.2, N_ROWS), 0.01, 0.99)})
    path = tmp_path / "run.csv"
    frame.to_csv(path, index=False)
    return path, label


def _queue(path):
    table = load_triples(path)
    return table, active_run_queue(table.frame, budget=BUDGET, seed=SEED, predictor="model_prob")


def test_the_queue_draws_the_keys_and_probabilities_the_command_line_draws(run, tmp_path):
    path, _ = run
    out = tmp_path / "sample.csv"
    assert main(["sample", str(path), "--n", str(BUDGET), "--design", "active", "--predictor", "model_prob",
                 "--seed", str(SEED), "-o", str(out)]) == 0
    drawn = pd.read_csv(out)
    table, queue = _queue(path)
    keys = row_keys(table.frame.iloc[queue.rows])
    assert sorted(keys) == sorted(row_keys(drawn)) and len(keys) == queue.design.n_drawn
    cli = dict(zip(row_keys(drawn), drawn["inclusion_probability"]))
    for position, key in zip(queue.rows, keys):
        assert queue.record(int(position))["inclusion_probability"] == pytest.approx(cli[key], rel=1e-12)
    # In the random queue's seeded order, the row order of the file playing no part.
    order = review_queue(N_ROWS, strategy="random", seed=SEED, keys=row_keys(table.frame)).rows
    assert queue.rows.tolist() == [p for p in order if p in set(queue.rows.tolist())]
    shuffled = table.frame.sample(frac=1.0, random_state=0).reset_index(drop=True)
    again = active_run_queue(shuffled, budget=BUDGET, seed=SEED, predictor="model_prob")
    assert row_keys(shuffled.iloc[again.rows]).tolist() == keys.tolist()


def test_labelled_rows_are_skipped_and_a_bad_predictor_says_why(run):
    path, _ = run
    table, queue = _queue(path)
    skip = np.zeros(N_ROWS, bool)
    skip[queue.rows[:3]] = True
    fewer = active_run_queue(table.frame, budget=BUDGET, seed=SEED, predictor="model_prob", skip=skip)
    assert fewer.rows.tolist() == queue.rows[3:].tolist() and fewer.n_skipped == 3
    with pytest.raises(SGIInputError, match="the predictor column 'nope' is not in the run"):
        active_run_queue(table.frame, budget=BUDGET, seed=SEED, predictor="nope")
    with pytest.raises(SGIInputError, match="unknown review queue 'active'.*") as err:
        review_queue(N_ROWS, strategy="active")
    assert "active_run_queue" in err.value.hint


def test_the_store_keeps_each_labels_probability_and_old_lines_still_read(run, tmp_path):
    path, _ = run
    table, queue = _queue(path)
    store = AnnotationStore(tmp_path / "ann.jsonl")
    store.path.write_bytes(b'{"key": "' + b"0" * 32 + b'", "label": "grounded", "note": "", "annotator": "", '
                           b'"time": "t", "id": "' + b"a" * 16 + b'"}\n')
    position = int(queue.rows[0])
    record = queue.record(position)
    store.add(row_keys(table.frame.iloc[[position]])[0], "hallucinated", queue="active", design=record)
    current = store.current().set_index("key")
    old, new = current.loc["0" * 32], current.loc[row_keys(table.frame.iloc[[position]])[0]]
    assert (old["design"], old["inclusion_probability"], old["queue"]) == ("", "", "")
    assert float(new["inclusion_probability"]) == record["inclusion_probability"]  # exact through the text
    assert (new["design"], new["predictor"], int(new["seed"]), float(new["budget"])) == ("active", "model_prob",
                                                                                         SEED, BUDGET)
    assert json.loads(store.raw().splitlines()[-1])["inclusion_probability"] == record["inclusion_probability"]
    assert len(read_decisions(store.raw())) == 2


@pytest.mark.parametrize("design, match", [
    ({"inclusion_probability": 0.0, "design": "active", "predictor": "p", "seed": 1, "budget": 3},
     r"inclusion_probability in \(0, 1\]"),
    ({"inclusion_probability": 0.5, "design": "active", "predictor": "p", "seed": -1, "budget": 3}, "seed >= 0"),
    ({"inclusion_probability": 0.5, "design": "other", "predictor": "p", "seed": 1, "budget": 3}, "uniform or active"),
    ({"inclusion_probability": 0.5, "design": "active"}, "must give exactly"),
])
def test_design_errors(design, match):
    with pytest.raises(SGIInputError, match=match):
        check_design(design)


def _label_queue(table, queue, store, truth, *, extra=None):
    keys = row_keys(table.frame)
    for position in queue.rows:
        word = "grounded" if truth[position] else "hallucinated"
        store.add(keys[position], word, queue="active", design=queue.record(int(position)))
    if extra is not None:
        store.add(keys[extra], "grounded", queue="random")
    return annotation_table(table.frame, keys, store.current())


def test_exported_labels_are_a_labels_file_whose_design_monitor_verifies(run, tmp_path):
    path, truth = run
    table, queue = _queue(path)
    export = _label_queue(table, queue, AnnotationStore(tmp_path / "ann.jsonl"), truth)
    assert {"inclusion_probability", "design", "predictor", "seed", "budget"} <= set(export.columns)
    labels = tmp_path / "labels.csv"
    export.to_csv(labels, index=False)
    joined = table.frame.assign(label=np.where(np.isin(np.arange(N_ROWS), queue.rows), truth, np.nan))
    design = verified_run_design([labels], joined, source="run.csv")
    assert design.design == "active" and design.n_drawn == len(queue.rows)
    np.testing.assert_array_equal(design.pi, queue.design.pi)


def test_an_export_mixing_the_active_queue_with_another_is_refused(run, tmp_path):
    path, truth = run
    table, queue = _queue(path)
    outside = int(np.setdiff1d(np.arange(N_ROWS), queue.rows)[0])
    export = _label_queue(table, queue, AnnotationStore(tmp_path / "ann.jsonl"), truth, extra=outside)
    labels = tmp_path / "labels.csv"
    export.to_csv(labels, index=False)
    with pytest.raises(SGIInputError, match="labelled rows without their design"):
        recorded_design([labels])


def test_the_annotations_design_is_read_and_a_mix_with_another_queue_refused(run, tmp_path):
    from sgi_core.runs.review_designs import store_design

    path, truth = run
    table, queue = _queue(path)
    store = AnnotationStore(tmp_path / "ann.jsonl")
    keys = row_keys(table.frame)
    outside = np.setdiff1d(np.arange(N_ROWS), queue.rows)[:5]
    for position in outside:
        store.add(keys[position], "grounded", queue="random")
    assert store_design([("ann.jsonl", store.current(), keys)]) is None  # none designed
    _label_queue(table, queue, store, truth)
    with pytest.raises(SGIInputError, match=f"{len(queue.rows)} labels of the matched keys were given on the active "
                                            "queue and carry its design, 5 on another queue without one"):
        store_design([("ann.jsonl", store.current(), keys)])
    assert store_design([("ann.jsonl", store.current(), keys[outside])]) is None
    recorded = store_design([("ann.jsonl", store.current(), keys[queue.rows])])
    assert (recorded.design, recorded.predictor, recorded.seed, recorded.budget) == ("active", "model_prob", SEED,
                                                                                     BUDGET)
    assert recorded.probability == {keys[p]: queue.record(int(p))["inclusion_probability"] for p in queue.rows}
