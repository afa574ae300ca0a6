"""Malformed trace exports give an input error naming the file, the record and the field, never a traceback.

Each case takes a hand-written fixture (tests/fixtures/traces/) and breaks one field
as a careless exporter or an attacker would. ``convert`` exits 2 (an input error, not
the gate's FAIL status 1), and the Data page's reader raises the same error. Quiet
losses are refused or read whole: a number id and a text id never name one trace, two
Langfuse records never share an id, and one retrieved document given as an object is
that document.
"""

import copy
import json
import re

import pytest

from sgi_core.cli import main
from sgi_core.errors import SGIInputError
from sgi_core.io.convert.detection import convert_file, read_input
from tests.io.test_traces import EXPECTED, LANGFUSE, OTEL, PHOENIX, rows

OTLP_REQUEST = json.loads(OTEL.read_text())
PHOENIX_SPANS = [json.loads(line) for line in PHOENIX.read_text().splitlines()]
LANGFUSE_TRACES = json.loads(LANGFUSE.read_text())
SPAN = "resourceSpans[0].scopeSpans[0].spans[0]"
#: The fixture's first span has five attributes: a sixth is added at index 5.
EXTRA = f"{SPAN}.attributes[5]"


def _otlp(change) -> bytes:
    request = copy.deepcopy(OTLP_REQUEST)
    change(request)
    return json.dumps(request).encode()


def _first_span(request) -> dict:
    return request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]


def _extra_attribute(pair):
    return lambda request: _first_span(request)["attributes"].append(pair)


def _set(field, value):
    return lambda request: _first_span(request).__setitem__(field, value)


def _phoenix(row: int, field: str, value) -> bytes:
    spans = copy.deepcopy(PHOENIX_SPANS)
    spans[row - 1][field] = value
    return "".join(json.dumps(span) + "\n" for span in spans).encode()


def _langfuse(change) -> bytes:
    traces = copy.deepcopy(LANGFUSE_TRACES)
    change(traces)
    return json.dumps(traces).encode()


#: (case, file name, bytes, field named, what the message says of it, record row).
MALFORMED = [
    ("otlp intValue text", "o.json", _otlp(_extra_attribute({"key": "n", "value": {"intValue": "abc"}})),
     f"{EXTRA}.value.intValue", "is 'abc', not a 64-bit integer", 1),
    ("otlp intValue null", "o.json", _otlp(_extra_attribute({"key": "n", "value": {"intValue": None}})),
     f"{EXTRA}.value.intValue", "is null, not a 64-bit integer", 1),
    ("otlp intValue past int64", "o.json", _otlp(_extra_attribute({"key": "n", "value": {"intValue": str(2**63)}})),
     f"{EXTRA}.value.intValue", "is '9223372036854775808', not a 64-bit integer", 1),
    ("otlp attribute value a list", "o.json", _otlp(_extra_attribute({"key": "n", "value": [1]})),
     f"{EXTRA}.value", "is a list, not an AnyValue object", 1),
    ("otlp attribute key a list", "o.json", _otlp(_extra_attribute({"key": ["n"], "value": {"stringValue": "x"}})),
     f"{EXTRA}.key", "is a list, not text", 1),
    ("otlp attribute not an object", "o.json", _otlp(_extra_attribute("n=x")), EXTRA, "is 'n=x', not an object", 1),
    ("otlp arrayValue a list", "o.json", _otlp(_extra_attribute({"key": "n", "value": {"arrayValue": [1]}})),
     f"{EXTRA}.value.arrayValue", "is a list, not an object of values", 1),
    ("otlp resourceSpans an object", "o.json", _otlp(lambda r: r.__setitem__("resourceSpans", {"a": 1})),
     "resourceSpans", "is an object, not a list", 1),
    ("otlp resourceSpans text", "o.json", _otlp(lambda r: r.__setitem__("resourceSpans", "abc")),
     "resourceSpans", "is 'abc', not a list", 1),
    ("otlp resourceSpans of text", "o.json", _otlp(lambda r: r.__setitem__("resourceSpans", ["abc"])),
     "resourceSpans[0]", "is 'abc', not an object", 1),
    ("otlp scopeSpans a number", "o.json", _otlp(lambda r: r["resourceSpans"][0].__setitem__("scopeSpans", 3)),
     "resourceSpans[0].scopeSpans", "is a number (3), not a list", 1),
    ("otlp spans text", "o.json", _otlp(lambda r: r["resourceSpans"][1]["scopeSpans"][0].__setitem__("spans", "s")),
     "resourceSpans[1].scopeSpans[0].spans", "is 's', not a list", 1),
    ("otlp start superscript two", "o.json", _otlp(_set("startTimeUnixNano", "²")),
     f"{SPAN}.startTimeUnixNano", "is '²', neither ISO 8601 text nor a count of nanoseconds", 1),
    ("otlp start 400 digits", "o.json", _otlp(_set("startTimeUnixNano", "9" * 400)),
     f"{SPAN}.startTimeUnixNano", "is '" + "9" * 40 + "...', neither ISO 8601 text", 1),
    ("otlp start 5000 digits", "o.json", _otlp(_set("startTimeUnixNano", "1" * 5000)),
     f"{SPAN}.startTimeUnixNano", "is '" + "1" * 40 + "...', neither ISO 8601 text", 1),
    ("otlp start a list", "o.json", _otlp(_set("startTimeUnixNano", [1])),
     f"{SPAN}.startTimeUnixNano", "is a list, neither ISO 8601 text", 1),
    ("phoenix start superscript two", "p.jsonl", _phoenix(3, "start_time", "²"),
     "start_time", "is '²', neither ISO 8601 text nor a count of nanoseconds", 3),
    ("phoenix start not a date", "p.jsonl", _phoenix(2, "start_time", "yesterday"),
     "start_time", "is 'yesterday', neither ISO 8601 text", 2),
    ("langfuse start superscript two", "l.json",
     _langfuse(lambda traces: traces[1]["observations"][2].__setitem__("startTime", "²")),
     "observations[2].startTime", "is '²', neither ISO 8601 text nor a count of nanoseconds", 2),
]


@pytest.mark.parametrize(("name", "raw", "field", "what", "row"), [case[1:] for case in MALFORMED],
                         ids=[case[0] for case in MALFORMED])
def test_a_malformed_export_is_an_input_error_naming_file_record_and_field(tmp_path, capsys, name, raw, field, what,
                                                                           row):
    where = rf"\(file '{re.escape(name)}', column '{re.escape(field)}', row {row}\)\. "
    with pytest.raises(SGIInputError, match=rf"{re.escape(what)}.* {where}"):
        convert_file(raw, name=name)
    with pytest.raises(SGIInputError, match=where):
        read_input(raw, name=name)
    path = tmp_path / name
    path.write_bytes(raw)
    assert main(["convert", str(path), "-o", str(tmp_path / "out.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err and f"column '{field}', row {row}" in err
    assert not (tmp_path / "out.csv").exists()


def test_the_record_is_the_line_of_a_json_lines_otlp_export():
    lines = [json.dumps({"resourceSpans": [resource]}) for resource in OTLP_REQUEST["resourceSpans"]]
    broken = json.loads(lines[1])
    broken["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["startTimeUnixNano"] = "²"
    raw = "\n".join([lines[0], json.dumps(broken)]).encode()
    with pytest.raises(SGIInputError, match=r"\(file 'o\.jsonl', column 'resourceSpans\[0\]\.scopeSpans\[0\]\.spans"
                                            r"\[1\]\.startTimeUnixNano', row 2\)"):
        convert_file(raw, "otel", name="o.jsonl")


def test_otlp_int_values_read_from_numbers_and_decimal_text():
    raw = _otlp(lambda request: _first_span(request)["attributes"].extend([
        {"key": "llm.token_count.total", "value": {"intValue": "-42"}},
        {"key": "llm.token_count.prompt", "value": {"int_value": 7}},
        {"key": "tags", "value": {"arrayValue": {"values": [{"intValue": "1"}, {"stringValue": "a"}]}}},
    ]))
    assert rows(convert_file(raw, name="o.json").frame) == EXPECTED["otel"]


@pytest.mark.parametrize(("value", "shown"), [(1, "a number (1)"), (["1"], "a list"), ({"id": "1"}, "an object")])
def test_an_otlp_trace_id_that_is_not_text_is_refused(value, shown):
    # Read as text, 1 and "1" would merge two traces and drop one root's question and answer.
    def number_id(request):
        for resource in request["resourceSpans"]:
            for span in resource["scopeSpans"][0]["spans"]:
                span["traceId"] = value if span is _first_span(request) else "1"

    field = f"{SPAN}.traceId"
    with pytest.raises(SGIInputError, match=rf"^the id {re.escape(field)} is {re.escape(shown)}, not text; .* \(file "
                                            rf"'o\.json', column '{re.escape(field)}', row 1\)"):
        convert_file(_otlp(number_id), name="o.json")


def test_spans_under_one_text_trace_id_still_join_into_one_trace():
    def one_id(request):
        for resource in request["resourceSpans"]:
            for span in resource["scopeSpans"][0]["spans"]:
                span["traceId"] = "1"

    frame = convert_file(_otlp(one_id), name="o.json").frame
    assert frame["trace_id"].tolist() == ["1"]


@pytest.mark.parametrize(("field", "value"), [("context.trace_id", 7), ("context.span_id", ["a"]),
                                              ("parent_id", 3)])
def test_a_phoenix_id_that_is_not_text_is_refused(field, value):
    with pytest.raises(SGIInputError, match=rf"^the id {re.escape(field)} is .*, not text; .* \(file 'p\.jsonl', "
                                            rf"column '{re.escape(field)}', row 2\)"):
        convert_file(_phoenix(2, field, value), name="p.jsonl")


def test_a_phoenix_trace_id_nested_as_an_object_is_refused_as_one():
    spans = copy.deepcopy(PHOENIX_SPANS)
    spans[1]["context.trace_id"] = {"value": spans[1]["context.trace_id"]}
    with pytest.raises(SGIInputError, match=r"^the id context\.trace_id is an object, not text; .* \(file 'p\.jsonl', "
                                            r"column 'context\.trace_id', row 2\)"):
        convert_file("".join(json.dumps(s) + "\n" for s in spans).encode(), name="p.jsonl")


@pytest.mark.parametrize("value", [1, ["lf-trace-0001"], {"id": "lf"}])
def test_a_langfuse_id_that_is_not_text_is_refused(value):
    raw = _langfuse(lambda traces: traces[3].__setitem__("id", value))
    with pytest.raises(SGIInputError, match=r"^the id id is .*, not text; .* \(file 'l\.json', column 'id', row 4\)"):
        convert_file(raw, name="l.json")


def test_two_langfuse_records_with_one_id_are_refused_naming_both():
    raw = _langfuse(lambda traces: traces[3].__setitem__("id", traces[1]["id"]))
    with pytest.raises(SGIInputError, match=r"^the records in rows 2 and 4 have one id, 'lf-trace-0002': two traces "
                                            r"under one id would be averaged as one \(file 'l\.json', column 'id', "
                                            r"row 4\)"):
        convert_file(raw, name="l.json")


DOCUMENT = {"document.id": "astro-12", "document.score": 0.91, "document.content": "Mars has two small moons."}


@pytest.mark.parametrize("given", [DOCUMENT, json.dumps(DOCUMENT), [DOCUMENT]], ids=["object", "json text", "list"])
def test_one_phoenix_document_given_as_an_object_is_that_document(given):
    frame = convert_file(_phoenix(2, "attributes.retrieval.documents", given), name="p.jsonl").frame
    assert list(frame["context"].iloc[0]) == ["Mars has two small moons."]
    assert rows(frame)[1:] == EXPECTED["phoenix"][1:]


def test_one_phoenix_document_as_a_nested_object_in_span_json_is_that_document():
    spans = copy.deepcopy(PHOENIX_SPANS)
    del spans[1]["attributes.retrieval.documents"]
    spans[1]["attributes"] = {"retrieval": {"documents": {"document": {"content": "Mars has two small moons."}}}}
    frame = convert_file("".join(json.dumps(s) + "\n" for s in spans).encode(), name="p.jsonl").frame
    assert list(frame["context"].iloc[0]) == ["Mars has two small moons."]
