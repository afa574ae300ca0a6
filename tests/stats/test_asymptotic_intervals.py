"""Intervals on big data: DeLong's for the AUROC, the delta method's for Cohen's d, and when each is used."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.evaluation import evaluate
from sgi_core.scores import oriented_scores
from sgi_core.scores.selection import trivial_names
from sgi_core.stats import bootstrap
from sgi_core.stats.effect_size import EffectSizeResult, cohens_d_variance, effect_size
from sgi_core.stats.ranking import RocResult, delong_ci, roc_analysis


def skewed(seed: int = 1, n_valid: int = 4000, n_halluc: int = 6000):
    rng = np.random.default_rng(seed)
    valid, halluc = rng.lognormal(0.3, 0.6, n_valid), rng.lognormal(0.0, 0.5, n_halluc)
    return np.r_[np.ones(n_valid), np.zeros(n_halluc)], np.r_[valid, halluc], valid, halluc


def test_delong_interval_hand_computed():
    # Grounded [0.9, 0.4, 0.8] beat 3, 2 and 3 of the hallucinated [0.5, 0.1, 0.2]: V10 = [1, 2/3, 1];
    # the hallucinated are beaten by 2, 3 and 3 grounded: V01 = [2/3, 1, 1]. AUROC = 8/9 and both
    # components have variance 1/27 (ddof=1), so Var = 1/27/3 + 1/27/3 = 2/81.
    lo, hi = delong_ci(np.array([0.9, 0.4, 0.8]), np.array([0.5, 0.1, 0.2]), confidence=0.95)
    assert lo == pytest.approx(8 / 9 - stats.norm.ppf(0.975) * math.sqrt(2 / 81))
    assert hi == 1.0  # 8/9 + 0.308 clipped to 1


def test_cohens_d_variance_hand_computed():
    # [1, 2, 3] against [0, 1, 2]: s^2 = 1 in both, S = 1, d = 1, w = 1/2, mu2 = 2/3, mu3 = 0, mu4 = 2/3.
    # Each class: (1 + 1 * 1/4 * (2/3 - 4/9) / 4) / 3 = (1 + 1/72) / 3; the two together 73/108.
    assert cohens_d_variance(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 2.0])) == pytest.approx(73 / 108)


def test_cohens_d_variance_is_hedges_olkin_for_normal_classes():
    # Normal classes, one variance: mu3 = 0, mu4 = 3 s^4, so Var(d) -> 1/n1 + 1/n2 + d^2 / (2 (n1 + n2)).
    rng = np.random.default_rng(0)
    valid, halluc = rng.normal(0.8, 1.0, 300_000), rng.normal(0.0, 1.0, 200_000)
    d = (valid.mean() - halluc.mean()) / math.sqrt((299_999 * valid.var(ddof=1) + 199_999 * halluc.var(ddof=1))
                                                  / 499_998)
    hedges_olkin = 1 / 300_000 + 1 / 200_000 + d**2 / (2 * 500_000)
    assert cohens_d_variance(valid, halluc) == pytest.approx(hedges_olkin, rel=0.01)


def test_asymptotic_intervals_agree_with_the_bootstrap_on_skewed_classes():
    labels, scores, _, _ = skewed()
    boot_roc = roc_analysis(labels, scores, n_boot=4000, ci_method="bootstrap")
    delong = roc_analysis(labels, scores, ci_method="asymptotic")
    boot_d = effect_size(labels, scores, n_boot=4000, ci_method="bootstrap")
    delta = effect_size(labels, scores, ci_method="asymptotic")
    assert delong.auroc == boot_roc.auroc and delta.cohens_d == boot_d.cohens_d
    # Widths of about 0.022 (AUROC) and 0.076 (d); the bootstrap's own Monte Carlo error is about 0.001.
    np.testing.assert_allclose(delong.auroc_ci, boot_roc.auroc_ci, atol=0.002)
    np.testing.assert_allclose(delta.cohens_d_ci, boot_d.cohens_d_ci, atol=0.004)


def test_delong_interval_unchanged_by_a_monotone_transform():
    labels, scores, _, _ = skewed(n_valid=500, n_halluc=700)
    plain = roc_analysis(labels, scores, ci_method="asymptotic")
    assert roc_analysis(labels, np.log(scores) ** 3, ci_method="asymptotic").auroc_ci == pytest.approx(plain.auroc_ci)


def test_auto_switches_above_the_row_limit_and_says_so(monkeypatch):
    labels, scores, _, _ = skewed(n_valid=40, n_halluc=60)
    monkeypatch.setattr(bootstrap, "BOOTSTRAP_MAX_ROWS", 100)
    small_roc, small_d = roc_analysis(labels, scores, n_boot=50), effect_size(labels, scores, n_boot=50)
    assert (small_roc.ci_method, small_roc.n_boot, small_d.ci_method, small_d.n_boot) == (
        "percentile bootstrap", 50, "percentile bootstrap", 50)
    monkeypatch.setattr(bootstrap, "BOOTSTRAP_MAX_ROWS", 99)
    big_roc, big_d = roc_analysis(labels, scores, n_boot=50), effect_size(labels, scores, n_boot=50)
    assert (big_roc.ci_method, big_roc.n_boot, big_d.ci_method, big_d.n_boot) == ("DeLong", 0, "delta method", 0)
    assert big_roc.auroc_ci == roc_analysis(labels, scores, ci_method="asymptotic").auroc_ci
    assert big_d.cohens_d_ci == effect_size(labels, scores, ci_method="asymptotic").cohens_d_ci


def test_no_resamples_means_no_interval_unless_asymptotic():
    labels, scores, _, _ = skewed(n_valid=40, n_halluc=60)
    none = roc_analysis(labels, scores, n_boot=0)
    assert (none.ci_method, none.n_boot) == ("none", 0) and all(map(math.isnan, none.auroc_ci))
    assert not math.isnan(effect_size(labels, scores, n_boot=0, ci_method="asymptotic").cohens_d_ci[0])


def test_results_keep_the_method_through_json():
    labels, scores, _, _ = skewed(n_valid=40, n_halluc=60)
    for result, kind in ((roc_analysis(labels, scores, ci_method="asymptotic"), RocResult),
                         (effect_size(labels, scores, n_boot=20), EffectSizeResult)):
        data = result.to_dict()
        assert (data["ci_method"], data["n_boot"]) == (result.ci_method, result.n_boot)
        assert kind.from_dict(data).to_dict() == data


@pytest.mark.parametrize("func", [roc_analysis, effect_size])
def test_unknown_interval_method_is_refused(func):
    with pytest.raises(SGIInputError, match=f"'ci_method' parameter of {func.__name__} must be one of 'auto', "
                                            "'bootstrap', 'asymptotic'. Got 'exact' instead"):
        func([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1], ci_method="exact")


def test_evaluate_takes_precomputed_baselines():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"label": np.repeat([1.0, 0.0], 30), "sgi": rng.normal(size=60),
                          "theta_rq": rng.uniform(0.5, 1.5, 60),
                          "response": [f"answer {i} Paris" for i in range(60)],
                          "context": ["Paris is in France"] * 60})
    given = evaluate(frame, n_boot=20, baselines=oriented_scores(frame, trivial_names(frame.columns)))
    assert given.to_dict() == evaluate(frame, n_boot=20).to_dict()
