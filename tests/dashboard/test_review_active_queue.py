"""The Review page's active queue in AppTest: the keys ``sample --design active`` draws, each label stored with its
inclusion probability."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sgi_core.io.triples import load_triples
from sgi_core.review.annotations import AnnotationStore, annotations_path, row_keys
from sgi_core.runs.review_designs import active_run_queue
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import assert_clean, goto, upload
from tests.dashboard.test_review_page import label, review, shown_row  # noqa: F401  (the fixture)

BUDGET, SEED = 15, 4


def test_the_active_queue_shows_the_drawn_keys_and_stores_their_probability(review):  # noqa: F811
    sample = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).head(60)
    sample["model_prob"] = np.linspace(0.05, 0.95, 60)[::-1]
    raw = sample.to_csv(index=False).encode()
    at = upload(review, "active.csv", raw)
    goto(at, "review")
    at.selectbox(key="review.strategy").set_value("active").run()
    at.selectbox(key="review.predictor").set_value("model_prob").run()
    at.number_input(key="review.seed").set_value(SEED).run()
    at.number_input(key="review.target").set_value(BUDGET).run()
    assert_clean(at)
    table = load_triples(raw, name="active.csv")
    queue = active_run_queue(table.frame, budget=BUDGET, seed=SEED, predictor="model_prob")
    assert any(f"--predictor model_prob --n {BUDGET} --seed {SEED}" in c.value for c in at.caption)
    rows = [label(at, word) for word in ("grounded", "hallucinated", "grounded")]
    assert rows == [int(p) + 1 for p in queue.rows[:3]]  # the queue's order, 1-based file rows
    assert shown_row(at) == int(queue.rows[3]) + 1
    current = AnnotationStore(annotations_path("active.csv")).current().set_index("key")
    keys = row_keys(table.frame)
    for position in queue.rows[:3]:
        stored = current.loc[keys[position]]
        expected = queue.record(int(position))
        assert stored["queue"] == "active" and stored["design"] == "active" and stored["predictor"] == "model_prob"
        assert float(stored["inclusion_probability"]) == expected["inclusion_probability"]
        assert (int(stored["seed"]), float(stored["budget"])) == (SEED, BUDGET)


def test_the_active_queue_offers_only_probability_columns_and_says_what_a_file_without_one_needs(review):  # noqa: F811
    sample = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).head(60)
    assert "pair_id" in sample.columns  # numeric, but an identifier: not a probability
    at = upload(review, "no_probability.csv", sample.to_csv(index=False).encode())
    goto(at, "review")
    at.selectbox(key="review.strategy").set_value("active").run()
    assert_clean(at)
    assert not [box for box in at.selectbox if box.key == "review.predictor"]
    assert any("needs a probability column in the file" in box.value for box in at.info)

    sample["model_prob"] = np.linspace(0.05, 0.95, 60)
    at = upload(review, "with_probability.csv", sample.to_csv(index=False).encode())
    goto(at, "review")
    at.selectbox(key="review.strategy").set_value("active").run()
    assert_clean(at)
    assert at.selectbox(key="review.predictor").options == ["model_prob (file column)"]
    # The default target (100 labels) is more than the file's 60 answers: the sample is all of them.
    assert any("--predictor model_prob --n 60 --seed 0" in c.value for c in at.caption)
