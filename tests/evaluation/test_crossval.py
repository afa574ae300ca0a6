import warnings

import numpy as np
import pytest
from sklearn.model_selection import PredefinedSplit, cross_val_predict

from sgi_core.evaluation.baselines import beyond_length
from sgi_core.evaluation.crossval import fold_ids, out_of_fold_probability, quantile_logistic
from sgi_core.evaluation.detectors import compare_detectors


def test_fold_ids_keep_groups_whole_and_stratify():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(100), 2)
    labels = np.tile([1, 0], 100)
    ids = fold_ids(labels, n_splits=5, seed=3, groups=groups)
    for group in range(100):
        assert len(set(ids[groups == group])) == 1
    assert sorted(np.bincount(ids)) == [40] * 5
    ungrouped = fold_ids(rng.permutation(labels), n_splits=4, seed=0)
    assert set(ungrouped) == {0, 1, 2, 3}


def test_fold_ids_are_seeded():
    labels = np.tile([1, 0, 0], 30)
    assert np.array_equal(fold_ids(labels, n_splits=3, seed=1), fold_ids(labels, n_splits=3, seed=1))
    assert not np.array_equal(fold_ids(labels, n_splits=3, seed=1), fold_ids(labels, n_splits=3, seed=2))


def test_out_of_fold_equals_sklearn_cross_val_predict_on_equal_folds():
    # With equal training folds, sizing quantiles per fold is sklearn's fixed size: an independent oracle.
    rng = np.random.default_rng(1)
    labels = np.tile([1, 0], 60)
    features = np.column_stack([labels + rng.normal(size=120), rng.normal(size=120)])
    folds = np.arange(120) % 4
    expected = cross_val_predict(quantile_logistic(90), features, labels, cv=PredefinedSplit(folds),
                                 method="predict_proba")[:, 1]
    np.testing.assert_allclose(out_of_fold_probability(features, labels, folds), expected, rtol=1e-12)


def test_unequal_folds_raise_no_quantile_warning():
    rng = np.random.default_rng(2)
    labels = (rng.random(333) < 0.4).astype(float)
    length, score = rng.normal(size=333) + labels, rng.normal(size=333)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        beyond_length(length, score, labels)
        compare_detectors({"a": score, "b": length}, labels, n_boot=0)


@pytest.mark.parametrize("n_splits", [3, 5])
def test_each_row_is_predicted_by_a_model_that_never_saw_it(n_splits):
    # A feature that is the label on one fold only: rows of that fold cannot be predicted from it.
    labels = np.tile([1, 0], 30)
    folds = np.arange(60) % n_splits
    feature = np.where(folds == 0, labels, 0.5)
    prob = out_of_fold_probability(feature[:, None].astype(float), labels, folds)
    assert np.ptp(prob[folds == 0]) == pytest.approx(0.0, abs=1e-12)
