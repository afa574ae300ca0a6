"""``compare --labels FILE...``: the labels of both runs from one file or one file each, joined on the texts."""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.runs.rates import paired_rate_difference
from tests.runs.test_compare_cli import scored_run

N = 80


@pytest.fixture
def two_runs(tmp_path):
    """Two scored runs of the same 80 questions, different answers, labelled in their files and in label tables."""
    rng = np.random.default_rng(5)
    paths = {}
    for name, rate in (("base", 0.4), ("new", 0.2)):
        label = (rng.random(N) >= rate).astype(float)
        run = scored_run(rng.normal(1.0, 0.1, N), label=label, responses=[f"{name} answer {i}" for i in range(N)])
        run.to_csv(tmp_path / f"{name}_labelled.csv", index=False)
        run.assign(label=np.nan).to_csv(tmp_path / f"{name}.csv", index=False)
        run[["question", "context", "response", "label"]].to_csv(tmp_path / f"{name}_labels.csv", index=False)
        paths[name] = run
    pd.concat([paths["base"], paths["new"]])[["question", "context", "response", "label"]].sample(
        frac=1.0, random_state=0).to_csv(tmp_path / "both_labels.csv", index=False)
    return tmp_path, paths


def labels_difference(runs):
    return float((1 - runs["new"]["label"]).mean() - (1 - runs["base"]["label"]).mean())


def compare_json(folder, name, *args):
    out = folder / f"{name}.json"
    assert main(["compare", *args, "--n-boot", "100", "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_labels_of_each_run_from_its_own_file_or_one_shared_file_equal_the_labelled_files(two_runs):
    folder, runs = two_runs
    in_files = compare_json(folder, "files", str(folder / "base_labelled.csv"), str(folder / "new_labelled.csv"))
    each = compare_json(folder, "each", str(folder / "base.csv"), str(folder / "new.csv"),
                        "--labels", str(folder / "base_labels.csv"), "--labels", str(folder / "new_labels.csv"))
    shared = compare_json(folder, "shared", str(folder / "base.csv"), str(folder / "new.csv"),
                          "--labels", str(folder / "both_labels.csv"))
    # The sequence reads the labels in the order they were given, which differs between the three sources.
    orders = [res["labels"].pop("sequence_order") for res in (in_files, each, shared)]
    sequences = [res["labels"].pop("sequential") for res in (in_files, each, shared)]
    assert in_files["labels"] == each["labels"] == shared["labels"]
    assert orders[0].startswith("a fixed order") and orders[1] == orders[2] == "the order the labels were given"
    assert {s["n"] for s in sequences} == {80} and {s["population"] for s in sequences} == {80}
    # Every key labelled: each sequence closes on the rate difference over the 80 keys, whatever the order.
    assert {round(s["ci"][0], 9) for s in sequences} == {round(labels_difference(runs), 9)}
    expected = paired_rate_difference(1 - runs["base"]["label"], 1 - runs["new"]["label"])
    labels = in_files["labels"]
    assert (labels["rate_base"], labels["rate_new"]) == pytest.approx((expected.rate_base, expected.rate_new))
    assert labels["ci"] == pytest.approx(list(expected.ci)) and labels["paired"] is True
    assert labels["method"] == "labels (paired)" and labels["labels_only_ci"] == labels["ci"]


def test_a_labels_file_of_other_data_is_refused(two_runs, tmp_path, capsys):
    folder, _ = two_runs
    other = pd.DataFrame({"question": ["q?"], "context": ["c"], "response": ["r"], "label": [1]})
    other.to_csv(tmp_path / "other.csv", index=False)
    assert main(["compare", str(folder / "base.csv"), str(folder / "new.csv"), "--labels",
                 str(folder / "base_labels.csv"), "--labels", str(tmp_path / "other.csv")]) == 2
    assert "none of the 1 labelled rows is in either run: the labels come from other data" in capsys.readouterr().err


def test_a_labelled_sample_gets_a_prediction_powered_interval_beside_the_labels_only_one(two_runs, capsys):
    folder, runs = two_runs
    sample = pd.concat([runs["base"].iloc[:40], runs["new"].iloc[:40]])[["question", "context", "response", "label"]]
    sample.to_csv(folder / "sample.csv", index=False)
    res = compare_json(folder, "sample", str(folder / "base.csv"), str(folder / "new.csv"),
                       "--labels", str(folder / "sample.csv"))["labels"]
    expected = paired_rate_difference(1 - runs["base"]["label"].iloc[:40], 1 - runs["new"]["label"].iloc[:40])
    assert res["n_keys"] == 40 and res["labels_only_ci"] == pytest.approx(list(expected.ci))
    assert res["method"].startswith("prediction-powered (")
    # The scores here are noise: power tuning leaves PPI++ no wider than the labels alone (up to the plug-in lambda).
    width = res["ci"][1] - res["ci"][0]
    assert width <= (expected.ci[1] - expected.ci[0]) * 1.05
    assert "prediction-powered" in capsys.readouterr().out


def test_labels_from_a_targeted_review_queue_are_compared_but_never_prediction_powered(two_runs, capsys):
    from sgi_core.review.annotations import AnnotationStore, row_key

    folder, runs = two_runs
    for name in ("base", "new"):
        store = AnnotationStore(folder / f"{name}_annotations.jsonl")
        for row in runs[name].head(40).itertuples():
            store.add(row_key(row.question, row.context, row.response),
                      "grounded" if row.label == 1.0 else "hallucinated", queue="random" if name == "base" else
                      "uncertain")
    args = [str(folder / "base.csv"), str(folder / "new.csv"), "--labels", str(folder / "base_annotations.jsonl"),
            "--labels", str(folder / "new_annotations.jsonl")]
    res = compare_json(folder, "targeted", *args)["labels"]
    assert res["method"] == "labels (paired)" and res["ci"] == res["labels_only_ci"]
    assert "40 labelled rows come from a Review queue that is not a random order" in capsys.readouterr().err
