import json
import math

import numpy as np
import pytest
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.correlation import AgreementResult, cross_model_agreement


def test_hand_computed_toy():
    # a = 1..4, b = 1, 2, 3, 8: same order -> Spearman 1; Pearson 11 / sqrt(5 * 29).
    res = cross_model_agreement({"a": [1.0, 2.0, 3.0, 4.0], "b": [1.0, 2.0, 3.0, 8.0]})
    assert res.names == ("a", "b") and res.n_rows == 4
    assert res.spearman == ((1.0, 1.0), (1.0, 1.0))
    assert res.pearson[0][1] == pytest.approx(11 / math.sqrt(145))
    assert res.mean_offdiag_pearson == pytest.approx(11 / math.sqrt(145))


def test_oracle_scipy_and_matrix_properties():
    rng = np.random.default_rng(0)
    base = rng.normal(size=200)
    scores = {name: base + rng.normal(0, noise, 200) for name, noise in (("m1", 0.3), ("m2", 0.6), ("m3", 1.0))}
    res = cross_model_agreement(scores)
    pearson, spearman = np.array(res.pearson), np.array(res.spearman)
    assert np.allclose(np.diag(pearson), 1) and np.allclose(pearson, pearson.T)
    assert pearson[0, 2] == pytest.approx(stats.pearsonr(scores["m1"], scores["m3"]).statistic)
    assert spearman[1, 2] == pytest.approx(stats.spearmanr(scores["m2"], scores["m3"]).statistic)
    off = [pearson[i, j] for i in range(3) for j in range(3) if i != j]
    assert res.mean_offdiag_pearson == pytest.approx(np.mean(off))
    # Spearman is unchanged by a monotone transform of one model's scores.
    scores["m1"] = np.exp(scores["m1"])
    assert cross_model_agreement(scores).mean_offdiag_spearman == pytest.approx(res.mean_offdiag_spearman)


def test_rows_missing_in_any_model_are_left_out():
    res = cross_model_agreement({"a": [1.0, 2.0, np.nan, 4.0, 5.0], "b": [2.0, 1.0, 3.0, np.nan, 6.0]})
    assert res.n_rows == 3


def test_single_model_warns_and_gives_nan():
    with pytest.warns(UndefinedStatisticWarning, match="2 models and 3 common rows"):
        res = cross_model_agreement({"a": [1.0, 2.0, 3.0]})
    assert math.isnan(res.mean_offdiag_pearson)


@pytest.mark.parametrize(
    "scores, match",
    [
        ({}, "needs a dict"),
        ({"a": [1.0, 2.0], "b": [1.0]}, "different numbers of rows"),
    ],
)
def test_bad_input_raises(scores, match):
    with pytest.raises(SGIInputError, match=match):
        cross_model_agreement(scores)


def test_json_round_trip_and_frames():
    res = cross_model_agreement({"a": [1.0, 2.0, 3.0, 4.0], "b": [1.0, 3.0, 2.0, 8.0]})
    assert AgreementResult.from_dict(json.loads(json.dumps(res.to_dict()))) == res
    pearson, _ = res.to_frames()
    assert list(pearson.index) == ["a", "b"]
