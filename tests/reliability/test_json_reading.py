"""JSON that :func:`json.loads` crashes on or silently changes: one clear input error, wherever it is read."""

import json
import sys

import pytest

from sgi_core.cli import main
from sgi_core.errors import SGIInputError
from sgi_core.io.reading import read_table
from sgi_core.jsonio import MAX_JSON_DEPTH, loads_json, read_json_file
from sgi_core.retrieval import parse_id_list
from tests.reliability.hostile_files import TRIPLE

GOOD = json.dumps(dict(zip(("question", "context", "response"), TRIPLE)))
HUGE_INT = "1" * 5_000

# (case, JSON value placed in an input row's "extra" field, the message's start)
HOSTILE_VALUES = [
    ("integer of 5,000 digits", HUGE_INT, f"a JSON number has more than {sys.get_int_max_str_digits():,} digits"),
    ("1e400", "1e400", "a JSON number is too large for a floating-point value (it would be infinite)"),
    ("-1e400", "-1e400", "a JSON number is too large for a floating-point value (it would be infinite)"),
    ("NaN constant", "NaN", "NaN is not a JSON number"),
    ("Infinity constant", "-Infinity", "-Infinity is not a JSON number"),
    ("100,000-deep nesting", "[" * 100_000 + "]" * 100_000, "JSON nested too deeply to read"),
    ("lone surrogate", '"the capital \\ud800 of France"',
     "a JSON string holds a lone UTF-16 surrogate escape (\\ud800 to \\udfff), which is not text"),
]


def jsonl_with(value: str) -> bytes:
    return (GOOD + "\n" + GOOD[:-1] + f', "extra": {value}}}\n').encode()


@pytest.mark.parametrize("case, value, message", HOSTILE_VALUES, ids=[c[0] for c in HOSTILE_VALUES])
def test_a_hostile_value_in_a_json_lines_row_is_an_input_error_naming_file_and_line(case, value, message):
    with pytest.raises(SGIInputError) as caught:
        read_table(jsonl_with(value), name="rows.jsonl")
    assert str(caught.value) == f"{message} (file 'rows.jsonl', row 2). Each line must be one JSON object"


@pytest.mark.parametrize("case, value, message", HOSTILE_VALUES, ids=[c[0] for c in HOSTILE_VALUES])
def test_a_hostile_value_in_a_json_array_file_is_an_input_error(case, value, message):
    text = f"[{GOOD}, {GOOD[:-1]}, \"extra\": {value}}}]".encode()
    with pytest.raises(SGIInputError, match=rf"^{message[:20]}.*\(file 'rows\.json'\)\. Give one JSON array"):
        read_table(text, name="rows.json")


@pytest.mark.parametrize("case, value, message", HOSTILE_VALUES, ids=[c[0] for c in HOSTILE_VALUES])
def test_a_hostile_id_list_is_an_input_error_naming_the_column_and_row(case, value, message):
    with pytest.raises(SGIInputError) as caught:
        parse_id_list(f'["d1", {value}]', source="runs.csv", column="retrieved_ids", row=7)
    assert str(caught.value).startswith(f"{message} (file 'runs.csv', column 'retrieved_ids', row 7). ")


def test_a_repeated_key_in_a_row_is_refused_not_silently_overwritten():
    # json.loads keeps the last "response": the row would be scored on a text the user did not see first.
    line = GOOD[:-1] + ', "response": "a second response"}\n'
    with pytest.raises(SGIInputError, match=r"^the key 'response' appears twice in one JSON object "
                                            r"\(file 'rows\.jsonl', row 1\)"):
        read_table(line.encode(), name="rows.jsonl")
    assert loads_json('{"a": 1, "a": 2}', allow_duplicate_keys=True) == {"a": 2}


def test_the_cli_exits_2_with_one_line_for_each_hostile_row(tmp_path, capsys):
    for case, value, message in HOSTILE_VALUES:
        source = tmp_path / "rows.jsonl"
        source.write_bytes(jsonl_with(value))
        args = ["score", str(source), "-o", str(tmp_path / "out.csv"), "--model", "hashing-16", "--no-cache"]
        assert main(args) == 2, case
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, case


def test_depth_limit_is_exact():
    assert loads_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None
    assert loads_json('{"a": ' * MAX_JSON_DEPTH + "1" + "}" * MAX_JSON_DEPTH) is not None
    with pytest.raises(SGIInputError, match=r"^JSON nested too deeply to read \(file '<input>'\)$"):
        loads_json("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
    assert loads_json("[[1]]", max_depth=2) == [[1]]
    with pytest.raises(SGIInputError, match="nested too deeply"):
        loads_json("[[1]]", max_depth=1)


def test_valid_json_reads_as_json_loads_reads_it():
    text = '{"a": [1, 2.5, -3e-7, true, null, "caf\\u00e9 \\ud83d\\ude00"], "b": {"c": ""}, "n": 1' + "0" * 4_000 + "}"
    assert loads_json(text) == json.loads(text)
    assert loads_json(b"\xef\xbb\xbf[1]") == [1]  # a byte-order mark from a Windows editor
    assert loads_json("NaN", allow_non_finite=True) != loads_json("NaN", allow_non_finite=True)  # NaN != NaN
    with pytest.raises(SGIInputError, match="too large for a floating-point value"):
        loads_json("1e400", allow_non_finite=True)


def test_bad_utf8_and_syntax_errors_say_where():
    # the first \xe9 is byte 8, counted from 1
    with pytest.raises(SGIInputError, match=r"^not valid UTF-8 \(byte 8\) \(file 'p\.json'\)$"):
        loads_json(b'{"a": "\xe9t\xe9"}', source="p.json")
    with pytest.raises(SGIInputError, match=r"^invalid JSON: Expecting value at line 3 column 1 \(file 'p\.json'\)$"):
        loads_json("[\n1,\n]", source="p.json")


def test_read_json_file_names_the_file_for_every_failure(tmp_path):
    path = tmp_path / "policy.json"
    path.write_text('{"x": ' + HUGE_INT + "}")
    with pytest.raises(SGIInputError, match=rf"digits \(file '{path}'\)\. Write the policy again$"):
        read_json_file(path, hint="Write the policy again")
    with pytest.raises(SGIInputError, match=r"^file not found"):
        read_json_file(tmp_path / "missing.json")
    with pytest.raises(SGIInputError, match=r"^this is a folder, not a JSON file"):
        read_json_file(tmp_path)
    path.write_text("[" + "1, " * 100 + "1]")
    with pytest.raises(SGIInputError, match=r"^the file is larger than the 100 bytes"):
        read_json_file(path, max_bytes=100)
    assert read_json_file(path) == [1] * 101


def test_the_halueval_converter_reads_its_lines_with_the_one_reader(tmp_path, capsys):
    source = tmp_path / "qa_data.json"
    good = {"knowledge": "k", "question": "q", "right_answer": "r", "hallucinated_answer": "h"}
    source.write_text(json.dumps(good) + "\n" + json.dumps(good)[:-1] + f', "x": {HUGE_INT}}}\n')
    assert main(["convert", "halueval-qa", str(source), "-o", str(tmp_path / "out.csv")]) == 2
    assert capsys.readouterr().err.strip() == (f"error: a JSON number has more than {sys.get_int_max_str_digits():,} "
                                               f"digits (file '{source}', row 2). Each line must be one JSON object")


def test_a_model_folders_json_is_read_with_the_one_reader(tmp_path):
    from sgi_core.models.trust import check_model_code

    (tmp_path / "modules.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SGIInputError,
                       match=r"^cannot read 'modules\.json' of model folder '.*': JSON nested too deeply"):
        check_model_code(tmp_path)


def test_an_unterminated_string_is_named_once_with_where_it_starts():
    with pytest.raises(SGIInputError, match=r"^invalid JSON: Unterminated string starting at character 7 \(file 'x'\)"):
        loads_json('{"a": "x', source="x")
