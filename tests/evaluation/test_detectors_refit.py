"""compare_detectors: the combination's interval and its gain over the best detector alone refit every model."""

import json

import numpy as np

from sgi_core.evaluation import refit
from sgi_core.evaluation.detectors import NEGLIGIBLE_COMBINED_GAIN, DetectorComparison, compare_detectors
from sgi_core.evaluation.refit import HELD_FIXED, REFIT_CI_NAME, percentile_interval, rank_auroc, refit_replicates


def weak_pair(seed, n=44):
    rng = np.random.default_rng(seed)
    y = np.repeat([1.0, 0.0], n // 2)
    return {"a": 0.5 * y + rng.normal(size=n), "b": 0.5 * y + rng.normal(size=n)}, y


def test_the_intervals_are_percentiles_of_refitted_models():
    scores, y = weak_pair(4)
    res = compare_detectors(scores, y, n_boot=60, seed=2)
    features = np.column_stack([scores["a"], scores["b"]])
    replicates = refit_replicates(features, y, groups=np.arange(44), column_sets=[[0], [1], range(2)], n_boot=60,
                                  seed=2)
    aurocs = np.array([[rank_auroc(y[rows], p) for p in probs] for rows, probs in replicates])
    assert res.combined_roc.auroc_ci == percentile_interval(aurocs[:, 2])
    assert res.gain.interval == percentile_interval(aurocs[:, 2] - aurocs[:, :2].max(axis=1))
    assert res.gain.method == REFIT_CI_NAME
    assert (res.combined_roc.ci_method, res.combined_roc.n_boot) == (REFIT_CI_NAME, 60)
    # At most REFIT_N_BOOT refits, however many resamples the other intervals take.
    assert compare_detectors(scores, y, n_boot=1000).combined_roc.n_boot == refit.REFIT_N_BOOT


def test_a_gain_whose_refit_interval_holds_zero_is_not_called_a_gain():
    scores, y = weak_pair(4)
    res = compare_detectors(scores, y, n_boot=100)
    assert res.gain.value > 5 * NEGLIGIBLE_COMBINED_GAIN  # a point gain well above the negligible one
    assert res.gain.interval[0] < 0 < res.gain.interval[1]
    assert res.level == "none"
    assert "is not shown" in res.verdict and "holds 0" in res.verdict
    # Without resamples there is no interval, and the verdict reads the point estimate as before.
    assert compare_detectors(scores, y, n_boot=0).level == "gain"


def test_a_real_gain_is_called_one():
    rng = np.random.default_rng(0)
    y = np.repeat([1.0, 0.0], 150)
    res = compare_detectors({"a": y + rng.normal(size=300), "b": y + rng.normal(size=300)}, y, n_boot=100)
    assert res.gain.interval[0] > 0 and res.level == "gain"
    assert "beats every detector alone" in res.verdict


def test_above_the_row_limit_the_fits_are_held_fixed(monkeypatch):
    monkeypatch.setattr("sgi_core.evaluation.detectors.REFIT_MAX_ROWS", 40)
    scores, y = weak_pair(1)
    res = compare_detectors(scores, y, n_boot=50)
    assert res.combined_roc.ci_method == "percentile bootstrap" + HELD_FIXED
    assert np.isfinite(res.gain.interval).all() and res.gain.method == "DeLong" + HELD_FIXED


def test_json_round_trip_keeps_the_refit_intervals():
    scores, y = weak_pair(2)
    res = compare_detectors(scores, y, n_boot=30)
    again = DetectorComparison.from_dict(json.loads(json.dumps(res.to_dict())))
    assert again.to_dict() == res.to_dict()
    assert again.gain == res.gain and again.combined_roc.ci_method == REFIT_CI_NAME
