import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import PredefinedSplit, cross_val_predict
from sklearn.pipeline import make_pipeline

from sgi_core.evaluation.beyond_length import beyond_length
from sgi_core.evaluation.detectors import compare_detectors
from sgi_core.stats import crossval
from sgi_core.stats.crossval import fold_ids, normal_scores, out_of_fold_probabilities, out_of_fold_probability


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
    pipeline = make_pipeline(*normal_scores(90).named_steps.values(), LogisticRegression())
    expected = cross_val_predict(pipeline, features, labels, cv=PredefinedSplit(folds), method="predict_proba")[:, 1]
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


def test_several_column_sets_equal_each_set_fitted_alone_and_repeat_with_the_seed():
    # 12,000 rows: above the quantile map's 10,000-row subsample, whose rows the seed draws.
    rng = np.random.default_rng(5)
    labels = (rng.random(12_000) < 0.5).astype(float)
    features = np.column_stack([labels + rng.normal(size=12_000), rng.gamma(2.0, 1.0, 12_000) * (1 + labels),
                                rng.normal(size=12_000)])
    features[rng.random(12_000) < 0.01, 1] = np.nan
    folds = np.arange(12_000) % 3
    sets = [[0], [1, 2], [0, 1, 2]]
    together = out_of_fold_probabilities(features, labels, folds, sets, seed=4)
    for columns, prob in zip(sets, together):
        np.testing.assert_array_equal(prob, out_of_fold_probability(features[:, columns], labels, folds, seed=4))
    again = beyond_length(features[:, 1], features[:, 0], labels, seed=2)
    assert beyond_length(features[:, 1], features[:, 0], labels, seed=2) == again


def test_the_map_in_blocks_gives_the_values_of_one_call(monkeypatch):
    rng = np.random.default_rng(4)
    x = np.column_stack([rng.lognormal(size=25_000), rng.normal(size=25_000)])
    x[::97, 0] = np.nan
    y = (rng.random(25_000) < 1 / (1 + np.exp(-x[:, 1]))).astype(float)
    folds = np.arange(25_000) % 5
    whole = crossval.normal_scores(len(x)).fit_transform(x)
    before = crossval.out_of_fold_probabilities(x, y, folds, [[0], [0, 1]])
    monkeypatch.setattr(crossval, "MAP_BLOCK_ROWS", 977)
    np.testing.assert_array_equal(crossval.mapped_in_blocks(crossval.normal_scores(len(x)).fit(x), x), whole)
    after = crossval.out_of_fold_probabilities(x, y, folds, [[0], [0, 1]])
    for one_call, in_blocks in zip(before, after):
        np.testing.assert_array_equal(in_blocks, one_call)
