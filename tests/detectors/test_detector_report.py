"""`report --detectors reference,claims`: each detector judged like SGI, the leaky protocol beside it, a combination."""

import json
import math

import numpy as np
import pytest

from sgi_core.cli import main
from sgi_core.detectors import REFERENCE_DETECTORS, question_groups, reference_scores
from sgi_core.detectors.report import detector_report, detector_scores
from sgi_core.embedding import load_encoder
from sgi_core.io.triples import load_triples
from sgi_core.scores.baselines import response_length
from sgi_core.scoring import embed_table, score_table
from sgi_core.stats.length_matched import length_matched_auroc
from sgi_core.stats.ranking import roc_analysis
from tests.conftest import SAMPLE_CSV

NAMES = (*REFERENCE_DETECTORS, "claim_min_support", "claim_mean_support", "combined")


@pytest.fixture(scope="module")
def sample():
    table = load_triples(SAMPLE_CSV)
    encoder = load_encoder("hashing")
    return table, encoder, score_table(table, encoder)


def test_report_json_carries_every_detector_and_length_matching(tmp_path):
    out = tmp_path / "report.json"
    args = ["report", str(SAMPLE_CSV), "--models", "hashing", "--detectors", "reference,claims", "--json", str(out),
            "--n-boot", "50"]
    assert main(args) == 0
    block = json.loads(out.read_text())["models"]["hashing"]
    assert set(block["detectors"]) == set(NAMES)
    for name in NAMES:
        entry = block["detectors"][name]
        assert {"auroc", "auroc_ci", "cohens_d", "auroc_leaky", "length_matched_auroc"} <= set(entry)
        assert 0.0 <= entry["auroc"] <= 1.0
    for name in REFERENCE_DETECTORS:
        assert 0.0 <= block["detectors"][name]["auroc_leaky"] <= 1.0
    assert block["detectors"]["claim_min_support"]["auroc_leaky"] is None  # no reference set: no leaky variant
    assert 0.0 <= block["length_matched_auroc"] <= 1.0 and len(block["length_matched_auroc_ci"]) == 2


def test_detector_numbers_equal_a_direct_computation(sample):
    table, encoder, scored = sample
    report, per_row = detector_report(table, scored, encoder, model="hashing", kinds=("reference",), n_boot=0)
    q, c, r, ok = embed_table(table, encoder)
    labels = table.frame["label"].to_numpy(dtype=float)
    groups = question_groups(table.frame)
    honest = reference_scores(q, c, r, labels[ok], groups[ok])
    leaky = reference_scores(q, c, r, labels[ok], groups[ok], protocol="leaky")
    for name in REFERENCE_DETECTORS:
        assert report.detectors[name].auroc == roc_analysis(labels[ok], honest.scores[name], n_boot=0).auroc
        assert report.detectors[name].auroc_leaky == roc_analysis(labels[ok], leaky.scores[name], n_boot=0).auroc
        np.testing.assert_array_equal(per_row[name].to_numpy()[ok], honest.scores[name])
    lengths = response_length(table.frame["response"])
    expected = length_matched_auroc(labels, per_row["lsgi"], lengths, n_boot=0).auroc
    assert report.detectors["lsgi"].length_matched_auroc == pytest.approx(expected)


def test_combined_is_out_of_fold_on_question_groups(sample):
    table, encoder, scored = sample
    _, _, folds = detector_scores(table, scored, encoder, kinds=("claims",))
    groups = question_groups(table.frame)
    for group in np.unique(groups):
        assert len(set(folds[groups == group])) == 1
    report, per_row = detector_report(table, scored, encoder, model="hashing", kinds=("claims",), n_boot=0)
    combined = per_row["combined"].to_numpy()
    assert np.isfinite(combined).all() and ((combined > 0) & (combined < 1)).all()
    # HaluEval's length confound: a model that sees response length separates the labels well.
    assert report.detectors["combined"].auroc > 0.8
    assert "neg_response_length" in report.combined_features
    assert math.isnan(report.detectors["combined"].auroc_leaky)


def test_unknown_family_is_refused(sample, capsys):
    assert main(["report", str(SAMPLE_CSV), "--models", "hashing", "--detectors", "reference,nli"]) == 2
    assert "unknown detector family 'nli'" in capsys.readouterr().err
