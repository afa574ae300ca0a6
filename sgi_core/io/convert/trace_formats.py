"""The trace exports read as triples: Phoenix span exports, OTLP/OpenInference JSON, Langfuse traces.

Each reader takes the file's ``(row, record)`` pairs (:func:`sgi_core.io.convert.traces.load_records`)
and gives one :class:`~sgi_core.io.convert.traces.TraceParts` per trace, in the order the traces
first appear. Spans (Phoenix, OTLP) are joined by trace id: the root is the span without
a parent in the file (the earliest, if several), its ``input.value`` the question and
``output.value`` the answer; every ``RETRIEVER`` span contributes its
``retrieval.documents``. Langfuse traces carry their observations: the trace's
``input`` / ``output`` (else the root observation's), and the ``output`` documents of each
retrieval observation (type ``RETRIEVER``, or a child ``SPAN`` whose name contains "retriev").

Every other field of the root span (or of the Langfuse trace) is kept (:func:`other_fields`):
ids such as a ``request_id`` in the metadata are keys users match runs on. Pages of Phoenix's
REST listings (``{"data": [...], "next_cursor": ...}``, of ``/spans`` or ``/spans/otlpv1``)
are read as their spans (:func:`span_pages`).

Errors name the file, the record's row (a data row or a JSON Lines line), the field, and
what to do (:mod:`sgi_core.io.convert.trace_fields`): ids must be text, start times ISO 8601 text or
nanoseconds, and OTLP's nesting lists of objects, whatever a malformed export holds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from sgi_core.errors import SGIInputError
from sgi_core.io.convert.trace_fields import Record, attributes, repeated, start_key, text_id
from sgi_core.io.convert.traces import (
    TraceParts,
    document_text,
    flatten,
    indexed_documents,
    is_missing,
    parse_json_text,
    value_text,
)

RETRIEVER = "RETRIEVER"
_JSON_MIME = "application/json"
_PHOENIX_HINT = ("Save the spans dataframe (px.Client().get_spans_dataframe()) with to_parquet or to_json("
                 "orient='records', lines=True), every column kept")
_OTLP_HINT = "Give the OTLP JSON as the exporter wrote it: resourceSpans -> scopeSpans -> spans"
_LANGFUSE_HINT = ("Give the traces as GET /api/public/traces/{traceId} returns them (langfuse.api.trace.get), "
                  "one per line or in one JSON array")


#: Span fields read into the triple or the trace's structure, left out of its other fields.
_SPAN_FIELDS = ("context.trace_id", "context.span_id", "parent_id", "span_kind", "input.", "output.", "retrieval.",
                "openinference.span.kind")
#: Langfuse trace fields read into the triple.
_LANGFUSE_FIELDS = ("id", "input", "output", "observations")


def _cell(value):
    """A field's value as one cell: a scalar as it is, a date as ISO text, anything else as JSON text."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return None if is_missing(value) and not isinstance(value, str) else value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return json.dumps(value, ensure_ascii=False, default=str)


def other_fields(flat: dict, *, skip: tuple, strip: str = "") -> tuple:
    """``(name, cell)`` of every field of ``flat`` (dotted keys) not starting with one of ``skip``.

    ``strip`` is taken off the front of a name (``"attributes."``, after ``skip`` is
    applied to the stripped name); JSON text holding an object is opened into dotted
    names of its own (Phoenix writes the metadata as JSON text).

    Examples
    --------
    >>> other_fields({"id": "t1", "attributes.metadata": '{"request_id": "r9"}', "attributes.tags": ["a"]},
    ...              skip=("id",), strip="attributes.")
    (('metadata.request_id', 'r9'), ('tags', '["a"]'))
    """
    out = {}
    for key, value in flat.items():
        name = key[len(strip):] if strip and key.startswith(strip) else key
        if name.startswith(skip) or key.startswith(skip):
            continue
        opened = parse_json_text(value)
        if isinstance(opened, dict) and opened:
            out.update((sub, _cell(item)) for sub, item in flatten(opened, f"{name}.").items())
        else:
            out[name] = _cell(value)
    return tuple(out.items())


@dataclass(frozen=True)
class Span:
    """One span of an OpenInference trace, its texts already read."""

    trace_id: str
    span_id: str
    parent_id: str
    kind: str
    start: float | None
    order: int
    question: str | None
    answer: str | None
    documents: tuple
    extra: tuple = ()


def _text(attributes: dict, key: str, side: str) -> str | None:
    value = attributes.get(f"{key}.value")
    if attributes.get(f"{key}.mime_type") == _JSON_MIME:
        value = parse_json_text(value)
    return value_text(value, side)


def _span(attributes: dict, *, trace_id: str, span_id: str, parent_id: str, kind, start: float | None,
          order: int, extra: tuple = ()) -> Span:
    kind = str(kind or attributes.get("openinference.span.kind") or "").upper()
    documents = tuple(indexed_documents(attributes, "retrieval.documents")) if kind == RETRIEVER else ()
    return Span(trace_id, span_id, parent_id, kind, start, order, _text(attributes, "input", "question"),
                _text(attributes, "output", "answer"), documents, extra)


def traces_from_spans(spans: list[Span]) -> list[TraceParts]:
    """One :class:`TraceParts` per trace id, in order of first appearance."""
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    traces = []
    for trace_id, members in by_trace.items():
        ids = {span.span_id for span in members}
        in_order = sorted(members, key=lambda s: (s.start is None, s.start or 0.0, s.order))
        roots = [span for span in in_order if not span.parent_id] or [s for s in in_order if s.parent_id not in ids]
        root = roots[0] if roots else in_order[0]
        retrievals = tuple(span.documents for span in in_order if span.kind == RETRIEVER)
        traces.append(TraceParts(trace_id, root.question, root.answer, retrievals, root.extra, root.span_id))
    return traces


def span_pages(records: list[tuple[int, dict]], name: str) -> tuple[list[tuple[int, dict]], tuple[str, ...]]:
    """Records with every REST page (``{"data": [...], "next_cursor": ...}``) opened into its items, and notes.

    An item's row is its place among the file's records once opened (1, 2, ...). A file
    whose last page has a ``next_cursor`` ends before the listing did: the note says so.

    Examples
    --------
    >>> span_pages([(1, {"data": [{"span_id": "a"}, {"span_id": "b"}], "next_cursor": None})], "page.json")
    ([(1, {'span_id': 'a'}), (2, {'span_id': 'b'})], ())
    """
    opened, last_cursor = [], None
    for row, record in records:
        listed = record.get("data")
        if not isinstance(listed, list):
            opened.append((len(opened) + 1, record))
            continue
        bad = [position for position, item in enumerate(listed) if not isinstance(item, dict)]
        if bad:
            raise SGIInputError(f"item {bad[0]} of the page's data is not a span object", source=name, rows=[row],
                                column="data", hint="Give the page as the server returned it")
        opened += list(enumerate(listed, start=len(opened) + 1))
        last_cursor = record.get("next_cursor")
    notes = () if is_missing(last_cursor) else (
        "the file's last page has a next_cursor: the server holds more spans than the file, and traces may be "
        "cut; fetch every page (python -m sgi_core pull phoenix reads them all)",)
    return opened, notes


def _flat_id(flat: dict, key: str):
    """An id of a flattened record; an id that was an object (flattened into ``key.<field>``) as that object."""
    if key in flat:
        return flat[key]
    inner = {name[len(key) + 1:]: value for name, value in flat.items() if name.startswith(key + ".")}
    return inner or None


def phoenix_traces(records: list[tuple[int, dict]], name: str) -> list[TraceParts]:
    """Phoenix's spans dataframe (``get_spans_dataframe``) or its span JSON, one span per record.

    Columns read: ``context.trace_id``, ``context.span_id``, ``parent_id``, ``span_kind``,
    ``start_time``, ``attributes.input.value`` / ``.mime_type``, ``attributes.output.value`` /
    ``.mime_type`` and ``attributes.retrieval.documents`` (a list of
    ``{"document.content", "document.id", "document.score"}``, or flattened as
    ``attributes.retrieval.documents.0.document.content``). Nested ``context`` and
    ``attributes`` objects (Phoenix's span JSON) read the same.
    """
    spans = []
    for order, (row, record) in enumerate(records):
        flat, where = flatten(record), Record(name, row, _PHOENIX_HINT)
        attributes = {key[len("attributes."):]: value for key, value in flat.items() if key.startswith("attributes.")}
        spans.append(_span(attributes, trace_id=text_id(_flat_id(flat, "context.trace_id"), where, "context.trace_id"),
                           span_id=text_id(_flat_id(flat, "context.span_id"), where, "context.span_id"),
                           parent_id=text_id(_flat_id(flat, "parent_id"), where, "parent_id", required=False),
                           kind=flat.get("span_kind"), start=start_key(flat.get("start_time"), where, "start_time"),
                           order=order,
                           extra=other_fields(flat, skip=_SPAN_FIELDS, strip="attributes.")))
    return traces_from_spans(spans)


def _field(mapping: dict, camel: str):
    """An OTLP field by its lowerCamelCase name or its proto (snake_case) name."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return mapping.get(camel, mapping.get(snake))


def _otlp_span(span: dict, where: Record, at: str, order: int) -> Span:
    """One OTLP span (lowerCamelCase or proto names), ``at`` its place in the record for messages."""
    span_attributes = attributes(span.get("attributes"), where, f"{at}attributes")
    named = {"name": span["name"]} if "name" in span else {}
    return _span(span_attributes,
                 trace_id=text_id(_field(span, "traceId"), where, f"{at}traceId"),
                 span_id=text_id(_field(span, "spanId"), where, f"{at}spanId"),
                 parent_id=text_id(_field(span, "parentSpanId"), where, f"{at}parentSpanId", required=False),
                 kind=None, start=start_key(_field(span, "startTimeUnixNano"), where, f"{at}startTimeUnixNano"),
                 order=order, extra=other_fields({**named, **flatten(span_attributes)}, skip=_SPAN_FIELDS))


def otlp_traces(records: list[tuple[int, dict]], name: str) -> list[TraceParts]:
    """OTLP JSON (``ExportTraceServiceRequest``: ``resourceSpans`` -> ``scopeSpans`` -> ``spans``), one or per line.

    A record holding no ``resourceSpans`` is one span itself (Phoenix's ``/spans/otlpv1``
    listing, once :func:`span_pages` opened it). Span fields read: ``traceId``, ``spanId``,
    ``parentSpanId``, ``startTimeUnixNano`` and the attributes ``openinference.span.kind``,
    ``input.value`` / ``input.mime_type``, ``output.value`` / ``output.mime_type``,
    ``retrieval.documents.N.document.content``.
    """
    spans = []
    for row, record in records:
        where = Record(name, row, _OTLP_HINT)
        if _field(record, "resourceSpans") is None and _field(record, "spanId") is not None:
            spans.append(_otlp_span(record, where, "", len(spans)))
            continue
        resources = repeated(_field(record, "resourceSpans"), where, "resourceSpans")
        for r, resource in enumerate(resources):
            scope_field = "instrumentationLibrarySpans" if _field(resource, "scopeSpans") is None else "scopeSpans"
            scopes = repeated(_field(resource, scope_field), where, f"resourceSpans[{r}].{scope_field}")
            for s, scope in enumerate(scopes):
                listed = repeated(_field(scope, "spans"), where, f"resourceSpans[{r}].{scope_field}[{s}].spans")
                for k, span in enumerate(listed):
                    spans.append(_otlp_span(span, where, f"resourceSpans[{r}].{scope_field}[{s}].spans[{k}].",
                                            len(spans)))
    if not spans:
        raise SGIInputError("the file holds no spans", source=name, hint=_OTLP_HINT)
    return traces_from_spans(spans)


def _retrieved(output) -> tuple:
    """The documents of a Langfuse retrieval observation's output."""
    output = parse_json_text(output)
    if isinstance(output, dict):
        listed = [output[k] for k in ("documents", "docs", "context", "results", "nodes") if k in output]
        output = listed[0] if listed else [output]
    if is_missing(output):
        return ()
    return tuple(document_text(item) for item in (output if isinstance(output, list) else [output]))


def _is_retrieval(observation: dict) -> bool:
    """A ``RETRIEVER`` observation, or a child ``SPAN`` named for retrieval (the older SDKs' LangChain retriever)."""
    kind = str(observation.get("type") or "").upper()
    return kind == RETRIEVER or (kind == "SPAN" and not is_missing(observation.get("parentObservationId"))
                                 and "retriev" in str(observation.get("name") or "").lower())


def langfuse_traces(records: list[tuple[int, dict]], name: str) -> list[TraceParts]:
    """Langfuse traces with their observations (``GET /api/public/traces/{traceId}``), one per record.

    Trace fields read: ``id``, ``input``, ``output``, ``observations``; observation fields:
    ``type``, ``name``, ``startTime``, ``parentObservationId``, ``input``, ``output``.
    """
    traces, rows_of = [], {}
    for row, record in records:
        where = Record(name, row, _LANGFUSE_HINT)
        trace_id, observations = text_id(record.get("id"), where, "id"), record.get("observations")
        if trace_id in rows_of:
            raise where.refuse("id", f"the records in rows {rows_of[trace_id]} and {row} have one id, '{trace_id}': "
                                     "two traces under one id would be averaged as one")
        rows_of[trace_id] = row
        if not isinstance(observations, list) or not all(isinstance(o, dict) for o in observations):
            raise SGIInputError(
                f"trace '{trace_id}' lists its observations by id only, not as objects", source=name, rows=[row],
                column="observations",
                hint=_LANGFUSE_HINT + "; a trace from GET /api/public/traces (the list) carries only their ids")
        starts = [start_key(o.get("startTime"), where, f"observations[{i}].startTime")
                  for i, o in enumerate(observations)]
        in_order = [observations[i] for i in sorted(range(len(observations)),
                                                    key=lambda i: (starts[i] is None, starts[i] or 0.0, i))]
        roots = [o for o in in_order if is_missing(o.get("parentObservationId"))]
        root = roots[0] if roots else {}
        question = value_text(parse_json_text(record.get("input")), "question")
        answer = value_text(parse_json_text(record.get("output")), "answer")
        traces.append(TraceParts(
            trace_id,
            question if question is not None else value_text(parse_json_text(root.get("input")), "question"),
            answer if answer is not None else value_text(parse_json_text(root.get("output")), "answer"),
            tuple(_retrieved(o.get("output")) for o in in_order if _is_retrieval(o)),
            other_fields(flatten(record), skip=_LANGFUSE_FIELDS),
        ))
    return traces
