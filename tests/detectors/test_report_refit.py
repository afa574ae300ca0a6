"""The combined detector of detector_report: intervals and paired comparisons that refit it, on the bundled sample."""

import json

import numpy as np
import pytest

from sgi_core.detectors import question_groups
from sgi_core.detectors.report import combination_features, compare_with_combined, detector_report
from sgi_core.embedding import load_encoder
from sgi_core.evaluation.refit import REFIT_CI_NAME, judge_combined, refit_auroc_difference
from sgi_core.io.triples import load_triples
from sgi_core.scores.baselines import response_length
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV


@pytest.fixture(scope="module")
def computed():
    table = load_triples(SAMPLE_CSV)
    encoder = load_encoder("hashing")
    scored = score_table(table, encoder)
    report, scores = detector_report(table, scored, encoder, model="hashing", kinds=("claims",), n_boot=100,
                                     n_refit=30, seed=1)
    return table, scored, report, scores


def test_the_combined_judgement_is_judge_combined_on_the_report_features(computed):
    table, scored, report, scores = computed
    features = combination_features(table, scored, scores)
    assert tuple(features.columns) == report.combined_features and "combined" not in features
    labels = table.frame["label"].to_numpy(dtype=float)
    expected = judge_combined(labels, scores["combined"].to_numpy(), features.to_numpy(),
                              lengths=response_length(table.frame["response"]), groups=question_groups(table.frame),
                              n_splits=report.n_folds, n_boot=100, n_refit=30, seed=1)
    combined = report.detectors["combined"]
    assert combined.auroc_ci == expected.auroc_ci
    assert combined.length_matched_auroc_ci == expected.length_matched_auroc_ci
    assert (combined.roc.ci_method, combined.roc.n_boot) == (REFIT_CI_NAME, 30)
    block = json.loads(json.dumps(report.to_dict()))["detectors"]
    assert block["combined"]["roc"]["ci_method"] == REFIT_CI_NAME
    assert block["claim_min_support"]["roc"]["ci_method"] == "percentile bootstrap"  # label-free: no refit


def test_compare_with_combined_refits_on_the_question_groups(computed):
    table, scored, report, scores = computed
    sgi = scored["sgi"].to_numpy()
    res = compare_with_combined(table, scored, scores, sgi, n_folds=report.n_folds, n_boot=30, seed=0)
    labels = table.frame["label"].to_numpy(dtype=float)
    expected = refit_auroc_difference(labels, scores["combined"].to_numpy(),
                                      combination_features(table, scored, scores).to_numpy(), sgi,
                                      groups=question_groups(table.frame), n_splits=report.n_folds, n_boot=30)
    assert res == expected
    assert res.auroc_a == pytest.approx(report.detectors["combined"].auroc)
    flipped = compare_with_combined(table, scored, scores, sgi, refitted="b", n_folds=report.n_folds, n_boot=30)
    assert flipped.difference == -res.difference and flipped.auroc_b == res.auroc_a
    assert flipped.ci == pytest.approx((-res.ci[1], -res.ci[0]))
    assert np.isfinite(res.p_value) and res.n_pos + res.n_neg == 300
