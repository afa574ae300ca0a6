"""What a rate comparison can detect: hand-computed half-widths, sample sizes checked by simulation, the priors."""

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from sgi_core.errors import SGIInputError
from sgi_core.stats.margin_power import (
    MIN_DISCORDANT,
    MIN_PAIRED_KEYS,
    PRIOR_DISCORDANCE,
    MarginPower,
    keys_for_margin,
    paired_discordance,
    paired_power,
    ppi_power,
    unpaired_power,
)

Z = 1.959963984540054  # Phi^-1(0.975)
Z80 = 0.8416212335729143  # Phi^-1(0.8)


@pytest.mark.parametrize(("base_only", "new_only", "n", "half"), [
    (6, 4, 40, Z * math.sqrt(10 / 40 / 40)),
    (15, 15, 150, Z * math.sqrt(0.2 / 150)),
    (40, 0, 400, Z * math.sqrt(0.1 / 400)),
])
def test_paired_half_width_at_zero_difference(base_only, new_only, n, half):
    res = paired_power(base_only, new_only, n)
    assert res.smallest_margin == pytest.approx(half, rel=1e-12)
    assert (res.design, res.variance_source) == ("paired", "observed")
    assert res.keys_needed(0.05) == math.ceil((Z + Z80) ** 2 * res.variance / 0.05 ** 2)


def test_few_keys_or_few_discordant_plan_with_the_upper_wilson_bound_and_none_with_the_prior():
    for discordant, n in ((3, 100), (6, MIN_PAIRED_KEYS - 1)):
        psi, source = paired_discordance(discordant, 0, n)
        assert psi == pytest.approx(proportion_confint(discordant, n, method="wilson")[1], rel=1e-9)
        assert source.startswith("conservative")
    assert paired_discordance(MIN_DISCORDANT, 0, MIN_PAIRED_KEYS) == (MIN_DISCORDANT / MIN_PAIRED_KEYS, "observed")
    # No discordant key at all is not a zero-width interval: the bound is positive.
    assert paired_power(0, 0, 40).smallest_margin > 0.05
    none = paired_power(0, 0, 0)
    assert none.variance == PRIOR_DISCORDANCE and math.isinf(none.smallest_margin)


def test_keys_needed_give_the_asked_power_in_simulation():
    # An unchanged pair of runs with 20% discordance: at the planned n, the Wald upper bound is
    # below the margin in about 80% of samples.
    psi, margin = 0.2, 0.08
    n = keys_for_margin(psi, margin)
    assert n == math.ceil((Z + Z80) ** 2 * psi / margin ** 2)
    rng = np.random.default_rng(0)
    d = rng.choice([-1.0, 0.0, 1.0], p=[psi / 2, 1 - psi, psi / 2], size=(4000, n))
    mean = d.mean(axis=1)
    upper = mean + Z * np.sqrt((np.mean(d ** 2, axis=1) - mean ** 2) / n)
    assert np.mean(upper <= margin) == pytest.approx(0.8, abs=0.03)


def test_keys_scale_with_the_inverse_square_of_the_margin():
    assert keys_for_margin(0.25, 0.1) == 197  # (1.96 + 0.8416)^2 * 0.25 / 0.01 = 196.2
    ratio = keys_for_margin(0.25, 0.01) / keys_for_margin(0.25, 0.02)
    assert ratio == pytest.approx(4.0, rel=1e-3)


def test_unpaired_and_prediction_powered_designs():
    res = unpaired_power(10, 40, 10, 40)
    assert res.smallest_margin == pytest.approx(Z * math.sqrt(0.25 * 0.75 * (2 / 40)))
    assert unpaired_power(0, 5, 1, 5).variance_source.startswith("conservative")
    ppi = ppi_power(0.16, 0.0004, 40)
    assert ppi.smallest_margin == pytest.approx(Z * math.sqrt(0.16 / 40 + 0.0004))
    assert ppi.keys_needed(0.1) == math.ceil((Z + Z80) ** 2 * 0.16 / 0.01)


def test_the_result_survives_a_json_round_trip():
    res = paired_power(6, 4, 40)
    assert MarginPower.from_dict(res.to_dict()) == res


@pytest.mark.parametrize(("call", "match"), [
    (lambda: keys_for_margin(0.2, 0.0), "the margin must be a finite number > 0; got 0.0"),
    (lambda: keys_for_margin(0.2, float("nan")), "the margin must be a finite number > 0"),
    (lambda: paired_discordance(30, 20, 40), r"n_base_only \+ n_new_only <= n_keys. Got 50 > 40"),
    (lambda: paired_power(1, 1, 40, confidence=1.0), "confidence"),
    (lambda: unpaired_power(5, 4, 1, 4), "x <= n in each run"),
    (lambda: ppi_power(-0.1, 0.0, 40), "variances >= 0"),
])
def test_bad_input_is_refused(call, match):
    with pytest.raises(SGIInputError, match=match):
        call()


def test_z_matches_scipy():
    assert stats.norm.ppf(0.975) == pytest.approx(Z) and stats.norm.ppf(0.8) == pytest.approx(Z80)
