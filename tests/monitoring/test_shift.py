"""Reference quantiles, the mixture CDF and the shift test: oracles (scipy, statsmodels), invariances, errors."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.monitoring.shift import BETA, holm, ks_statistics, shift_check
from sgi_core.policy.references import class_cdf, class_references, feature_values, mixture_cdf


def _reference(rng, n=300, shift=1.0):
    y = np.r_[np.ones(n), np.zeros(n)]
    return class_references(y, {"score": np.r_[rng.normal(shift, 1, n), rng.normal(-shift, 1, n)]})


def test_class_cdf_inverts_the_stored_quantiles():
    rng = np.random.default_rng(0)
    values = rng.normal(size=500)
    ref = class_references(np.ones(500).tolist() + [0.0], {"score": np.r_[values, 0.0]})["score"]["grounded"]
    probabilities = np.linspace(0, 1, len(ref["quantiles"]))
    assert class_cdf(ref["quantiles"], ref["quantiles"][1:-1]) == pytest.approx(probabilities[1:-1])
    # Against the sample's own ECDF, within the interpolation's resolution.
    grid = np.linspace(-2, 2, 41)
    assert np.abs(class_cdf(ref["quantiles"], grid) - stats.ecdf(values).cdf.evaluate(grid)).max() < 0.015


def test_mixture_cdf_is_the_weighted_sum():
    rng = np.random.default_rng(1)
    ref = _reference(rng)["score"]
    x = np.linspace(-3, 3, 13)
    expected = 0.7 * class_cdf(ref["grounded"]["quantiles"], x) + 0.3 * class_cdf(ref["hallucinated"]["quantiles"], x)
    assert mixture_cdf(ref, 0.3, x) == pytest.approx(expected)


def test_ks_statistics_equal_scipy():
    rng = np.random.default_rng(2)
    values = np.sort(rng.normal(size=50))
    rows = np.vstack([stats.norm.cdf(values), stats.norm.cdf(values, loc=0.5), stats.norm.cdf(values, scale=2)])
    expected = [stats.ks_1samp(values, cdf).statistic for cdf in (stats.norm.cdf, stats.norm(0.5).cdf,
                                                                  stats.norm(0, 2).cdf)]
    assert ks_statistics(values, rows) == pytest.approx(expected)


def test_holm_equals_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.array([0.01, 0.04, 0.03, 0.2, 0.005])
    assert holm(p) == pytest.approx(multitest.multipletests(p, method="holm")[1])


def test_prior_shift_is_not_flagged_and_a_moved_feature_is():
    rng = np.random.default_rng(3)
    ref = _reference(rng)
    for rate in (0.1, 0.5, 0.9):
        k = int(200 * rate)
        run = np.r_[rng.normal(1, 1, 200 - k), rng.normal(-1, 1, k)]
        check = shift_check({"score": run}, ref, (rate - 0.1 * (rate > 0.1), rate + 0.05))
        assert not check.detected and check.tests[0].p_value > 0.05
        assert check.rate_range[0] <= check.tests[0].rate <= check.rate_range[1]
    moved = shift_check({"score": rng.normal(0, 0.2, 200)}, ref)  # no mixture of N(1,1) and N(-1,1) is this narrow
    assert moved.detected and moved.shifted_features == ("score",)


def test_the_p_value_is_the_best_over_the_rates_plus_beta():
    rng = np.random.default_rng(4)
    ref = _reference(rng)
    run = np.r_[rng.normal(1, 1, 150), rng.normal(-1, 1, 50)]
    wide, narrow = shift_check({"score": run}, ref, (0.0, 1.0)), shift_check({"score": run}, ref, (0.6, 0.6))
    assert wide.tests[0].p_value >= narrow.tests[0].p_value and wide.tests[0].p_value >= BETA
    assert narrow.tests[0].rate == 0.6


def test_invariant_to_the_order_of_the_run_and_a_monotone_map_of_feature_and_reference():
    rng = np.random.default_rng(5)
    y = np.r_[np.ones(200), np.zeros(200)]
    values = np.r_[rng.normal(1, 1, 200), rng.normal(-1, 1, 200)]
    run = np.r_[rng.normal(1.3, 1, 100), rng.normal(-1, 1, 100)]
    base = shift_check({"score": run}, class_references(y, {"score": values}), (0.3, 0.7))
    shuffled = shift_check({"score": rng.permutation(run)}, class_references(y, {"score": values}), (0.3, 0.7))
    mapped = shift_check({"score": np.exp(run)}, class_references(y, {"score": np.exp(values)}), (0.3, 0.7))
    assert shuffled.tests[0].statistic == base.tests[0].statistic
    assert mapped.tests[0].statistic == pytest.approx(base.tests[0].statistic, abs=0.01)


def test_feature_values_reads_lengths_and_the_reader_kept_columns():
    frame = pd.DataFrame({"question": ["q", "q"], "context": ["abcd", None], "response": ["xy", "xyz"],
                          "input_theta_qc": ["0.5", "bad"]})
    values = feature_values(frame, [1.0, np.nan])
    assert values["response_length"].tolist() == [2, 3] and values["context_length"].tolist() == [4, 0]
    assert values["theta_qc"][0] == 0.5 and np.isnan(values["theta_qc"][1]) and np.isnan(values["score"][1])


def test_unchecked_and_errors():
    assert "written before version 6" in shift_check({"score": [1.0] * 10}, None).unchecked
    few = shift_check({"score": [1.0, 2.0]}, _reference(np.random.default_rng(6)))
    assert np.isnan(few.tests[0].p_value) and not few.detected
    with pytest.raises(SGIInputError, match="'rate_range' parameter of shift_check"):
        shift_check({}, None, (0.6, 0.2))
    with pytest.raises(SGIInputError, match="'alpha' parameter of shift_check"):
        shift_check({}, None, alpha=5)
    with pytest.raises(SGIInputError, match="'length' is not a monitored feature"):
        class_references([1, 0], {"length": [1, 2]})
    with pytest.raises(SGIInputError, match="feature 'score' has 1 values but the labels have 2"):
        class_references([1, 0], {"score": [1]})


def test_a_discrete_feature_from_the_reference_distribution_is_not_flagged():
    # Lengths of "response 0" ... "response 299": three values only. The reference's atoms are jumps, not ramps.
    lengths = np.array([len(f"response {i}") for i in range(300)], dtype=float)
    y = np.tile([1.0, 0.0], 150)
    ref = class_references(y, {"response_length": lengths})
    check = shift_check({"response_length": lengths}, ref, (0.5, 0.5))
    assert check.tests[0].statistic < 0.02 and not check.detected
    assert class_cdf(ref["response_length"]["grounded"]["quantiles"], [10.0], left=True)[0] < 0.05


def test_ks_statistics_with_jumps_equal_the_brute_force_supremum():
    values = np.sort(np.array([1.0, 1.0, 2.0, 3.0, 3.0, 3.0]))
    quantiles = [1.0, 1.0, 1.0, 2.0, 3.0]  # an atom at 1 (to 0.5), a ramp to 2 (0.75) and 3 (1.0)
    right, left = class_cdf(quantiles, values), class_cdf(quantiles, values, left=True)
    grid = np.linspace(0.0, 4.0, 40001)
    empirical = np.searchsorted(values, grid, side="right") / len(values)
    brute = np.abs(empirical - class_cdf(quantiles, grid)).max()
    assert ks_statistics(values, right[None, :], left[None, :])[0] == pytest.approx(brute, abs=1e-3)
