"""The betting confidence sequence: pinned to the reference implementation, time-uniform coverage, optional stopping."""

import math

import numpy as np
import pytest

from benchmarks.optional_stopping import stopping_errors
from sgi_core.errors import SGIInputError
from sgi_core.stats.confidence_sequence import betting_confidence_sequence, sequential_mean

# The reference values below are confseq 0.0.11's `confseq.betting.hedged_cs(x, alpha=0.05, breaks=1000)`
# (running intersection on, its default), https://github.com/gostevehoward/confseq, src/confseq/betting.py.
X1 = np.array([0.5, 1.0, 0.5, 0.5, 0.0, 0.5, 1.0, 1.0, 0.5, 0.5, 1.0, 0.5, 0.5, 1.0, 0.5, 0.5, 1.0, 0.5, 0.5, 1.0])
X1_LOW = [0.0, 0.0, 0.102, 0.148, 0.148, 0.148, 0.2, 0.249, 0.267, 0.283, 0.32, 0.331, 0.34, 0.369, 0.376, 0.382,
          0.406, 0.41, 0.414, 0.434]
X1_HIGH = [1.0, 1.0, 1.0, 1.0, 0.907, 0.857, 0.857, 0.857, 0.857, 0.848, 0.848, 0.844, 0.832, 0.832, 0.829, 0.819,
           0.819, 0.817, 0.809, 0.809]
X2 = [0.5, 1.0, 0.5, 0.5, 0.5, 1.0, 0.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1.0, 0.5, 0.5, 1.0, 0.5, 0.5,
      0.5, 0.0, 0.0, 0.5, 0.5, 1.0, 0.5, 0.5, 0.5, 0.5, 0.0, 0.5, 0.5, 0.5, 0.5, 0.0, 1.0, 0.5, 0.5, 1.0, 0.5, 1.0,
      0.5, 0.5, 0.0, 0.5, 0.5, 1.0, 0.5, 0.5, 0.0, 0.5, 0.5, 0.5, 1.0, 0.5, 1.0, 0.5]
X2_AT = [9, 19, 39, 59]
X2_LOW = [0.283, 0.402, 0.413, 0.434]
X2_HIGH = [0.856, 0.76, 0.656, 0.642]
# Without replacement: `hedged_cs(x, alpha=0.05, breaks=1000, N=N)` of the same package, run from its source
# (commit 70b1ef3 of src/confseq/betting.py; its compiled part does not build here, the betting code is pure Python).
X2_WOR = {80: ([0.3, 0.425, 0.44, 0.477], [0.845, 0.743, 0.634, 0.606]),
          60: ([0.306, 0.434, 0.455, 0.5416666666666666], [0.841, 0.737, 0.624, 0.5416666666666667])}


def test_matches_the_reference_implementation():
    low, high = betting_confidence_sequence(X1)
    assert low.tolist() == pytest.approx(X1_LOW, abs=1e-9)
    assert high.tolist() == pytest.approx(X1_HIGH, abs=1e-9)
    low, high = betting_confidence_sequence(X2)
    assert low[X2_AT].tolist() == pytest.approx(X2_LOW, abs=1e-9)
    assert high[X2_AT].tolist() == pytest.approx(X2_HIGH, abs=1e-9)


@pytest.mark.parametrize("population", [80, 60])
def test_without_replacement_matches_the_reference_implementation(population):
    low, high = betting_confidence_sequence(X2, population=population)
    assert low[X2_AT].tolist() == pytest.approx(X2_WOR[population][0], abs=1e-9)
    assert high[X2_AT].tolist() == pytest.approx(X2_WOR[population][1], abs=1e-9)


def test_a_fully_drawn_population_gives_its_mean_and_draws_narrow_it_faster():
    low, high = betting_confidence_sequence(X2, population=len(X2))
    assert low[-1] == pytest.approx(np.mean(X2)) and high[-1] == pytest.approx(np.mean(X2))
    wr_low, wr_high = betting_confidence_sequence(X2)
    assert np.all(high - low <= wr_high - wr_low + 1e-12)
    assert (high - low)[39] < 0.9 * (wr_high - wr_low)[39]


def test_the_logical_bounds_hold_without_replacement():
    # 10 ones drawn of a population of 12: the mean is at least 10/12 whatever the bets say.
    low, high = betting_confidence_sequence(np.ones(10), population=12)
    assert low[-1] >= 10 / 12 - 1e-12 and high[-1] == 1.0


@pytest.mark.statistical
def test_time_uniform_coverage_without_replacement_by_simulation():
    # 300 random orders of one population of 150 paired differences (30% discordant): the sequence must miss the
    # population's mean at some time in at most ~5% of them.
    rng = np.random.default_rng(11)
    population = np.concatenate([np.ones(27), -np.ones(18), np.zeros(105)])
    mean = population.mean()
    misses = 0
    for _ in range(300):
        low, high = betting_confidence_sequence(rng.permutation(population), lower=-1.0, upper=1.0, breaks=400,
                                                population=len(population))
        misses += bool(np.any((low > mean + 1e-12) | (high < mean - 1e-12)))
    assert misses / 300 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 300)


@pytest.mark.statistical
def test_on_the_bundled_runs_the_finite_sequence_decides_the_change_the_other_misses():
    from benchmarks.finite_population_sequence import measure

    res = measure(orders=120, seed=3)
    finite, infinite = res["without_replacement"], res["with_replacement"]
    assert res["true_difference"] == pytest.approx(-0.14)
    assert finite["decided"] >= 0.95 and infinite["decided"] <= 0.5
    assert finite["width_80"] < 0.85 * infinite["width_80"]
    assert finite["wrong_stops_null"] <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 120)


@pytest.mark.statistical
def test_the_typical_unchanged_sequence_plans_about_the_median_order():
    from sgi_core.stats.margin_power import sequential_power

    # 150 keys, 40 discordant (20 each way): the planned bound after 80 keys against the median of random orders.
    population = np.concatenate([np.ones(20), -np.ones(20), np.zeros(110)])
    rng = np.random.default_rng(5)
    uppers = [betting_confidence_sequence(rng.permutation(population), lower=-1.0, upper=1.0, population=150)[1][79]
              for _ in range(200)]
    planned = sequential_power(11, 10, 80, 150).smallest_margin  # a discordance of 21/80, near 40/150
    assert planned == pytest.approx(np.median(uppers), abs=0.02)


def test_paired_differences_are_the_rescaled_sequence():
    d = np.array(X2) * 2.0 - 1.0
    low, high = betting_confidence_sequence(d, lower=-1.0, upper=1.0)
    ref_low, ref_high = betting_confidence_sequence(X2)
    assert low == pytest.approx(2 * ref_low - 1) and high == pytest.approx(2 * ref_high - 1)


def _capital(x, m, alpha):
    """K_t(m) by plain loops (the module's formulas written out one step at a time)."""
    mu_sum, var_sum, s2_before, out = 0.0, 0.0, 0.25, []
    k_pos = k_neg = 1.0
    for i, value in enumerate(x, start=1):
        bet = math.sqrt(2 * math.log(2 / alpha) / (i * math.log(1 + i) * s2_before))
        k_pos *= 1 + min(bet, 0.5 / m if m > 0 else math.inf) * (value - m)
        k_neg *= 1 - min(bet, 0.5 / (1 - m) if m < 1 else math.inf) * (value - m)
        out.append(max(k_pos, k_neg) / 2)
        mu_sum += value
        mu = min((0.5 + mu_sum) / (i + 1), 1.0)
        var_sum += (value - mu) ** 2
        s2_before = (0.25 + var_sum) / (i + 1)
    return np.array(out)


def test_every_grid_mean_outside_the_sequence_has_capital_above_one_over_alpha():
    rng = np.random.default_rng(3)
    x = rng.beta(2, 5, size=80)
    low, high = betting_confidence_sequence(x, breaks=200)
    for m in np.linspace(0, 1, 201):
        rejected_by_now = np.maximum.accumulate(_capital(x, m, 0.05) > 20)
        # A grid mean more than a step outside [low, high] was rejected at some time up to t.
        outside = (m < low - 1e-12) | (m > high + 1e-12)
        assert not np.any(outside & ~rejected_by_now), m


def test_the_sequence_only_narrows_and_holds_the_mean():
    rng = np.random.default_rng(1)
    x = rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.6, 0.3], size=300)
    low, high = betting_confidence_sequence(x, lower=-1.0, upper=1.0)
    assert np.all(np.diff(low) >= 0) and np.all(np.diff(high) <= 0) and np.all(low < high)
    assert low[-1] < x.mean() < high[-1]
    assert sequential_mean(x).ci == (low[-1], high[-1])


@pytest.mark.statistical
def test_time_uniform_coverage_by_simulation():
    # 300 sequences of 200 draws with mean 0.3: the sequence must miss it at some time in at most ~5% of them.
    rng = np.random.default_rng(7)
    misses = 0
    for _ in range(300):
        x = rng.binomial(1, 0.3, size=200).astype(float)
        low, high = betting_confidence_sequence(x, breaks=400)
        misses += bool(np.any((low > 0.3) | (high < 0.3)))
    assert misses / 300 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 300)


def test_stopping_when_it_looks_decided_keeps_the_sequences_level_and_breaks_the_fixed_intervals():
    result = stopping_errors(runs=100, labels=100, seed=1)
    assert result["sequence_error"] <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 100)
    assert result["fixed_error"] > 0.1 > result["sequence_error"]


def test_no_observation_gives_the_whole_range():
    res = sequential_mean([], lower=-1.0, upper=1.0)
    assert res.n == 0 and res.ci == (-1.0, 1.0) and math.isnan(res.estimate)
    finite = sequential_mean([1.0, 0.0], population=5)
    assert finite.population == 5 and "without replacement over 5 keys" in finite.method


@pytest.mark.parametrize(("x", "kwargs", "match"), [
    ([0.5, 1.5], {}, r"'x' of betting_confidence_sequence holds values outside \[0, 1\]"),
    ([0.5, float("nan")], {}, r"holds values outside \[0, 1\] \(or NaN\)"),
    ([0.5], {"lower": 1.0, "upper": 0.0}, "needs finite bounds with lower < upper"),
    ([0.5], {"confidence": 1.5}, "confidence"),
    ([0.5], {"breaks": 1}, "breaks"),
    (["a"], {}, "must hold numbers"),
    ([0.5, 0.5, 0.5], {"population": 2}, "drew 3 observations without replacement from a population of 2"),
    ([0.5], {"population": 0}, "population"),
])
def test_bad_input_is_refused(x, kwargs, match):
    with pytest.raises(SGIInputError, match=match):
        betting_confidence_sequence(x, **kwargs)
