"""Active inference: hand-computed toy cases, unbiasedness summed exactly over every draw, design properties, errors."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sgi_core.errors import SGIInputError
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.active_inference import (
    active_mean,
    design_cross_fit,
    inclusion_probabilities,
    labels_for_half_width,
    planned_variance,
)

# (a) the estimator on toy cases, by hand.


def test_fixed_lambda_estimate_and_variance_by_hand():
    # z = f + (y - f) xi / pi: unit 1 (drawn, y=2, f=0.5, pi=0.5) -> 0.5 + 1.5/0.5 = 3.5; unit 2 -> 0.2;
    # unit 3 (drawn, y=0.5, f=0.4, pi=0.8) -> 0.4 + 0.1/0.8 = 0.525; unit 4 -> 0.6.
    z = np.array([3.5, 0.2, 0.525, 0.6])
    res = active_mean([2.0, np.nan, 0.5, np.nan], [0.5, 0.2, 0.4, 0.6], [0.5, 0.5, 0.8, 0.3], power_tuning=False)
    assert res.estimate == pytest.approx(1.20625)
    assert res.variance == pytest.approx(z.var() / 4)
    half = 1.959963984540054 * math.sqrt(z.var() / 4)
    assert res.ci == pytest.approx((1.20625 - half, 1.20625 + half))
    # Without the predictor (Horvitz-Thompson): (2/0.5 + 0.5/0.8) / 4.
    assert res.labels_only_estimate == pytest.approx(1.15625)
    assert (res.n_units, res.n_labelled, res.expected_labels) == (4, 2, pytest.approx(2.1))


def test_tuned_lambda_by_hand():
    # lam = sum(xi f y (1 - pi) / pi^2) / sum(f^2 (1 - pi) / pi) = (0.6 + 0.025) / 1.17
    res = active_mean([0.6, np.nan, 0.2, np.nan], [0.5, 0.2, 0.4, 0.6], [0.5, 0.5, 0.8, 0.3])
    assert res.lam == pytest.approx(0.625 / 1.17)
    big = active_mean([2.0, np.nan, 0.5, np.nan], [0.5, 0.2, 0.4, 0.6], [0.5, 0.5, 0.8, 0.3])
    assert big.lam == 1.0  # 2.0625 / 1.17, clipped


def test_every_unit_labelled_gives_the_labels_mean():
    y = np.array([1, 0, 1, 1, 0, 1, 0, 0, 1, 1] * 2, dtype=float)
    res = active_mean(y, np.linspace(0, 1, 20), np.ones(20))
    assert res.lam == 0.0 and res.estimate == pytest.approx(y.mean())
    assert res.variance == pytest.approx(y.var() / 20)


@pytest.mark.filterwarnings("ignore::sgi_core.results.UndefinedStatisticWarning")
def test_unbiased_summed_exactly_over_every_draw():
    # Oracle: E[theta] over all 2^N outcomes of xi_i ~ Bernoulli(pi_i) equals mean(y), for any fixed lam and f.
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0, -1.0])
    f, pi = np.array([0.9, 0.1, 0.3, 0.6, 0.5, -0.4]), np.array([0.2, 0.9, 0.5, 0.35, 0.7, 0.6])
    expected = 0.0
    for xi in itertools.product((0, 1), repeat=len(y)):
        xi = np.array(xi, dtype=bool)
        weight = np.prod(np.where(xi, pi, 1 - pi))
        expected += weight * active_mean(np.where(xi, y, np.nan), f, pi, power_tuning=False).estimate
    assert expected == pytest.approx(y.mean(), abs=1e-12)


def test_few_labels_of_a_class_give_no_interval():
    y = np.full(30, np.nan)
    y[:8] = [1, 0, 0, 0, 0, 0, 0, 0]
    with pytest.warns(UndefinedStatisticWarning, match="1 units of value 1 labelled"):
        res = active_mean(y, np.full(30, 0.3), np.full(30, 0.3))
    assert math.isnan(res.ci[0]) and "no interval" in res.method and not math.isnan(res.estimate)


def test_estimator_errors():
    with pytest.raises(SGIInputError, match=r"'pi' must be in \(0, 1\]"):
        active_mean([1.0, 0.0], [0.5, 0.5], [0.0, 0.5])
    with pytest.raises(SGIInputError, match="'pred' must be finite"):
        active_mean([1.0, 0.0], [np.nan, 0.5], [0.5, 0.5])
    with pytest.raises(SGIInputError, match="has 3 values but the labels have 2"):
        active_mean([1.0, 0.0], [0.5, 0.5, 0.5], [0.5, 0.5])
    with pytest.raises(SGIInputError, match="confidence"):
        active_mean([1.0, 0.0], [0.5, 0.5], [0.5, 0.5], confidence=95)


# (b) the design's probabilities.


def test_probabilities_by_hand_with_a_cap():
    # n = 3, a = 0.2, u = (1, 0, 0, 0): 3 (0.8 + 0.05) = 2.55 > 1 -> capped; the other 2 keys share 2.
    pi = inclusion_probabilities([1.0, 0.0, 0.0, 0.0], 3, uniform_share=0.2)
    assert pi.tolist() == pytest.approx([1.0, 2 / 3, 2 / 3, 2 / 3])
    assert inclusion_probabilities([0.0, 0.0], 1).tolist() == [0.5, 0.5]
    assert inclusion_probabilities([0.3, 0.1, 0.2], 3).tolist() == [1.0, 1.0, 1.0]


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=60), st.floats(0.01, 1.0), st.floats(0.05, 1.0),
       st.randoms(use_true_random=False))
def test_probabilities_floor_budget_cap_and_order(u, budget_share, share, random):
    u = np.array(u)
    budget = max(budget_share * len(u), 1e-3)
    pi = inclusion_probabilities(u, budget, uniform_share=share)
    assert math.fsum(pi) == pytest.approx(budget, rel=1e-9)
    assert (pi <= 1.0).all() and (pi >= share * budget / len(u) * (1 - 1e-12)).all()
    order = list(range(len(u)))
    random.shuffle(order)
    assert inclusion_probabilities(u[order], budget, uniform_share=share).tolist() == pi[order].tolist()


def test_probabilities_follow_the_uncertainty():
    pi = inclusion_probabilities([0.1, 0.2, 0.4, 0.4], 2)
    assert pi[0] < pi[1] < pi[2] == pi[3]


def test_probability_errors():
    with pytest.raises(SGIInputError, match=r"'budget' parameter .* must be in \(0, 2\]"):
        inclusion_probabilities([0.1, 0.2], 3)
    with pytest.raises(SGIInputError, match="finite values >= 0"):
        inclusion_probabilities([0.1, -0.2], 1)
    with pytest.raises(SGIInputError, match="uniform_share"):
        inclusion_probabilities([0.1, 0.2], 1, uniform_share=0.0)


# (c) cross-fitting and the plan.


def test_cross_fitted_prediction_ignores_the_units_own_label():
    rng = np.random.default_rng(3)
    y = rng.binomial(1, 0.4, 120).astype(float)
    score, pi, folds = y + rng.normal(0, 0.8, 120), np.full(120, 0.5), np.arange(120) % 5
    y[rng.uniform(size=120) > 0.5] = np.nan
    before = design_cross_fit(score, y, pi, folds)
    flipped = y.copy()
    unit = int(np.flatnonzero(~np.isnan(y))[0])
    flipped[unit] = 1 - flipped[unit]
    after = design_cross_fit(score, flipped, pi, folds)
    assert after[unit] == before[unit]  # its own fold's model never saw it
    assert not np.allclose(after[folds != folds[unit]], before[folds != folds[unit]])


def test_cross_fit_with_one_class_in_training_is_its_weighted_share():
    y = np.array([0.0, 0.0, np.nan, 0.0, np.nan, 0.0])
    assert design_cross_fit(np.arange(6.0), y, np.full(6, 0.5), np.arange(6) % 2).tolist() == [0.0] * 6


def test_cross_fit_errors():
    with pytest.raises(SGIInputError, match="must hold 0 or 1"):
        design_cross_fit([0.1, 0.2], [2.0, 0.0], [1.0, 1.0], [0, 1])
    with pytest.raises(SGIInputError, match="'folds' has 1 values"):
        design_cross_fit([0.1, 0.2], [1.0, 0.0], [1.0, 1.0], [0])


def test_uniform_plan_matches_the_closed_form():
    # Uniform pi = n/N: Var = (var(f) + mean(v) N / n) / N, so n = N mean(v) / (N (h/z)^2 - var(f)).
    rng = np.random.default_rng(0)
    f = rng.uniform(0.1, 0.9, 400)
    v = f * (1 - f)
    h, z = 0.06, 1.959963984540054
    closed = 400 * v.mean() / (400 * (h / z) ** 2 - f.var())
    assert labels_for_half_width(f, v, h, active=False) == pytest.approx(closed, abs=0.02)
    active = labels_for_half_width(f, v, h)
    assert active <= closed
    assert planned_variance(f, v, inclusion_probabilities(np.sqrt(v), active)) <= (h / z) ** 2 * (1 + 1e-6)


def test_unreachable_plan_is_inf():
    assert labels_for_half_width(np.full(10, 0.5), np.full(10, 0.25), 0.01) == math.inf
    with pytest.raises(SGIInputError, match="'half_width' parameter"):
        labels_for_half_width(np.full(10, 0.5), np.full(10, 0.25), 0.0)
