"""The length-matched AUROC's and d's delta-method intervals: exact influences, the bootstrap, the switch."""

import math

import numpy as np
import pytest

from sgi_core.stats import bootstrap
from sgi_core.stats import length_matched as lm
from sgi_core.stats.length_matched import LengthMatchedResult, length_matched_auroc
from sgi_core.stats.length_matched_variance import length_matched_variances


def confounded(seed: int, n: int, *, ties: bool = False, one_class_ends: bool = False):
    """Labels, scores and lengths where length carries part of the label, as in HaluEval."""
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < 0.45).astype(float)
    lengths = rng.gamma(3.0, 30.0, n) * (1.0 + 0.8 * labels)
    if one_class_ends:
        # The longest answers are all grounded and the shortest all hallucinated: those bins are dropped.
        lengths = np.where((labels == 1) & (rng.random(n) < 0.4), 10_000 + rng.random(n), lengths)
        lengths = np.where((labels == 0) & (rng.random(n) < 0.3), rng.random(n), lengths)
    scores = 0.5 * labels + 0.003 * lengths + rng.standard_t(5, n)
    if ties:
        scores = np.round(scores * 2) / 2
    return labels, scores, lengths


def statistics_at(labels, scores, bins, n_bins, counts):
    """The length-matched AUROC and d with row multiplicities ``counts``, computed as the bootstrap does."""
    weights = lm._bin_weights(labels, bins, counts, n_bins)
    levels = np.unique(scores, return_inverse=True)[1]
    used = weights > 0
    return (lm._weighted_auroc_of_levels(levels, labels, weights, int(levels.max()) + 1),
            lm._weighted_d(scores[used], labels[used], weights[used]))


def finite_difference_variances(labels, scores, bins, n_bins, step=1e-6):
    """Sum over classes of mean(phi**2) / N_k, each phi_k(i) the derivative as row i gains mass in its class."""
    totals = np.zeros(2)
    for cls in (1.0, 0.0):
        members = np.flatnonzero(labels == cls)
        phis = []
        for row in members:
            moved = []
            for eps in (step, -step):
                counts = np.ones(len(labels))
                counts[members] = 1.0 - eps
                counts[row] += eps * len(members)
                moved.append(statistics_at(labels, scores, bins, n_bins, counts))
            phis.append((np.array(moved[0]) - np.array(moved[1])) / (2 * step))
        totals += np.mean(np.square(phis), axis=0) / len(members)
    return totals


@pytest.mark.parametrize("ties, one_class_ends", [(False, False), (True, False), (False, True), (True, True)])
def test_variances_equal_the_exact_influences_of_the_statistic(ties, one_class_ends):
    labels, scores, lengths = confounded(5, 400, ties=ties, one_class_ends=one_class_ends)
    labels, scores, bins, _, _ = lm._prepare(labels, scores, lengths, 10)
    n_bins = int(bins.max()) + 1
    if one_class_ends:
        assert length_matched_auroc(labels, scores, lengths, n_boot=0).n_bins_dropped >= 2
    var_auroc, var_d = length_matched_variances(labels, scores, bins, n_bins)
    oracle_auroc, oracle_d = finite_difference_variances(labels, scores, bins, n_bins)
    assert var_auroc == pytest.approx(oracle_auroc, rel=1e-5)
    # d's own ddof=1 and (N - 2) factors move its influences by O(1/N); the closed form leaves them out.
    assert var_d == pytest.approx(oracle_d, rel=0.01)


@pytest.mark.parametrize("n, one_class_ends, n_boot", [(12_000, False, 3000), (60_000, True, 1500)])
def test_delta_method_intervals_agree_with_the_bootstrap(n, one_class_ends, n_boot):
    # With one-class ends the bin next to them holds few rows of one class, whose weights are large: the
    # first-order variance is close only once that cell has tens of rows (5 rows at 12,000: 6% short in SD).
    labels, scores, lengths = confounded(7, n, one_class_ends=one_class_ends)
    boot = length_matched_auroc(labels, scores, lengths, n_boot=n_boot, ci_method="bootstrap")
    delta = length_matched_auroc(labels, scores, lengths, ci_method="asymptotic")
    assert (delta.auroc, delta.cohens_d) == (boot.auroc, boot.cohens_d)
    # Widths of 0.015 to 0.025 (AUROC) and 0.04 to 0.09 (d); the resamples put under 0.001 of noise on each end.
    np.testing.assert_allclose(delta.auroc_ci, boot.auroc_ci, atol=0.0015)
    np.testing.assert_allclose(delta.cohens_d_ci, boot.cohens_d_ci, atol=0.005)
    assert (delta.ci_method, delta.n_boot, boot.ci_method, boot.n_boot) == (
        "delta method", 0, "percentile bootstrap", n_boot)


def test_auto_switches_above_the_row_limit_and_the_result_says_so(monkeypatch):
    labels, scores, lengths = confounded(2, 300)
    monkeypatch.setattr(bootstrap, "BOOTSTRAP_MAX_ROWS", 300)
    small = length_matched_auroc(labels, scores, lengths, n_boot=50)
    assert (small.ci_method, small.n_boot) == ("percentile bootstrap", 50)
    monkeypatch.setattr(bootstrap, "BOOTSTRAP_MAX_ROWS", 299)
    big = length_matched_auroc(labels, scores, lengths, n_boot=50)
    assert (big.ci_method, big.n_boot) == ("delta method", 0)
    assert big.to_dict() == length_matched_auroc(labels, scores, lengths, ci_method="asymptotic").to_dict()
    assert LengthMatchedResult.from_dict(big.to_dict()) == big
    none = length_matched_auroc(labels, scores, lengths, n_boot=0, ci_method="bootstrap")
    assert (none.ci_method, none.n_boot) == ("none", 0) and all(map(math.isnan, none.auroc_ci))


def test_delta_method_interval_holds_its_point_and_stays_in_the_unit_interval():
    labels, scores, lengths = confounded(3, 2_000)
    res = length_matched_auroc(labels, scores, lengths, ci_method="asymptotic")
    assert res.auroc_ci[0] < res.auroc < res.auroc_ci[1] <= 1.0
    assert res.cohens_d_ci[0] < res.cohens_d < res.cohens_d_ci[1]
    # A monotone transform of the score leaves the AUROC and its variance alone.
    again = length_matched_auroc(labels, np.exp(scores), lengths, ci_method="asymptotic")
    assert again.auroc_ci == pytest.approx(res.auroc_ci)
