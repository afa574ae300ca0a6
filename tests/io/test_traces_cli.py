"""Trace exports through the command line and the Data page's reader: ``convert``, ``compare``'s key, the upload.

``convert`` finds its formats in the registry (``--from``, or recognised), prints the
gaps it found and writes the rows with their ``trace_id``; the file written reopens as
the same passages. ``compare`` matches rows on ``trace_id`` when both runs share its
values, else on the question, and says why. The upload's reader
(:func:`sgi_core.io.convert.detection.read_input`) opens a trace export as its triples, under
the page's limits, and any other file exactly as ``read_table`` does.
"""

import json
from pathlib import Path

import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.errors import SGIInputError
from sgi_core.io.convert.detection import read_input
from sgi_core.io.convert.registry import FORMATS
from sgi_core.io.limits import InputLimits
from sgi_core.io.reading import read_table
from sgi_core.io.triples import validate_triples
from sgi_core.runs.trace_ids import default_run_key
from tests.conftest import SAMPLE_CSV
from tests.io.test_traces import EXPECTED, FIXTURES, LANGFUSE, OTEL, PHOENIX, rows


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_convert_recognises_a_trace_export_and_writes_rows_that_reopen_as_passages(tmp_path, capsys, suffix):
    out = tmp_path / f"triples.{suffix}"
    assert main(["convert", str(PHOENIX), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"read {PHOENIX} as Phoenix (Arize) span export; wrote 5 rows to {out}" in err
    assert ("warning: 1 trace with no answer (root span's output.value): kept with an empty response, not scored "
            "(9f86d081884c7d659a2feaa0c55ad015)") in err
    table = validate_triples(read_table(out), source=out.name)
    assert table.frame["trace_id"].tolist() == [row[0] for row in EXPECTED["phoenix"]]
    assert [list(p) for p in table.passages] == [row[2] for row in EXPECTED["phoenix"]]


def test_convert_takes_the_format_by_from_or_first_as_before(tmp_path, capsys):
    assert main(["convert", "--from", "otel", str(OTEL), "-o", str(tmp_path / "a.csv")]) == 0
    assert rows(read_table(tmp_path / "a.csv").assign(context=lambda f: f["context"].map(json.loads))) == \
        EXPECTED["otel"]
    source = tmp_path / "qa_data.json"
    source.write_text(json.dumps({"knowledge": "k", "question": "q", "right_answer": "r",
                                  "hallucinated_answer": "h"}) + "\n")
    assert main(["convert", "halueval-qa", str(source), "-o", str(tmp_path / "b.csv")]) == 0
    assert main(["convert", str(source), "-o", str(tmp_path / "c.csv")]) == 0
    assert (tmp_path / "b.csv").read_text() == (tmp_path / "c.csv").read_text()
    assert pd.read_csv(tmp_path / "b.csv")["label"].tolist() == [1, 0]
    assert "as HaluEval qa file (qa_data.json)" in capsys.readouterr().err


def test_convert_refuses_a_wrong_or_unknown_format_with_exit_2(tmp_path, capsys):
    out = str(tmp_path / "out.csv")
    assert main(["convert", "--from", "phoenix", str(LANGFUSE), "-o", out]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: the file looks like a Langfuse traces with their observations, not a Phoenix (Arize) span export "
        f"(file '{LANGFUSE}'). Leave out --from, or give --from langfuse")
    assert main(["convert", "arize", str(PHOENIX), "-o", out]) == 2
    assert "error: unknown format 'arize'. Use one of phoenix, langfuse, otel" in capsys.readouterr().err
    assert main(["convert", "otel", str(OTEL), "--from", "phoenix", "-o", out]) == 2
    assert "two formats given, 'otel' and --from phoenix" in capsys.readouterr().err


def test_every_format_is_named_in_the_help_with_what_it_reads(capsys):
    with pytest.raises(SystemExit):
        main(["convert", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for fmt in FORMATS.values():
        assert f"{fmt.name}: {fmt.title}" in shown and " ".join(fmt.reads.split()) in shown


def test_the_upload_reader_opens_a_trace_export_as_its_triples_and_other_files_as_before(tmp_path):
    for path, fmt in ((PHOENIX, "phoenix"), (LANGFUSE, "langfuse"), (OTEL, "otel")):
        assert rows(read_input(path.read_bytes(), name=path.name, limits=InputLimits())) == EXPECTED[fmt]
    spans = pd.read_json(PHOENIX, lines=True, dtype=False)
    spans.to_parquet(tmp_path / "spans.parquet")
    assert rows(read_input(tmp_path / "spans.parquet", limits=InputLimits())) == EXPECTED["phoenix"]
    pd.testing.assert_frame_equal(read_input(SAMPLE_CSV, limits=InputLimits()), read_table(SAMPLE_CSV))
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"question": "q", "context": ["a", "b"], "response": "r"}\n')
    pd.testing.assert_frame_equal(read_input(plain.read_bytes(), name=plain.name), read_table(plain))


def test_the_upload_reader_holds_a_converted_export_to_the_limits():
    raw = LANGFUSE.read_bytes()
    with pytest.raises(SGIInputError, match=r"^the file has 5 rows; the limit is 4 rows to score"):
        read_input(raw, name=LANGFUSE.name, limits=InputLimits(max_rows=4))
    # The passages count as their joined text (passages and the blank lines between them).
    lengths = [len("\n\n".join(row[2])) for row in EXPECTED["langfuse"]]
    assert max(lengths) == 102 and lengths.index(102) == 3
    with pytest.raises(SGIInputError, match=r"^a cell has 102 characters; .*column 'context', row 4\)"):
        read_input(raw, name=LANGFUSE.name, limits=InputLimits(max_cell_chars=101))


def run_file(tmp_path: Path, name: str, frame: pd.DataFrame) -> Path:
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def test_compare_matches_trace_exports_on_trace_id(tmp_path, capsys):
    base = read_input(LANGFUSE)
    base["context"] = base["context"].map(json.dumps)
    new = base.copy()
    # Another wording of each answer, the questions shuffled: only the trace id pairs the rows.
    new["response"] = new["response"].where(new["response"] == "", "In short: " + new["response"])
    new["question"] = new["question"].iloc[::-1].to_numpy()
    paths = run_file(tmp_path, "base.csv", base), run_file(tmp_path, "new.csv", new)
    assert default_run_key(*paths) == ("trace_id", None)
    assert main(["compare", *map(str, paths), "--model", "hashing", "--n-boot", "50"]) == 0
    assert "matched 5 keys on 'trace_id'" in capsys.readouterr().out


def test_compare_falls_back_to_the_question_when_the_ids_are_not_shared(tmp_path, capsys):
    base = read_input(OTEL).assign(context=lambda f: f["context"].map(json.dumps))
    rerun = base.assign(trace_id=[f"{i:032x}" for i in range(len(base))])
    paths = run_file(tmp_path, "base.csv", base), run_file(tmp_path, "rerun.csv", rerun)
    key, note = default_run_key(*paths)
    assert key == "question" and note.startswith("both runs carry 'trace_id' but share none of its values")
    assert main(["compare", *map(str, paths), "--model", "hashing", "--n-boot", "50"]) == 0
    captured = capsys.readouterr()
    assert "matched 4 keys on 'question'" in captured.out
    assert f"note: {note}" in captured.err
    assert default_run_key(paths[0], SAMPLE_CSV) == ("question", None)


def test_a_files_own_id_is_not_the_default_key_and_an_explicit_key_wins(tmp_path, capsys):
    runs = Path(__file__).resolve().parents[2] / "sample_data" / "runs"
    assert default_run_key(runs / "base.csv", runs / "new.csv") == ("question", None)
    parquet = tmp_path / "spans.parquet"
    read_input(PHOENIX).to_parquet(parquet)
    assert default_run_key(parquet, parquet) == ("trace_id", None)
    path = run_file(tmp_path, "b.csv", read_input(PHOENIX).assign(context=lambda f: f["context"].map(json.dumps)))
    assert main(["compare", str(path), str(path), "--key", "question", "--model", "hashing", "--n-boot", "20"]) == 0
    assert "matched 5 keys on 'question'" in capsys.readouterr().out


def test_the_fixtures_follow_the_documented_field_names():
    """What the README promises each fixture shows: the fields read, as the tools write them."""
    phoenix = json.loads(PHOENIX.read_text().splitlines()[0])
    assert {"context.trace_id", "context.span_id", "parent_id", "span_kind", "attributes.input.value",
            "attributes.output.value", "attributes.retrieval.documents"} <= set(phoenix)
    langfuse = json.loads(LANGFUSE.read_text())[0]
    assert {"id", "input", "output", "observations"} <= set(langfuse)
    assert {o["type"] for o in langfuse["observations"]} == {"SPAN", "GENERATION", "RETRIEVER"}
    otel = json.loads(OTEL.read_text())
    span = otel["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    assert {a["key"] for a in span["attributes"]} >= {"openinference.span.kind", "input.value",
                                                       "retrieval.documents.0.document.content"}
    assert sorted(p.name for p in FIXTURES.iterdir()) == ["langfuse_traces.json", "otel_spans.json",
                                                          "phoenix_spans.jsonl"]
