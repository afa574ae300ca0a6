"""Cohen's kappa and its interval against independent computations; the labels-needed estimate against simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from sgi_core.errors import SGIInputError
from sgi_core.evaluation.labels_needed import labels_needed
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.kappa import cohens_kappa, kappa_variance


def test_kappa_of_a_hand_computed_table():
    # 50 rows: A grounded 25 (B: 20 grounded, 5 hallucinated), A hallucinated 25 (B: 10, 15).
    # p_o = 35/50 = 0.7; p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4.
    a = np.r_[np.ones(25), np.zeros(25)]
    b = np.r_[np.ones(20), np.zeros(5), np.ones(10), np.zeros(15)]
    result = cohens_kappa(a, b)
    assert result.kappa == pytest.approx(0.4)
    assert (result.observed_agreement, result.chance_agreement) == pytest.approx((0.7, 0.5))
    assert (result.n, result.n_disagree) == (50, 15)
    assert result.disagree_rows == tuple(range(20, 35))


def fce_variance_by_hand(table: np.ndarray) -> float:
    """Fleiss, Cohen & Everitt (1969), eq. 13, written out element by element for a 2 x 2 table."""
    n = table.sum()
    p = table / n
    r = p.sum(axis=1)
    c = p.sum(axis=0)
    po = p[0, 0] + p[1, 1]
    pe = r[0] * c[0] + r[1] * c[1]
    k = (po - pe) / (1 - pe)
    total = 0.0
    for i in range(2):
        total += p[i, i] * (1 - (r[i] + c[i]) * (1 - k)) ** 2
    for i in range(2):
        for j in range(2):
            if i != j:
                total += (1 - k) ** 2 * p[i, j] * (c[i] + r[j]) ** 2
    total -= (k - pe * (1 - k)) ** 2
    return total / (n * (1 - pe) ** 2)


@pytest.mark.parametrize("table", [[[20, 5], [10, 15]], [[40, 3], [9, 48]], [[7, 12], [4, 30]]])
def test_kappa_variance_matches_the_formula_written_out(table):
    table = np.array(table, dtype=float)
    assert kappa_variance(table)[2] == pytest.approx(fce_variance_by_hand(table), rel=1e-12)


def test_kappa_interval_matches_a_bootstrap_of_sklearn_kappa():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(5)
    truth = rng.integers(0, 2, 400).astype(float)
    a = np.where(rng.random(400) < 0.85, truth, 1 - truth)
    b = np.where(rng.random(400) < 0.8, truth, 1 - truth)
    result = cohens_kappa(a, b)
    assert result.kappa == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    draws = rng.integers(0, 400, size=(3000, 400))
    boot = np.array([cohen_kappa_score(a[i], b[i]) for i in draws])
    z = stats.norm.ppf(0.975)
    half = (result.kappa_ci[1] - result.kappa_ci[0]) / 2
    assert half == pytest.approx(z * boot.std(), rel=0.06)


def test_kappa_leaves_out_unrated_rows_and_is_nan_when_undefined():
    result = cohens_kappa([1, 0, np.nan, 1], [1, 0, 1, np.nan])
    assert (result.n, result.n_excluded) == (2, 2)
    with pytest.warns(UndefinedStatisticWarning, match="every row the same label"):
        same = cohens_kappa([1, 1, 1], [1, 1, 1])
    assert math.isnan(same.kappa) and same.observed_agreement == 1.0
    with pytest.warns(UndefinedStatisticWarning, match="at least 2 rows rated by both; got 1"):
        assert math.isnan(cohens_kappa([1, np.nan], [0, 1]).kappa)
    with pytest.raises(SGIInputError, match="two label arrays of one length"):
        cohens_kappa([1, 0], [1])


def simulate_half_width(n_rows: int, share: float, shift: float, rng, repeats: int = 600) -> float:
    """Half of the central 95% range of the AUROC over repeated samples of ``n_rows`` rows."""
    m = int(round(n_rows * share))
    aurocs = []
    for _ in range(repeats):
        grounded, hallucinated = rng.normal(shift, 1.0, m), rng.normal(0.0, 1.0, n_rows - m)
        labels = np.r_[np.ones(m), np.zeros(n_rows - m)]
        aurocs.append(roc_auc_score(labels, np.r_[grounded, hallucinated]))
    low, high = np.percentile(aurocs, [2.5, 97.5])
    return (high - low) / 2


@pytest.mark.parametrize("share, shift", [(0.5, 0.8), (0.3, 1.2)])
def test_labels_needed_reaches_the_target_half_width_in_simulation(share, shift):
    rng = np.random.default_rng(11)
    n_first = 300
    m = int(n_first * share)
    y = np.r_[np.ones(m), np.zeros(n_first - m)]
    score = np.r_[rng.normal(shift, 1.0, m), rng.normal(0.0, 1.0, n_first - m)]
    estimate = labels_needed(y, score, target_half_width=0.03)
    assert estimate.n_needed > n_first and estimate.n_more == estimate.n_needed - n_first
    # The estimate's own half-width on the first labels agrees with simulation at that size ...
    assert estimate.half_width == pytest.approx(simulate_half_width(n_first, share, shift, rng), rel=0.15)
    # ... and simulating samples of the size it asks for gives about the target half-width.
    assert simulate_half_width(estimate.n_needed, share, shift, rng) == pytest.approx(0.03, rel=0.15)


def test_labels_needed_is_undefined_with_too_few_labels():
    with pytest.warns(UndefinedStatisticWarning, match="2 labelled rows of each class; got 1 grounded"):
        result = labels_needed([1, 0, 0], [0.3, 0.2, 0.1])
    assert (result.n_needed, result.n_more) == (-1, -1)
    with pytest.raises(SGIInputError, match="'target_half_width' parameter of labels_needed must be a float in"):
        labels_needed([1, 0], [0.3, 0.2], target_half_width=0.0)
