import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.io.mapping import ColumnMapping, detect_mapping
from sgi_core.io.triples import load_triples, parse_labels, read_table, validate_triples


def csv_bytes(text: str, encoding: str = "utf-8") -> bytes:
    return text.encode(encoding)


def test_aliases_are_detected_and_extra_columns_kept():
    raw = b"query,knowledge,answer,is_valid,judge\nq1,c1,r1,yes,0.9\nq2,c2,r2,no,0.1\n"
    table = load_triples(raw, name="x.csv")
    assert table.mapping == ColumnMapping("query", "knowledge", "answer", "is_valid")
    assert table.frame["label"].tolist() == [1.0, 0.0]
    assert table.frame["judge"].tolist() == ["0.9", "0.1"]
    assert table.frame["input_row"].tolist() == [1, 2]


@pytest.mark.parametrize(
    "values, positive, expected",
    [
        (["1", "0", "true", "False", "YES", "no"], "grounded", [1, 0, 1, 0, 1, 0]),
        (["1", "0", "true", "false"], "hallucinated", [0, 1, 0, 1]),
        # class words keep their meaning whatever the direction
        (["grounded", "hallucinated", "valid", "invalid", "faithful", "unfaithful"], "hallucinated",
         [1, 0, 1, 0, 1, 0]),
        (["1.0", "", "nan", "0"], "grounded", [1, np.nan, np.nan, 0]),
    ],
)
def test_label_forms(values, positive, expected):
    np.testing.assert_array_equal(parse_labels(pd.Series(values), label_positive=positive), expected)


def test_hallucination_named_column_flips_direction():
    table = load_triples(b"question,context,response,is_hallucinated\nq,c,r,1\nq,c,r2,0\n", name="h.csv")
    assert table.label_positive == "hallucinated"
    assert table.frame["label"].tolist() == [0.0, 1.0]


def test_unknown_labels_name_the_rows():
    raw = b"question,context,response,label\nq,c,r,1\nq,c,r,maybe\nq,c,r,0\nq,c,r,??\n"
    with pytest.raises(SGIInputError, match=r"unknown label values 'maybe', '\?\?'"
                                            r".*file 'f.csv', column 'label', rows 2, 4"):
        load_triples(raw, name="f.csv")


def test_missing_required_column_lists_present_columns():
    with pytest.raises(SGIInputError, match=r"no column for response.*Columns present: question, context"):
        load_triples(b"question,context\nq,c\n", name="f.csv")


def test_empty_text_rows_are_kept_and_marked():
    raw = b"question,context,response\nq,c,r\nq,c,   \nq,,r\n"
    table = load_triples(raw, name="f.csv")
    assert table.n_rows == 3
    assert table.unscorable == {2: "empty response", 3: "empty context"}
    assert not table.has_labels


def test_text_cells_are_read_verbatim():
    table = load_triples(b"question,context,response\nNA,None,007\n", name="f.csv")
    assert table.frame.loc[0, ["question", "context", "response"]].tolist() == ["NA", "None", "007"]


@pytest.mark.parametrize("sep", [",", ";", "\t"])
def test_separators(sep):
    raw = sep.join(["question", "context", "response"]) + "\n" + sep.join(["a b", "c d", "e f"]) + "\n"
    assert read_table(raw.encode(), name="f.csv").columns.tolist() == ["question", "context", "response"]


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "latin-1"])
def test_encodings(encoding):
    raw = "question,context,response\nqué,café,naïve\n".encode(encoding)
    frame = read_table(raw, name="f.csv")
    assert frame.iloc[0].tolist() == ["qué", "café", "naïve"]


def test_jsonl_and_parquet(tmp_path):
    rows = [{"question": "q", "context": "c", "response": "r", "label": 1}]
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert load_triples(jsonl).frame["label"].tolist() == [1.0]
    parquet = tmp_path / "t.parquet"
    pd.DataFrame(rows).to_parquet(parquet)
    assert load_triples(parquet).frame["response"].tolist() == ["r"]


def test_bad_files():
    with pytest.raises(SGIInputError, match="empty"):
        read_table(b"", name="e.csv")
    with pytest.raises(SGIInputError, match="binary"):
        read_table(b"\x00\x01\x02garbage", name="b.csv")
    with pytest.raises(SGIInputError, match=r"invalid JSON.*row 2"):
        read_table(b'{"question": "q"}\n{oops\n', name="b.jsonl")
    with pytest.raises(SGIInputError, match="duplicate column names: question"):
        read_table(b"question,question,context,response\n1,2,3,4\n", name="d.csv")


def test_explicit_mapping_wins_and_bad_mapping_is_named():
    frame = pd.DataFrame({"a": ["q"], "b": ["c"], "c": ["r"]})
    table = validate_triples(frame, mapping={"question": "a", "context": "b", "response": "c"})
    assert table.frame[["question", "context", "response"]].iloc[0].tolist() == ["q", "c", "r"]
    with pytest.raises(SGIInputError, match="the context column 'zzz' is not in the file"):
        validate_triples(frame, mapping={"question": "a", "context": "zzz", "response": "c"})


def test_detect_mapping_none_when_absent():
    assert detect_mapping(["foo", "bar"]) == {"question": None, "context": None, "response": None, "label": None}
