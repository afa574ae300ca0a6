import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from sgi_core.errors import SGIInputError
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.paired import (
    DeLongResult,
    McNemarResult,
    delong_test,
    disagreements,
    mcnemar_test,
)


def _correlated_scores(n=400, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n).astype(float)
    shared = rng.normal(0.0, 1.0, n)
    a = np.round(0.9 * y + shared + rng.normal(0.0, 0.5, n), 1)  # rounded: ties within and across classes
    b = np.round(0.5 * y + shared + rng.normal(0.0, 0.5, n), 1)
    return y, a, b


def _delong_1988_brute_force(y, scores):
    """Structural components straight from DeLong, DeLong & Clarke-Pearson (1988), O(m n) per score."""
    pos, neg = y == 1, y == 0
    m, n = pos.sum(), neg.sum()
    v10, v01, aucs = [], [], []
    for s in scores:
        x, z = s[pos], s[neg]
        psi = (x[:, None] > z[None, :]) + 0.5 * (x[:, None] == z[None, :])
        aucs.append(psi.sum() / (m * n))
        v10.append(psi.mean(axis=1))
        v01.append(psi.mean(axis=0))
    k = len(scores)
    s10 = np.array([[np.sum((v10[r] - aucs[r]) * (v10[t] - aucs[t])) / (m - 1) for t in range(k)] for r in range(k)])
    s01 = np.array([[np.sum((v01[r] - aucs[r]) * (v01[t] - aucs[t])) / (n - 1) for t in range(k)] for r in range(k)])
    cov = s10 / m + s01 / n
    var = cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]
    return aucs, math.sqrt(var)


def test_delong_matches_brute_force_structural_components():
    y, a, b = _correlated_scores()
    res = delong_test(y, a, b)
    (auc_a, auc_b), se = _delong_1988_brute_force(y, [a, b])
    assert res.auroc_a == pytest.approx(auc_a, abs=1e-12) and res.auroc_b == pytest.approx(auc_b, abs=1e-12)
    assert res.auroc_a == pytest.approx(roc_auc_score(y, a), abs=1e-12)
    assert res.se == pytest.approx(se, rel=1e-10)
    assert res.z == pytest.approx((auc_a - auc_b) / se, rel=1e-10)
    assert res.p_value == pytest.approx(2 * stats.norm.sf(abs(auc_a - auc_b) / se), rel=1e-10)
    half = 1.959963984540054 * se
    assert res.ci == pytest.approx((auc_a - auc_b - half, auc_a - auc_b + half), rel=1e-9)


@pytest.mark.statistical
def test_delong_standard_error_agrees_with_a_paired_bootstrap():
    y, a, b = _correlated_scores(n=500, seed=1)
    res = delong_test(y, a, b)
    rng = np.random.default_rng(2)
    by_class = [np.flatnonzero(y == 1), np.flatnonzero(y == 0)]
    diffs = []
    for _ in range(1000):
        rows = np.concatenate([rng.choice(idx, len(idx)) for idx in by_class])  # same rows for both scores
        diffs.append(roc_auc_score(y[rows], a[rows]) - roc_auc_score(y[rows], b[rows]))
    assert res.se == pytest.approx(np.std(diffs, ddof=1), rel=0.1)
    assert res.difference == pytest.approx(np.mean(diffs), abs=0.01)


def test_delong_is_antisymmetric_and_rank_invariant():
    y, a, b = _correlated_scores(seed=3)
    ab, ba = delong_test(y, a, b), delong_test(y, b, a)
    assert ba.difference == pytest.approx(-ab.difference) and ba.p_value == pytest.approx(ab.p_value)
    monotone = delong_test(y, np.exp(a), b ** 3)
    assert monotone.z == pytest.approx(ab.z, rel=1e-12)


def test_delong_undefined_cases_warn():
    y, a, _ = _correlated_scores(n=50)
    with pytest.warns(UndefinedStatisticWarning, match="zero variance"):
        res = delong_test(y, a, a)
    assert res.difference == 0.0 and math.isnan(res.p_value)
    with pytest.warns(UndefinedStatisticWarning, match="at least 2 rows of each class"):
        res = delong_test([1, 0, 0], [0.3, 0.2, 0.1], [0.1, 0.2, 0.3])
    assert math.isnan(res.auroc_a)


def test_delong_leaves_out_unlabelled_and_unscored_rows_and_round_trips():
    y, a, b = _correlated_scores(n=60, seed=4)
    y2, a2 = np.append(y, [np.nan, 1.0]), np.append(a, [0.5, np.nan])
    res = delong_test(y2, a2, np.append(b, [0.1, 0.2]))
    assert res == dataclasses.replace(delong_test(y, a, b), n_excluded=2)
    assert DeLongResult.from_dict(json.loads(json.dumps(res.to_dict()))) == res


def _mcnemar_rows():
    """20 both right, 10 only a right, 3 only b right, 5 both wrong (thresholds 0.5)."""
    right_a = [True] * 20 + [True] * 10 + [False] * 3 + [False] * 5
    right_b = [True] * 20 + [False] * 10 + [True] * 3 + [False] * 5
    y = np.array([1.0, 0.0] * 19)
    flagged_if_right = y == 0
    a = np.where(np.array(right_a) == flagged_if_right, 0.2, 0.8)
    b = np.where(np.array(right_b) == flagged_if_right, 0.2, 0.8)
    return y, a, b


def test_mcnemar_exact_and_chi2_against_the_hand_computed_table():
    y, a, b = _mcnemar_rows()
    exact = mcnemar_test(y, a, b, 0.5, 0.5)
    assert (exact.both_right, exact.a_only_right, exact.b_only_right, exact.both_wrong) == (20, 10, 3, 5)
    # Two-sided binomial: 2 * P(X >= 10), X ~ Bin(13, 1/2) = 2 * (286 + 78 + 13 + 1) / 2**13.
    assert exact.p_value == pytest.approx(756 / 8192, rel=1e-12)
    assert exact.accuracy_a == pytest.approx(30 / 38) and exact.accuracy_b == pytest.approx(23 / 38)
    chi2 = mcnemar_test(y, a, b, 0.5, 0.5, exact=False)
    assert chi2.statistic == pytest.approx(36 / 13)  # (|10 - 3| - 1)**2 / 13
    assert chi2.p_value == pytest.approx(2 * stats.norm.sf(6 / math.sqrt(13)), rel=1e-12)  # chi2(1) = z**2
    assert McNemarResult.from_dict(json.loads(json.dumps(chi2.to_dict()))) == chi2


def test_mcnemar_no_discordant_rows_and_bad_threshold():
    with pytest.warns(UndefinedStatisticWarning, match="no row is decided differently"):
        res = mcnemar_test([1, 0], [0.9, 0.1], [0.8, 0.2], 0.5, 0.5)
    assert math.isnan(res.p_value)
    with pytest.raises(SGIInputError, match="The 'threshold_b' parameter of mcnemar_test must be a finite number"):
        mcnemar_test([1, 0], [0.9, 0.1], [0.8, 0.2], 0.5, float("nan"))


def test_disagreements_rank_rows_by_rank_gap_from_a_frame():
    frame = pd.DataFrame({"sgi": [1.2, 0.8, 1.0, np.nan, 1.4], "judge": [0.9, 0.95, 0.1, 0.5, 0.3]})
    res = disagreements(frame, "sgi", "judge", n=3)
    # Rows 0, 1, 2, 4 scored by both; ranks sgi 3,1,2,4 / 4 and judge 3,4,1,2 / 4.
    assert res.positions == (1, 4, 2)
    assert res.gap == pytest.approx((-0.75, 0.5, 0.25))
    assert res.rank_a == pytest.approx((0.25, 1.0, 0.5))
    scale_free = disagreements(None, np.log(frame["sgi"]), frame["judge"] * 100, n=3)
    assert scale_free.positions == res.positions


def test_disagreements_errors():
    frame = pd.DataFrame({"sgi": [1.0, 2.0]})
    with pytest.raises(SGIInputError, match="column 'judge' is not in the table"):
        disagreements(frame, "sgi", "judge")
    with pytest.raises(SGIInputError, match="The 'n' parameter of disagreements must be an int >= 1"):
        disagreements(None, [1, 2], [2, 1], n=0)
    with pytest.raises(SGIInputError, match="'score_b' has 1 values but the labels have 2"):
        disagreements(None, [1, 2], [2])
