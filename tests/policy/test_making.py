import json
import math

import numpy as np
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.policy.file import POLICY_SCHEMA, load_policy, policy_from_json, policy_to_json
from sgi_core.policy.making import HeldOutThreshold, development_split, holdout_threshold, make_policy
from sgi_core.policy.rules import save_policy
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.calibration import fit_calibrator
from sgi_core.stats.proportions import proportion_ci
from sgi_core.stats.thresholds import choose_threshold, threshold_metrics


def _paired_data(n_pairs=200, seed=0):
    """Two answers per question (pair), grounded ones score higher on average."""
    rng = np.random.default_rng(seed)
    y = np.tile([1.0, 0.0], n_pairs)
    pair = np.repeat(np.arange(n_pairs), 2)
    score = rng.normal(y, 0.8)
    return y, score, pair


def test_split_is_stratified_seeded_and_leaves_out_unlabelled_rows():
    y = np.array([1.0] * 30 + [0.0] * 50 + [np.nan] * 5)
    dev, held = development_split(y, seed=1)
    assert len(dev) + len(held) == 80 and not set(dev) & set(held)
    assert (y[dev] == 1).sum() == 15 and (y[held] == 1).sum() == 15
    again = development_split(y, seed=1)
    assert np.array_equal(again[0], dev)
    assert not np.array_equal(development_split(y, seed=2)[0], dev)


def test_grouped_split_keeps_both_answers_of_a_question_together():
    y, _, pair = _paired_data()
    dev, held = development_split(y, groups=pair, seed=3)
    assert not set(pair[dev]) & set(pair[held])
    assert len(dev) == len(held) == 200  # every pair is balanced, so the halves are too


def test_holdout_threshold_is_chosen_on_dev_and_measured_on_heldout():
    y, score, pair = _paired_data(seed=4)
    res = holdout_threshold(y, score, groups=pair, seed=5)
    dev, held = development_split(y, groups=pair, seed=5)
    assert res.threshold == choose_threshold(y[dev], score[dev]).threshold
    assert res.heldout == threshold_metrics(y[held], score[held], res.threshold)
    m = res.heldout
    assert res.precision_ci == proportion_ci(m.tp, m.tp + m.fp)
    assert res.recall_ci == proportion_ci(m.tp, m.tp + m.fn)
    assert res.flag_rate_ci == proportion_ci(m.n_flagged, 200)
    assert res.grouped and (res.n_dev, res.n_heldout) == (200, 200)
    back = HeldOutThreshold.from_dict(json.loads(json.dumps(res.to_dict())))
    assert back == res


def test_holdout_threshold_without_a_qualifying_threshold():
    y = np.tile([1.0, 0.0], 20)
    backwards = np.where(y == 1, 0.0, 1.0)  # every flagged row is grounded: precision is 0 at best
    with pytest.warns(UndefinedStatisticWarning, match="no threshold reaches precision 1"):
        res = holdout_threshold(y, backwards, method="target_precision", target=1.0)
    assert math.isnan(res.threshold) and res.heldout is None and math.isnan(res.precision_ci[0])


def test_make_policy_fits_on_dev_and_round_trips_through_a_file(tmp_path):
    y, score, pair = _paired_data(seed=7)
    policy, holdout = make_policy(y, score, model="minilm", calibration="isotonic", groups=pair, min_auroc=0.7, seed=8)
    dev, _ = development_split(y, groups=pair, seed=8)
    assert policy.calibrator == fit_calibrator(score[dev], y[dev], method="isotonic").to_dict()
    assert (policy.threshold, policy.precision, policy.recall) == (
        holdout.threshold, holdout.heldout.precision, holdout.heldout.recall)
    assert policy.schema == POLICY_SCHEMA and policy.min_auroc == 0.7
    path = tmp_path / "policy.json"
    save_policy(policy, path)
    assert load_policy(path) == policy
    platt, _ = make_policy(y, score, model="minilm")
    text = policy_to_json(platt)
    assert json.loads(text)["calibrator"]["knots_x"] == [] and policy_from_json(text) == platt


def _policy_dict():
    y, score, _ = _paired_data(n_pairs=50, seed=9)
    return json.loads(policy_to_json(make_policy(y, score, model="minilm", calibration="minmax")[0]))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(extra=1), "unknown fields extra"),
        (lambda d: d.pop("threshold"), "missing fields threshold"),
        (lambda d: d.update(schema="other"), "not a policy this tool reads"),
        (lambda d: d.update(version=8), "not a policy this tool reads"),
        (lambda d: d.update(context_strategy="windows"), "policy field 'context_strategy' must be one of joined, mean"),
        (lambda d: d.update(heldout_auroc=1.5), "policy field 'heldout_auroc' must be null or in"),
        (lambda d: d.update(heldout_auroc_ci=[0.6]), "policy field 'heldout_auroc_ci' must be a list of two bounds"),
        (lambda d: d.update(version=True), "not a policy this tool reads"),
        (lambda d: d.update(threshold="0.9"), "policy field 'threshold' must be a number"),
        (lambda d: d.update(precision=1.5), "policy field 'precision' must be null or in"),
        (lambda d: d.update(min_auroc=True), "policy field 'min_auroc' must be null or in"),
        (lambda d: d.update(model=""), "policy field 'model' must be a non-empty string"),
        (lambda d: d.update(threshold_method="magic"), "policy field 'threshold_method' must be one of"),
        (lambda d: d["calibrator"].update(code="import os"), "calibrator cannot be used: it must be an object"),
        (lambda d: d["calibrator"].update(method="pickle"), "calibrator cannot be used: unknown method 'pickle'"),
        (lambda d: d["calibrator"].update(knots_y=[0.0]), "knots_x and knots_y must be of equal length"),
        (lambda d: d["calibrator"].update(knots_x=[2.0, 1.0]), "knots_x must never decrease"),
        (lambda d: d["calibrator"].update(knots_y=[1.0, 0.0]), "knots_y must never decrease"),
        (lambda d: d["calibrator"].update(knots_y=[-0.5, 1.5]), r"knots_y are probabilities and must lie in \[0, 1\]"),
        (lambda d: d.update(score_column="label"), "policy field 'score_column' must be a score, not the label"),
        (lambda d: d.update(score_column="input_row"), "policy field 'score_column' must be a score"),
        (lambda d: d.update(model_precision="fp8"), "policy field 'model_precision' must be null or one of"),
    ],
)
def test_strict_reading_refuses_malformed_policies(change, message):
    data = _policy_dict()
    change(data)
    with pytest.raises(SGIInputError, match=message):
        policy_from_json(json.dumps(data), source="p.json")


def test_non_json_and_unreadable_policies(tmp_path):
    with pytest.raises(SGIInputError, match="the key 'threshold' appears twice in one JSON object"):
        policy_from_json(json.dumps(_policy_dict()).replace('"threshold": ', '"threshold": 0.5, "threshold": '))
    with pytest.raises(SGIInputError, match="a JSON number has more than 4,300 digits"):
        policy_from_json(json.dumps(_policy_dict()).replace('"threshold": ', '"threshold": ' + "9" * 5000 + ', "x": '))
    with pytest.raises(SGIInputError, match="NaN is not a JSON number"):
        policy_from_json(json.dumps(_policy_dict()).replace('"threshold": ', '"threshold": NaN, "x": '))
    with pytest.raises(SGIInputError, match="invalid JSON: Expecting property name"):
        policy_from_json("{'threshold': 1}")
    with pytest.raises(SGIInputError, match="the policy must be a JSON object"):
        policy_from_json("[1, 2]")
    with pytest.raises(SGIInputError, match="cannot read the policy"):
        load_policy(tmp_path / "absent.json")


def test_split_and_policy_errors():
    with pytest.raises(SGIInputError, match="needs at least 2 grounded and 2 hallucinated labelled rows"):
        development_split([1, 1, 1, 0])
    with pytest.raises(SGIInputError, match="'groups' has 3 values but the labels have 4"):
        development_split([1, 1, 0, 0], groups=[1, 2, 3])
    with pytest.raises(SGIInputError, match="a grouped split needs at least 2 groups"):
        development_split([1, 1, 0, 0], groups=[7, 7, 7, 7])
    with pytest.raises(SGIInputError, match="The 'min_auroc' parameter of make_policy must be in"):
        make_policy([1, 0, 1, 0], [0.9, 0.1, 0.8, 0.2], model="m", min_auroc=2.0)
    with pytest.raises(SGIInputError, match="no threshold meets the 'target_precision' rule"), \
            pytest.warns(UndefinedStatisticWarning):
        make_policy([1, 0] * 10, [0.0, 1.0] * 10, model="m", method="target_precision", target=1.0)


def test_a_grouped_half_with_one_label_class_says_so_and_what_to_do():
    # Two groups of one label each: every 2-fold split puts one group per half, whatever the seed.
    for seed in range(5):
        with pytest.raises(SGIInputError, match=r"the development half of the grouped split has only one label "
                                                r"class \((2 grounded, 0|0 grounded, 2) hallucinated\).*Label more "
                                                r"rows of both kinds.*or split by a different group column"):
            development_split([1, 1, 0, 0], groups=["a", "a", "b", "b"], seed=seed)
    # Every grounded row in group a: each split of {a, b, c} leaves one half with one class; the seed says which.
    y, groups = [1, 1, 0, 0, 0, 0], ["a", "a", "b", "b", "c", "c"]
    halves = set()
    for seed in range(10):
        with pytest.raises(SGIInputError, match="half of the grouped split has only one label class") as err:
            development_split(y, groups=groups, seed=seed)
        halves.add(str(err.value).split(" half ")[0])
    assert halves == {"the development", "the held-out"}
    # make_policy names the cause, not a threshold rule that cannot be met.
    with pytest.raises(SGIInputError, match="half of the grouped split has only one label class"):
        make_policy(y, [0.9, 0.8, 0.1, 0.2, 0.3, 0.4], model="m", groups=groups)


def test_a_version_1_policy_reads_with_no_model_precision():
    data = _policy_dict()
    assert data["version"] == 7 and data["model_precision"] is None and data["model_backend"] is None
    for name in ("model_precision", "model_backend", "heldout_auroc", "heldout_auroc_ci", "context_strategy",
                 "heldout_counts", "references", "answering_systems"):
        data.pop(name)
    data["version"] = 1
    assert policy_from_json(json.dumps(data)).model_precision is None
    data["model_precision"] = "fp32"  # version 1 had no such field
    with pytest.raises(SGIInputError, match="unknown fields model_precision"):
        policy_from_json(json.dumps(data))


def test_a_version_4_policy_reads_as_made_with_joined_contexts():
    data = _policy_dict()
    assert data["context_strategy"] == "joined"
    data.update(context_strategy="mean")
    assert policy_from_json(json.dumps(data)).context_strategy == "mean"
    data.pop("context_strategy")
    data.pop("heldout_counts")
    data.pop("references")
    data.pop("answering_systems")
    data["version"] = 4
    assert policy_from_json(json.dumps(data)).context_strategy == "joined"
    data["context_strategy"] = "mean"  # version 4 had no such field
    with pytest.raises(SGIInputError, match="unknown fields context_strategy"):
        policy_from_json(json.dumps(data))


def test_make_policy_refuses_the_label_as_its_score():
    with pytest.raises(SGIInputError, match="'label' is the label or a row number, not a score"):
        make_policy([1, 0, 1, 0], [1, 0, 1, 0], model="m", score_column="label")


def test_a_version_2_policy_reads_with_no_backend_and_a_bad_backend_is_refused():
    data = _policy_dict()
    data.pop("model_backend")
    data.pop("heldout_auroc")
    data.pop("heldout_auroc_ci")
    data.pop("context_strategy")
    data.pop("heldout_counts")
    data.pop("references")
    data.pop("answering_systems")
    data["version"] = 2
    old = policy_from_json(json.dumps(data))
    assert old.model_backend is None and math.isnan(old.heldout_auroc)
    data.update(version=3, model_backend="tensorrt")
    with pytest.raises(SGIInputError, match="policy field 'model_backend' must be null or one of torch, onnx"):
        policy_from_json(json.dumps(data))


def test_a_policy_on_a_score_with_unscored_rows_describes_its_features_on_the_scored_rows():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 400).astype(float)
    score = labels + rng.normal(0, 1, 400)
    score[:20] = np.nan  # rows the score could not be computed on: left out of the held-out counts
    length = rng.normal(size=400)  # a monitored feature that every row has
    policy, holdout = make_policy(labels, score, model="m", score_column="sgi", features={"response_length": length})
    loaded = policy_from_json(policy_to_json(policy))
    grounded = holdout.heldout.tn + holdout.heldout.fp
    assert loaded.references["response_length"]["grounded"]["n"] == grounded
    assert loaded.references["score"]["grounded"]["n"] == grounded
