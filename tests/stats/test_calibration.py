import json
import math

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss

from sgi_core.errors import SGIInputError
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.calibration import (
    CalibrationResult,
    Calibrator,
    calibration_analysis,
    expected_calibration_error,
    fit_calibrator,
    halluc_rate_by_quantile,
    reliability_bins,
)


@pytest.fixture
def noisy():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400).astype(float)
    return y, 1.0 + 0.3 * y + rng.normal(0, 0.25, 400)


def test_minmax_hand_computed():
    cal = fit_calibrator([0.5, 1.0, 1.5, np.nan], [0, 1, 1, 1], method="minmax")
    assert cal.knots_x == (0.5, 1.5) and cal.knots_y == (0.0, 1.0)
    assert cal.predict([0.0, 0.5, 0.75, 1.5, 9.0]).tolist() == [0.0, 0.0, 0.25, 1.0, 1.0]


def test_platt_matches_sklearn_logistic_regression(noisy):
    y, s = noisy
    cal = fit_calibrator(s, y, method="platt")
    oracle = LogisticRegression(C=np.inf).fit(s[:, None], y)
    grid = np.linspace(0.5, 2.0, 31)
    assert cal.predict(grid) == pytest.approx(oracle.predict_proba(grid[:, None])[:, 1], abs=1e-6)
    assert cal.slope > 0  # higher SGI = more likely grounded


def test_isotonic_matches_sklearn_and_is_monotone(noisy):
    y, s = noisy
    cal = fit_calibrator(s, y, method="isotonic")
    oracle = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(s, y)
    grid = np.linspace(0.0, 3.0, 301)
    assert cal.predict(grid) == pytest.approx(oracle.predict(grid))
    assert np.all(np.diff(cal.predict(grid)) >= 0)


@pytest.mark.parametrize("method", ["minmax", "platt", "isotonic"])
def test_calibrator_json_round_trip_predicts_the_same(noisy, method):
    y, s = noisy
    cal = fit_calibrator(s, y, method=method)
    back = Calibrator.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert np.array_equal(back.predict(s), cal.predict(s))
    assert np.isnan(back.predict([np.nan])[0])


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_reliability_bins_match_sklearn_calibration_curve(noisy, strategy):
    y, s = noisy
    prob = fit_calibrator(s, y, method="platt").predict(s)
    bins = reliability_bins(y, prob, n_bins=10, strategy=strategy)
    prob_true, prob_pred = calibration_curve(y, prob, n_bins=10, strategy=strategy)
    assert bins.prob_true == pytest.approx(prob_true.tolist())
    assert bins.prob_pred == pytest.approx(prob_pred.tolist())
    assert sum(bins.counts) == len(y)


def test_ece_hand_computed_and_brute_force():
    # Bins [0, .5) and [.5, 1]: (2/4)|0.5 - 0.25| + (2/4)|1.0 - 0.75| = 0.25.
    assert expected_calibration_error([0, 1, 1, 1], [0.25, 0.25, 0.75, 0.75], n_bins=2) == pytest.approx(0.25)
    rng = np.random.default_rng(1)
    prob = rng.uniform(size=200)
    y = (rng.uniform(size=200) < prob ** 2).astype(float)
    brute = 0.0
    for k in range(10):
        member = (prob >= k / 10) & (prob < (k + 1) / 10)
        if member.any():
            brute += member.mean() * abs(y[member].mean() - prob[member].mean())
    assert expected_calibration_error(y, prob, n_bins=10, strategy="uniform") == pytest.approx(brute)


def test_ece_is_zero_for_perfect_bins():
    # Each bin's predicted P equals its observed share of grounded rows.
    assert expected_calibration_error([0, 0, 0, 1, 1, 1, 1, 0], [0.25] * 4 + [0.75] * 4, n_bins=2) == 0.0


def test_halluc_rate_by_decile_hand_computed():
    assert halluc_rate_by_quantile([0, 0, 1, 0, 1, 1], [1, 2, 3, 4, 5, 6], n_groups=3) == (1.0, 0.5, 0.0)
    y = [0] * 5 + [1] * 5 + [np.nan]
    assert halluc_rate_by_quantile(y, list(range(11)), n_groups=10) == (1.0,) * 5 + (0.0,) * 5


def test_halluc_rate_too_few_rows_warns():
    with pytest.warns(UndefinedStatisticWarning, match="cannot fill 10 score groups"):
        rates = halluc_rate_by_quantile([0, 1], [1.0, 2.0])
    assert len(rates) == 10 and all(math.isnan(r) for r in rates)


def test_analysis_split_is_stratified_and_metrics_match_oracles(noisy):
    y, s = noisy
    res = calibration_analysis(y, s, method="isotonic", test_size=0.25, seed=3)
    assert (res.n_fit, res.n_eval) == (300, 100) and not res.in_sample
    assert res.calibrator.method == "isotonic"
    # The evaluation split's Brier score, rebuilt from the same split.
    from sklearn.model_selection import train_test_split

    fit_s, eval_s, fit_y, eval_y = train_test_split(s, y, test_size=0.25, random_state=3, stratify=y)
    prob = fit_calibrator(fit_s, fit_y, method="isotonic").predict(eval_s)
    assert res.brier == pytest.approx(brier_score_loss(eval_y, prob))
    assert res.ece_quantile == pytest.approx(expected_calibration_error(eval_y, prob, strategy="quantile"))
    assert len(res.halluc_rate_by_decile) == 10
    assert res.halluc_rate_by_decile[0] > res.halluc_rate_by_decile[-1]


def test_in_sample_minmax_is_the_papers_protocol(noisy):
    y, s = noisy
    res = calibration_analysis(y, s, method="minmax", test_size=None)
    assert res.in_sample and res.n_fit == res.n_eval == 400
    assert res.calibrator == fit_calibrator(s, y, method="minmax")


def test_unlabelled_rows_are_left_out(noisy):
    y, s = noisy
    y = y.copy()
    y[:10] = np.nan
    res = calibration_analysis(y, s, test_size=None)
    assert res.n_eval == 390


def test_json_round_trip(noisy):
    y, s = noisy
    res = calibration_analysis(y, s)
    assert CalibrationResult.from_dict(json.loads(json.dumps(res.to_dict()))) == res


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: fit_calibrator([1.0, 2.0], [1, 0], method="beta"),
         "'method' parameter of fit_calibrator must be one of"),
        (lambda: fit_calibrator([1.0, 2.0], [1, 1], method="platt"),
         "platt calibration needs grounded and hallucinated"),
        (lambda: fit_calibrator([1.0, 1.0], [1, 0], method="minmax"), "scores that are not all equal"),
        (lambda: calibration_analysis([1, 0] * 5, range(10), test_size=1.5), "'test_size' parameter"),
        (lambda: calibration_analysis([1, 0] * 5, range(10), n_bins=0), "'n_bins' parameter"),
        (lambda: calibration_analysis([1, 0] * 5, range(10), strategy="equal"), "'strategy' parameter"),
        (lambda: calibration_analysis([1, 1, 1, 0], range(4)), "at least 2 grounded and 2 hallucinated"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(SGIInputError, match=match):
        call()


def test_isotonic_in_sample_is_invariant_to_monotone_transform(noisy):
    y, s = noisy
    base = calibration_analysis(y, s, method="isotonic", test_size=None)
    moved = calibration_analysis(y, np.exp(3 * s), method="isotonic", test_size=None)
    assert moved.ece_uniform == pytest.approx(base.ece_uniform)
    assert moved.brier == pytest.approx(base.brier)
    assert moved.halluc_rate_by_decile == base.halluc_rate_by_decile
