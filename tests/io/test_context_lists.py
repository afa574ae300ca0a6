"""A context is a list of passages: RAGAS, DeepEval, Parquet lists and CSV JSON-array cells read and score
exactly like the plain file whose context is the passages joined by a blank line."""

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sgi_core.embedding import load_encoder
from sgi_core.errors import SGIInputError
from sgi_core.io.chunks import raw_chunks
from sgi_core.io.limits import InputLimits
from sgi_core.io.passages import PASSAGE_SEPARATOR, context_passages
from sgi_core.io.reading import read_table
from sgi_core.io.triples import load_triples, validate_triples
from sgi_core.scoring import score_table

# (question, passages, response, reference answer): commas, quotes, a newline inside a passage,
# non-ASCII text, one passage alone and a row with no passage at all.
ROWS = [
    ("What is the capital of France?", ["Paris is the capital of France.", "It lies on the Seine."],
     "The capital of France is Paris.", "Paris"),
    ("Who wrote Hamlet?", ["Hamlet is a tragedy by William Shakespeare, written around 1600."],
     "William Shakespeare wrote Hamlet.", "Shakespeare"),
    ("How tall is Mont Blanc?",
     ['Mont Blanc rises to 4,806 m, "the roof of Europe".', "Its height varies\nwith the snow."],
     "Mont Blanc is about 4,806 metres high.", "4,806 m"),
    ("Quelle est la langue officielle du Québec ?", ["Le français est la langue officielle du Québec.",
                                                     "Montréal est sa plus grande ville.", "Æsir, ß, 東京."],
     "Au Québec, la langue officielle est le français.", "le français"),
    ("When did Apollo 11 land?", ["Apollo 11 landed on the Moon on 20 July 1969.", "Armstrong stepped out first."],
     "It landed in 1972, piloted by Buzz Aldrin alone.", "20 July 1969"),
    ("What does a mitochondrion do?", ["Mitochondria produce most of the cell's ATP."],
     "Mitochondria store the genetic code of plants.", "They make ATP"),
    ("Which river flows through Vienna?", ["[1] The Danube flows through Vienna.", "Vienna is Austria's capital."],
     "The Danube flows through Vienna.", "The Danube"),
    ("What is the boiling point of water?", [], "Water boils at 100 degrees Celsius at sea level.", "100 °C"),
]
N = len(ROWS)
JOINED = ["\n\n".join(passages) for _, passages, _, _ in ROWS]
TEXTS = ["question", "context", "response"]


def write_plain_csv(path):
    pd.DataFrame({"question": [r[0] for r in ROWS], "context": JOINED,
                  "response": [r[2] for r in ROWS]}).to_csv(path, index=False)
    return path


def write_ragas_jsonl(path):
    lines = (json.dumps({"user_input": q, "retrieved_contexts": p, "response": r, "reference": ref},
                        ensure_ascii=False) for q, p, r, ref in ROWS)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def deepeval_records():
    # The keys of DeepEval's EvaluationDataset.save_as(file_type="json"); "context" is the ideal context.
    return [{"input": q, "actual_output": r, "expected_output": ref, "retrieval_context": p, "context": None,
             "name": None, "comments": None, "source_file": None, "tools_called": None, "expected_tools": None,
             "additional_metadata": {"case": i}} for i, (q, p, r, ref) in enumerate(ROWS)]


def write_deepeval_json(path):
    path.write_text(json.dumps(deepeval_records(), ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def write_parquet(path):
    contexts = pa.array([r[1] for r in ROWS], pa.list_(pa.string()))
    table = pa.table({"question": [r[0] for r in ROWS], "contexts": contexts, "answer": [r[2] for r in ROWS]})
    pq.write_table(table, path)
    return path


def write_csv_cells(path, sep=","):
    pd.DataFrame({"question": [r[0] for r in ROWS], "contexts": [json.dumps(r[1], ensure_ascii=False) for r in ROWS],
                  "answer": [r[2] for r in ROWS]}).to_csv(path, index=False, sep=sep)
    return path


SHAPES = {
    "ragas.jsonl": write_ragas_jsonl,
    "deepeval.json": write_deepeval_json,
    "lists.parquet": write_parquet,
    "cells.csv": write_csv_cells,
    "cells.tsv": lambda path: write_csv_cells(path, sep="\t"),
}


@pytest.fixture(scope="module")
def encoder():
    return load_encoder("hashing")


@pytest.fixture
def plain(tmp_path):
    return load_triples(write_plain_csv(tmp_path / "plain.csv"))


@pytest.mark.parametrize("name", SHAPES)
def test_every_shape_reads_to_the_plain_files_texts_and_keeps_the_passages(tmp_path, plain, name):
    table = load_triples(SHAPES[name](tmp_path / name))
    pd.testing.assert_frame_equal(table.frame[TEXTS], plain.frame[TEXTS])
    assert table.passages == tuple(tuple(r[1]) for r in ROWS)
    assert table.unscorable == plain.unscorable == {N: "empty context"}
    assert plain.passages is None
    assert not [w for w in table.warnings if "list" in w]


@pytest.mark.parametrize("name", SHAPES)
def test_every_shape_scores_like_the_plain_file(tmp_path, plain, encoder, name):
    scored = score_table(load_triples(SHAPES[name](tmp_path / name)), encoder)
    expected = score_table(plain, encoder)
    d_sgi = np.abs(scored["sgi"].to_numpy() - expected["sgi"].to_numpy())
    assert np.nanmax(d_sgi) <= 1e-6
    assert np.isnan(scored["sgi"].iloc[-1]) and np.isnan(expected["sgi"].iloc[-1])
    assert scored["sgi_status"].tolist() == expected["sgi_status"].tolist()


def test_the_joined_text_is_the_passages_with_a_blank_line_between(tmp_path):
    table = load_triples(write_ragas_jsonl(tmp_path / "r.jsonl"))
    assert PASSAGE_SEPARATOR == "\n\n"
    assert table.frame["context"].iloc[0] == "Paris is the capital of France.\n\nIt lies on the Seine."
    assert table.frame["context"].iloc[2] == ('Mont Blanc rises to 4,806 m, "the roof of Europe".\n\n'
                                              "Its height varies\nwith the snow.")


def test_a_list_is_not_embedded_as_its_json_text(tmp_path, encoder):
    # What the reader did before: the context embedded was the list's JSON text, and SGI moved.
    table = load_triples(write_csv_cells(tmp_path / "c.csv"))
    as_json = replace(table, frame=table.frame.assign(context=table.frame["contexts"]))
    assert as_json.frame["context"].iloc[0] == '["Paris is the capital of France.", "It lies on the Seine."]'
    d_sgi = np.abs(score_table(table, encoder)["sgi"] - score_table(as_json, encoder)["sgi"])
    assert np.nanmax(d_sgi) > 1e-3


def test_ragas_and_deepeval_names_map_to_the_roles(tmp_path):
    ragas = load_triples(write_ragas_jsonl(tmp_path / "r.jsonl"))
    assert ragas.mapping.to_dict() == {"question": "user_input", "context": "retrieved_contexts",
                                       "response": "response", "label": None}
    assert ragas.frame["reference"].tolist() == [r[3] for r in ROWS]
    records = deepeval_records()
    records[0]["context"] = ["The ideal context."]
    path = tmp_path / "d.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    deepeval = load_triples(path)
    assert deepeval.mapping.to_dict() == {"question": "input", "context": "retrieval_context",
                                          "response": "actual_output", "label": None}
    # DeepEval's "context" is the ideal one: kept, renamed, not scored.
    assert deepeval.frame["input_context"].iloc[0] == '["The ideal context."]'
    assert deepeval.frame["context"].iloc[0] == JOINED[0]


def test_a_json_array_of_records_reads_like_json_lines(tmp_path):
    records = deepeval_records()
    array = read_table(write_deepeval_json(tmp_path / "d.json"))
    lines = tmp_path / "d.jsonl"
    lines.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records), encoding="utf-8")
    pd.testing.assert_frame_equal(array, read_table(lines))
    assert len(array) == N and array["retrieval_context"].iloc[1] == json.dumps(ROWS[1][1], ensure_ascii=False)


def test_parquet_lists_read_under_limits_and_by_chunks(tmp_path):
    path = write_parquet(tmp_path / "l.parquet")
    assert load_triples(path, limits=InputLimits()).passages == tuple(tuple(r[1]) for r in ROWS)
    passages, first_row = [], 1
    for frame in raw_chunks(path, "l.parquet", 3):
        part = validate_triples(frame, first_row=first_row, whole_file=False)
        passages += part.passages
        first_row += len(frame)
    assert tuple(passages) == tuple(tuple(r[1]) for r in ROWS)


def test_subset_takes_the_passages_of_its_rows(tmp_path):
    table = load_triples(write_ragas_jsonl(tmp_path / "r.jsonl"))
    part = table.subset([4, 0])
    assert part.passages == (tuple(ROWS[4][1]), tuple(ROWS[0][1]))
    assert part.frame["context"].tolist() == [JOINED[4], JOINED[0]]
    assert [len(c.passages) for c in table.chunks(3)] == [3, 3, 2]


def test_text_cells_beside_lists_are_one_passage_each():
    found, warnings = context_passages(pd.Series(['["a", "b"]', "[1] Smith (2020) says so.", "", np.nan, "[]"]))
    assert found.passages == (("a", "b"), ("[1] Smith (2020) says so.",), (), (), ())
    assert found.text == ["a\n\nb", "[1] Smith (2020) says so.", "", "", ""]
    assert warnings == []


@pytest.mark.parametrize("cells, first, rows", [
    (['["a", 3]', '["b"]', '[{"id": "d1"}]'], "row 1, is 3 (int)", "rows 1, 3"),
    (['["a"]', '[["nested"]]'], "row 2, is ['nested'] (list)", "row 2"),
    (['["a"]', "[null]"], "row 2, is null", "row 2"),
    (["[1, 2]"], "row 1, is 1 (int)", "row 1"),
])
def test_a_list_of_anything_but_strings_is_refused_naming_column_rows_and_the_passage(cells, first, rows):
    frame = pd.DataFrame({"question": ["q?"] * len(cells), "contexts": cells, "answer": ["an answer"] * len(cells)})
    with pytest.raises(SGIInputError) as caught:
        validate_triples(frame, source="runs.csv")
    assert str(caught.value) == (
        f"the context lists hold passages that are not strings; the first, in {first} (file 'runs.csv', column "
        f"'contexts', {rows}). Give each row's passages as a list of strings, e.g. [\"first passage\", "
        '"second passage"] (in a CSV cell: that JSON text, with double quotes), or map another column as the context'
    )


def test_a_parquet_list_of_documents_is_refused_with_the_file_row(tmp_path):
    # Trace exports keep retrieved documents as structs; their text must be picked out first.
    path = tmp_path / "docs.parquet"
    documents = [[{"id": "d1", "content": "Paris is in France."}], None, [{"id": "d2", "content": "Lyon too."}]]
    pq.write_table(pa.table({"question": ["q1", "q2", "q3"], "contexts": documents, "answer": ["a1", "a2", "a3"]}),
                   path)
    with pytest.raises(SGIInputError, match=r"^the context lists hold passages that are not strings; the first, in "
                                            r"row 1, is \{'id': 'd1', 'content': 'Paris is in France\.'\} \(dict\) "
                                            r"\(file '.*docs\.parquet', column 'contexts', rows 1, 3\)\. Give each"):
        load_triples(path)


def test_text_that_looks_like_a_list_but_is_not_json_stays_text_with_a_warning(tmp_path):
    path = tmp_path / "p.csv"
    contexts = ["['Paris is in France.', 'It is big.']", '["cut off by the sheet', "plain text", "[1] A citation."]
    pd.DataFrame({"question": ["q"] * 4, "context": contexts, "response": ["a response of some length"] * 4}).to_csv(
        path, index=False)
    table = load_triples(path)
    assert table.passages is None
    assert table.frame["context"].tolist() == contexts
    assert ("the context in column 'context' looks like a list but is not a JSON array in rows 1, 2: it is scored "
            'as that text. To score it as passages, write it as a JSON array of strings in double quotes, e.g. '
            '["first passage", "second passage"]') in table.warnings


def test_an_existing_plain_csv_reads_as_before():
    raw = pd.read_csv("sample_data/halueval_qa_sample.csv", dtype=str, keep_default_na=False)
    table = load_triples("sample_data/halueval_qa_sample.csv")
    assert table.passages is None
    assert table.frame["context"].tolist() == raw["context"].tolist()
    assert table.mapping.context == "context" and not [w for w in table.warnings if "list" in w]


def test_a_scored_csv_of_a_parquet_with_passages_writes_them_as_the_json_array_it_reads_back(tmp_path):
    from sgi_core.io.export import write_table

    frame = pd.DataFrame({"question": ["q?"], "context": [np.array(["first passage", "second"], dtype=object)],
                          "response": ["an answer"]})
    write_table(frame, tmp_path / "out.csv")
    written = pd.read_csv(tmp_path / "out.csv")
    assert json.loads(written["context"].iloc[0]) == ["first passage", "second"]


def test_a_parquet_list_counts_as_its_joined_text_under_the_cell_and_file_limits(tmp_path):
    path = tmp_path / "long.parquet"
    contexts = pa.array([["a" * 10, "b" * 10], ["c"], None], pa.list_(pa.string()))
    pq.write_table(pa.table({"question": ["q1", "q2", "q3"], "contexts": contexts, "answer": ["x", "y", "z"]}), path)
    # Row 1 is scored as 10 + 2 + 10 = 22 characters: "aaaaaaaaaa\n\nbbbbbbbbbb".
    assert len(load_triples(path).frame["context"].iloc[0]) == 22
    with pytest.raises(SGIInputError, match=r"a cell has 22 characters; the limit is 21 characters per cell "
                                            r"\(file '.*long\.parquet', column 'contexts', row 1\)"):
        load_triples(path, limits=InputLimits(max_cell_chars=21))
    assert load_triples(path, limits=InputLimits(max_cell_chars=22)).passages[0] == ("a" * 10, "b" * 10)
    # Every character counts toward the file's total: 2 + 2 + 2 question, 22 + 1 context, 3 answer characters.
    with pytest.raises(SGIInputError, match="the file's text cells hold at least 32 characters"):
        load_triples(path, limits=InputLimits(max_chars=31))
