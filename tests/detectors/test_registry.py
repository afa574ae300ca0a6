"""The detector registry: well-formed entries, and a family added there alone reaches the report and its judging."""

import math

import numpy as np
import pandas as pd
import pytest

from sgi_core.detectors.folds import question_groups
from sgi_core.detectors.registry import (
    COMBINED,
    FAMILIES,
    FITTINGS,
    NEEDS,
    PROTOCOL_LABELS,
    DetectorFamily,
    DetectorInputs,
    FamilyScores,
    per_row_families,
    score_specs,
)
from sgi_core.detectors.report import check_kinds, detector_report
from sgi_core.embedding import load_encoder
from sgi_core.errors import SGIInputError
from sgi_core.evaluation.judgement import PROTOCOLS
from sgi_core.io.triples import load_triples
from sgi_core.scores import ScoreSpec
from sgi_core.scores.baselines import response_length
from sgi_core.scoring import score_table
from sgi_core.stats.effect_size import effect_size
from sgi_core.stats.folds import crossfit_folds
from sgi_core.stats.length_matched import length_matched_auroc
from sgi_core.stats.ranking import roc_analysis
from tests.conftest import SAMPLE_CSV


@pytest.fixture(scope="module")
def sample():
    table = load_triples(SAMPLE_CSV)
    encoder = load_encoder("hashing")
    return table, encoder, score_table(table, encoder)


def test_entries_are_well_formed():
    labels = [spec.label for spec in score_specs().values()]
    assert len(labels) == len(set(labels)), "display labels must tell scores apart"
    for name, family in FAMILIES.items():
        assert family.name == name and family.label and family.explanation.strip()
        assert set(family.needs) <= set(NEEDS) and family.fitting in FITTINGS
        assert family.protocol in PROTOCOLS and family.protocol in PROTOCOL_LABELS
        assert {spec.name for spec in family.scores} <= set(family.columns)
        assert all(spec.higher_is in ("grounded", "hallucinated") for spec in family.scores)
    assert COMBINED.name in score_specs()
    assert {family.name for family in per_row_families()} == {n for n, f in FAMILIES.items() if f.fitting == "per row"}


def test_orientation_negates_hallucinated_scores_only():
    np.testing.assert_array_equal(ScoreSpec("a", "A", "hallucinated").oriented([0.25, np.nan]),
                                  [-0.25, np.nan])
    np.testing.assert_array_equal(ScoreSpec("a", "A").oriented(pd.Series([0.25, 1.0])), [0.25, 1.0])


# A family that needs a resource (a grounding model) is checked with one in tests/grounding/test_family.py.
@pytest.mark.parametrize("kind", [name for name, family in FAMILIES.items() if family.resource is None])
def test_each_family_computes_exactly_its_columns(sample, kind):
    table, encoder, scored = sample
    labels = table.frame["label"].to_numpy(dtype=float)
    folds = crossfit_folds(question_groups(table.frame), y_true=labels)
    computed = FAMILIES[kind].compute(DetectorInputs(table, encoder, labels=labels, folds=folds))
    assert list(computed.columns.columns) == list(FAMILIES[kind].columns)
    assert computed.columns.index.equals(table.frame.index)
    assert set(computed.leaky) <= {spec.name for spec in FAMILIES[kind].scores}


def _response_words(inputs: DetectorInputs) -> FamilyScores:
    words = inputs.table.frame["response"].str.split().str.len().astype(float)
    return FamilyScores(pd.DataFrame({"toy_words": words, "toy_chars": inputs.table.frame["response"].str.len()}))


def test_a_family_registered_alone_is_computed_and_judged(sample, monkeypatch):
    """One registry entry is all the report needs: its score is judged, oriented, and joins the combination."""
    table, encoder, scored = sample
    toy = DetectorFamily("toy", "Toy word count", "the response's word count", ("texts",), "per row",
                         (ScoreSpec("toy_words", "toy words", "hallucinated"),), ("toy_words", "toy_chars"),
                         _response_words)
    monkeypatch.setitem(FAMILIES, "toy", toy)
    assert check_kinds(["toy"]) == ("toy",)
    report, per_row = detector_report(table, scored, encoder, model="hashing", kinds=("toy",), n_boot=0)
    assert list(per_row.columns) == ["toy_words", "combined"]
    labels = table.frame["label"].to_numpy(dtype=float)
    oriented = -table.frame["response"].str.split().str.len().to_numpy(dtype=float)
    judged = report.detectors["neg_toy_words"]  # by its oriented name, as every report keys a score
    assert judged.protocol == "label-free" and math.isnan(judged.auroc_leaky)
    assert judged.auroc == roc_analysis(labels, oriented, n_boot=0).auroc
    assert judged.cohens_d == effect_size(labels, oriented, n_boot=0).cohens_d
    lengths = response_length(table.frame["response"])
    assert judged.length_matched_auroc == length_matched_auroc(labels, oriented, lengths, n_boot=0).auroc
    assert "toy_words" in report.combined_features and "toy_chars" not in report.combined_features


def test_unknown_family_names_the_registered_ones():
    with pytest.raises(SGIInputError, match=rf"unknown detector family 'nli'.*Choose among {', '.join(FAMILIES)}"):
        check_kinds(["reference", "nli"])
