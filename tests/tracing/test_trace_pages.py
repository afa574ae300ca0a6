"""Pages of Phoenix's REST API read as triples, the root span id kept, and a cut export named.

The fixtures in tests/fixtures/phoenix were recorded from a local arize-phoenix 20.26.1 server
holding three OpenInference traces: a JSON input with one retriever step of two documents, a
text input with two retriever steps, and a trace with no retriever step.
``spans_page.json`` is ``GET /v1/projects/fixture-rag/spans?limit=1000``, ``spans_pages.jsonl``
the same listing in pages of 5 (one per line), ``spans_first_page.json`` its first page
alone and ``otlpv1_page.json`` ``GET .../spans/otlpv1``.
"""

import json

import pytest

from sgi_core.errors import SGIInputError
from sgi_core.io.convert.detection import convert_file, read_input
from sgi_core.io.convert.registry import PHOENIX_DEFAULT_LIMIT
from tests.conftest import REPO

PAGES = REPO / "tests" / "fixtures" / "phoenix"
HAMLET, FRANCE, EVEREST = "37f7c250ddf3f2ed4a81504d99b708fd", "c124322b0f5022697ef803edee218b46", \
    "fb831e92ed9b46bc883c612b419a4dca"
#: What each trace holds, as the test server was sent it.
EXPECTED = {
    HAMLET: ("75ccd4148bb23019", "Who wrote Hamlet?",
             ["Hamlet is a tragedy by William Shakespeare.", "It was written around 1600."],
             "William Shakespeare wrote Hamlet."),
    FRANCE: ("a1ba8dc8aa1dff6a", "What is the capital of France?",
             ["Paris is the capital of France.", "France is a country in Western Europe."], "Paris."),
    EVEREST: ("182cd0b75bb01872", "How tall is Mount Everest?", [], "About 8,849 metres."),
}


def rows(frame) -> dict:
    return {r.trace_id: (r.span_id, r.question, list(r.context), r.response) for r in frame.itertuples()}


@pytest.mark.parametrize(("file", "fmt"), [("spans_page.json", "phoenix"), ("spans_pages.jsonl", "phoenix"),
                                           ("otlpv1_page.json", "otel")])
def test_a_page_gives_every_trace_exactly_with_its_root_span_id(file, fmt):
    conversion = convert_file(PAGES / file)
    assert conversion.format == fmt
    assert rows(conversion.frame) == EXPECTED
    assert conversion.frame["metadata.request_id"].tolist() == ["req-3", "req-2", "req-1"]
    assert [w.split(" (")[0] for w in conversion.warnings] == [
        "1 trace with no retriever step: kept with an empty context, not scored",
        "1 trace with two or more retriever steps: their documents are joined in start order"]


def test_a_page_with_a_next_cursor_is_read_and_said_to_be_cut():
    conversion = convert_file(PAGES / "spans_first_page.json")
    assert sorted(conversion.frame["trace_id"]) == [FRANCE, EVEREST]
    # The first page holds the France trace's later retriever step only: read, and the cut is named first.
    assert rows(conversion.frame)[FRANCE][2] == ["France is a country in Western Europe."]
    assert conversion.warnings[0].startswith("the file's last page has a next_cursor: the server holds more spans")


def test_the_data_page_opens_a_rest_page_as_triples():
    frame = read_input(PAGES / "spans_page.json")
    assert rows(frame) == EXPECTED


def test_a_page_item_that_is_not_an_object_is_refused_with_its_row(tmp_path):
    page = json.loads((PAGES / "spans_page.json").read_text())
    page["data"][2] = "span"
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    with pytest.raises(SGIInputError, match=r"item 2 of the page's data is not a span object .*row 1"):
        convert_file(path, "phoenix")


def spans_dataframe_records(n_spans: int) -> list[dict]:
    """A spans dataframe as ``to_json(orient='records', lines=True)`` writes it: a root and a retriever per trace."""
    page = json.loads((PAGES / "spans_page.json").read_text())
    root = next(s for s in page["data"] if s["context"]["trace_id"] == HAMLET and s["parent_id"] is None)
    retriever = next(s for s in page["data"] if s["context"]["trace_id"] == HAMLET and s["span_kind"] == "RETRIEVER")
    records = []
    for k in range(n_spans):
        span = json.loads(json.dumps(root if k % 2 == 0 else retriever))
        span["context"] = {"trace_id": f"t{k // 2:04d}", "span_id": f"s{k:04d}"}
        span["parent_id"] = None if k % 2 == 0 else f"s{k - 1:04d}"
        records.append(span)
    return records


@pytest.mark.parametrize(("n_spans", "warned"), [(PHOENIX_DEFAULT_LIMIT, True), (PHOENIX_DEFAULT_LIMIT - 2, False),
                                                 (PHOENIX_DEFAULT_LIMIT + 2, False)])
def test_a_spans_dataframe_of_exactly_the_default_limit_is_said_to_be_cut(tmp_path, n_spans, warned):
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in spans_dataframe_records(n_spans)))
    conversion = convert_file(path)
    assert len(conversion.frame) == n_spans // 2
    assert conversion.frame["span_id"].iloc[-1] == f"s{n_spans - 2:04d}"
    cut = [w for w in conversion.warnings if w.startswith("the export holds exactly 1,000 spans")]
    assert len(cut) == warned


def test_a_langfuse_export_has_no_span_id_column():
    frame = convert_file(REPO / "tests" / "fixtures" / "traces" / "langfuse_traces.json").frame
    assert "span_id" not in frame.columns and frame["trace_id"].notna().all()
