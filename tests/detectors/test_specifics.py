"""Unsupported specifics: hand-computed toy rows, the NaN cases, and the family reaching the report from its entry."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.detectors.columns import SPECIFICS_COLUMNS
from sgi_core.detectors.registry import FAMILIES
from sgi_core.detectors.report import detector_report
from sgi_core.detectors.specifics import names_in, numbers_in, row_specifics, specifics_scores
from sgi_core.embedding import load_encoder
from sgi_core.errors import SGIInputError
from sgi_core.io.triples import load_triples
from sgi_core.render.numbers import format_ci
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.scores.baselines import response_length
from sgi_core.scoring import score_table
from sgi_core.stats.length_matched import length_matched_auroc
from sgi_core.stats.ranking import roc_analysis
from tests.conftest import SAMPLE_CSV


@pytest.mark.parametrize(("text", "expected"), [
    ("It cost 1,200 dollars.", {"1200"}),
    ("It cost 1200 dollars, not 1,200,000.", {"1200", "1200000"}),
    ("Growth was 3.5% in the 19th year.", {"3.5", "19"}),
    ("No digits here.", set()),
])
def test_numbers_drop_thousands_commas(text, expected):
    assert numbers_in(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Paris is big.", set()),                                  # a sentence's first word says nothing
    ("It is in Paris. Lyon is too.", {"paris"}),              # nor does the second sentence's
    ("He met Marie Curie and I waved.", {"marie curie"}),     # runs of capitals; the pronoun I is left out
    ("It was found by Ørsted in Zürich.", {"ørsted", "zürich"}),
    ("Answer: the NASA team.", {"nasa"}),
])
def test_names_skip_sentence_starts(text, expected):
    assert names_in(text) == expected


@pytest.mark.parametrize(("response", "context", "expected"), [
    ("It cost 1,200 dollars.", "The price was 1200 dollars.", (1, 0)),
    ("It cost 1,200 dollars.", "The price was 1,300 dollars.", (1, 1)),
    ("It was found by Ørsted in Zürich.", "hans christian ØRSTED lived in zürich", (2, 0)),
    ("It was found by Élodie Ørsted.", "Ørsted found it.", (1, 1)),   # 'élodie ørsted' is not a run of the context
    ("He met Marie Curie in 1903.", "Pierre and Marie Curie won in 1903.", (2, 0)),
    ("He met Marie Curie in 1903.", "Curie met Marie in 1904.", (2, 2)),
])
def test_rows_by_hand(response, context, expected):
    assert row_specifics(response, context) == expected


def test_share_counts_and_nan_with_a_reason():
    frame = pd.DataFrame({
        "context": ["Bo won in 1998.", "Yes.", "", "Bo won in 1998 and 1999."],
        "response": ["It was Bo, in 1999.", "Yes, it did.", "Bo in 1998.", "It was Bo in 1999 and Al in 2001."],
    })
    with pytest.warns(UndefinedStatisticWarning, match="1 responses name no number or capitalised name"):
        out = specifics_scores(frame)
    assert list(out.columns) == list(SPECIFICS_COLUMNS)
    # row 3: {bo, al, 1999, 2001}, of which al and 2001 are missing from the context
    assert out["specifics_n"].tolist() == [2, 0, 0, 4]
    assert out["specifics_n_unsupported"].tolist() == [1, 0, 0, 2]
    np.testing.assert_array_equal(out["specifics_unsupported_share"], [0.5, np.nan, np.nan, 0.5])


def test_missing_column_is_named():
    with pytest.raises(SGIInputError, match="need the columns context and response; missing context"):
        specifics_scores(pd.DataFrame({"response": ["x"]}))


def test_registry_orients_it_higher_grounded_and_the_report_judges_it():
    table = load_triples(SAMPLE_CSV)
    encoder = load_encoder("hashing")
    scored = score_table(table, encoder)
    (spec,) = FAMILIES["specifics"].scores
    assert spec.higher_is == "hallucinated" and FAMILIES["specifics"].needs == ("texts",)
    report, per_row = detector_report(table, scored, encoder, model="hashing", kinds=("specifics",), n_boot=0)
    share = specifics_scores(table.frame)["specifics_unsupported_share"].to_numpy()
    np.testing.assert_array_equal(per_row["specifics_unsupported_share"], share)
    labels = table.frame["label"].to_numpy(dtype=float)
    judged = report.detectors["neg_specifics_unsupported_share"]  # by its registry name, as the report keys it
    assert judged.auroc == roc_analysis(labels, -share, n_boot=0).auroc
    lengths = response_length(table.frame["response"])
    assert judged.length_matched_auroc == length_matched_auroc(labels, -share, lengths, n_boot=0).auroc
    assert judged.protocol == "label-free" and math.isnan(judged.auroc_leaky)


def test_report_detectors_specifics_in_text_and_json(tmp_path, capsys):
    out = tmp_path / "report.json"
    assert main(["report", str(SAMPLE_CSV), "--models", "hashing", "--detectors", "specifics", "--n-boot", "50",
                 "--json", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    (line,) = [line for line in lines if line.split()[:1] == ["neg_specifics_unsupported_share"]]
    model = json.loads(out.read_text())["models"]["hashing"]
    entry = model["detectors"]["neg_specifics_unsupported_share"]
    # The file's one report holds the family's judgement beside its own, and its verdict reads it.
    assert model["report"]["judgements"]["neg_specifics_unsupported_share"]["auroc"] == entry["auroc"]
    assert "neg_specifics_unsupported_share" in [score["name"] for score in model["verdict"]["scores"]]
    for shown in (f"{entry['auroc']:.3f}", format_ci(entry["auroc_ci"]), f"{entry['length_matched_auroc']:.3f}",
                  format_ci(entry["length_matched_auroc_ci"])):
        assert shown in line
    assert 0.0 <= entry["auroc"] <= 1.0 and entry["auroc_ci"][0] <= entry["auroc"] <= entry["auroc_ci"][1]
    assert 0.0 <= entry["length_matched_auroc"] <= 1.0 and len(entry["length_matched_auroc_ci"]) == 2
