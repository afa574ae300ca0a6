"""Hostile inputs that once crashed or lost data: rewritten columns, deep nesting, NUL bytes, random bytes."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.errors import SGIInputError
from sgi_core.io import chunks
from sgi_core.io.export import to_csv_bytes
from sgi_core.io.reading import read_table
from sgi_core.io.triples import load_triples, validate_triples
from sgi_core.jsonio import MAX_JSON_DEPTH
from sgi_core.policy.sessions import FLAG_COLUMN, PROBABILITY_COLUMN, apply_session
from sgi_core.retrieval import parse_id_list, retrieval_metrics_from_frame
from sgi_core.stats.calibration import fit_calibrator
from tests.reliability.hostile_files import TRIPLE, csv_lines


def test_probability_and_flag_columns_of_the_input_survive_a_session():
    frame = pd.DataFrame({"question": [TRIPLE[0]], "context": [TRIPLE[1]], "response": [TRIPLE[2]],
                          PROBABILITY_COLUMN: ["from my judge"], FLAG_COLUMN: ["reviewed"]})
    table = validate_triples(frame)
    assert table.warnings == ["input columns p_grounded, flagged_hallucinated were renamed to input_p_grounded, "
                              "input_flagged_hallucinated"]
    scored = table.frame.assign(sgi=[1.5])
    calibrator = fit_calibrator([0.5, 1.0, 2.0, 3.0], [0, 0, 1, 1], method="platt")
    out = apply_session(scored, calibrator, threshold=1.0)
    assert out["input_p_grounded"].tolist() == ["from my judge"]
    assert out["input_flagged_hallucinated"].tolist() == ["reviewed"]
    assert out[PROBABILITY_COLUMN].tolist() == pytest.approx(calibrator.predict([1.5]).tolist())
    assert out[FLAG_COLUMN].tolist() == [False]  # 1.5 is at or above the threshold 1.0
    assert table.renamed == {PROBABILITY_COLUMN: "input_p_grounded", FLAG_COLUMN: "input_flagged_hallucinated"}


def test_the_label_column_is_kept_the_same_way_in_every_chunk(tmp_path, monkeypatch):
    # The first chunk holds only 1/0 (nothing rewritten), the second words: both chunks keep input_label.
    labels = ["1", "0", "1", "yes", "no", "grounded"]
    source = tmp_path / "in.csv"
    source.write_bytes(csv_lines("question,context,response,label",
                                 *(",".join(TRIPLE) + f",{label}" for label in labels)))
    monkeypatch.setattr(chunks, "WHOLE_READ_BYTES", 0)
    for out in (tmp_path / "out.csv", tmp_path / "out.parquet"):
        assert main(["score", str(source), "-o", str(out), "--model", "hashing-16", "--no-cache",
                     "--chunk-rows", "3"]) == 0
        written = read_table(out)
        assert written["input_label"].astype(str).tolist() == labels
        assert written["label"].astype(float).tolist() == [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
        assert written.columns.tolist()[:6] == ["question", "context", "response", "input_label", "label", "input_row"]


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_json_lines_cells_nest_to_the_fixed_limit_and_no_deeper():
    # Python's parser gives up near 1,000 levels, sooner on a deep stack; a fixed limit makes
    # the outcome the same everywhere: the record itself is one level, its cell the rest.
    def record(depth: int) -> bytes:
        return (json.dumps({"question": "q", "context": "c", "response": "r"})[:-1]
                + f', "ids": {nested(depth)}}}\n').encode()

    read = load_triples(record(MAX_JSON_DEPTH - 1), name="deep.jsonl")
    assert read.frame["ids"].tolist() == [nested(MAX_JSON_DEPTH - 1)]
    for depth in (MAX_JSON_DEPTH, 1_000, 1_020):
        with pytest.raises(SGIInputError, match=r"^JSON nested too deeply to read \(file 'deep\.jsonl', row 1\)"):
            load_triples(record(depth), name="deep.jsonl")


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deeply_nested_retrieved_ids_are_a_clear_error(depth):
    with pytest.raises(SGIInputError, match=r"^JSON nested too deeply to read \(file '<input>', column "
                                            r"'retrieved_ids', row 4\)\. Write ids as a flat JSON array"):
        parse_id_list(nested(depth), column="retrieved_ids", row=4)
    frame = pd.DataFrame({"retrieved_ids": ["d1|d2", nested(depth)], "relevant_ids": ["d1", "d2"]})
    with pytest.raises(SGIInputError, match=r"column 'retrieved_ids', row 2\)"):
        retrieval_metrics_from_frame(frame, source="r.csv")


def test_nul_characters_are_written_so_that_the_csv_can_be_scored_again(tmp_path):
    record = {"question": TRIPLE[0], "context": TRIPLE[1], "response": "The capital\u0000 of France is Paris.",
              "note\u0000": "\u0000=1+1"}
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(record) + "\n")
    first, second = tmp_path / "once.csv", tmp_path / "twice.csv"
    assert main(["score", str(source), "-o", str(first), "--model", "hashing-16", "--no-cache"]) == 0
    assert b"\x00" not in first.read_bytes()
    assert main(["score", str(first), "-o", str(second), "--model", "hashing-16", "--no-cache"]) == 0
    again = read_table(second)
    assert again["response"].tolist() == ["The capital\ufffd of France is Paris."]
    assert again["note\ufffd"].tolist() == ["\ufffd=1+1"]  # no formula once the NUL is gone


def test_to_csv_bytes_replaces_nul_in_cells_and_names():
    frame = pd.DataFrame({"a\x00": ["x\x00y", None], "n": [1, 2]})
    assert to_csv_bytes(frame) == "a\ufffd,n\r\nx\ufffdy,1\r\n,2\r\n".encode()


NOT_A_TABLE = re.compile(r"^the file (is binary, not text|is not a text table: it has no data rows, and its only line "
                         r"is not column names \((it holds control characters|it is not UTF-8 text and does not read "
                         r"as names)\))")


@pytest.mark.parametrize("size", [5, 8, 13, 21])
@pytest.mark.parametrize("seed", range(6))
def test_random_bytes_are_named_as_no_text_table(size, seed):
    raw = np.random.default_rng(seed).bytes(size)
    with pytest.raises(SGIInputError) as raised:
        read_table(raw, name="random.csv")
    assert NOT_A_TABLE.match(str(raised.value)), str(raised.value)


@pytest.mark.parametrize("content", [
    b"question,context,response\n",
    "r\u00e9ponse;frage;kontext".encode("cp1252"),
    "question;r\u00e9ponse".encode("utf-8"),
])
def test_a_real_header_without_rows_is_still_called_one(content):
    with pytest.raises(SGIInputError, match=r"^the file has column names but no data rows \(file 'h\.csv'\)"):
        read_table(content, name="h.csv")
