"""Every accepted label form, mixed forms, unknown values, one class and no labels, in the library and the CLI."""

import re

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.embedding import HashingEncoder
from sgi_core.errors import SGIInputError
from sgi_core.io.triples import load_triples, parse_labels
from sgi_core.scoring import score_table
from tests.reliability.hostile_files import TRIPLE, csv_lines

DIRECTION_FREE_POSITIVE = ["1", "1.0", "true", "True", "TRUE", "yes", "Yes", "y", "t", "pass", " 1 "]
DIRECTION_FREE_NEGATIVE = ["0", "0.0", "false", "False", "no", "NO", "n", "f", "fail", " no "]
GROUNDED_WORDS = ["grounded", "valid", "faithful", "correct", "supported", "right", "truthful", "Valid", " GROUNDED "]
HALLUCINATED_WORDS = ["hallucinated", "hallucination", "invalid", "unfaithful", "incorrect", "unsupported", "wrong",
                      "false_answer", "Hallucinated"]
MISSING = ["", "   ", "nan", "NaN", "na", "NA", "n/a", "None", "null", "NULL"]


@pytest.mark.parametrize("label_positive, positive, negative", [("grounded", 1.0, 0.0), ("hallucinated", 0.0, 1.0)])
def test_every_accepted_form(label_positive, positive, negative):
    values = DIRECTION_FREE_POSITIVE + DIRECTION_FREE_NEGATIVE + GROUNDED_WORDS + HALLUCINATED_WORDS + MISSING
    expected = ([positive] * len(DIRECTION_FREE_POSITIVE) + [negative] * len(DIRECTION_FREE_NEGATIVE)
                + [1.0] * len(GROUNDED_WORDS) + [0.0] * len(HALLUCINATED_WORDS) + [np.nan] * len(MISSING))
    np.testing.assert_array_equal(parse_labels(pd.Series(values), label_positive=label_positive), expected)


@pytest.mark.parametrize("values, expected", [
    ([True, False, None], [1.0, 0.0, np.nan]),
    ([1, 0, 1], [1.0, 0.0, 1.0]),
    ([1.0, 0.0, np.nan], [1.0, 0.0, np.nan]),
    (["1", 0, True, "valid", None], [1.0, 0.0, 1.0, 1.0, np.nan]),
])
def test_typed_label_cells(values, expected):
    np.testing.assert_array_equal(parse_labels(pd.Series(values, dtype=object)), expected)


def labelled_file(column, labels):
    return csv_lines(f"question,context,response,{column}", *(",".join(TRIPLE) + f",{label}" for label in labels))


MIXED = ["1", "yes", "grounded", "FALSE", " valid ", "0.0", "", "NaN", "hallucinated", "no"]


def rewritten(rows, words=""):
    return (f"the label column 'label' is rewritten as 1 = grounded, 0 = hallucinated ({words}), which changes "
            f"{rows}; the original cells are kept in column 'input_label'")


@pytest.mark.parametrize("column, expected, kept_as, notes", [
    # "1" and "0.0" read as the numbers they become; the words, "FALSE" and "no" do not
    ("label", [1.0, 1.0, 1.0, 0.0, 1.0, 0.0, np.nan, np.nan, 0.0, 0.0], "input_label",
     [rewritten("rows 2, 3, 4, 5, 9, 10", "'yes' -> 1, 'grounded' -> 1, 'FALSE' -> 0, 'valid' -> 1, "
                                          "'hallucinated' -> 0, 'no' -> 0")]),
    # a column named for hallucination flips the direction-free forms, never the class words
    ("is_hallucinated", [0.0, 0.0, 1.0, 1.0, 1.0, 1.0, np.nan, np.nan, 0.0, 1.0], "is_hallucinated", []),
])
def test_mixed_forms_in_one_column_library_and_cli(tmp_path, capsys, column, expected, kept_as, notes):
    content = labelled_file(column, MIXED)
    missing_warning = "the label is missing in rows 7, 8: those rows count as unlabelled"
    table = load_triples(content, name="mixed.csv")
    np.testing.assert_array_equal(table.frame["label"].to_numpy(), expected)
    assert table.frame[kept_as].tolist() == MIXED
    assert table.warnings == notes + [missing_warning]
    source, out = tmp_path / "mixed.csv", tmp_path / "out.parquet"
    source.write_bytes(content)
    assert main(["score", str(source), "-o", str(out), "--model", "hashing", "--no-cache"]) == 0
    written = pd.read_parquet(out)
    np.testing.assert_array_equal(written["label"].to_numpy(), expected)
    assert written[kept_as].tolist() == MIXED
    assert f"warning: {missing_warning}" in capsys.readouterr().err.splitlines()


def test_label_column_under_another_name_is_kept_as_written(tmp_path):
    source, out = tmp_path / "kept.csv", tmp_path / "out.parquet"
    source.write_bytes(labelled_file("is_hallucinated", MIXED))
    assert main(["score", str(source), "-o", str(out), "--model", "hashing", "--no-cache"]) == 0
    assert pd.read_parquet(out)["is_hallucinated"].tolist() == MIXED


def test_label_positive_flag_overrides_the_column_name(tmp_path, capsys):
    source, out = tmp_path / "flag.csv", tmp_path / "out.parquet"
    source.write_bytes(labelled_file("label", ["1", "0"]))
    assert main(["score", str(source), "-o", str(out), "--model", "hashing", "--no-cache",
                 "--label-positive", "hallucinated"]) == 0
    written = pd.read_parquet(out)
    assert written["label"].tolist() == [0.0, 1.0]
    assert written["input_label"].tolist() == ["1", "0"]
    expected = rewritten("rows 1, 2", "'1' -> 0, '0' -> 1")  # the flag reads 1 as hallucinated
    assert f"warning: {expected}" in capsys.readouterr().err.splitlines()


def test_unknown_values_name_every_row_library_and_cli(tmp_path, capsys):
    labels = ["1"] + ["maybe"] * 12 + ["0", "-1"]
    content = labelled_file("label", labels)
    message = ("unknown label values 'maybe', '-1' (file '{source}', column 'label', rows 2, 3, 4, 5, 6, 7, 8, 9, 10, "
               "11 and 3 more). Use 1/0, true/false, yes/no, grounded/hallucinated, valid/invalid or "
               "faithful/unfaithful, or map the values (--label-map; the Data page's label values)")
    with pytest.raises(SGIInputError, match=f"^{re.escape(message.format(source='u.csv'))}$") as raised:
        load_triples(content, name="u.csv")
    assert raised.value.rows == list(range(2, 14)) + [15]
    source = tmp_path / "u.csv"
    source.write_bytes(content)
    assert main(["score", str(source), "-o", str(tmp_path / "o.csv"), "--model", "hashing", "--no-cache"]) == 2
    assert capsys.readouterr().err == f"error: {message.format(source=source)}\n"


@pytest.mark.parametrize("labels, only, words", [
    (["1", "yes", "valid"], "grounded", "'yes' -> 1, 'valid' -> 1"),
    (["0", "no", "hallucinated"], "hallucinated", "'no' -> 0, 'hallucinated' -> 0"),
])
def test_single_class_is_scored_with_a_note(tmp_path, capsys, labels, only, words):
    content = labelled_file("label", labels)
    note = (f"only one label class is present (every labelled row is {only}): scores are computed, but label-based "
            "metrics (AUROC, effect size, calibration, thresholds) are undefined")
    table = load_triples(content, name="one.csv")
    assert table.warnings == [rewritten("rows 2, 3", words), note]
    scored = score_table(table, HashingEncoder(64))
    assert scored["sgi_status"].tolist() == ["ok"] * 3 and scored["sgi"].notna().all()
    source, out = tmp_path / "one.csv", tmp_path / "out.parquet"
    source.write_bytes(content)
    assert main(["score", str(source), "-o", str(out), "--model", "hashing", "--no-cache"]) == 0
    assert pd.read_parquet(out)["sgi"].notna().sum() == 3
    assert f"warning: {note}" in capsys.readouterr().err.splitlines()


@pytest.mark.parametrize("labels", [["", "", ""], ["NaN", "null", " "]])
def test_all_missing_labels_mean_unlabelled(tmp_path, capsys, labels):
    content = labelled_file("label", labels)
    note = "the label column 'label' is empty in every row: treated as unlabelled"
    table = load_triples(content, name="none.csv")
    assert not table.has_labels
    assert table.warnings == [note]
    assert table.frame["label"].isna().all()
    source, out = tmp_path / "none.csv", tmp_path / "out.parquet"
    source.write_bytes(content)
    assert main(["score", str(source), "-o", str(out), "--model", "hashing", "--no-cache"]) == 0
    written = pd.read_parquet(out)
    assert written["label"].isna().all() and written["sgi"].notna().all()
    assert f"warning: {note}" in capsys.readouterr().err.splitlines()
