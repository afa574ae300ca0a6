"""Policies carry what the monitor needs, and a hand-edited policy with inconsistent numbers is refused."""

import json

import numpy as np
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.policy.file import policy_from_json, policy_to_json
from sgi_core.policy.making import development_split, make_policy
from sgi_core.stats.thresholds import threshold_metrics


def _data(seed=0, n_pairs=60):
    rng = np.random.default_rng(seed)
    y = np.tile([1.0, 0.0], n_pairs)
    score = rng.normal(y, 0.8)
    return y, score, np.repeat(np.arange(n_pairs), 2).astype(str), rng.integers(5, 300, 2 * n_pairs)


def test_a_policy_records_its_held_out_counts_and_per_class_references():
    y, score, groups, length = _data()
    policy, holdout = make_policy(y, score, model="minilm", groups=groups, features={"response_length": length})
    _, held = development_split(y, groups=groups)
    metrics = threshold_metrics(y[held], score[held], policy.threshold)
    assert policy.heldout_counts == {"tp": metrics.tp, "fp": metrics.fp, "fn": metrics.fn, "tn": metrics.tn}
    assert policy.version == 7 and set(policy.references) == {"score", "response_length"}
    grounded = policy.references["response_length"]["grounded"]
    assert grounded["n"] == int((y[held] == 1).sum())
    assert grounded["quantiles"][0] == length[held][y[held] == 1].min()
    assert grounded["quantiles"][50] == pytest.approx(np.median(length[held][y[held] == 1]))
    assert policy_from_json(policy_to_json(policy)) == policy


def _policy_dict():
    y, score, groups, length = _data(seed=1)
    return json.loads(policy_to_json(make_policy(y, score, model="minilm", groups=groups,
                                                 features={"response_length": length})[0]))


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(heldout_auroc_ci=[0.99, 0.2]),
     r"policy field 'heldout_auroc_ci' must be a lower bound no higher than its upper bound; got \[0.99, 0.2\]"),
    (lambda d: d.update(heldout_auroc=0.95, heldout_auroc_ci=[0.6, 0.7]),
     r"policy field 'heldout_auroc' must be inside its own interval heldout_auroc_ci \[0.6, 0.7\]; got 0.95"),
    (lambda d: d.update(heldout_auroc_ci=[0.6, None]),
     "policy field 'heldout_auroc_ci' must be two numbers or two nulls"),
    (lambda d: d.update(heldout_auroc=None), "policy field 'heldout_auroc' must be a number where heldout_auroc_ci"),
    (lambda d: d.update(precision=0.99), "policy field 'precision' must be the rate its held-out counts give"),
    (lambda d: d.update(recall=0.01), "policy field 'recall' must be the rate its held-out counts give"),
    (lambda d: d["heldout_counts"].update(tp=-1), "policy field 'heldout_counts' must be null or an object of whole"),
    (lambda d: d["heldout_counts"].update(tp=1.5), "policy field 'heldout_counts' must be null or an object of whole"),
    (lambda d: d["references"]["score"]["grounded"].update(quantiles=[2.0, 1.0]),
     "policy field 'references' must be per-class quantiles .*quantiles must never decrease"),
    (lambda d: d["references"].update(code={"grounded": {}, "hallucinated": {}}),
     "policy field 'references' .*unknown feature 'code'"),
    (lambda d: d["references"]["score"]["grounded"].update(n=0), "n must be a whole number of rows, at least 1"),
    (lambda d: d.update(references={}), r"policy field 'references' must be per-class quantiles of the monitored "
                                        r"features, the score's among them \(they must hold the score's\)"),
    (lambda d: d.update(references=None), "the score's among them"),
    (lambda d: d["references"].pop("score"), "the score's among them"),
    (lambda d: d["heldout_counts"].update({k: 1000 * v for k, v in d["heldout_counts"].items()}),
     r"policy field 'references' must be taken on the held-out rows heldout_counts describes \(\d+ grounded\); "
     r"score has \d+ grounded"),
    (lambda d: d["references"]["response_length"]["hallucinated"].update(n=10 ** 6),
     "response_length has 1000000 hallucinated"),
    (lambda d: d.update(answering_systems=[]), "policy field 'answering_systems' must be null or a list of 1 to 100"),
    (lambda d: d.update(answering_systems=["a", 3]), "policy field 'answering_systems' must be null or a list"),
])
def test_an_inconsistent_hand_edited_policy_is_refused_naming_field_and_file(change, message):
    data = _policy_dict()
    change(data)
    with pytest.raises(SGIInputError, match=message) as caught:
        policy_from_json(json.dumps(data), source="edited.json")
    assert "edited.json" in str(caught.value)


def test_a_version_6_policy_loads_without_answering_systems():
    data = _policy_dict()
    data.pop("answering_systems")
    data["version"] = 6
    assert policy_from_json(json.dumps(data)).answering_systems is None
    data["answering_systems"] = ["model-a"]
    with pytest.raises(SGIInputError, match="unknown fields answering_systems"):
        policy_from_json(json.dumps(data))


def test_an_older_policy_loads_without_counts_or_references():
    data = _policy_dict()
    for name in ("heldout_counts", "references", "answering_systems"):
        data.pop(name)
    data["version"] = 5
    old = policy_from_json(json.dumps(data))
    assert old.heldout_counts is None and old.references is None
    data["references"] = None  # version 5 had no such field
    with pytest.raises(SGIInputError, match="unknown fields references"):
        policy_from_json(json.dumps(data))


def test_gate_scoring_the_file_itself_writes_every_feature_into_the_policy(tmp_path):
    from sgi_core.cli import main
    from sgi_core.policy.file import load_policy
    from sgi_core.policy.references import FEATURE_NAMES
    from tests.conftest import SAMPLE_CSV

    out = tmp_path / "policy.json"
    assert main(["gate", str(SAMPLE_CSV), "--write-policy", str(out), "--model", "hashing", "--n-boot", "200",
                 "--force"]) == 0
    assert set(load_policy(out).references) == set(FEATURE_NAMES)
