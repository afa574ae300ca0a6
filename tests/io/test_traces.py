"""Trace exports to triples: each hand-written fixture from file to rows to scores, its ids kept, its gaps named.

The fixtures (tests/fixtures/traces/) are written by hand in each format, after the
projects' own code and documentation: Phoenix's spans dataframe (one span per JSON Lines
record, as ``get_spans_dataframe`` returns it), Langfuse traces with their observations
(``GET /api/public/traces/{traceId}``) and OTLP JSON spans with OpenInference attributes.
Each holds a trace with no retriever step, one with two, and (Phoenix, Langfuse) one
without an answer.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sgi_core.embedding import load_encoder
from sgi_core.errors import SGIInputError
from sgi_core.io.convert.detection import convert_file, recognised_formats
from sgi_core.io.convert.traces import value_text
from sgi_core.io.passages import join_passages
from sgi_core.io.triples import validate_triples
from sgi_core.scoring import score_table

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
PHOENIX, LANGFUSE, OTEL = (FIXTURES / "phoenix_spans.jsonl", FIXTURES / "langfuse_traces.json",
                           FIXTURES / "otel_spans.json")

#: Rows each fixture must give: (trace_id, question, passages, response), in the order the traces first appear.
EXPECTED = {
    "phoenix": [
        ("9f86d081884c7d659a2feaa0c55ad015", "How many moons does Mars have?",
         ["Mars has two small moons, Phobos and Deimos."], ""),
        ("7c1e9b2a5d3f4e6a8b0c1d2e3f405162", "When was the Eiffel Tower finished?",
         ["The Eiffel Tower was built for the 1889 World's Fair.",
          "Gustave Eiffel's company designed and built the tower.",
          "Construction of the tower ended on 31 March 1889."], "It was finished in March 1889."),
        ("5b8aa5a2d2c872e8321cf37308d69df2", "Tell me a short joke about cats.", [],
         "Why did the cat sit on the computer? To keep an eye on the mouse."),
        # JSON input and output (application/json): the query and the result fields.
        ("4bf92f3577b34da6a3ce929d0e0e4736", "Who wrote Pride and Prejudice?",
         ["Pride and Prejudice is an 1813 novel by Jane Austen."], "Jane Austen wrote it."),
        ("0af7651916cd43dd8448eb211c80319c", "At what temperature does water boil at sea level?",
         ["At standard atmospheric pressure water boils at 100 degrees Celsius.",
          "At higher altitudes the boiling point of water is lower."],
         "Water boils at 100 degrees Celsius at sea level."),
    ],
    "langfuse": [
        ("lf-trace-0001", "What is the capital of Australia?",
         ["Canberra is the capital city of Australia.", "Sydney is the largest city in Australia."],
         "Canberra is the capital of Australia."),
        # Trace input/output empty: the root observation's; the retriever is a SPAN named VectorStoreRetriever.
        ("lf-trace-0002", "Which planet is known as the Red Planet?",
         ["Mars is often called the Red Planet.", "Iron oxide on its surface gives Mars its reddish colour."],
         "Mars is known as the Red Planet."),
        ("lf-trace-0003", "Say hello in French.", [], "Bonjour !"),
        ("lf-trace-0004", "Who painted the Mona Lisa?",
         ["The Mona Lisa is a portrait painted by Leonardo da Vinci.", "The Mona Lisa hangs in the Louvre in Paris."],
         "Leonardo da Vinci painted it."),
        ("lf-trace-0005", "How tall is Mount Everest?", ["Mount Everest is 8,849 metres high."], ""),
    ],
    "otel": [
        ("5b8efff798038103d269b633813fc60c", "What gas do plants absorb from the air?",
         ["Plants take in carbon dioxide and release oxygen during photosynthesis.",
          "Chlorophyll absorbs mostly blue and red light."], "Plants absorb carbon dioxide from the air."),
        ("1f2e3d4c5b6a79881f2e3d4c5b6a7988", "What is the speed of light?",
         ["Light travels at 299,792,458 metres per second in a vacuum."], "About 299,792 kilometres per second."),
        ("c0ffee00c0ffee00c0ffee00c0ffee00", "Write a haiku about rain.", [], "Soft rain on the roof / ..."),
        ("0123456789abcdef0123456789abcdef", "Which ocean is the largest?",
         ["The Pacific Ocean is the largest and deepest of Earth's oceans.",
          "The Pacific covers about a third of the Earth's surface."], "The Pacific Ocean is the largest."),
    ],
}
FILES = {"phoenix": PHOENIX, "langfuse": LANGFUSE, "otel": OTEL}
#: Rows not scored, by trace id, and why.
NOT_SCORED = {
    "9f86d081884c7d659a2feaa0c55ad015": "not scored: empty response",
    "5b8aa5a2d2c872e8321cf37308d69df2": "not scored: empty context",
    "lf-trace-0003": "not scored: empty context",
    "lf-trace-0005": "not scored: empty response",
    "c0ffee00c0ffee00c0ffee00c0ffee00": "not scored: empty context",
}


def rows(frame: pd.DataFrame) -> list[tuple]:
    return [(r.trace_id, r.question, list(r.context), r.response) for r in frame.itertuples()]


@pytest.mark.parametrize("fmt", list(FILES))
def test_each_fixture_gives_one_row_per_trace_with_its_id(fmt):
    conversion = convert_file(FILES[fmt])
    assert conversion.format == fmt
    assert conversion.frame.columns.tolist()[:4] == ["trace_id", "question", "context", "response"]
    # The trace's other fields follow as columns of their own, none of them its texts or documents.
    assert "name" in conversion.frame.columns
    assert not any(c.startswith(("input", "output", "retrieval", "observations")) for c in conversion.frame.columns)
    assert rows(conversion.frame) == EXPECTED[fmt]


@pytest.mark.parametrize("fmt", list(FILES))
def test_each_fixture_scores_with_its_ids_and_its_gaps_not_scored(fmt):
    frame = convert_file(FILES[fmt]).frame
    table = validate_triples(frame, source=FILES[fmt].name)
    scored = score_table(table, load_encoder("hashing"))
    assert scored["trace_id"].tolist() == [row[0] for row in EXPECTED[fmt]]
    for trace_id, status in zip(scored["trace_id"], scored["sgi_status"]):
        assert status == NOT_SCORED.get(trace_id, "ok"), trace_id
    ok = scored["sgi_status"] == "ok"
    assert np.isfinite(scored.loc[ok, "sgi"]).all() and scored.loc[~ok, "sgi"].isna().all()
    # The passages score exactly as the plain file holding their joined text.
    plain = frame.assign(context=frame["context"].map(join_passages))
    plain_scored = score_table(validate_triples(plain, source="plain.csv"), load_encoder("hashing"))
    np.testing.assert_allclose(scored["sgi"], plain_scored["sgi"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("fmt", list(FILES))
def test_the_warnings_name_each_gap_and_its_traces(fmt):
    warnings = convert_file(FILES[fmt]).warnings
    no_retriever = {"phoenix": "5b8aa5a2d2c872e8321cf37308d69df2", "langfuse": "lf-trace-0003",
                    "otel": "c0ffee00c0ffee00c0ffee00c0ffee00"}[fmt]
    two_retrievers = {"phoenix": "7c1e9b2a5d3f4e6a8b0c1d2e3f405162", "langfuse": "lf-trace-0004",
                      "otel": "0123456789abcdef0123456789abcdef"}[fmt]
    assert f"1 trace with no retriever step: kept with an empty context, not scored ({no_retriever})" in warnings
    assert (f"1 trace with two or more retriever steps: their documents are joined in start order ({two_retrievers})"
            in warnings)
    missing_answer = [w for w in warnings if "no answer" in w]
    assert len(missing_answer) == (0 if fmt == "otel" else 1)


def test_a_phoenix_parquet_export_gives_the_rows_of_its_json_lines(tmp_path):
    spans = pd.read_json(PHOENIX, lines=True, dtype=False)
    for column in ("start_time", "end_time"):
        spans[column] = pd.to_datetime(spans[column])
    # get_spans_dataframe indexes by context.span_id and keeps the column: pyarrow stores the index apart.
    path = tmp_path / "spans.parquet"
    spans.set_index("context.span_id", drop=False).to_parquet(path)
    conversion = convert_file(path)
    assert conversion.format == "phoenix" and rows(conversion.frame) == EXPECTED["phoenix"]


def test_phoenix_span_json_with_nested_context_and_flattened_documents_reads_the_same(tmp_path):
    nested = []
    for line in PHOENIX.read_text().splitlines():
        span = json.loads(line)
        context = {"trace_id": span.pop("context.trace_id"), "span_id": span.pop("context.span_id")}
        attributes = {key.removeprefix("attributes."): span.pop(key) for key in list(span)
                      if key.startswith("attributes.")}
        # Phoenix's REST API flattens the document list: retrieval.documents.0.document.content, ...
        for position, document in enumerate(attributes.pop("retrieval.documents") or []):
            attributes.update({f"retrieval.documents.{position}.{k}": v for k, v in document.items()})
        nested.append({**span, "context": context, "attributes": attributes})
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(span) + "\n" for span in nested))
    assert rows(convert_file(path).frame) == EXPECTED["phoenix"]


def test_otlp_json_lines_one_request_per_line_and_snake_case_fields_read_the_same(tmp_path):
    request = json.loads(OTEL.read_text())
    lines = [json.dumps({"resourceSpans": [resource]}) for resource in request["resourceSpans"]]
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert rows(convert_file(path, "otel").frame) == EXPECTED["otel"]
    snake = json.dumps(request).replace('"resourceSpans"', '"resource_spans"').replace('"scopeSpans"', '"scope_spans"')
    snake = snake.replace('"traceId"', '"trace_id"').replace('"spanId"', '"span_id"')
    snake = snake.replace('"parentSpanId"', '"parent_span_id"').replace('"stringValue"', '"string_value"')
    assert rows(convert_file(snake.encode(), name="snake.json").frame) == EXPECTED["otel"]


def test_langfuse_json_lines_read_like_the_json_array(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(trace) + "\n" for trace in json.loads(LANGFUSE.read_text())))
    assert rows(convert_file(path).frame) == EXPECTED["langfuse"]


@pytest.mark.parametrize(("value", "side", "text"), [
    ("plain", "question", "plain"),
    ({"question": "q", "input": "other"}, "question", "q"),
    ({"input": {"query": "nested"}}, "question", "nested"),
    ([{"role": "system", "content": "s"}, {"role": "user", "content": "u1"}, {"role": "user", "content": "u2"}],
     "question", "u2"),
    ({"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}, "answer", "ab"),
    ({"query": "q", "result": "r"}, "answer", "r"),
    ({"only": "one field"}, "answer", "one field"),
    (42, "answer", "42"),
    ({"a": 1, "b": 2}, "answer", None),
    (None, "question", None),
])
def test_value_text_reads_the_question_or_answer_field_and_never_returns_json_text(value, side, text):
    assert value_text(value, side) == text


@pytest.mark.parametrize(("fmt", "path"), [("phoenix", PHOENIX), ("langfuse", LANGFUSE), ("otel", OTEL)])
def test_each_trace_export_is_recognised_from_its_first_record(fmt, path):
    assert [f.name for f in recognised_formats(path.read_bytes(), path.name)] == [fmt]


def test_benchmark_files_are_recognised_and_plain_tables_are_not(tmp_path):
    halueval = {"knowledge": "k", "question": "q", "right_answer": "r", "hallucinated_answer": "h"}
    assert [f.name for f in recognised_formats(json.dumps(halueval).encode(), "qa_data.json")] == ["halueval-qa"]
    truthfulqa = b"Type,Category,Question,Best Answer,Correct Answers,Incorrect Answers,Source\nA,B,q?,b,c,i,s\n"
    assert [f.name for f in recognised_formats(truthfulqa, "TruthfulQA.csv")] == ["truthfulqa"]
    assert recognised_formats(b"question,context,response\nq,c,r\n", "t.csv") == []
    assert recognised_formats(b'{"question": "q", "context": "c", "response": "r"}\n', "t.jsonl") == []
    # A Langfuse trace from the list endpoint also has id and observations, so it is recognised, then refused.
    with pytest.raises(SGIInputError, match=r"^trace 't1' lists its observations by id only, not as objects "
                                            r"\(file 'list\.json', column 'observations', row 1\)\. Give the traces "
                                            r"as GET /api/public/traces/\{traceId\} returns them"):
        convert_file(b'[{"id": "t1", "observations": ["o1", "o2"]}]', name="list.json")


def test_conversion_errors_name_the_file_the_row_the_field_and_what_to_do(tmp_path):
    with pytest.raises(SGIInputError, match=r"^unknown format 'arize'\. Use one of phoenix, langfuse, otel, "):
        convert_file(PHOENIX, "arize")
    with pytest.raises(SGIInputError, match=r"^the file is in none of the formats `convert` recognises \(file "
                                            r"'t\.csv'\)\. Name its format with --from"):
        convert_file(b"question,context,response\nq,c,r\n", name="t.csv")
    lines = PHOENIX.read_text().splitlines()
    broken = json.loads(lines[2])
    del broken["context.trace_id"]
    with pytest.raises(SGIInputError, match=r"^a span has no context\.trace_id \(file 'x\.jsonl', column "
                                            r"'context\.trace_id', row 3\)\. Save the spans dataframe"):
        convert_file("\n".join([*lines[:2], json.dumps(broken)]).encode(), "phoenix", name="x.jsonl")
    with pytest.raises(SGIInputError, match=r"invalid JSON.*\(file 'x\.jsonl', row 2\)"):
        convert_file((lines[0] + "\n{not json\n").encode(), "phoenix", name="x.jsonl")
    request = json.loads(OTEL.read_text())
    del request["resourceSpans"][1]["scopeSpans"][0]["spans"][2]["spanId"]
    with pytest.raises(SGIInputError, match=r"^a span has no resourceSpans\[1\]\.scopeSpans\[0\]\.spans\[2\]\.spanId "
                                            r"\(file 'o\.json', column '.*', row 1\)\. Give the OTLP JSON"):
        convert_file(json.dumps(request).encode(), name="o.json")
    with pytest.raises(SGIInputError, match=r"^a trace has no id \(file 'l\.json', column 'id', row 2\)"):
        convert_file(b'[{"id": "a", "observations": []}, {"id": null, "observations": []}]', name="l.json")
    with pytest.raises(SGIInputError, match=r"^a Phoenix \(Arize\) span export is read from Parquet or JSON/JSON "
                                            r"Lines, and this file is CSV \(file 's\.csv'\)"):
        convert_file(b"context.trace_id,context.span_id\nt,s\n", "phoenix", name="s.csv")
    with pytest.raises(SGIInputError, match=r"^the file holds no spans \(file 'e\.json'\)"):
        convert_file(b'{"resourceSpans": []}', name="e.json")


def test_other_fields_of_each_format_are_kept_as_columns(tmp_path):
    phoenix = [{"context.trace_id": "t1", "context.span_id": "s1", "parent_id": None, "span_kind": "CHAIN",
                "name": "rag", "attributes.input.value": "Q1?", "attributes.output.value": "A1.",
                "attributes.metadata": json.dumps({"request_id": "req-7", "tenant": {"id": 3}}),
                "attributes.session.id": "sess-1"},
               {"context.trace_id": "t1", "context.span_id": "s2", "parent_id": "s1", "span_kind": "RETRIEVER",
                "attributes.retrieval.documents": [{"document.content": "doc"}], "attributes.metadata": "{}"}]
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in phoenix) + "\n")
    frame = convert_file(path).frame
    # The root span's fields, its metadata opened; the retriever's fields are not the trace's.
    assert frame[["trace_id", "metadata.request_id", "metadata.tenant.id", "session.id", "name"]].values.tolist() == [
        ["t1", "req-7", 3, "sess-1", "rag"]]
    assert list(frame["context"].iloc[0]) == ["doc"]
    langfuse = [{"id": "lf1", "input": "Q?", "output": "A.", "observations": [], "metadata": {"request_id": "r1"},
                 "tags": ["a", "b"], "question": "a field named like a column"},
                {"id": "lf2", "input": "Q2?", "output": "A2.", "observations": []}]
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(langfuse))
    frame = convert_file(path).frame
    assert frame["metadata.request_id"].tolist()[0] == "r1" and pd.isna(frame["metadata.request_id"].iloc[1])
    assert frame["tags"].iloc[0] == '["a", "b"]'
    assert frame["trace.question"].iloc[0] == "a field named like a column" and frame["question"].iloc[0] == "Q?"
