"""The corrected rate: hand-computed cases, an exact-enumeration oracle of its coverage, withholding, errors."""

import math

import numpy as np
import pytest
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.monitoring.prevalence import MIN_YOUDEN, corrected_rate, unit_interval

COUNTS = {"tp": 80, "fn": 20, "tn": 90, "fp": 10}


def test_rogan_gladen_by_hand():
    # Se 0.8, Sp 0.9: (0.3 + 0.9 - 1) / (0.8 + 0.9 - 1) = 0.2 / 0.7.
    res = corrected_rate(30, 100, COUNTS)
    assert res.estimate == pytest.approx(0.2 / 0.7) and res.flag_share == 0.3 and res.youden == pytest.approx(0.7)
    assert res.ci[0] < res.estimate < res.ci[1] and res.withheld == ""
    # A flag share below the false-alarm rate clips to 0; above the sensitivity, to 1.
    assert corrected_rate(5, 100, COUNTS).estimate == 0.0 and corrected_rate(90, 100, COUNTS).estimate == 1.0


def test_the_interval_by_hand_at_the_adjusted_proportions():
    z = stats.norm.ppf(0.975)
    z2 = z * z
    q, se, sp = (30 + z2 / 2) / (100 + z2), (80 + z2 / 2) / (100 + z2), (90 + z2 / 2) / (100 + z2)
    j = se + sp - 1
    centre = (q + sp - 1) / j
    var = (q * (1 - q) / (100 + z2) + centre ** 2 * se * (1 - se) / (100 + z2)
           + (1 - centre) ** 2 * sp * (1 - sp) / (100 + z2)) / j ** 2
    res = corrected_rate(30, 100, COUNTS)
    assert res.ci == pytest.approx((centre - z * math.sqrt(var), centre + z * math.sqrt(var)))


def test_the_interval_widens_with_fewer_held_out_rows_and_is_never_zero_width():
    small = corrected_rate(30, 100, {k: v // 10 for k, v in COUNTS.items()})
    big = corrected_rate(30, 100, COUNTS)
    assert small.ci[1] - small.ci[0] > big.ci[1] - big.ci[0]
    # A perfect held-out score (Se = Sp = 1) still has sampling error.
    perfect = corrected_rate(30, 100, {"tp": 40, "fn": 0, "tn": 40, "fp": 0})
    assert perfect.estimate == pytest.approx(0.3) and perfect.ci[1] - perfect.ci[0] > 0.1


def test_coverage_by_exact_enumeration_over_the_three_binomials():
    # Every outcome of the run's flags and the held-out counts, weighted by its probability: the interval's
    # coverage of the true rate at Se 0.8, Sp 0.85, 30 held-out rows per class and a run of 60 rows.
    se, sp, n_h, n_g, n = 0.8, 0.85, 30, 30, 60
    for rate in (0.25,):
        q = rate * se + (1 - rate) * (1 - sp)
        p_tp, p_tn, p_k = (stats.binom.pmf(np.arange(m + 1), m, p) for m, p in ((n_h, se), (n_g, sp), (n, q)))
        covered = 0.0
        for tp in np.flatnonzero(p_tp > 1e-5):
            for tn in np.flatnonzero(p_tn > 1e-5):
                counts = {"tp": int(tp), "fn": int(n_h - tp), "tn": int(tn), "fp": int(n_g - tn)}
                for k in np.flatnonzero(p_k > 1e-5):
                    ci = corrected_rate(int(k), n, counts).ci
                    if ci[0] <= rate <= ci[1]:
                        covered += p_tp[tp] * p_tn[tn] * p_k[k]
        assert 0.94 <= covered < 1.0, (rate, covered)


def test_withheld_where_the_score_barely_separates_and_without_counts():
    weak = corrected_rate(30, 100, {"tp": 55, "fn": 45, "tn": 55, "fp": 45})
    assert math.isnan(weak.estimate) and math.isnan(weak.ci[0]) and weak.youden_ci[0] <= MIN_YOUDEN
    assert weak.withheld.startswith("sensitivity + specificity - 1 is 0.10") and weak.flag_share == 0.3
    old = corrected_rate(30, 100, None)
    assert "records no held-out counts" in old.withheld and old.flag_share_ci[0] < 0.3 < old.flag_share_ci[1]
    assert old.weight == 0.3  # with no counts the mixture weight is the flag share


def test_errors_name_the_bad_input():
    with pytest.raises(SGIInputError, match="0 <= n_flagged <= n_scored"):
        corrected_rate(5, 3, COUNTS)
    with pytest.raises(SGIInputError, match="exactly tp, fp, fn, tn"):
        corrected_rate(1, 3, {"tp": 1})
    with pytest.raises(SGIInputError, match="whole numbers >= 0"):
        corrected_rate(1, 3, {**COUNTS, "tp": -1})
    with pytest.raises(SGIInputError, match="'confidence' parameter of corrected_rate"):
        corrected_rate(1, 3, COUNTS, confidence=95)


@pytest.mark.parametrize("estimate, low, high, expected", [
    (0.3, 0.2, 0.4, (0.2, 0.4)),          # inside [0, 1]: unchanged
    (0.05, -0.05, 0.15, (0.0, 0.15)),     # crossing 0 by less than h: clipped only
    (0.0, -0.5, -0.25, (0.0, 0.125)),     # wholly below 0: h = 0.125 kept inside
    (0.0, -0.125, 0.0, (0.0, 0.0625)),    # touching 0 from below
    (1.0, 0.875, 1.125, (0.875, 1.0)),    # across 1: the mirror image
    (1.0, 1.25, 1.5, (0.875, 1.0)),       # wholly above 1
    (0.5, -0.25, 1.25, (0.0, 1.0)),       # h > 1/2: everything
    (0.0, 0.125, 0.375, (0.0, 0.375)),    # an adjusted centre past the estimate: the interval holds it
])
def test_unit_interval_keeps_its_half_width_inside_a_bound(estimate, low, high, expected):
    assert unit_interval(estimate, low, high) == pytest.approx(expected)


@pytest.mark.parametrize("estimate, low, high", [(0.0, -0.31, -0.07), (0.02, -0.04, 0.08), (0.6, 0.41, 0.79),
                                                 (1.0, 1.02, 1.3)])
def test_unit_interval_is_symmetric_about_one_half(estimate, low, high):
    mirrored = unit_interval(1.0 - estimate, 1.0 - high, 1.0 - low)
    ci = unit_interval(estimate, low, high)
    assert mirrored == pytest.approx((1.0 - ci[1], 1.0 - ci[0]))


def test_no_corrected_rate_interval_has_zero_width_at_a_bound():
    # No flag at all with a 10% false-alarm rate: the estimate clips to 0 and its whole delta-method
    # interval lies below 0; clipping alone gave [0%, 0%].
    none = corrected_rate(0, 100, COUNTS)
    assert none.estimate == 0.0 and none.ci[0] == 0.0 and none.ci[1] > 0.05
    every = corrected_rate(100, 100, COUNTS)
    assert every.estimate == 1.0 and every.ci[1] == 1.0 and every.ci[0] < 0.95
    for k in range(101):
        ci = corrected_rate(k, 100, COUNTS).ci
        assert ci[1] - ci[0] > 0.05, k


def test_unit_interval_refuses_bounds_out_of_order():
    with pytest.raises(SGIInputError, match=r"unit_interval needs finite bounds low <= high. Got \(0.4, 0.2\)"):
        unit_interval(0.3, 0.4, 0.2)
