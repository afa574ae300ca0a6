import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score, roc_curve

from sgi_core.errors import SGIInputError
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.ranking import RocResult, _auroc_of_levels, auroc, roc_analysis


def brute_force_auroc(valid, halluc):
    pairs = list(itertools.product(valid, halluc))
    return sum(1.0 if v > h else 0.5 if v == h else 0.0 for v, h in pairs) / len(pairs)


@pytest.mark.parametrize(
    "y, s, expected",
    [
        ([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1], 0.75),  # pairs: (0.9>0.5, 0.9>0.1, 0.4<0.5, 0.4>0.1) -> 3/4
        ([1, 0], [1.0, 1.0], 0.5),  # a tie counts one half
        ([1, 1, 0], [2.0, 1.0, 1.0], 0.75),  # (2>1) + (1=1)/2 over 2 pairs
        ([1, 1, 0, 0], [0.1, 0.2, 0.3, 0.4], 0.0),
    ],
)
def test_hand_computed_toy_tables(y, s, expected):
    assert roc_analysis(y, s, n_boot=0).auroc == pytest.approx(expected)
    assert auroc(y, s) == pytest.approx(expected)


def test_direction_grounded_positive_score_as_given():
    # SGI is higher for grounded answers: AUROC must be above 0.5, never flipped to 1 - AUROC.
    res = roc_analysis([1, 1, 1, 0, 0, 0], [1.3, 1.2, 1.1, 0.9, 0.8, 1.0], n_boot=0)
    assert res.auroc == 1.0


def test_oracle_sklearn_with_ties():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.normal(size=300) + 0.8 * y, 1)  # rounding makes many ties
    res = roc_analysis(y, s, n_boot=0)
    assert res.auroc == pytest.approx(roc_auc_score(y, s))
    fpr, tpr, thr = roc_curve(y, s)
    assert res.fpr == pytest.approx(fpr.tolist()) and res.tpr == pytest.approx(tpr.tolist())
    assert res.thresholds == pytest.approx(thr.tolist())
    assert res.auroc == pytest.approx(brute_force_auroc(s[y == 1], s[y == 0]))


def test_curve_is_read_only_arrays_that_survive_json():
    res = roc_analysis([1, 1, 0, 0, 1], [0.9, 0.4, 0.5, 0.1, 0.4], n_boot=0)
    assert res.fpr.dtype == np.float64 and not res.fpr.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        res.tpr[0] = 0.5
    back = RocResult.from_dict(json.loads(json.dumps(res.to_dict())))
    assert back == res and back.thresholds[0] == math.inf
    np.testing.assert_array_equal(back.fpr, [0.0, 0.0, 0.5, 0.5, 1.0])
    assert res != roc_analysis([1, 1, 0, 0, 1], [0.9, 0.4, 0.5, 0.2, 0.3], n_boot=0)
    assert RocResult.undefined(3, 0, 1) == RocResult.undefined(3, 0, 1) != RocResult.undefined(3, 0, 2)


def test_fast_resample_statistic_matches_brute_force():
    rng = np.random.default_rng(1)
    levels = rng.integers(0, 7, size=(5, 30))
    valid, halluc = levels[:, :12], levels[:, 12:]
    fast = _auroc_of_levels(valid, halluc, 7)
    for row in range(5):
        assert fast[row] == pytest.approx(brute_force_auroc(valid[row], halluc[row]))


def test_invariances():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 200).astype(float)
    s = rng.normal(size=200) + y
    base = roc_analysis(y, s, n_boot=0).auroc
    assert roc_analysis(y, np.exp(3 * s) + 5, n_boot=0).auroc == pytest.approx(base)  # monotone transform
    order = rng.permutation(200)
    assert roc_analysis(y[order], s[order], n_boot=0).auroc == pytest.approx(base)  # row order
    assert roc_analysis(1 - y, s, n_boot=0).auroc == pytest.approx(1 - base)  # label swap
    assert roc_analysis(y, -s, n_boot=0).auroc == pytest.approx(1 - base)  # score reversal


def test_bootstrap_interval_matches_scipy_mann_whitney_oracle():
    rng = np.random.default_rng(3)
    y = np.r_[np.ones(50), np.zeros(80)]
    s = np.round(np.r_[rng.normal(1, 1, 50), rng.normal(0, 1, 80)], 1)
    res = roc_analysis(y, s, n_boot=400, seed=5)

    def mann_whitney_auroc(a, b, axis):
        return stats.mannwhitneyu(a, b, axis=axis).statistic / (a.shape[axis] * b.shape[axis])

    # Each class is resampled sorted, so that the interval ignores the row order.
    oracle = stats.bootstrap(
        (np.sort(s[:50]), np.sort(s[50:])), mann_whitney_auroc, n_resamples=400, vectorized=True, method="percentile",
        rng=np.random.default_rng(5),
    ).confidence_interval
    assert res.auroc_ci == pytest.approx((oracle.low, oracle.high))
    assert res.auroc_ci[0] < res.auroc < res.auroc_ci[1]
    assert roc_analysis(y, s, n_boot=400, seed=5).auroc_ci == res.auroc_ci


def test_unlabelled_and_unscored_rows_are_counted():
    res = roc_analysis([1, 0, np.nan, 1, 0], [2.0, 1.0, 5.0, np.nan, 0.0], n_boot=0)
    assert (res.n_pos, res.n_neg, res.n_excluded) == (1, 2, 2)
    assert res.auroc == 1.0


@pytest.mark.parametrize("y", [[1, 1, 1], [0, 0], [np.nan, np.nan]])
def test_one_class_warns_and_returns_nan(y):
    with pytest.warns(UndefinedStatisticWarning, match="AUROC needs both classes"):
        res = roc_analysis(y, np.arange(len(y), dtype=float))
    assert math.isnan(res.auroc) and res.fpr.shape == (0,) and all(math.isnan(x) for x in res.auroc_ci)
    with pytest.warns(UndefinedStatisticWarning, match="AUROC needs both classes"):
        assert math.isnan(auroc(y, np.arange(len(y), dtype=float)))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"y_true": [1, 0], "y_score": [1.0, 2.0, 3.0]}, "has 3 values but the labels have 2"),
        ({"y_true": [1, 0.5], "y_score": [1.0, 2.0]}, "values other than 1"),
        ({"y_true": [1, 0], "y_score": [1.0, 2.0], "n_boot": 1.5}, "'n_boot' parameter of roc_analysis"),
        ({"y_true": [1, 0], "y_score": [1.0, 2.0], "confidence": 0}, "'confidence' parameter of roc_analysis"),
    ],
)
def test_bad_input_raises(kwargs, match):
    with pytest.raises(SGIInputError, match=match):
        roc_analysis(**kwargs)


def test_json_round_trip_keeps_infinite_first_threshold():
    res = roc_analysis([1, 1, 0, 0, 1], [0.9, 0.4, 0.5, 0.1, 0.7], n_boot=30)
    data = json.loads(json.dumps(res.to_dict()))
    assert data["thresholds"][0] == "inf"
    assert RocResult.from_dict(data) == res


def test_score_percentile_against_brute_force():
    from sgi_core.stats.ranking import score_percentile

    rng = np.random.default_rng(4)
    values = rng.normal(size=501)
    values[::50] = np.nan
    scored = values[~np.isnan(values)]
    for x in (-5.0, scored[3], 0.0, 10.0):
        assert score_percentile(values, x) == pytest.approx(100 * np.mean(scored <= x))
    with pytest.warns(UndefinedStatisticWarning):
        assert np.isnan(score_percentile([np.nan], 1.0))
