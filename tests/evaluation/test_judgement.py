"""judge_score: the one judging path, pinned on a hand-computed toy table and against each statistic alone."""

import json
import math

import numpy as np
import pytest

from sgi_core.evaluation.judgement import ScoreJudgement, judge_score
from sgi_core.stats import bootstrap
from sgi_core.stats.effect_size import effect_size
from sgi_core.stats.length_matched import length_matched_auroc
from sgi_core.stats.ranking import roc_analysis


def test_hand_computed_toy_case():
    # grounded {0.9, 0.4} against hallucinated {0.5, 0.1}: 3 of 4 pairs ordered right
    res = judge_score([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1], lengths=[10, 20, 10, 20], n_boot=0,
                      leaky_score=[1.0, 0.9, 0.2, 0.1])
    assert res.auroc == 0.75 and res.auroc_leaky == 1.0
    # each length holds one row of each class with weight 1: matching changes nothing
    assert res.length_matched_auroc == 0.75
    # means 0.65 and 0.3, variances 0.125 and 0.08 (ddof=1), pooled SD sqrt(0.1025)
    assert res.cohens_d == pytest.approx(0.35 / math.sqrt(0.1025))
    assert res.protocol == "label-free" and all(math.isnan(x) for x in res.auroc_ci)


def test_equals_each_statistic_alone_with_intervals():
    rng = np.random.default_rng(3)
    y = np.repeat([1.0, 0.0], 60)
    score = y + rng.normal(size=120)
    lengths = rng.integers(20, 200, size=120)
    res = judge_score(y, score, lengths=lengths, protocol="crossfit", n_boot=200, seed=1)
    roc = roc_analysis(y, score, n_boot=200, seed=1)
    es = effect_size(y, score, n_boot=200, seed=1)
    matched = length_matched_auroc(y, score, lengths, n_boot=200, seed=1)
    assert (res.auroc, res.auroc_ci) == (roc.auroc, roc.auroc_ci)
    assert (res.cohens_d, res.cohens_d_ci) == (es.cohens_d, es.cohens_d_ci)
    assert (res.length_matched_auroc, res.length_matched_auroc_ci) == (matched.auroc, matched.auroc_ci)
    assert res.cohens_d_ci[0] < res.cohens_d < res.cohens_d_ci[1]
    assert ScoreJudgement.from_dict(json.loads(json.dumps(res.to_dict()))) == res


def test_all_three_intervals_are_asymptotic_above_the_bootstrap_row_limit(monkeypatch):
    rng = np.random.default_rng(4)
    y = np.repeat([1.0, 0.0], 60)
    score, lengths = y + rng.normal(size=120), rng.integers(20, 200, size=120)
    monkeypatch.setattr(bootstrap, "BOOTSTRAP_MAX_ROWS", 119)
    res = judge_score(y, score, lengths=lengths, n_boot=1000)
    assert res.auroc_ci == roc_analysis(y, score, ci_method="asymptotic").auroc_ci
    assert res.cohens_d_ci == effect_size(y, score, ci_method="asymptotic").cohens_d_ci
    assert res.length_matched_auroc_ci == length_matched_auroc(y, score, lengths, ci_method="asymptotic").auroc_ci
