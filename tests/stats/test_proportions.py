import json
import math

import numpy as np
import pytest
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.runs.rates import RateDifference, paired_rate_difference, unpaired_rate_difference
from sgi_core.stats.proportions import (
    KeysToDecide,
    keys_to_decide,
    paired_difference_ci,
    proportion_ci,
    unpaired_difference_ci,
)

Z95 = 1.959963984540054


def _paired_arrays(both, base_only, new_only, neither):
    """Two label arrays over matched keys with the given 2x2 table (1 = hallucinated)."""
    base = [1] * both + [1] * base_only + [0] * new_only + [0] * neither
    new = [1] * both + [0] * base_only + [1] * new_only + [0] * neither
    return np.array(base, dtype=float), np.array(new, dtype=float)


# --- Wilson -------------------------------------------------------------------------------------

def test_wilson_hand_computed():
    # 0/10: centre = (z^2/2) / (10 + z^2) = half-width, so the interval is [0, z^2 / (10 + z^2)].
    assert proportion_ci(0, 10) == pytest.approx((0.0, Z95 ** 2 / (10 + Z95 ** 2)))
    assert proportion_ci(0, 10)[1] == pytest.approx(0.2775327, abs=1e-7)
    # 8/10: centre (8 + 1.920729) / 13.841459 = 0.716740; half 1.959964 / 13.841459 * sqrt(1.6 + 0.960365)
    # = 0.141601 * 1.600114 = 0.226578.
    low, high = proportion_ci(8, 10)
    assert (low, high) == pytest.approx((0.716740 - 0.226578, 0.716740 + 0.226578), abs=2e-6)


@pytest.mark.parametrize("successes, n", [(0, 1), (3, 7), (8, 10), (48, 80), (80, 80), (1, 1000)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_and_clopper_pearson_match_their_formulas(successes, n, confidence):
    z = stats.norm.ppf(0.5 + confidence / 2)
    p = successes / n
    centre, half = p + z ** 2 / (2 * n), z * math.sqrt(p * (1 - p) / n + z ** 2 / (4 * n ** 2))
    wilson = ((centre - half) / (1 + z ** 2 / n), (centre + half) / (1 + z ** 2 / n))
    assert proportion_ci(successes, n, confidence=confidence) == pytest.approx(wilson, abs=1e-12)
    alpha = 1 - confidence  # Clopper and Pearson (1934): quantiles of beta distributions
    low = 0.0 if successes == 0 else stats.beta.ppf(alpha / 2, successes, n - successes + 1)
    high = 1.0 if successes == n else stats.beta.ppf(1 - alpha / 2, successes + 1, n - successes)
    assert proportion_ci(successes, n, confidence=confidence, method="exact") == pytest.approx((low, high), abs=1e-10)


def test_wilson_matches_statsmodels():
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    for successes, n in [(0, 5), (17, 23), (56, 70)]:
        expected = proportion.proportion_confint(successes, n, alpha=0.05, method="wilson")
        assert proportion_ci(successes, n) == pytest.approx(expected, abs=1e-12)


def test_wilson_errors_and_empty():
    with pytest.warns(UndefinedStatisticWarning, match="nobs = 0"):
        assert all(math.isnan(x) for x in proportion_ci(0, 0))
    with pytest.raises(SGIInputError, match="count <= nobs"):
        proportion_ci(5, 4)
    with pytest.raises(SGIInputError, match="The 'confidence' parameter of proportion_ci must be a float in"):
        proportion_ci(1, 4, confidence=95)
    with pytest.raises(SGIInputError, match="The 'nobs' parameter of proportion_ci must be an int >= 0"):
        proportion_ci(1, 4.0)
    with pytest.raises(SGIInputError, match="The 'method' parameter of proportion_ci must be one of"):
        proportion_ci(1, 4, method="wald")


# --- Newcombe, independent proportions ---------------------------------------------------------

# Newcombe (1998), Statistics in Medicine 17, 873-890, Table II, method 10 (hybrid score, no
# continuity correction); (x1, n1, x2, n2) -> interval for x1/n1 - x2/n2.
NEWCOMBE_UNPAIRED = [
    ((56, 70, 48, 80), (0.0524, 0.3339)),
    ((9, 10, 3, 10), (0.1705, 0.8090)),
    ((5, 56, 0, 29), (-0.0381, 0.1926)),
    ((0, 10, 0, 20), (-0.1611, 0.2775)),
    ((0, 10, 0, 10), (-0.2775, 0.2775)),
    ((10, 10, 0, 20), (0.6791, 1.0000)),
    ((10, 10, 0, 10), (0.6075, 1.0000)),
]


@pytest.mark.parametrize("counts, expected", NEWCOMBE_UNPAIRED)
def test_unpaired_newcombe_published(counts, expected):
    x_new, n_new, x_base, n_base = counts
    assert unpaired_difference_ci(x_base, n_base, x_new, n_new) == pytest.approx(expected, abs=5e-5)


def test_unpaired_rate_difference_from_labels():
    base = np.r_[np.ones(48), np.zeros(32), [np.nan] * 3]
    new = np.r_[np.ones(56), np.zeros(14)]
    res = unpaired_rate_difference(base, new)
    assert (res.n_base, res.n_new, res.n_keys, res.paired) == (80, 70, 150, False)
    assert res.difference == pytest.approx(0.2)
    assert res.ci == pytest.approx((0.0524, 0.3339), abs=5e-5)
    assert (res.base_only, res.new_only) == (-1, -1)
    assert res.p_value == pytest.approx(stats.fisher_exact([[56, 14], [48, 32]]).pvalue)
    assert "Fisher" in res.method
    swapped = unpaired_rate_difference(new, base)
    assert swapped.difference == pytest.approx(-res.difference)
    assert swapped.ci == pytest.approx((-res.ci[1], -res.ci[0]))


def test_unpaired_empty_run_is_nan_with_warning():
    with pytest.warns(UndefinedStatisticWarning, match="0 labelled rows in base"):
        res = unpaired_rate_difference([np.nan, np.nan], [1, 0, 1])
    assert math.isnan(res.difference) and math.isnan(res.ci[0]) and res.n_new == 3


# --- Newcombe, paired proportions ---------------------------------------------------------------

def test_paired_newcombe_published():
    # Newcombe (1998), Statistics in Medicine 17, 2635-2650, example (a): a=36, b=12, c=2, d=0,
    # difference (b - c) / n = 0.2, method 10 interval 0.0569 to 0.3404. His first variable is "new" here.
    assert paired_difference_ci(36, 2, 12, 0) == pytest.approx((0.0569, 0.3404), abs=5e-5)
    # Fagerland, Lydersen and Laake (2017), Statistical Analysis of Contingency Tables, ch. 8, Cavo et al.
    # table [[59, 6], [16, 80]]: Newcombe square-and-add -0.0621 (-0.1186 to -0.0046). This table has
    # B = 59*80 - 6*16 > n/2, so it also pins the phi correction (without it: -0.1174 to -0.0059).
    assert paired_difference_ci(59, 16, 6, 80) == pytest.approx((-0.1186, -0.0046), abs=5e-5)


def test_paired_newcombe_hand_computed():
    # Table e=12 (both), f=9 (new only), g=2 (base only), h=13 (neither), n=36.
    # p_new = 21/36 = 0.583333, p_base = 14/36 = 0.388889, d = 0.194444.
    # Wilson(21, 36) = (0.422003, 0.728594); Wilson(14, 36) = (0.247849, 0.551355).
    # dl_new = 0.161331, du_new = 0.145261, dl_base = 0.141040, du_base = 0.162467.
    # B = 12*13 - 9*2 = 138 > n/2 = 18, so B -> 120; phi = 120 / sqrt(21*15*14*22) = 120 / 311.480 = 0.385257.
    # L = d - sqrt(0.161331^2 - 2*0.385257*0.161331*0.162467 + 0.162467^2) = 0.194444 - 0.179519 = 0.014925
    # U = d + sqrt(0.145261^2 - 2*0.385257*0.145261*0.141040 + 0.141040^2) = 0.194444 + 0.158768 = 0.353212
    assert paired_difference_ci(12, 2, 9, 13) == pytest.approx((0.014925, 0.353212), abs=1e-6)


def test_paired_rate_difference_from_labels_and_mcnemar_by_hand():
    base, new = _paired_arrays(both=5, base_only=1, new_only=6, neither=8)
    res = paired_rate_difference(base, new)
    assert isinstance(res, RateDifference)
    assert (res.n_keys, res.base_only, res.new_only, res.paired) == (20, 1, 6, True)
    assert (res.rate_base, res.rate_new) == (0.3, 0.55)
    assert res.difference == pytest.approx(0.25)
    assert res.ci == pytest.approx(paired_difference_ci(5, 1, 6, 8))
    # Exact McNemar: 2 * P(X <= 1), X ~ Bin(7, 1/2) = 2 * (1 + 7) / 128 = 0.125.
    assert res.p_value == pytest.approx(0.125)


@pytest.mark.parametrize("table", [(5, 1, 6, 8), (36, 2, 12, 0), (59, 16, 6, 80), (0, 3, 0, 4), (10, 7, 7, 1)])
def test_mcnemar_matches_statsmodels(table):
    contingency = pytest.importorskip("statsmodels.stats.contingency_tables")
    both, base_only, new_only, neither = table
    res = paired_rate_difference(*_paired_arrays(*table))
    expected = contingency.mcnemar([[both, base_only], [new_only, neither]], exact=True).pvalue
    assert res.p_value == pytest.approx(expected, rel=1e-12)


def test_paired_uses_keys_labelled_in_both_and_is_antisymmetric():
    base, new = _paired_arrays(4, 3, 1, 7)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(base))
    base_gaps, new_gaps = np.r_[base[order], np.nan, 1.0], np.r_[new[order], 0.0, np.nan]
    res = paired_rate_difference(base_gaps, new_gaps)
    plain = paired_rate_difference(base, new)
    assert (res.n_keys, res.difference, res.ci, res.p_value) == (15, plain.difference, plain.ci, plain.p_value)
    swapped = paired_rate_difference(new, base)
    assert swapped.difference == pytest.approx(-plain.difference)
    assert swapped.ci == pytest.approx((-plain.ci[1], -plain.ci[0]))
    assert (swapped.base_only, swapped.new_only) == (plain.new_only, plain.base_only)


def test_paired_all_zero_and_all_one():
    upper = proportion_ci(0, 12)[1]
    with pytest.warns(UndefinedStatisticWarning, match="no key is hallucinated in one run only"):
        none = paired_rate_difference(np.zeros(12), np.zeros(12))
    assert none.difference == 0.0 and none.ci == pytest.approx((-upper, upper)) and math.isnan(none.p_value)
    with pytest.warns(UndefinedStatisticWarning, match="McNemar"):
        every = paired_rate_difference(np.ones(12), np.ones(12))
    assert every.difference == 0.0 and every.ci == pytest.approx((-upper, upper))


def test_paired_without_discordant_keys_has_nan_p_only():
    with pytest.warns(UndefinedStatisticWarning, match="McNemar"):
        res = paired_rate_difference(*_paired_arrays(3, 0, 0, 9))
    assert math.isnan(res.p_value) and res.difference == 0.0 and res.ci[0] < 0 < res.ci[1]


def test_paired_no_common_key_is_nan_with_warning():
    with pytest.warns(UndefinedStatisticWarning, match="no key is labelled in both runs"):
        res = paired_rate_difference([1, np.nan], [np.nan, 0])
    assert res.n_keys == 0 and math.isnan(res.difference) and math.isnan(res.ci[1])


def test_input_errors():
    with pytest.raises(SGIInputError, match="'halluc_new' has 3 values but 'halluc_base' has 2"):
        paired_rate_difference([1, 0], [1, 0, 1])
    with pytest.raises(SGIInputError, match=r"'halluc_base' holds values other than 1 \(hallucinated\).*row 2"):
        paired_rate_difference([1, 2, 0], [1, 0, 0])
    with pytest.raises(SGIInputError, match=r"'halluc_new' holds values other than .*rows 1, 3"):
        unpaired_rate_difference([1, 0], [0.5, 0, -1])
    with pytest.raises(SGIInputError, match="must hold numbers"):
        paired_rate_difference(["yes", "no"], [1, 0])
    with pytest.raises(SGIInputError, match="The 'confidence' parameter of paired_rate_difference"):
        paired_rate_difference([1, 0], [1, 0], confidence=1.0)


def test_results_survive_json():
    for res in (paired_rate_difference(*_paired_arrays(5, 1, 6, 8)), unpaired_rate_difference([1, 0], [1, 1, 0])):
        assert RateDifference.from_dict(json.loads(json.dumps(res.to_dict()))) == res


# --- Keys still to label ------------------------------------------------------------------------

def _connor(psi, effect, power=0.8, alpha=0.05):
    za, zb = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(power)
    return (za * math.sqrt(psi) + zb * math.sqrt(psi - effect ** 2)) ** 2 / effect ** 2


def test_keys_to_decide_connor_by_hand():
    # psi = 8/40 = 0.2: (1.959964 * 0.447214 + 0.841621 * sqrt(0.19)) ^ 2 / 0.01
    #   = (0.876523 + 0.366852) ^ 2 / 0.01 = 154.60 -> 155 keys, 115 more.
    res = keys_to_decide(6, 2, 40, effect=0.1, n_left=500)
    assert _connor(0.2, 0.1) == pytest.approx(154.60, abs=0.01)
    assert (res.n_needed, res.n_more, res.capped, res.discordance) == (155, 115, False, 0.2)
    capped = keys_to_decide(6, 2, 40, effect=0.1, n_left=50)
    assert (capped.n_more, capped.capped) == (50, True)
    assert keys_to_decide(6, 2, 400, effect=0.1, n_left=10).n_more == 0


def test_keys_to_decide_exact_power_is_near_target():
    # The exact McNemar test at Connor's n: sum over the discordant count m ~ Bin(n, psi) of the chance
    # that new_only ~ Bin(m, p01 / psi) falls in the two-sided binomial rejection region at 1/2.
    res = keys_to_decide(15, 5, 100, effect=0.1, n_left=10_000)
    p_new_only, p_base_only = 0.15, 0.05
    power = 0.0
    for m in range(1, res.n_needed + 1):
        k = np.arange(m + 1)
        reject = np.minimum(2 * np.minimum(stats.binom.cdf(k, m, 0.5), stats.binom.sf(k - 1, m, 0.5)), 1) <= 0.05
        power += stats.binom.pmf(m, res.n_needed, 0.2) * stats.binom.pmf(k, m, p_new_only / 0.2)[reject].sum()
    assert p_new_only + p_base_only == pytest.approx(res.discordance)
    assert 0.72 < power < 0.85


def test_keys_to_decide_floor_and_undefined():
    # No discordant key seen: psi is raised to the effect (|p10 - p01| <= p10 + p01).
    res = keys_to_decide(0, 0, 40, effect=0.1, n_left=1000)
    assert res.discordance == 0.1 and res.n_needed == math.ceil(_connor(0.1, 0.1))
    with pytest.warns(UndefinedStatisticWarning, match="no key is labelled"):
        empty = keys_to_decide(0, 0, 0, effect=0.1, n_left=10)
    assert (empty.n_needed, empty.n_more) == (-1, -1) and math.isnan(empty.discordance)
    assert KeysToDecide.from_dict(json.loads(json.dumps(empty.to_dict()))) == empty


def test_keys_to_decide_errors():
    with pytest.raises(SGIInputError, match="n_base_only \\+ n_new_only <= n_labelled"):
        keys_to_decide(5, 6, 10, effect=0.1, n_left=5)
    with pytest.raises(SGIInputError, match="The 'effect' parameter of keys_to_decide must be a float in"):
        keys_to_decide(1, 1, 10, effect=0.0, n_left=5)
    with pytest.raises(SGIInputError, match="The 'n_left' parameter of keys_to_decide must be an int >= 0"):
        keys_to_decide(1, 1, 10, effect=0.1, n_left=-1)
