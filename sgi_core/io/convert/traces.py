"""Trace exports as triples: what Phoenix, Langfuse and OpenTelemetry files have in common.

A traced RAG answer is a tree of spans: the root span's input is the question and its
output the answer, and each retriever step holds the documents it returned. Each
format's reader (:mod:`sgi_core.io.convert.trace_formats`) turns its records into one
:class:`TraceParts` per trace; :func:`traces_frame` makes one row of each:

==============  ================================================================
column          value
==============  ================================================================
``trace_id``    the trace's id, the row's id (and ``compare``'s default key)
``span_id``     the root span's id, where the spans have ids (Phoenix, OTLP): what
                ``annotate`` writes the row's score on
``question``    the text of the root's input
``context``     the documents of every retriever step of the trace, in start
                order, as a list of strings (:mod:`sgi_core.io.passages` joins
                them by a blank line when the row is scored)
``response``    the text of the root's output
...             every other field of the trace (the root span's, or the Langfuse
                trace's), named by its dotted path (``metadata.request_id``,
                ``session.id``, ``name``): JSON text holding an object is opened,
                lists stay as JSON text; a name taken by a column above gets
                ``trace.`` in front
==============  ================================================================

Nothing is dropped: a trace without a question, an answer or a retriever step keeps its
row with that cell empty (``""`` or ``[]``), which the scorer marks ``not scored``, and
the warnings name it. An input or output that is JSON (a chain's ``{"query": ...}``, chat
messages) gives the text of its question or answer field (:func:`value_text`); JSON with
no such field counts as missing, never as its JSON text.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sgi_core.errors import SGIInputError
from sgi_core.jsonio import loads_json

if TYPE_CHECKING:
    import pandas as pd

#: The column holding each row's trace id.
TRACE_ID_COLUMN = "trace_id"
#: The column holding the id of each trace's root span.
SPAN_ID_COLUMN = "span_id"
#: Trace ids spelled out in a warning before the rest are counted.
IDS_SHOWN = 5

#: Fields read, in this order, as the question of a JSON input and the answer of a JSON output.
QUESTION_FIELDS = ("question", "query", "input", "user_input", "prompt", "text", "content", "message")
ANSWER_FIELDS = ("answer", "response", "output", "result", "text", "content", "completion", "message")
_ROLES = {"question": ("user", "human"), "answer": ("assistant", "ai")}
#: Where a document's text is, once its keys are flattened (OpenInference, LangChain, LlamaIndex, plain).
DOCUMENT_TEXT_FIELDS = ("document.content", "page_content", "pageContent", "kwargs.page_content", "content", "text")


@dataclass(frozen=True)
class TraceParts:
    """What one trace holds for a triple.

    Attributes
    ----------
    trace_id : str
    question, response : str or None
        None when the trace holds no such text.
    retrievals : tuple of tuple of (str or None)
        The documents of each retriever step, steps in start order; None for a
        document holding no text.
    extra : tuple of (str, value)
        The trace's other fields, each a scalar (see the module's table).
    root_span_id : str or None
        The root span's id; None for a format whose steps have no span ids (Langfuse).
    """

    trace_id: str
    question: str | None
    response: str | None
    retrievals: tuple
    extra: tuple = ()
    root_span_id: str | None = None


def flatten(mapping: dict, prefix: str = "") -> dict:
    """Nested mappings as one mapping of dotted keys; lists are values.

    Examples
    --------
    >>> flatten({"context": {"trace_id": "t1"}, "attributes": {"input": {"value": "q"}, "tags": ["a"]}})
    {'context.trace_id': 't1', 'attributes.input.value': 'q', 'attributes.tags': ['a']}
    """
    flat = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def is_missing(value) -> bool:
    """None, NaN, NaT or an empty string."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return True
    try:
        return bool(value != value)  # NaN and NaT are not equal to themselves
    except (TypeError, ValueError):
        return False


def _plain(value):
    """A Parquet cell as JSON-like Python: arrays as lists, NumPy scalars as numbers, NaN as None."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _first_line_is_record(text: str) -> bool:
    """Whether the first line holds a whole object (JSON Lines), not the opening of a pretty-printed document."""
    first = text.lstrip().split("\n", 1)[0].strip()
    return first.startswith("{") and first.endswith("}")


def load_records(raw: bytes, name: str) -> list[tuple[int, dict]]:
    """``(row, record)`` pairs of a Parquet file, a JSON array, JSON Lines or one JSON document.

    ``row`` is the record's number in messages: its data row (Parquet, JSON array) or
    line (JSON Lines); a single JSON document (OTLP JSON, pretty-printed) is row 1.

    Raises
    ------
    SGIInputError
        Invalid JSON (with its line) or a record that is not an object.
    """
    from sgi_core.io.decoding import decode_text
    from sgi_core.io.parquet import read_parquet_bytes
    from sgi_core.io.reading import parse_jsonl_record
    from sgi_core.io.table_formats import table_format

    if table_format(name, raw) == "parquet":
        frame = read_parquet_bytes(raw, name)
        return [(row, _plain(record)) for row, record in enumerate(frame.to_dict("records"), start=1)]
    text = decode_text(raw, name)
    start = text.lstrip()[:1]
    if start == "[":
        records = loads_json(text, source=name, hint="Give the export as it was written")
        pairs = list(enumerate(records, start=1))
    elif start == "{" and not _first_line_is_record(text):
        pairs = [(1, loads_json(text, source=name, hint="Give the export as it was written"))]
    else:
        pairs = [(number, parse_jsonl_record(line, number, name))
                 for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
    bad = [row for row, record in pairs if not isinstance(record, dict)]
    if bad:
        raise SGIInputError("every record of a trace export must be a JSON object", source=name, rows=bad)
    if not pairs:
        raise SGIInputError("the file holds no records", source=name, hint="Export at least one trace")
    return pairs


def first_record_keys(raw: bytes, name: str) -> set[str] | None:
    """The keys (dotted, and top-level) of a JSON or JSON Lines file's first record, read alone; None if unreadable.

    Only the first record is parsed, so recognising a file costs little whatever its size. A
    page of a REST listing (``{"data": [...], "next_cursor": ...}``) adds its first item's keys
    under ``data.``.

    Examples
    --------
    >>> sorted(first_record_keys(b'{"data": [{"span_id": "a1"}], "next_cursor": null}', "page.json"))
    ['data', 'data.span_id', 'next_cursor']
    """
    from sgi_core.io.decoding import decode_text

    try:
        text = decode_text(raw, name).lstrip()
        if text[:1] == "[":
            text = text[1:].lstrip()
        record, _ = json.JSONDecoder().raw_decode(text)
    except (SGIInputError, ValueError, RecursionError):  # not JSON: recognised as nothing, its reader says why
        return None
    if not isinstance(record, dict):
        return None
    listed = record.get("data")
    first = listed[0] if isinstance(listed, list) and listed and isinstance(listed[0], dict) else {}
    return set(record) | set(flatten(record)) | set(flatten(first, "data."))


def parse_json_text(value):
    """``value`` parsed when it is text of a JSON object or array, else as it is."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return loads_json(value)
        except SGIInputError:
            return value
    return value


def value_text(value, side: str) -> str | None:
    """The question (``side="question"``) or answer (``"answer"``) held by an input or output value.

    Text is itself; a JSON object gives its first field of :data:`QUESTION_FIELDS` or
    :data:`ANSWER_FIELDS` (or a message's ``content``, or its only field); chat messages
    give the last user (question) or assistant (answer) message; None when there is none.

    Examples
    --------
    >>> value_text({"query": "Who wrote it?"}, "question")
    'Who wrote it?'
    >>> value_text([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Why?"}], "question")
    'Why?'
    >>> value_text({"input": "q", "context": ["d"], "answer": "a"}, "answer")
    'a'
    >>> value_text({"docs": [1, 2]}, "answer") is None
    True
    """
    if is_missing(value):
        return None
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, dict):
        if "content" in value and "role" in value:
            return value_text(value["content"], side)
        for field in (QUESTION_FIELDS if side == "question" else ANSWER_FIELDS):
            if field in value:
                return value_text(value[field], side)
        inner = value.get("messages", next(iter(value.values())) if len(value) == 1 else None)
        return None if inner is None else value_text(inner, side)
    if isinstance(value, list):
        messages = [m for m in value if isinstance(m, dict) and "role" in m]
        if messages:
            said = [m for m in messages if str(m["role"]).lower() in _ROLES[side]] or messages
            return value_text(said[-1].get("content"), side)
        parts = [p.get("text") if isinstance(p, dict) else p for p in value]
        if parts and all(isinstance(p, str) for p in parts):
            return "".join(parts) if all(isinstance(p, dict) for p in value) else "\n\n".join(parts)
    return None


def document_text(document) -> str | None:
    """The text of one retrieved document: a string, or the first of :data:`DOCUMENT_TEXT_FIELDS`."""
    if isinstance(document, str):
        return document
    if isinstance(document, dict):
        flat = flatten(document)
        for field in DOCUMENT_TEXT_FIELDS:
            if isinstance(flat.get(field), str):
                return flat[field]
    return None


def indexed_documents(attributes: dict, prefix: str) -> list:
    """Documents stored as a list under ``prefix``, flattened as ``prefix.0.document.content``, ``prefix.1...``,
    or one object.

    One document given as an object rather than a list of one (``prefix.document.content``
    once flattened) is read as that one document.

    Examples
    --------
    >>> indexed_documents({"retrieval.documents.1.document.content": "b",
    ...                    "retrieval.documents.0.document.content": "a"}, "retrieval.documents")
    ['a', 'b']
    >>> indexed_documents({"retrieval.documents.document.content": "a"}, "retrieval.documents")
    ['a']
    """
    listed = attributes.get(prefix)
    if isinstance(listed, str):
        listed = parse_json_text(listed)
    if isinstance(listed, list):
        return [document_text(item) for item in listed]
    if isinstance(listed, dict):
        return [document_text(listed)]
    found: dict[int, dict] = {}
    single: dict = {}
    for key, value in attributes.items():
        if key.startswith(prefix + "."):
            position, _, field = key[len(prefix) + 1:].partition(".")
            if position.isdecimal() and position.isascii():
                found.setdefault(int(position), {})[field] = value
            else:
                single[key[len(prefix) + 1:]] = value
    return [document_text(found[position]) for position in sorted(found)] + ([document_text(single)] if single else [])


def _named(ids: list[str]) -> str:
    shown = ", ".join(ids[:IDS_SHOWN])
    return shown + (f" and {len(ids) - IDS_SHOWN} more" if len(ids) > IDS_SHOWN else "")


def traces_frame(traces: list[TraceParts], *, question_from: str, answer_from: str) -> tuple[pd.DataFrame, tuple]:
    """One row per trace (``trace_id``, ``question``, ``context``, ``response``, then every other field of any trace,
    empty where a trace lacks it) and the warnings naming gaps.

    ``question_from`` and ``answer_from`` say, in the warnings, where each format reads them.
    """
    import pandas as pd

    rows, gaps = [], {"question": [], "response": [], "retrieval": [], "empty documents": [], "several": []}
    for trace in traces:
        passages = [text for step in trace.retrievals for text in step if text is not None]
        gaps["question"] += [trace.trace_id] if trace.question is None else []
        gaps["response"] += [trace.trace_id] if trace.response is None else []
        gaps["retrieval"] += [] if trace.retrievals else [trace.trace_id]
        gaps["empty documents"] += [trace.trace_id] if any(None in step for step in trace.retrievals) else []
        gaps["several"] += [trace.trace_id] if len(trace.retrievals) > 1 else []
        core = {TRACE_ID_COLUMN: trace.trace_id, "question": trace.question or "", "context": passages,
                "response": trace.response or ""}
        if trace.root_span_id is not None:
            core[SPAN_ID_COLUMN] = trace.root_span_id
        rows.append({**core, **{f"trace.{name}" if name in core else name: value for name, value in trace.extra}})
    texts = {
        "question": f"no question ({question_from}): kept with an empty question, not scored",
        "response": f"no answer ({answer_from}): kept with an empty response, not scored",
        "retrieval": "no retriever step: kept with an empty context, not scored",
        "empty documents": "retrieved documents holding no text: those documents are left out",
        "several": "two or more retriever steps: their documents are joined in start order",
    }
    warnings = tuple(f"{len(ids)} trace{'s' if len(ids) > 1 else ''} with {texts[gap]} ({_named(ids)})"
                     for gap, ids in gaps.items() if ids)
    frame = pd.DataFrame(rows, columns=list(dict.fromkeys(name for row in rows for name in row))
                         or [TRACE_ID_COLUMN, "question", "context", "response"])
    return frame, warnings
