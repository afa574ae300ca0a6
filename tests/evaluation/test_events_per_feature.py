"""The events-per-feature floor: a combination below it is withheld, its reason given instead of its numbers."""

import json
import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from sgi_core.errors import SGIInputError
from sgi_core.evaluation import events_per_feature
from sgi_core.evaluation.detectors import COMBINED_NAME, DetectorComparison, compare_detectors
from sgi_core.evaluation.events_per_feature import MIN_EVENTS_PER_FEATURE, WITHHELD, withheld_reason
from sgi_core.render.report import detector_comparison_text
from sgi_core.stats.crossval import out_of_fold_probability
from sgi_core.stats.folds import crossfit_folds
from sgi_core.stats.ranking import roc_analysis


def labels(n_grounded, n_hallucinated):
    return np.repeat([1.0, 0.0], [n_grounded, n_hallucinated])


@pytest.mark.parametrize("n_grounded, n_hallucinated, n_features, expected", [
    (30, 19, 2, "withheld: 2 features need at least 20 rows of the smaller class; there are 19"),
    (30, 20, 2, ""),
    (19, 30, 2, "withheld: 2 features need at least 20 rows of the smaller class; there are 19"),
    (22, 22, 14, "withheld: 14 features need at least 140 rows of the smaller class; there are 22"),
    (9, 9, 1, "withheld: 1 feature needs at least 10 rows of the smaller class; there are 9"),
    (10, 10, 1, ""),
    (50, 0, 1, "withheld: 1 feature needs at least 10 rows of the smaller class; there are 0"),
])
def test_the_floor_is_ten_rows_of_the_smaller_class_per_feature(n_grounded, n_hallucinated, n_features, expected):
    assert MIN_EVENTS_PER_FEATURE == 10
    assert withheld_reason(labels(n_grounded, n_hallucinated), n_features=n_features) == expected


def test_unlabelled_rows_are_not_counted():
    y = np.concatenate([labels(30, 19), np.full(40, np.nan)])
    assert withheld_reason(y, n_features=2).endswith("there are 19")


def test_errors_name_the_parameter():
    with pytest.raises(SGIInputError, match="'n_features' parameter of withheld_reason must be an int >= 1"):
        withheld_reason(labels(30, 30), n_features=0)


def two_scores(n_grounded, n_hallucinated):
    y = labels(n_grounded, n_hallucinated)
    rng = np.random.default_rng(3)
    return {"a": y + rng.normal(size=len(y)), "b": y + rng.normal(size=len(y))}, y


def test_just_below_the_floor_the_combination_is_withheld():
    scores, y = two_scores(30, 19)
    res = compare_detectors(scores, y, n_boot=0)
    reason = "withheld: 2 features need at least 20 rows of the smaller class; there are 19"
    assert (res.level, res.verdict, res.withheld) == (WITHHELD, reason, reason)
    assert math.isnan(res.cv_auroc_combined) and math.isnan(res.combined_roc.auroc)
    assert math.isnan(res.gain.value) and all(math.isnan(v) for v in res.gain.interval)
    frame = res.to_frame().set_index("detector")
    assert frame.loc[COMBINED_NAME, "note"] == reason
    assert frame.loc[COMBINED_NAME, ["auroc", "auroc_ci_lo", "auroc_ci_hi", "cv_auroc"]].isna().all()
    assert frame.loc[["a", "b"], "note"].isna().all()
    again = DetectorComparison.from_dict(json.loads(json.dumps(res.to_dict())))
    assert again.withheld == reason
    (line,) = [line for line in detector_comparison_text(res).splitlines() if line.split()[:1] == ["combined"]]
    # What `report --detector` prints.
    assert line.replace(reason, "").split() == ["combined", "(logistic,", "out", "of", "fold)"]


def test_at_the_floor_the_combination_is_reported():
    scores, y = two_scores(30, 20)
    res = compare_detectors(scores, y, n_boot=0)
    assert res.level in ("gain", "none") and res.withheld == ""
    folds = crossfit_folds(np.arange(50), y_true=y, n_folds=5, seed=0)
    oof = out_of_fold_probability(np.column_stack([scores["a"], scores["b"]]), y, folds)
    # The same folds by hand, scored by sklearn: the report's combined AUROC is that one.
    assert res.cv_auroc_combined == roc_auc_score(y, oof) > 0.5
    assert "note" not in res.to_frame()


def test_the_scores_alone_are_judged_as_if_no_floor_existed(monkeypatch):
    scores, y = two_scores(30, 19)
    withheld = compare_detectors(scores, y, n_boot=50)
    monkeypatch.setattr(events_per_feature, "MIN_EVENTS_PER_FEATURE", 1)
    reported = compare_detectors(scores, y, n_boot=50)
    assert reported.level != WITHHELD and np.isfinite(reported.cv_auroc_combined)
    assert withheld.cv_auroc_alone == reported.cv_auroc_alone
    assert withheld.judgements == reported.judgements
    assert withheld.judgements["a"].auroc == roc_analysis(y, scores["a"], n_boot=0).auroc
