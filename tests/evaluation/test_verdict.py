"""The verdict names this file's best trivial score and says whether a detector beats it, is at chance or inverted."""

import json

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from sgi_core.evaluation.verdict import Verdict, file_verdict, standing_of
from sgi_core.stats.paired import delong_test


def _file(seed, n=400):
    rng = np.random.default_rng(seed)
    y = np.tile([1.0, 0.0], n // 2)
    return y, rng


def test_word_overlap_beats_sgi_and_is_named_the_bar():
    y, rng = _file(0)
    overlap = y * 1.5 + rng.normal(0, 0.6, len(y))     # strong
    sgi = y * 0.5 + rng.normal(0, 1.0, len(y))         # weak but real
    length = rng.normal(0, 1, len(y))                  # nothing
    v = file_verdict(y, {"sgi": sgi}, {"lexical_groundedness": overlap, "neg_response_length": length}, n_boot=300)
    assert v.best_trivial == "lexical_groundedness"
    assert v.standing("lexical_groundedness").auroc.value == pytest.approx(roc_auc_score(y, overlap))
    assert v.standing("sgi").standing == "separates"
    assert v.standing("sgi").auroc.value == pytest.approx(roc_auc_score(y, sgi))
    comparison = v.comparisons[0]
    assert comparison.outcome == "loses" and v.winners == ()
    assert comparison.difference == pytest.approx(roc_auc_score(y, sgi) - roc_auc_score(y, overlap))
    assert comparison.ci == pytest.approx(delong_test(y, sgi, overlap).ci)
    assert Verdict.from_dict(json.loads(json.dumps(v.to_dict()))) == v


def test_sgi_at_chance_is_said_to_be_near_chance_and_length_taken_the_way_it_points():
    y, rng = _file(1)
    sgi = rng.normal(0, 1, len(y))                     # no signal at all
    longer_is_grounded = y * 1.2 + rng.normal(0, 1, len(y))
    v = file_verdict(y, {"sgi": sgi}, {"neg_response_length": -longer_is_grounded}, n_boot=300)
    lo, hi = v.standing("sgi").auroc.interval
    assert lo < 0.5 < hi and v.standing("sgi").standing == "near chance"
    length = v.standing("neg_response_length")
    assert length.flipped and length.auroc.value == pytest.approx(roc_auc_score(y, longer_is_grounded))
    assert v.comparisons[0].outcome == "loses"


def test_an_inverted_detector_is_said_to_be_inverted_and_a_strong_one_beats_the_bar():
    y, rng = _file(2)
    backwards = -y + rng.normal(0, 0.8, len(y))
    strong = 3 * y + rng.normal(0, 0.5, len(y))
    weak_trivial = 0.3 * y + rng.normal(0, 1, len(y))
    v = file_verdict(y, {"sgi": backwards, "judge": strong}, {"theta_rq": weak_trivial}, n_boot=300)
    assert v.standing("sgi").standing == "inverted" and v.standing("sgi").auroc.interval[1] < 0.5
    assert v.standing("judge").standing == "separates"
    assert [c.outcome for c in v.comparisons] == ["loses", "beats"] and v.winners == ("judge",)


def test_undefined_parts_are_nan_not_a_crash():
    v = file_verdict([1, 0, 0, 0], {"sgi": [0.9, 0.1, 0.2, 0.3]}, {"theta_rq": [0.5, 0.4, 0.3, 0.2]}, n_boot=100)
    assert v.standing("sgi").standing == "undefined" and v.comparisons[0].outcome == "undefined"
    no_class = file_verdict([1, 1, 1], {"sgi": [0.1, 0.2, 0.3]}, {"theta_rq": [0.1, 0.2, 0.3]}, n_boot=10)
    assert no_class.best_trivial is None and no_class.comparisons == ()


def test_standing_of_its_interval():
    assert [standing_of(ci) for ci in [(0.51, 0.6), (0.5, 0.6), (0.4, 0.5), (0.3, 0.49)]] == [
        "separates", "near chance", "near chance", "inverted"]


def test_a_flipped_trivial_score_has_the_interval_of_the_score_negated():
    from sgi_core.stats.ranking import roc_analysis

    y, rng = _file(9)
    longer = np.round(y + rng.normal(0, 1, len(y)), 1)  # ties included
    v = file_verdict(y, {"sgi": longer}, {"neg_response_length": -longer}, n_boot=300)
    direct = roc_analysis(y, longer, n_boot=300)
    flipped = v.standing("neg_response_length")
    assert flipped.flipped and flipped.auroc.value == pytest.approx(direct.auroc)
    assert flipped.auroc.interval == pytest.approx(direct.auroc_ci)


def test_a_verdict_reuses_the_judgements_it_is_given_and_equals_one_computed_from_scratch():
    from sgi_core.evaluation.judgement import judge_score

    rng = np.random.default_rng(4)
    y = (np.arange(120) % 2).astype(float)
    sgi = y * 0.4 + rng.normal(0, 0.5, 120)
    length = -(y * 10 + rng.normal(30, 8, 120))
    judged = {name: judge_score(y, values, lengths=None, n_boot=300, seed=0)
              for name, values in (("sgi", sgi), ("neg_response_length", length))}
    fresh = file_verdict(y, {"sgi": sgi}, {"neg_response_length": length}, n_boot=300)
    reused = file_verdict(y, {"sgi": sgi}, {"neg_response_length": length}, n_boot=300,
                          rocs={name: j.roc for name, j in judged.items()})
    assert reused == fresh
    # What is given is taken as it is: a different ROC result shows in the verdict.
    other = judge_score(y, -sgi, lengths=None, n_boot=300, seed=0).roc
    assert file_verdict(y, {"sgi": sgi}, {}, n_boot=300, rocs={"sgi": other}).standing("sgi").auroc.value == other.auroc
