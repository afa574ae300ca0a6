"""CSV exports neutralise spreadsheet formulas; Parquet exports keep every value exactly."""

import io

import numpy as np
import pandas as pd
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.io.export import escape_formula_cell, escape_formula_cells, to_csv_bytes, write_table


@pytest.mark.parametrize("cell, expected", [
    ("=1+1", "'=1+1"),
    ("+SUM(A1:A2)", "'+SUM(A1:A2)"),
    ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
    ("@SUM(1+1)", "'@SUM(1+1)"),
    ("\t=1+1", "'\t=1+1"),
    ("\r=1+1", "'\r=1+1"),
    ("\n=1+1", "'\n=1+1"),
    ("\x00=1", "'\x00=1"),
    ("-", "'-"),
    ("--1", "'--1"),
    ("+1-1", "'+1-1"),
    # spreadsheets skip leading spaces and no-break spaces, and take full-width signs for formulas
    (" =1+1", "' =1+1"),
    ("\u00a0@SUM(1+1)", "'\u00a0@SUM(1+1)"),
    ("  \u00a0-2+3", "'  \u00a0-2+3"),
    ("\uff1d1+1", "'\uff1d1+1"),
    ("\uff0bSUM(A1)", "'\uff0bSUM(A1)"),
    ("\uff0d1", "'\uff0d1"),
    ("\x0b=1+1", "'\x0b=1+1"),
    ("\x0c=1+1", "'\x0c=1+1"),
    (" -0.5", " -0.5"),
    ("\u00a0+1e3", "\u00a0+1e3"),
    # plain numbers are read as numbers by spreadsheets, never run: left as written
    ("-0.5", "-0.5"),
    ("+1e3", "+1e3"),
    ("-7", "-7"),
    ("-.5", "-.5"),
    # formula characters later in the cell are not formulas
    ("a=1+1", "a=1+1"),
    ("", ""),
    (3, 3),
    (-2.5, -2.5),
    (None, None),
])
def test_escape_formula_cell(cell, expected):
    assert escape_formula_cell(cell) == expected


def test_numeric_columns_and_missing_values_are_left_alone():
    frame = pd.DataFrame({"sgi": [-0.5, np.nan], "n": [-3, 4], "flag": [True, False], "text": ["=x", None]})
    escaped = escape_formula_cells(frame)
    pd.testing.assert_frame_equal(escaped[["sgi", "n", "flag"]], frame[["sgi", "n", "flag"]])
    assert escaped["text"].iloc[0] == "'=x" and pd.isna(escaped["text"].iloc[1])


def test_column_names_are_escaped_too():
    frame = pd.DataFrame({"=HYPERLINK(\"x\")": ["a"], "@b": ["c"], "ok": ["d"]})
    assert escape_formula_cells(frame).columns.tolist() == ["'=HYPERLINK(\"x\")", "'@b", "ok"]


def test_csv_export_round_trips_escaped_text_exactly():
    cells = ["=1+1", "line one\nline two", "bare\rreturn", 'say "hi"', "a,b;c\td", "日本 🚀 مرحبا", "-0.5", ""]
    frame = pd.DataFrame({"text": cells, "sgi": np.arange(len(cells), dtype=float)})
    back = pd.read_csv(io.BytesIO(to_csv_bytes(frame)), dtype={"text": str}, keep_default_na=False)
    assert back["text"].tolist() == ["'=1+1"] + cells[1:]
    assert back["sgi"].tolist() == frame["sgi"].tolist()


def test_parquet_keeps_the_original_values(tmp_path):
    frame = pd.DataFrame({"question": ["=cmd|' /C calc'!A0", "+1", "@x"], "response": ["-2+3", "\t=1", "ok"],
                          "sgi": [1.5, np.nan, -0.25]})
    write_table(frame, tmp_path / "out.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "out.parquet"), frame)
    write_table(frame, tmp_path / "out.csv")
    assert (tmp_path / "out.csv").read_bytes() == to_csv_bytes(frame)


def test_unsupported_extension_is_refused(tmp_path):
    with pytest.raises(SGIInputError,
                       match=r"^cannot write '\.xlsx' files \(file '.*out\.xlsx'\)\. Use \.csv or \.parquet$"):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "out.xlsx")
    assert not (tmp_path / "out.xlsx").exists()
