"""Review page, two runs, the active queue: the keys `sample --baseline --design active` draws, each label stored
with its probability in both runs' annotations, and the estimate `compare --labels` makes of them."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from dashboard.app_pages.review_panel import label_button_key
from sgi_core.cli import main
from sgi_core.review.annotations import AnnotationStore, annotations_path, row_key
from sgi_core.review.queues import paired_queue
from sgi_core.runs.active_labels import ACTIVE_METHOD
from sgi_core.runs.matching import match_runs
from tests.dashboard.conftest import assert_clean
from tests.dashboard.test_review_two_runs import N, two_runs_mode

BUDGET, SEED, PREDICTOR = 8, 3, "lexical_groundedness"


def drawn_by_the_command(base, new, folder):
    """The sample `sample` draws on the same runs (as a frame), the runs' files and the sample's file."""
    paths = {name: folder / f"{name}.csv" for name in ("base", "new")}
    base.to_csv(paths["base"], index=False)
    new.to_csv(paths["new"], index=False)
    out = folder / "to_label.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["sample", str(paths["new"]), "--baseline", str(paths["base"]), "--key", "question", "--n",
                     str(BUDGET), "--design", "active", "--predictor", PREDICTOR, "--seed", str(SEED), "-o",
                     str(out)]) == 0
    return pd.read_csv(out), paths, out


def active_queue(page):
    page.selectbox(key="review.pair_queue").set_value("active").run()
    page.selectbox(key="review.pair_predictor").set_value(PREDICTOR).run()
    page.number_input(key="review.seed").set_value(SEED).run()
    page.number_input(key="review.pair_target").set_value(BUDGET).run()


def label_both(page, position: int, new_row: int) -> None:
    """The base run answers every key right; the new run answers its odd rows wrong."""
    page.button(key=label_button_key("grounded", position, "base")).click().run()
    page.button(key=label_button_key("hallucinated" if new_row % 2 else "grounded", position, "new")).click().run()


def test_the_active_queue_labels_the_commands_keys_and_its_estimate_is_compares(app, tmp_path):
    page, base, new = two_runs_mode(app)
    active_queue(page)
    assert_clean(page)
    sample, paths, out = drawn_by_the_command(base, new, tmp_path)
    drawn = sample[sample["run"] == "base.csv"]
    probability = dict(zip(drawn["question"], drawn["inclusion_probability"]))
    matched = match_runs(base, new, key="question", scores=[])
    nobody = np.zeros(N, bool)
    # The page's order: the two-runs random queue's, restricted to the keys the command draws.
    order = [int(p) for p in paired_queue(nobody, nobody, seed=SEED, keys=matched.keys)
             if matched.keys[p] in probability]
    assert 4 <= len(order) < N // 2 and len(order) == len(drawn)
    assert any(f"--predictor {PREDICTOR} --n {BUDGET} --seed {SEED}" in c.value.replace("\\", "")
               and f"{len(order)} of its {len(order)} keys left" in c.value for c in page.caption)
    new_rows = np.asarray(matched.first_row_new)
    for position in order[:2]:
        assert base["response"].iloc[matched.first_row_base[position]] in [t.value for t in page.text]
        label_both(page, position, new_rows[position])
    assert_clean(page)
    for name, frame, rows in (("base.csv", base, matched.first_row_base), ("new.csv", new, matched.first_row_new)):
        current = AnnotationStore(annotations_path(name)).current().set_index("key")
        assert len(current) == 2
        for position in order[:2]:
            stored = current.loc[row_key(*frame.iloc[rows[position]][["question", "context", "response"]])]
            assert (stored["queue"], stored["design"], stored["predictor"]) == ("active", "active", PREDICTOR)
            assert float(stored["inclusion_probability"]) == pytest.approx(probability[matched.keys[position]],
                                                                           rel=1e-12)
            assert (int(stored["seed"]), float(stored["budget"])) == (SEED, BUDGET)
    assert any(f"2 of the {len(order)} keys the active sample draws are labelled in both runs" in c.value
               for c in page.caption)
    assert not [m for m in page.metric if m.label.startswith("New − base")]  # no estimate from part of the sample
    for position in order[2:]:
        label_both(page, position, new_rows[position])
    assert_clean(page)
    assert any("Both answers to every key of this queue are labelled" in s.value for s in page.success)
    # The same labels in the command's sample file, read by compare.
    odd = dict(zip(new["question"], np.arange(N) % 2 == 1))
    sample["label"] = [0 if run == "new.csv" and odd[q] else 1 for run, q in zip(sample["run"], sample["question"])]
    sample.to_csv(out, index=False)
    report = tmp_path / "comparison.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["compare", str(paths["base"]), str(paths["new"]), "--key", "question", "--model", "hashing",
                     "--n-boot", "0", "--labels", str(out), "--json", str(report)]) == 0
    cli = json.loads(report.read_text())["labels"]
    assert cli["method"].startswith(f"{ACTIVE_METHOD}, predictor {PREDICTOR}, {len(order)} keys")
    (shown,) = [m for m in page.metric if m.label.startswith("New − base")]
    assert shown.label == f"New − base: {cli['verdict']}" and shown.value == f"{cli['difference']:+.3f}"
    assert any(f"by the {cli['method']} estimate" in c.value.replace("\\", "") for c in page.caption)


def test_labels_of_the_random_and_the_active_queue_together_are_refused_and_labelling_goes_on(app):
    page, base, new = two_runs_mode(app)
    matched = match_runs(base, new, key="question", scores=[])
    first = int(paired_queue(np.zeros(N, bool), np.zeros(N, bool), seed=0, keys=matched.keys)[0])
    label_both(page, first, matched.first_row_new[first])
    active_queue(page)
    assert_clean(page)
    (button,) = [b for b in page.button if b.key.startswith("review.pair.base.grounded.")]
    button.click().run()
    assert not page.exception
    (error,) = [e.value for e in page.error]
    assert "1 labels of the matched keys were given on the active queue and carry its design, 2 on another queue " \
           "without one" in error
    assert [b for b in page.button if b.key.startswith("review.pair.new.grounded.")]
