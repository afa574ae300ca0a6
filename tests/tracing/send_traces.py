"""Send OpenInference RAG traces to a Phoenix server through the OpenTelemetry SDK (OTLP/HTTP, protobuf).

Run by the Python of the server's own environment, which has the SDK; the workbench's environment
does not need it. Reads ``{"endpoint", "project", "traces": [...]}`` as JSON on stdin, each trace
``{"question", "json_input", "retrievals": [[document, ...], ...], "answer", "start_ns"}`` (and
``"child_offset_ns"``: how long after the root its first child starts, default 0), and
prints the hexadecimal trace and root span id of each trace, in order, as one JSON list.
"""

import json
import sys

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import set_span_in_context

#: Each child span lasts this long, one after another from the root's start (nanoseconds).
STEP_NS = 10_000_000


def send(spec: dict) -> list[dict]:
    provider = TracerProvider(resource=Resource.create({"openinference.project.name": spec["project"]}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=spec["endpoint"], timeout=10)))
    tracer = provider.get_tracer("sgi-workbench-tests")
    sent = []
    for trace in spec["traces"]:
        start = trace["start_ns"]
        question = json.dumps({"query": trace["question"]}) if trace["json_input"] else trace["question"]
        root = tracer.start_span("rag", start_time=start, attributes={
            "openinference.span.kind": "CHAIN", "input.value": question,
            "input.mime_type": "application/json" if trace["json_input"] else "text/plain",
            "output.value": trace["answer"], "metadata": json.dumps({"request_id": trace.get("request_id", "")})})
        parent = set_span_in_context(root)
        at = start + trace.get("child_offset_ns", 0)
        for step, documents in enumerate(trace["retrievals"]):
            attributes = {"openinference.span.kind": "RETRIEVER", "input.value": trace["question"]}
            for i, text in enumerate(documents):
                attributes[f"retrieval.documents.{i}.document.content"] = text
                attributes[f"retrieval.documents.{i}.document.id"] = f"doc-{step}-{i}"
            retriever = tracer.start_span(f"retrieve-{step}", context=parent, start_time=at + 1, attributes=attributes)
            at += STEP_NS
            retriever.end(end_time=at)
        llm = tracer.start_span("llm", context=parent, start_time=at + 1, attributes={
            "openinference.span.kind": "LLM", "input.value": trace["question"], "output.value": trace["answer"]})
        at += STEP_NS
        llm.end(end_time=at)
        root.end(end_time=at + 1)
        context = root.get_span_context()
        sent.append({"trace_id": format(context.trace_id, "032x"), "span_id": format(context.span_id, "016x")})
    provider.force_flush()
    provider.shutdown()
    return sent


if __name__ == "__main__":
    print(json.dumps(send(json.load(sys.stdin))))
