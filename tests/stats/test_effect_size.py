import json
import math

import numpy as np
import pytest
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.effect_size import (
    AngleEffectsResult,
    EffectSizeResult,
    angle_effects,
    cohens_d,
    cohens_d_along,
    effect_size,
    hedges_g,
)

# Reference values from R (effsize::cohen.d / pingouin's test suite).
A = [3.2, 6.4, 1.8, 2.4, 5.8, 6.5]
B = [2.4, 3.2, 3.2, 1.4, 2.8, 3.5]


def test_reference_values_from_r():
    assert cohens_d(A, B) == pytest.approx(1.002549, abs=1e-6)
    assert hedges_g(A, B) == pytest.approx(0.9254296, abs=1e-7)


def test_hand_computed_toy_table():
    # valid mean 4, sd 1; halluc mean 2, sd 1 -> pooled sd 1, d = 2;
    # g = 2 * (1 - 3 / (4 * 6 - 9)) = 1.6; Welch t = 2 / sqrt(1/3 + 1/3) = sqrt(6).
    res = effect_size([1, 1, 1, 0, 0, 0], [3.0, 4.0, 5.0, 1.0, 2.0, 3.0], n_boot=0)
    assert (res.n_valid, res.n_halluc, res.n_excluded) == (3, 3, 0)
    assert (res.mean_valid, res.mean_halluc, res.sd_valid, res.sd_halluc) == (4.0, 2.0, 1.0, 1.0)
    assert res.cohens_d == pytest.approx(2.0)
    assert res.hedges_g == pytest.approx(1.6)
    assert res.welch_t == pytest.approx(math.sqrt(6))


def test_unequal_sizes_use_pooled_ddof1_variance():
    # valid [0, 2, 4]: var 4; halluc [0, 0, 0, 2, 3]: mean 1, var (1+1+1+1+4)/4 = 2.
    # pooled var = (2*4 + 4*2) / 6 = 8/3; d = (2 - 1) / sqrt(8/3).
    assert cohens_d([0, 2, 4], [0, 0, 0, 2, 3]) == pytest.approx(1 / math.sqrt(8 / 3))


def test_oracle_student_t_relation():
    # For the pooled-variance t-test, t = d / sqrt(1/n1 + 1/n2).
    rng = np.random.default_rng(3)
    valid, halluc = rng.normal(1.0, 1.5, 40), rng.normal(0.2, 0.7, 25)
    t = stats.ttest_ind(valid, halluc, equal_var=True).statistic
    assert cohens_d(valid, halluc) == pytest.approx(t * math.sqrt(1 / 40 + 1 / 25), rel=1e-12)


def test_welch_matches_scipy():
    rng = np.random.default_rng(4)
    y = np.r_[np.ones(30), np.zeros(50)]
    s = np.r_[rng.normal(1, 1, 30), rng.normal(0, 2, 50)]
    res = effect_size(y, s, n_boot=0)
    welch = stats.ttest_ind(s[:30], s[30:], equal_var=False)
    assert res.welch_t == pytest.approx(welch.statistic)
    assert res.welch_p == pytest.approx(welch.pvalue)


def test_antisymmetric_and_affine_invariant():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=20), rng.normal(0.5, 2, size=30)
    assert cohens_d(a, b) == pytest.approx(-cohens_d(b, a))
    assert cohens_d(3 * a + 7, 3 * b + 7) == pytest.approx(cohens_d(a, b))
    assert cohens_d(-2 * a, -2 * b) == pytest.approx(-cohens_d(a, b))


def test_label_flip_negates_and_shuffle_keeps():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 60).astype(float)
    s = rng.normal(size=60) + y
    base = effect_size(y, s, n_boot=0).cohens_d
    assert effect_size(1 - y, s, n_boot=0).cohens_d == pytest.approx(-base)
    order = rng.permutation(60)
    assert effect_size(y[order], s[order], n_boot=0).cohens_d == pytest.approx(base)


def test_direction_grounded_higher_is_positive():
    res = effect_size([1, 1, 1, 0, 0, 0], [1.3, 1.2, 1.1, 0.9, 0.8, 1.0], n_boot=0)
    assert res.cohens_d > 0


def test_unlabelled_and_unscored_rows_are_excluded_and_counted():
    y = [1, 1, 1, 0, 0, 0, np.nan, 1]
    s = [3.0, 4.0, 5.0, 1.0, 2.0, 3.0, 100.0, np.nan]
    res = effect_size(y, s, n_boot=0)
    assert res.n_excluded == 2
    assert res.cohens_d == pytest.approx(2.0)


def test_bootstrap_interval_is_seeded_and_matches_scipy():
    rng = np.random.default_rng(7)
    y = np.r_[np.ones(40), np.zeros(60)]
    s = np.r_[rng.normal(1, 1, 40), rng.normal(0, 1, 60)]
    res = effect_size(y, s, n_boot=500, seed=11)
    assert res.cohens_d_ci[0] < res.cohens_d < res.cohens_d_ci[1]
    assert effect_size(y, s, n_boot=500, seed=11).cohens_d_ci == res.cohens_d_ci
    assert effect_size(y, s, n_boot=500, seed=12).cohens_d_ci != res.cohens_d_ci
    # Each class is resampled sorted, so that the interval ignores the row order.
    oracle = stats.bootstrap(
        (np.sort(s[:40]), np.sort(s[40:])), lambda a, b, axis: cohens_d_along(a, b, axis), n_resamples=500,
        vectorized=True, method="percentile", rng=np.random.default_rng(11),
    ).confidence_interval
    assert res.cohens_d_ci == pytest.approx((oracle.low, oracle.high))


def test_no_bootstrap_gives_nan_interval():
    res = effect_size([1, 1, 0, 0], [2.0, 3.0, 0.0, 1.0], n_boot=0)
    assert all(math.isnan(x) for x in res.cohens_d_ci)


@pytest.mark.parametrize(
    "y, s, match",
    [
        ([1, 1, 1], [1.0, 2.0, 3.0], "at least 2 rows of each class"),
        ([1, 0, 0], [1.0, 2.0, 3.0], "at least 2 rows of each class"),
        ([1, 1, 0, 0], [1.0, 1.0, 2.0, 2.0], "zero spread"),
    ],
)
def test_degenerate_input_warns_and_gives_nan(y, s, match):
    with pytest.warns(UndefinedStatisticWarning, match=match):
        res = effect_size(y, s)
    assert math.isnan(res.cohens_d) and math.isnan(res.hedges_g) and math.isnan(res.welch_p)
    assert all(math.isnan(x) for x in res.cohens_d_ci)


def test_plain_functions_warn_on_degenerate_input():
    with pytest.warns(UndefinedStatisticWarning, match="at least 2 rows"):
        assert math.isnan(cohens_d([1.0], [2.0, 3.0]))
    with pytest.warns(UndefinedStatisticWarning, match="zero spread"):
        assert math.isnan(hedges_g([1.0, 1.0], [2.0, 2.0]))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"y_true": [1, 2], "score": [1.0, 2.0]}, "values other than 1"),
        ({"y_true": [1, 0], "score": [1.0]}, "has 1 values but the labels have 2"),
        ({"y_true": [1, 0], "score": [1.0, np.inf]}, "infinite"),
        ({"y_true": [1, 0], "score": [1.0, 2.0], "n_boot": -1},
         "'n_boot' parameter of effect_size must be an int >= 0"),
        ({"y_true": [1, 0], "score": [1.0, 2.0], "confidence": 1.0}, "'confidence' parameter"),
        ({"y_true": ["yes", "no"], "score": [1.0, 2.0]}, "must hold numbers 1"),
    ],
)
def test_bad_input_raises(kwargs, match):
    with pytest.raises(SGIInputError, match=match):
        effect_size(**kwargs)


def test_label_error_names_rows():
    with pytest.raises(SGIInputError, match=r"rows 2, 4"):
        effect_size([1, 5, 0, -1], [1.0, 2.0, 3.0, 4.0])


def test_bootstrap_leaves_out_undefined_resamples_with_a_warning():
    # With 3 rows a class, some resamples repeat one value in both classes: zero pooled SD.
    with pytest.warns(UndefinedStatisticWarning, match=r"undefined in \d+ of 200 bootstrap resamples"):
        res = effect_size([1, 1, 1, 0, 0, 0], [3.0, 4.0, 5.0, 1.0, 2.0, 3.0], n_boot=200)
    assert np.isfinite(res.cohens_d_ci).all()


def test_json_round_trip():
    rng = np.random.default_rng(8)
    res = effect_size(np.r_[np.ones(10), np.zeros(10), np.nan], rng.normal(size=21), n_boot=50)
    data = json.loads(json.dumps(res.to_dict()))
    assert EffectSizeResult.from_dict(data) == res
    with pytest.warns(UndefinedStatisticWarning):
        empty = effect_size([1], [1.0])
    data = json.loads(json.dumps(empty.to_dict()))
    assert data["cohens_d"] is None
    assert EffectSizeResult.from_dict(data).to_dict() == empty.to_dict()


def test_angle_effects_hand_computed():
    # theta_rq valid [1.2, 1.4], halluc [0.8, 1.0]: diff 0.4, pooled sd sqrt(0.02) -> d = 2.828427.
    res = angle_effects([1.2, 1.4, 0.8, 1.0], [0.5, 0.9, 0.6, 0.6], [1, 1, 0, 0])
    assert res.cohens_d_theta_rq == pytest.approx(0.4 / math.sqrt(0.02))
    # theta_rc valid mean 0.7 var 0.08, halluc mean 0.6 var 0: pooled var 0.04 -> d = 0.5.
    assert res.cohens_d_theta_rc == pytest.approx(0.5)
    assert (res.mean_theta_rq_valid, res.mean_theta_rc_halluc) == (pytest.approx(1.3), pytest.approx(0.6))
    assert AngleEffectsResult.from_dict(json.loads(json.dumps(res.to_dict()))) == res
