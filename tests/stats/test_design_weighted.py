"""Design-weighted AUROC, precision and recall: hand-computed cases, scikit-learn as oracle, invariances, errors,
and the Poisson bootstrap's coverage under an active design."""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit
from sklearn.metrics import roc_auc_score

from sgi_core.errors import SGIInputError
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.active_inference import inclusion_probabilities
from sgi_core.stats.design_weighted import design_weighted_rates, weighted_auroc


def test_weighted_auroc_by_hand():
    # Weights 2, 1 (grounded 0.9, 0.4) and 1, 2 (hallucinated 0.5, 0.1): wins 2*1 + 2*2 + 1*2 = 8 of 3 * 3.
    assert weighted_auroc([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1], [2, 1, 1, 2]) == pytest.approx(8 / 9)
    # A tie counts one half: grounded 0.5 (weight 3) against hallucinated 0.5 (weight 1) and 0.2 (weight 1).
    assert weighted_auroc([1, 0, 0], [0.5, 0.5, 0.2], [3, 1, 1]) == pytest.approx((3 * 0.5 + 3) / (3 * 2))


def test_weighted_auroc_matches_scikit_learn_with_ties_and_batches():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 60).astype(float)
    s = np.round(rng.normal(y, 1.0), 1)  # rounded: many ties
    weights = rng.uniform(0.1, 5.0, (7, 60))
    batch = weighted_auroc(y, s, weights)
    for row, value in zip(weights, batch):
        assert value == pytest.approx(roc_auc_score(y, s, sample_weight=row), abs=1e-12)
        assert weighted_auroc(y, s, row) == pytest.approx(value, abs=1e-12)


def test_invariances():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 40).astype(float)
    s, w = rng.normal(y, 1.0), rng.uniform(0.5, 3.0, 40)
    base = weighted_auroc(y, s, w)
    assert weighted_auroc(y, np.exp(3 * s), w) == pytest.approx(base)  # a monotone transform
    assert weighted_auroc(y, s, 7.5 * w) == pytest.approx(base)  # the weights' scale
    order = rng.permutation(40)
    assert weighted_auroc(y[order], s[order], w[order]) == pytest.approx(base)
    assert weighted_auroc(y, -s, w) == pytest.approx(1.0 - base)
    # Equal probabilities give the unweighted figures.
    res = design_weighted_rates(y, s, np.full(40, 0.3), 0.2, n_boot=0)
    assert res.auroc.value == pytest.approx(roc_auc_score(y, s))
    flagged, halluc = s < 0.2, y == 0
    assert res.precision.value == pytest.approx((flagged & halluc).sum() / flagged.sum())
    assert res.recall.value == pytest.approx((flagged & halluc).sum() / halluc.sum())
    assert res.effective_grounded == pytest.approx((y == 1).sum())


def test_an_empty_denominator_is_nan_and_one_class_has_no_interval():
    with pytest.warns(UndefinedStatisticWarning, match="at least 2 labelled units of each class"):
        res = design_weighted_rates([1, 1, 1, 0], [0.9, 0.8, 0.7, 0.6], [0.5] * 4, 0.1, n_boot=50)
    assert math.isnan(res.precision.value) and res.recall.value == 0.0 and math.isnan(res.auroc.interval[0])
    assert res.auroc.value == 1.0


def test_a_perfect_separation_keeps_the_width_of_its_effective_size():
    y = np.array([1.0] * 6 + [0.0] * 6)
    res = design_weighted_rates(y, np.arange(12)[::-1], np.full(12, 0.5), 0.0, n_boot=200)
    assert res.auroc.value == 1.0 and res.auroc.interval[0] < 0.8  # the Wilson interval of 6 of 6, not the point 1


def test_the_interval_is_reproducible_from_its_seed():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 50).astype(float)
    s, pi = rng.normal(y, 1.0), rng.uniform(0.1, 1.0, 50)
    one, two = (design_weighted_rates(y, s, pi, 0.3, n_boot=300, seed=9) for _ in range(2))
    assert one == two and one.auroc.interval[0] < one.auroc.value < one.auroc.interval[1]
    assert design_weighted_rates(y, s, pi, 0.3, n_boot=300, seed=10).auroc.interval != one.auroc.interval


@pytest.mark.parametrize("kwargs, match", [
    (dict(y_true=[1, 2], y_score=[0.1, 0.2], pi=[0.5, 0.5]), "'y_true' of design_weighted_rates must be 0 or 1"),
    (dict(y_true=[1, 0], y_score=[0.1, np.nan], pi=[0.5, 0.5]), "'y_score' .* must be finite"),
    (dict(y_true=[1, 0], y_score=[0.1, 0.2], pi=[0.0, 0.5]), r"'pi' .* must be in \(0, 1\]"),
    (dict(y_true=[1, 0], y_score=[0.1], pi=[0.5, 0.5]), "y_score"),
])
def test_errors(kwargs, match):
    with pytest.raises(SGIInputError, match=match):
        design_weighted_rates(threshold=0.5, n_boot=0, **kwargs)


@pytest.mark.statistical
def test_the_poisson_bootstrap_covers_the_population_auroc_under_an_active_design():
    # 300 populations of 1,000 units, AUROC Phi(sqrt(2) 0.733) = 0.85; about 100 drawn where the predictor is unsure.
    strength, covered, widths = 0.733, [], []
    truth = stats.norm.cdf(math.sqrt(2.0) * strength)
    for rep in range(300):
        rng = np.random.default_rng(rep)
        y = (rng.random(1000) >= 0.3).astype(float)
        s = expit(strength * (2 * y - 1) + rng.normal(0, 1, 1000))
        pi = inclusion_probabilities(np.sqrt(s * (1 - s)), 100)
        drawn = rng.random(1000) < pi
        res = design_weighted_rates(y[drawn], s[drawn], pi[drawn], 0.5, n_boot=400, seed=rep)
        covered.append(res.auroc.interval[0] <= truth <= res.auroc.interval[1])
        widths.append(res.auroc.interval[1] - res.auroc.interval[0])
    print(f"coverage {np.mean(covered):.3f}, median width {np.median(widths):.3f}")
    assert np.mean(covered) >= 0.92
