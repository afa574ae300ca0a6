import json
import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from sgi_core.errors import SGIInputError
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.effect_size import cohens_d
from sgi_core.stats.length_matched import (
    LengthMatchedResult,
    _weighted_auroc_of_levels,
    length_matched_auroc,
    length_matching_weights,
)


def _length_confounded(n=4000, seed=0):
    """Grounded answers short, hallucinated long, both classes at every length 1..10."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n).astype(float)
    p_short = np.linspace(0.19, 0.01, 10)
    p_long = p_short[::-1]
    length = np.where(y == 1, rng.choice(np.arange(1, 11), n, p=p_short / p_short.sum()),
                      rng.choice(np.arange(1, 11), n, p=p_long / p_long.sum())).astype(float)
    return y, length, rng


def _brute_force_weighted_auroc(labels, scores, weights):
    pos, neg = labels == 1, labels == 0
    sp, wp, sn, wn = scores[pos], weights[pos], scores[neg], weights[neg]
    wins = (sp[:, None] > sn[None, :]) + 0.5 * (sp[:, None] == sn[None, :])
    return float(np.sum(wp[:, None] * wn[None, :] * wins) / (wp.sum() * wn.sum()))


def test_score_that_is_the_length_falls_to_chance_once_matched():
    y, length, _ = _length_confounded()
    score = -length  # shorter = grounded: a perfect-looking length detector
    res = length_matched_auroc(y, score, length, n_bins=50, n_boot=0)
    assert res.plain_auroc > 0.8
    # One bin per distinct length: inside a bin every score ties, across bins the matched
    # distributions are the same, so the weighted Mann-Whitney count is exactly one half.
    assert res.n_bins == 10 and res.n_bins_dropped == 0 and res.n_dropped == 0
    assert res.auroc == pytest.approx(0.5, abs=1e-12)
    assert res.cohens_d == pytest.approx(0.0, abs=1e-12)


def test_continuous_length_score_is_near_chance_with_fine_bins():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 6000).astype(float)
    length = rng.lognormal(np.where(y == 1, 3.0, 3.6), 0.5)
    res = length_matched_auroc(y, -length, length, n_bins=30, n_boot=0)
    assert res.plain_auroc > 0.75
    assert abs(res.auroc - 0.5) < 0.03


def test_score_independent_of_length_keeps_its_auroc():
    y, length, rng = _length_confounded(seed=2)
    score = y + rng.normal(0.0, 1.0, len(y))
    res = length_matched_auroc(y, score, length, n_bins=50, n_boot=200, seed=3)
    assert res.auroc == pytest.approx(res.plain_auroc, abs=0.03)
    assert res.auroc_ci[0] < res.auroc < res.auroc_ci[1]
    assert res.cohens_d == pytest.approx(1.0, abs=0.1)  # unit shift over unit noise


def test_weighted_auroc_matches_brute_force_pair_count():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 300).astype(float)
    length = rng.integers(1, 30, 300).astype(float) + 10 * y
    score = np.round(rng.normal(y, 1.0), 1)  # rounded: ties across classes
    weights = length_matching_weights(y, length, n_bins=5)
    used = weights > 0
    res = length_matched_auroc(y, score, length, n_bins=5, n_boot=0)
    assert res.auroc == pytest.approx(_brute_force_weighted_auroc(y[used], score[used], weights[used]), abs=1e-12)


def test_linear_time_weighted_auroc_equals_sklearn():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 2, 500).astype(float)
    levels = rng.integers(0, 40, 500)
    weights = rng.integers(0, 4, 500) * rng.random(500)
    expected = roc_auc_score(labels, levels, sample_weight=weights)
    assert _weighted_auroc_of_levels(levels, labels, weights, 40) == pytest.approx(expected, abs=1e-12)


def test_weights_equalise_the_bin_distributions():
    y, length, _ = _length_confounded(n=1000, seed=6)
    w = length_matching_weights(y, length, n_bins=50)
    for cls in (0.0, 1.0):
        assert w[y == cls].sum() == pytest.approx((y == cls).sum())
    share = {cls: np.bincount(length[y == cls].astype(int), weights=w[y == cls], minlength=11) / (y == cls).sum()
             for cls in (0.0, 1.0)}
    np.testing.assert_allclose(share[0.0], share[1.0], atol=1e-12)


def test_one_class_bins_are_dropped_and_counted():
    # Lengths 1 (grounded only), 2 (both), 3 (hallucinated only); three bins.
    y = [1, 1, 1, 0, 0, 0, 1, 0]
    length = [1, 1, 2, 2, 3, 3, 2, 3]
    score = [0.9, 0.8, 0.7, 0.1, 0.2, 0.3, 0.6, 0.4]
    res = length_matched_auroc(y, score, length, n_bins=3, n_boot=0)
    assert (res.n_bins, res.n_bins_dropped, res.n_used, res.n_dropped) == (3, 2, 3, 5)
    assert res.auroc == 1.0  # grounded 0.7, 0.6 against hallucinated 0.1 in the shared bin
    w = length_matching_weights(y, length, n_bins=3)
    # One kept bin: each class's weights sum to its row count there, so every kept weight is 1.
    np.testing.assert_allclose(w, [0, 0, 1, 1, 0, 0, 1, 0])


def test_constant_weights_reproduce_unweighted_cohens_d():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 200).astype(float)
    score = rng.normal(y, 1.0)
    res = length_matched_auroc(y, score, np.ones(200), n_boot=0)  # one bin: every weight is 1
    assert res.n_bins == 1
    assert res.cohens_d == pytest.approx(cohens_d(score[y == 1], score[y == 0]), abs=1e-12)
    assert res.auroc == pytest.approx(res.plain_auroc, abs=1e-12)


def test_monotone_transform_leaves_matched_auroc_unchanged_and_seed_repeats():
    y, length, rng = _length_confounded(n=600, seed=8)
    score = rng.normal(y, 1.0)
    a = length_matched_auroc(y, score, length, n_boot=100, seed=9)
    b = length_matched_auroc(y, np.exp(score), length, n_boot=100, seed=9)
    assert a.auroc == pytest.approx(b.auroc, abs=1e-12)
    assert a.auroc_ci == pytest.approx(b.auroc_ci, abs=1e-12)
    assert length_matched_auroc(y, score, length, n_boot=100, seed=9) == a


def test_nan_rows_are_excluded_and_result_round_trips_json():
    y = [1, 0, 1, 0, float("nan"), 1, 0]
    score = [0.9, 0.1, 0.8, float("nan"), 0.5, 0.7, 0.3]
    length = [3, 3, 4, 4, 4, float("nan"), 4]
    # Four usable rows: most resamples lose a class in the shared bin, and say so.
    with pytest.warns(UndefinedStatisticWarning, match=r"undefined in \d+ of 50 bootstrap resamples"):
        res = length_matched_auroc(y, score, length, n_bins=2, n_boot=50)
    assert res.n_excluded == 3
    back = LengthMatchedResult.from_dict(json.loads(json.dumps(res.to_dict())))
    assert back.auroc == res.auroc and back.n_bins == res.n_bins


def test_undefined_cases_warn_and_return_nan():
    with pytest.warns(UndefinedStatisticWarning, match="needs both classes"):
        res = length_matched_auroc([1, 1, 1], [0.1, 0.2, 0.3], [1, 2, 3], n_boot=0)
    assert math.isnan(res.auroc) and math.isnan(res.plain_auroc)
    with pytest.warns(UndefinedStatisticWarning, match="no length bin holds both classes"):
        res = length_matched_auroc([1, 1, 0, 0], [0.9, 0.8, 0.1, 0.2], [1, 1, 9, 9], n_bins=2, n_boot=0)
    assert math.isnan(res.auroc) and res.plain_auroc == 1.0 and res.n_dropped == 4


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_bins": 0}, "The 'n_bins' parameter of length_matched_auroc must be an int >= 1"),
        ({"n_boot": -1}, "The 'n_boot' parameter of length_matched_auroc must be an int >= 0"),
        ({"confidence": 1.5}, "The 'confidence' parameter of length_matched_auroc must be a float in"),
    ],
)
def test_bad_parameters_raise(kwargs, message):
    with pytest.raises(SGIInputError, match=message):
        length_matched_auroc([1, 0], [0.5, 0.4], [1, 2], **kwargs)


def test_bad_length_raises():
    with pytest.raises(SGIInputError, match="'length' holds infinite values"):
        length_matched_auroc([1, 0], [0.5, 0.4], [1, float("inf")])
    with pytest.raises(SGIInputError, match="'length' has 3 values but the labels have 2"):
        length_matched_auroc([1, 0], [0.5, 0.4], [1, 2, 3])
