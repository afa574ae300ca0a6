"""A score earns a verdict word only where it is validated: on the labels of every run, or by a policy's held-out
record."""

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from sgi_core.evaluation.validation import (
    NOT_VALIDATED,
    RunAuroc,
    ScoreValidation,
    validate_from_policy,
    validate_on_labels,
    verdict_word,
)
from sgi_core.policy.making import make_policy
from sgi_core.runs.comparison import compare_runs
from sgi_core.runs.matching import match_runs

GOOD = RunAuroc("base", 0.8, (0.7, 0.9), 50, 50)


@pytest.mark.parametrize("evidence, validated, reason", [
    ((), False, "no labels"),
    ((GOOD, replace(GOOD, run="new")), True, "AUROC above 0.5 on the labels (base 0.80 [0.70, 0.90], new 0.80 [0.70, "
                                             "0.90])"),
    ((GOOD, RunAuroc("new", 0.55, (0.46, 0.65), 30, 10)), False, "AUROC 0.55 [0.46, 0.65] holds 0.5 in new"),
    ((RunAuroc("base", 0.3, (0.2, 0.4), 30, 10), GOOD), False, "AUROC 0.30 [0.20, 0.40] lies below 0.5 in base"),
    ((GOOD, RunAuroc("new", math.nan, (math.nan, math.nan), 40, 0)), False,
     "no AUROC interval in new (40 grounded / 0 hallucinated labelled rows)"),
    ((GOOD, RunAuroc("new", math.nan, (math.nan, math.nan), 0, 0)), False, "no labels in new"),
])
def test_validation_on_labels_needs_an_interval_above_one_half_in_every_run(evidence, validated, reason):
    res = validate_on_labels("sgi", evidence)
    assert (res.validated, res.reason) == (validated, reason)


@pytest.mark.parametrize("ci, higher_is_better, word", [
    ((-0.3, -0.1), True, "regression"), ((0.1, 0.3), True, "improvement"), ((-0.1, 0.1), True, "no clear change"),
    ((-0.3, 0.0), True, "no clear change"), ((0.1, 0.3), False, "regression"), ((-0.3, -0.1), False, "improvement"),
    ((math.nan, math.nan), True, "no clear change"),
])
def test_a_validated_score_gets_its_word_from_the_interval(ci, higher_is_better, word):
    assert verdict_word(ci, ScoreValidation("s", True, "", ()), higher_is_better=higher_is_better) == word
    assert verdict_word(ci, ScoreValidation("s", False, "no labels", ())) == NOT_VALIDATED


def separating_policy(score_column="sgi", model="minilm", signal=1.0):
    rng = np.random.default_rng(0)
    labels = (np.arange(300) % 2).astype(float)
    return make_policy(labels, labels * signal + rng.normal(0, 0.5, 300), model=model, score_column=score_column)[0]


def test_a_policy_validates_its_own_score_and_model_only():
    policy = separating_policy()
    assert policy.heldout_auroc_ci[0] > 0.5
    assert validate_from_policy("sgi", policy, model="minilm").validated
    assert validate_from_policy("sgi", policy, model=None).validated
    assert validate_from_policy("theta_rq", policy, model="minilm").reason == "the policy holds 'sgi', not this score"
    assert validate_from_policy("sgi", policy, model="mpnet").reason == ("the policy was validated with model "
                                                                         "'minilm', not 'mpnet'")
    weak = separating_policy(signal=0.0)
    assert not validate_from_policy("sgi", weak, model="minilm").validated
    old = replace(policy, heldout_auroc=math.nan, heldout_auroc_ci=(math.nan, math.nan))
    assert validate_from_policy("sgi", old, model="minilm").reason.startswith("the policy records no held-out AUROC")


def test_unlabelled_runs_get_a_verdict_on_a_score_a_policy_validated_and_none_on_the_rest():
    rng = np.random.default_rng(1)
    base = pd.DataFrame({"q": np.arange(50), "sgi": rng.normal(1.2, 0.1, 50), "theta_rq": rng.normal(1, 0.1, 50)})
    new = base.assign(sgi=base["sgi"] - 0.3, theta_rq=base["theta_rq"] - 0.3)
    matched = match_runs(base, new, key="q", scores=["sgi", "theta_rq"])
    res = compare_runs(matched, policy=separating_policy(), model="minilm", n_boot=200)
    sgi, theta = res.scores
    assert (sgi.verdict, sgi.validated) == ("regression", True)
    assert sgi.validation.startswith("held-out AUROC") and sgi.validation.endswith("recorded in the policy")
    assert (theta.verdict, theta.validation) == (NOT_VALIDATED, "no labels")
    assert res.labels is None and math.isnan(sgi.auroc_base)
