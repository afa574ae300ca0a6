"""The estimate value type: a number, its interval and how the interval was made, frozen and JSON-safe."""

import dataclasses
import json
import math

import pytest

from sgi_core.evaluation.verdict import file_verdict
from sgi_core.results import Estimate
from sgi_core.stats.ranking import roc_analysis


def test_an_estimate_survives_a_json_round_trip():
    estimate = Estimate(0.75, (0.6, 0.9), "DeLong")
    assert Estimate.from_dict(json.loads(json.dumps(estimate.to_dict()))) == estimate
    undefined = Estimate(math.nan)
    assert undefined.to_dict() == {"value": None, "interval": [None, None], "method": ""}
    assert math.isnan(Estimate.from_dict(undefined.to_dict()).interval[0])


def test_an_estimate_is_frozen_and_has_two_bounds():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Estimate(0.5).value = 0.6
    with pytest.raises(ValueError, match="an interval has two bounds"):
        Estimate(0.5, (0.1, 0.2, 0.3))


def test_a_verdicts_standing_holds_the_roc_analysis_as_an_estimate():
    y = [1, 1, 1, 1, 0, 0, 0, 0] * 10
    sgi = [8, 7, 6, 3, 5, 2, 1, 4] * 10
    roc = roc_analysis(y, sgi, n_boot=200, seed=0)
    standing = file_verdict(y, {"sgi": sgi}, {}, n_boot=200, seed=0).standing("sgi")
    assert standing.auroc == Estimate(roc.auroc, roc.auroc_ci, roc.ci_method)
    assert standing.auroc.value == pytest.approx(14 / 16)  # 14 of the 16 (grounded, hallucinated) pairs ranked right
