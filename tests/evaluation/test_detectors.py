import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm, spearmanr
from sklearn.metrics import roc_auc_score

from sgi_core.errors import SGIInputError
from sgi_core.evaluation.detectors import (
    DetectorComparison,
    compare_detectors,
    numeric_score_columns,
)
from sgi_core.evaluation.judgement import judge_score
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.scores.registry import column_spec
from sgi_core.stats.crossval import out_of_fold_probability
from sgi_core.stats.folds import crossfit_folds


def test_numeric_columns_found_ids_skipped():
    frame = pd.DataFrame({"judge": ["0.9", "", "0.1"], "row_id": ["1", "2", "3"], "text": ["a", "b", "c"],
                          "pair": ["0", "0", "1"]})
    assert numeric_score_columns(frame) == ["judge", "pair"]


def test_hand_computed_auroc_and_direction():
    y = np.array([1, 1, 1, 0, 0, 0], dtype=float)
    judge = np.array([3, 2, 0.5, 1, 0, -1])
    res = compare_detectors({"judge": judge}, y, n_splits=2, n_boot=0)
    # valid {3, 2, 0.5} beat halluc {1, 0, -1} in 8 of 9 pairs
    assert res.judgements["judge"].auroc == pytest.approx(8 / 9)
    flipped = column_spec("judge", higher_is="hallucinated").oriented(-judge)
    again = compare_detectors({"judge": flipped}, y, n_splits=2, n_boot=0)
    assert again.judgements["judge"].auroc == pytest.approx(8 / 9)


def test_synthetic_detector_with_known_auroc():
    """Gaussian scores shifted by 1 SD between classes have AUROC Phi(1/sqrt(2)) = 0.7602."""
    rng = np.random.default_rng(7)
    y = np.repeat([1.0, 0.0], 10_000)
    sgi = y * 1.0 + rng.normal(size=20_000)
    judge = y * 1.0 + rng.normal(size=20_000)
    res = compare_detectors({"sgi": sgi, "judge": judge}, y, n_boot=200)
    expected_alone = norm.cdf(1 / np.sqrt(2))
    for judged in res.judgements.values():
        assert judged.roc.auroc == pytest.approx(expected_alone, abs=0.01)
        assert judged.roc.auroc_ci[0] < judged.roc.auroc < judged.roc.auroc_ci[1]
    # two independent equal signals: the sum has shift 2 and SD sqrt(2), AUROC Phi(1)
    assert res.cv_auroc_combined == pytest.approx(norm.cdf(1.0), abs=0.01)
    assert res.gain.value > 0.05
    assert "beats every detector alone" in res.verdict
    assert abs(res.spearman_with_first["judge"] - spearmanr(sgi, judge).statistic) < 1e-12


def test_redundant_detector_does_not_help():
    rng = np.random.default_rng(3)
    y = np.repeat([1.0, 0.0], 1000)
    sgi = y + rng.normal(size=2000)
    res = compare_detectors({"sgi": sgi, "copy": 2 * sgi + 1}, y, n_boot=0)
    assert res.spearman_with_first["copy"] == pytest.approx(1.0)
    assert abs(res.gain.value) < 0.005
    assert "does not beat" in res.verdict


def test_rows_missing_a_score_and_unlabelled_rows_are_left_out():
    rng = np.random.default_rng(1)
    y = np.repeat([1.0, 0.0], 100)
    y[:10] = np.nan
    a, b = y + rng.normal(size=200), rng.normal(size=200)
    b[50] = np.nan
    res = compare_detectors({"a": a, "b": b}, y, n_boot=0)
    assert res.n == 189
    keep = ~np.isnan(y)
    assert res.judgements["a"].auroc == pytest.approx(roc_auc_score(y[keep], a[keep]))


def test_one_class_warns_and_gives_nan():
    with pytest.warns(UndefinedStatisticWarning):
        res = compare_detectors({"a": [0.1, 0.2, 0.3]}, [1, 1, 1], n_boot=0)
    assert np.isnan(res.cv_auroc_combined) and res.verdict.startswith("undefined")


def test_json_round_trip():
    rng = np.random.default_rng(2)
    y = np.repeat([1.0, 0.0], 50)
    res = compare_detectors({"a": y + rng.normal(size=100), "b": rng.normal(size=100)}, y, n_boot=50)
    again = DetectorComparison.from_dict(json.loads(json.dumps(res.to_dict())))
    assert again.to_dict() == res.to_dict()
    assert list(again.judgements) == ["a", "b"] and again.judgements["b"].roc.auroc == res.judgements["b"].roc.auroc
    assert again.gain == res.gain and again.cv_auroc_alone == res.cv_auroc_alone


def test_each_detector_is_judged_like_every_other_score():
    rng = np.random.default_rng(5)
    y = np.repeat([1.0, 0.0], 80)
    a = y + rng.normal(size=160)
    lengths = rng.integers(10, 300, size=160)
    res = compare_detectors({"a": a}, y, lengths=lengths, n_boot=100, seed=2)
    assert res.judgements == {"a": judge_score(y, a, lengths=lengths, n_boot=100, seed=2)}
    assert res.to_frame()["length_matched_auroc"].iloc[0] == res.judgements["a"].length_matched_auroc


def test_folds_keep_question_groups_whole():
    """With groups, the combination's folds are the cross-fitted detectors' folds (crossfit_folds)."""
    rng = np.random.default_rng(8)
    y = np.tile([1.0, 0.0], 100)
    groups = np.repeat(np.arange(100), 2)
    a, b = y + rng.normal(size=200), y + rng.normal(size=200)
    res = compare_detectors({"a": a, "b": b}, y, groups=groups, n_boot=0)
    folds = crossfit_folds(groups, y_true=y, n_folds=5, seed=0)
    assert res.cv_auroc_combined == roc_auc_score(y, out_of_fold_probability(np.column_stack([a, b]), y, folds))
    with pytest.raises(SGIInputError, match="'groups' has 3 values but 'y_true' has 200"):
        compare_detectors({"a": a}, y, groups=[0, 1, 2], n_boot=0)
