"""A label map says which values of a label column mean grounded, hallucinated or unlabelled."""

import numpy as np
import pandas as pd
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.io.labels import parse_label_map, parse_labels
from sgi_core.io.triples import validate_triples

FAITHDIAL = ["Entailment", "Partial Hallucination", "Hallucination", "Generic", "entailment ", "Uncooperative", ""]


def test_parse_label_map_reads_entries_and_refuses_bad_ones():
    assert parse_label_map("Entailment=grounded,Partial Hallucination=Hallucinated, Generic=unlabelled") == {
        "Entailment": "grounded", "Partial Hallucination": "hallucinated", "Generic": "unlabelled"}
    with pytest.raises(SGIInputError, match="cannot read the label map entry 'Entailment=maybe'"):
        parse_label_map("Entailment=maybe")
    with pytest.raises(SGIInputError, match="cannot read the label map entry 'Entailment'"):
        parse_label_map("Entailment")
    with pytest.raises(SGIInputError, match="the label map is empty"):
        parse_label_map(" , ")


def test_without_a_map_the_values_are_refused_and_the_hint_names_the_map():
    with pytest.raises(SGIInputError, match="unknown label values 'Entailment'.*--label-map"):
        parse_labels(pd.Series(FAITHDIAL))


def test_mapped_values_and_unmapped_ones_kept_unlabelled():
    label_map = {"Entailment": "grounded", "Partial Hallucination": "hallucinated", "Hallucination": "hallucinated",
                 "Generic": "unlabelled"}
    labels = parse_labels(pd.Series(FAITHDIAL), label_map=label_map)
    np.testing.assert_array_equal(labels, [1.0, 0.0, 0.0, np.nan, 1.0, np.nan, np.nan])


def test_the_table_keeps_every_row_and_says_how_many_are_unmapped():
    frame = pd.DataFrame({"question": ["q"] * 7, "context": ["c"] * 7, "response": ["r"] * 7,
                          "begin_label": FAITHDIAL})
    table = validate_triples(frame, mapping={"label": "begin_label"},
                             label_map={"Entailment": "grounded", "Hallucination": "hallucinated",
                                        "Partial Hallucination": "hallucinated"})
    assert table.n_rows == 7
    assert table.frame["label"].tolist()[:3] == [1.0, 0.0, 0.0]
    assert ("2 rows have label values the label map does not name ('Generic', 'Uncooperative'): they are kept, "
            "unlabelled (rows 4, 6)") in table.warnings


def _faithdial_file(path):
    from tests.conftest import SAMPLE_CSV

    sample = pd.read_csv(SAMPLE_CSV)
    begin = np.where(sample["label"] == 1, "Entailment", "Hallucination")
    begin[:3] = "Generic"
    sample.drop(columns=["answer_type"]).assign(label=begin).to_csv(path, index=False)


def test_score_and_report_read_a_label_map(tmp_path, capsys):
    from sgi_core.cli import main

    path = tmp_path / "faithdial.csv"
    _faithdial_file(path)
    label_map = "Entailment=grounded,Hallucination=hallucinated"
    out = tmp_path / "scored.csv"
    assert main(["score", str(path), "-o", str(out), "--model", "hashing-64"]) == 2
    assert main(["score", str(path), "-o", str(out), "--model", "hashing-64", "--label-map", label_map]) == 0
    assert "3 rows have label values the label map does not name ('Generic')" in capsys.readouterr().err
    written = pd.read_csv(out)
    assert len(written) == 300 and written["label"].isna().sum() == 3
    assert main(["report", str(path), "--models", "hashing-64", "--n-boot", "0", "--label-map", label_map]) == 0


def test_report_refuses_a_label_copy_or_an_id_as_a_detector(tmp_path, capsys):
    from sgi_core.cli import main
    from tests.conftest import SAMPLE_CSV

    for column, why in (("answer_type", "'answer_type' determines the label"), ("pair_id", "is an id column")):
        assert main(["report", str(SAMPLE_CSV), "--models", "hashing", "--n-boot", "0", "--detector", column]) == 2
        assert why in capsys.readouterr().err
