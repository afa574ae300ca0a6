"""Every hostile file through ``python -m sgi_core score``: a one-line error, or every row written back."""

import os
import subprocess
import sys

import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.io import chunks
from tests.conftest import REPO
from tests.reliability.hostile_files import FORMULAS, REFUSED, SCORED, TRIPLE, csv_lines

# Where a file read two rows at a time is told apart from the same file read whole.
STREAMED_MESSAGES = {
    # the streamed reader checks a whole byte-order-marked file without locating the bad byte
    "UTF-16 byte-order mark on odd bytes": "the file is not valid UTF-16 text past its start (file '{source}'). "
                                           "Save it again as UTF-8",
    # scoring stops at the first chunk with a bad label: only its rows are named
    "unknown labels": "unknown label values 'maybe' (file '{source}', column 'label', row 2). Use 1/0, true/false, "
                      "yes/no, grounded/hallucinated, valid/invalid or faithful/unfaithful, "
                      "or map the values (--label-map; the Data page's label values)",
}


def score(tmp_path, filename, content, capsys, output="scored.parquet", extra=()):
    source = tmp_path / filename
    source.write_bytes(content)
    out = tmp_path / output
    code = main(["score", str(source), "-o", str(out), "--model", "hashing", "--no-cache", *extra])
    return code, source, out, capsys.readouterr().err


@pytest.fixture
def streamed(monkeypatch):
    """Make the CLI read even tiny files chunk by chunk, two rows at a time."""
    monkeypatch.setattr(chunks, "WHOLE_READ_BYTES", 0)
    return ("--chunk-rows", "2")


def warning_lines(stderr):
    return [line.removeprefix("warning: ") for line in stderr.splitlines() if line.startswith("warning: ")]


@pytest.mark.parametrize("case", REFUSED, ids=lambda case: case.id)
def test_refused_with_one_line_reason(tmp_path, capsys, case):
    code, source, out, stderr = score(tmp_path, case.filename, case.content, capsys)
    assert code == 2
    assert stderr == f"error: {case.message.format(source=source)}\n"
    assert not out.exists()


@pytest.mark.parametrize("case", SCORED, ids=lambda case: case.id)
def test_every_row_written_in_order(tmp_path, capsys, case):
    code, _, out, stderr = score(tmp_path, case.filename, case.content, capsys)
    assert code == 0
    assert warning_lines(stderr) == case.warnings
    written = pd.read_parquet(out)
    assert written["input_row"].tolist() == list(range(1, len(case.status) + 1))
    assert written["sgi_status"].tolist() == case.status
    for column, values in case.cells.items():
        assert written[column].tolist() == values, column


@pytest.mark.parametrize("case", REFUSED, ids=lambda case: case.id)
def test_streamed_file_refused_with_one_line_reason(tmp_path, capsys, streamed, case):
    code, source, out, stderr = score(tmp_path, case.filename, case.content, capsys, extra=streamed)
    assert code == 2
    assert stderr == f"error: {STREAMED_MESSAGES.get(case.id, case.message).format(source=source)}\n"
    assert not out.exists()


@pytest.mark.parametrize("case", SCORED, ids=lambda case: case.id)
def test_streamed_file_written_row_for_row(tmp_path, capsys, streamed, case):
    code, _, out, _ = score(tmp_path, case.filename, case.content, capsys, extra=streamed)
    assert code == 0
    written = pd.read_parquet(out)
    assert written["input_row"].tolist() == list(range(1, len(case.status) + 1))
    assert written["sgi_status"].tolist() == case.status
    for column, values in case.cells.items():
        assert written[column].tolist() == values, column


def test_formula_cells_escaped_in_csv_and_exact_in_parquet(tmp_path, capsys):
    case = next(case for case in SCORED if case.id == "cells starting with =, +, -, @")
    code, source, out, _ = score(tmp_path, case.filename, case.content, capsys, output="scored.csv")
    assert code == 0
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert written[["question", "context", "response", "note"]].iloc[0].tolist() == ["'" + f for f in FORMULAS]
    main(["score", str(source), "-o", str(tmp_path / "scored.parquet"), "--model", "hashing", "--no-cache"])
    exact = pd.read_parquet(tmp_path / "scored.parquet")
    assert exact[["question", "context", "response", "note"]].iloc[0].tolist() == list(FORMULAS)


@pytest.mark.parametrize("target, message", [
    ("missing-folder/out.csv", "the folder '{out.parent}' for the output does not exist (file '{out}'). "
                               "Create the folder first, or write somewhere else"),
    ("out.xlsx", "cannot write '.xlsx' files (file '{out}'). Use .csv or .parquet"),
])
def test_unwritable_output_is_a_one_line_error(tmp_path, capsys, target, message):
    source = tmp_path / "in.csv"
    source.write_bytes(csv_lines("question,context,response", ",".join(TRIPLE)))
    out = tmp_path / target
    assert main(["score", str(source), "-o", str(out), "--model", "hashing", "--no-cache"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"error: {message.format(out=out)}"


@pytest.mark.parametrize("make_input, message", [
    (lambda tmp: tmp / "absent.csv", "error: file not found (file '{path}')"),
    (lambda tmp: tmp,
     "error: this is a folder, not a file (file '{path}'). Use a CSV, TSV, JSON Lines or Parquet file"),
])
def test_input_path_that_is_not_a_file(tmp_path, capsys, make_input, message):
    path = make_input(tmp_path)
    assert main(["score", str(path), "-o", str(tmp_path / "out.csv"), "--model", "hashing"]) == 2
    assert capsys.readouterr().err == message.format(path=path) + "\n"


def test_real_entry_point_exits_2_without_traceback(tmp_path):
    source = tmp_path / "workbook.csv"
    source.write_bytes(next(case for case in REFUSED if case.id == "xlsx renamed .csv").content)
    result = subprocess.run([sys.executable, "-m", "sgi_core", "score", str(source), "-o", str(tmp_path / "o.csv"),
                             "--model", "hashing"], capture_output=True, text=True, cwd=REPO, timeout=120,
                            env={**os.environ, "SGI_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 2
    assert result.stderr == (f"error: the file is a ZIP archive (an Excel .xlsx workbook is one), not a text table "
                             f"(file '{source}'). Save the sheet as CSV (in Excel: File > Save As > CSV UTF-8)\n")
