"""Converters from other tools' files to triples, one registry entry per format.

:data:`FORMATS` declares each format once: its name (``convert --from NAME``), what it
is, the files it comes in, the keys that recognise it, what its converter reads, and the
converter. ``python -m sgi_core convert`` lists and detects formats from it
(:func:`convert_file`), and the Data page's reader (:func:`read_input`) converts the
formats marked ``upload`` (the trace exports, which are not tables of answers) as they are
opened. Adding a format is its converter, one entry here, a fixture test and a README line.

A file is recognised when its first record (JSON, JSON Lines), its columns (Parquet) or its
header (CSV) holds every key of one of a format's signatures; when no format or several
match, ``convert`` asks for ``--from``.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sgi_core.errors import SGIInputError
from sgi_core.jsonio import loads_json

if TYPE_CHECKING:
    import pandas as pd


#: The file kinds of :attr:`InputFormat.kinds`, as messages name them.
KIND_NAMES = {"parquet": "Parquet", "json": "JSON/JSON Lines", "csv": "CSV"}


@dataclass(frozen=True)
class Conversion:
    """Triples converted from a file, and what the conversion has to say about it.

    Attributes
    ----------
    frame : DataFrame
        ``question``, ``context``, ``response`` and the format's own columns (``label``,
        ``id``, ``trace_id``, ...).
    format : str
        The :data:`FORMATS` name it was read as.
    warnings : tuple of str
        Gaps in the file (traces without a question, an answer or a retriever step), each
        naming its traces.
    """

    frame: pd.DataFrame
    format: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class InputFormat:
    """One file format that :func:`convert_file` turns into triples.

    Attributes
    ----------
    name : str
        ``convert --from`` value.
    title : str
        What it is, in messages and ``--help``.
    kinds : tuple of str
        The file kinds it comes in (:data:`KIND_NAMES`): ``"parquet"``, ``"json"`` (a
        JSON array, JSON Lines or one JSON document; by suffix ``.json``, ``.jsonl`` or
        ``.ndjson``) or ``"csv"``.
    signatures : tuple of frozenset of str
        Keys (dotted for nested JSON) or columns that recognise it: all of one set present.
    reads : str
        What the converter reads, for ``--help`` and the README.
    convert : callable
        ``convert(raw_bytes, name, **options) -> Conversion``.
    upload : bool
        Whether the Data page converts such a file when it is opened (:func:`read_input`).
    options : tuple of str
        Keyword options ``convert`` accepts (``convert_file`` passes those given).
    """

    name: str
    title: str
    kinds: tuple[str, ...]
    signatures: tuple[frozenset[str], ...]
    reads: str
    convert: Callable[..., Conversion]
    upload: bool = False
    options: tuple[str, ...] = field(default=())

    def recognises(self, keys) -> bool:
        """Whether ``keys`` (a file's columns or first record's keys) hold every key of one signature."""
        return any(signature <= set(keys) for signature in self.signatures)


def source_bytes(source, name: str) -> bytes:
    """A path's or an upload's bytes, refused past ``SGI_MAX_INPUT_MB`` as every reader refuses them."""
    from sgi_core.io.reading import _read_bytes, max_input_bytes

    return _read_bytes(source, name, max_input_bytes())


#: Raw HaluEval fields per task: (context, question or None, right answer, hallucinated answer).
HALUEVAL_FIELDS = {
    "qa": ("knowledge", "question", "right_answer", "hallucinated_answer"),
    "dialogue": ("knowledge", "dialogue_history", "right_response", "hallucinated_response"),
    "summarization": ("document", None, "right_summary", "hallucinated_summary"),
}

#: The question used for HaluEval summarization, which has none of its own.
SUMMARIZATION_QUESTION = "Summarize the document."


def convert_halueval(source: str | Path | bytes, *, task: str = "qa", name: str | None = None) -> pd.DataFrame:
    """Read a raw HaluEval JSON Lines file into paired triples.

    Each record gives two rows, its right answer (label 1) and its hallucinated
    answer (label 0), linked by ``pair_id``; ``answer_type`` says which is which.

    Parameters
    ----------
    source : path-like or bytes
        ``qa_data.json``, ``dialogue_data.json`` or ``summarization_data.json``.
    task : {"qa", "dialogue", "summarization"}
    name : str, optional
        The file's name in messages (default: the path).

    Raises
    ------
    SGIInputError
        Unknown task, invalid JSON, or a record missing a field (with its line number).
    """
    if task not in HALUEVAL_FIELDS:
        raise SGIInputError(f"unknown HaluEval task '{task}'", hint=f"Use one of {', '.join(HALUEVAL_FIELDS)}")
    import pandas as pd

    from sgi_core.io.decoding import decode_text
    from sgi_core.io.reading import source_name

    name = name or source_name(source)
    context_key, question_key, right_key, halluc_key = HALUEVAL_FIELDS[task]
    rows = []
    for number, line in enumerate(decode_text(source_bytes(source, name), name).splitlines(), start=1):
        if not line.strip():
            continue
        record = loads_json(line, source=name, rows=[number], hint="Each line must be one JSON object")
        if not isinstance(record, dict):
            raise SGIInputError("a JSON Lines record must be an object", source=name, rows=[number])
        needed = [k for k in (context_key, question_key, right_key, halluc_key) if k]
        missing = [k for k in needed if k not in record]
        if missing:
            raise SGIInputError(f"record lacks {', '.join(missing)}", source=name, rows=[number],
                                hint=f"Is this the HaluEval {task} file?")
        question = record[question_key] if question_key else SUMMARIZATION_QUESTION
        pair_id = len(rows) // 2
        for answer_type, key, label in (("right", right_key, 1), ("hallucinated", halluc_key, 0)):
            rows.append({
                "question": question, "context": record[context_key], "response": record[key],
                "label": label, "id": f"halueval_{task}_{pair_id}_{answer_type}",
                "pair_id": pair_id, "answer_type": answer_type,
            })
    return pd.DataFrame(rows)


def _split_answers(cell) -> list[str]:
    if not isinstance(cell, str):
        return []
    return [part.strip() for part in cell.split(";") if part.strip()]


def convert_truthfulqa(source: str | Path | bytes, *, context: str = "references", max_incorrect: int = 2,
                       seed: int = 0, name: str | None = None) -> pd.DataFrame:
    """Read the TruthfulQA CSV into triples.

    Rows per question: the best answer (label 1) and up to ``max_incorrect``
    incorrect answers (label 0).

    Parameters
    ----------
    source : path-like or bytes
        ``TruthfulQA.csv`` (columns Type, Category, Question, Best Answer,
        Correct Answers, Incorrect Answers, Source).
    context : {"references", "question"}
        ``"references"``: all reference answers of the question, correct and
        incorrect, shuffled with ``seed`` and joined into one passage.
        ``"question"``: the question itself, as the paper's code does; this makes
        SGI ~1 for every row.
    max_incorrect : int
    seed : int
    name : str, optional
        The file's name in messages (default: the path).
    """
    if context not in ("references", "question"):
        raise SGIInputError(f"unknown TruthfulQA context '{context}'", hint="Use 'references' or 'question'")
    import pandas as pd

    from sgi_core.io.reading import source_name

    name = name or source_name(source)
    raw = pd.read_csv(io.BytesIO(source_bytes(source, name)), dtype=str, keep_default_na=False)
    needed = ["Question", "Best Answer", "Correct Answers", "Incorrect Answers"]
    missing = [c for c in needed if c not in raw.columns]
    if missing:
        raise SGIInputError(f"missing columns {', '.join(missing)}", source=name,
                            hint="Is this the TruthfulQA CSV?")
    rng = random.Random(seed)
    rows = []
    for qid, record in raw.iterrows():
        correct, incorrect = _split_answers(record["Correct Answers"]), _split_answers(record["Incorrect Answers"])
        if context == "references":
            references = correct + incorrect
            rng.shuffle(references)
            ctx = " ".join(r if r.endswith((".", "?", "!")) else r + "." for r in references)
        else:
            ctx = record["Question"]
        extra = {"qid": qid, "category": record.get("Category", ""), "type": record.get("Type", "")}
        rows.append({"question": record["Question"], "context": ctx, "response": record["Best Answer"],
                     "label": 1, "id": f"truthfulqa_{qid}_best", **extra})
        for k, answer in enumerate(incorrect[:max_incorrect]):
            rows.append({"question": record["Question"], "context": ctx, "response": answer,
                         "label": 0, "id": f"truthfulqa_{qid}_incorrect{k}", **extra})
    return pd.DataFrame(rows)


#: Each trace format's reader (in :mod:`sgi_core.io.convert.trace_formats`) and where it reads the question and
#: the answer, for the warnings.
TRACE_READERS = {
    "phoenix": ("phoenix_traces", "root span's input.value", "root span's output.value"),
    "langfuse": ("langfuse_traces", "the trace's or root observation's input",
                 "the trace's or root observation's output"),
    "otel": ("otlp_traces", "root span's input.value", "root span's output.value"),
}
#: Spans in a dataframe ``get_spans_dataframe`` returns by default (``limit=1000``): an export this long may be cut.
PHOENIX_DEFAULT_LIMIT = 1000


def trace_conversion(fmt: str, records: list[tuple[int, dict]], name: str) -> Conversion:
    """Trace records as one row per trace: the one path of a trace export and of spans pulled from a server.

    Parameters
    ----------
    fmt : {"phoenix", "langfuse", "otel"}
        A :data:`TRACE_READERS` name.
    records : list of (int, dict)
        ``(row, record)`` pairs (:func:`~sgi_core.io.convert.traces.load_records`); REST pages
        are opened into their spans.
    name : str
        Where the records come from, in messages.
    """
    from sgi_core.io.convert import trace_formats
    from sgi_core.io.convert.traces import traces_frame

    cut = fmt == "phoenix" and len(records) == PHOENIX_DEFAULT_LIMIT
    records, notes = trace_formats.span_pages(records, name)
    reader, question_from, answer_from = TRACE_READERS[fmt]
    frame, warnings = traces_frame(getattr(trace_formats, reader)(records, name), question_from=question_from,
                                   answer_from=answer_from)
    if cut:
        notes += (f"the export holds exactly {PHOENIX_DEFAULT_LIMIT:,} spans, the number get_spans_dataframe returns "
                  "by default: traces past it may be missing; export again with limit=None, or use "
                  "python -m sgi_core pull phoenix",)
    return Conversion(frame, fmt, notes + warnings)


def _traces(fmt: str) -> Callable[..., Conversion]:
    def convert(raw: bytes, name: str) -> Conversion:
        from sgi_core.io.convert.traces import load_records

        return trace_conversion(fmt, load_records(raw, name), name)

    return convert


def _halueval(task: str) -> Callable[..., Conversion]:
    def convert(raw: bytes, name: str) -> Conversion:
        return Conversion(convert_halueval(raw, task=task, name=name), f"halueval-{task}")

    return convert


def _truthfulqa(raw: bytes, name: str, *, context: str = "references") -> Conversion:
    return Conversion(convert_truthfulqa(raw, context=context, name=name), "truthfulqa")


def _halueval_format(task: str, what: str) -> InputFormat:
    context_key, question_key, right_key, halluc_key = HALUEVAL_FIELDS[task]
    keys = frozenset(k for k in (context_key, question_key, right_key, halluc_key) if k)
    return InputFormat(f"halueval-{task}", f"HaluEval {task} file ({what})", ("json",), (keys,),
                       f"{', '.join(sorted(keys))}: two rows per record, right (label 1) and hallucinated (0)",
                       _halueval(task))


#: Every format ``convert`` reads, in ``--help`` order.
FORMATS: dict[str, InputFormat] = {f.name: f for f in (
    InputFormat("phoenix", "Phoenix (Arize) span export", ("parquet", "json"),
                (frozenset({"context.trace_id", "context.span_id", "span_kind"}),
                 frozenset({"data.context.trace_id", "data.context.span_id", "data.span_kind"})),
                "spans joined by context.trace_id (a spans dataframe, or pages of the REST API's /spans): the root "
                "span's attributes.input.value / output.value, each RETRIEVER span's attributes.retrieval.documents",
                _traces("phoenix"), upload=True),
    InputFormat("langfuse", "Langfuse traces with their observations", ("json",),
                (frozenset({"id", "observations"}),),
                "each trace's id, input and output (else its root observation's), the output documents of its "
                "RETRIEVER observations (or child SPANs named for retrieval)", _traces("langfuse"), upload=True),
    InputFormat("otel", "OpenTelemetry (OTLP JSON) spans with OpenInference attributes", ("json",),
                (frozenset({"resourceSpans"}), frozenset({"resource_spans"}),
                 frozenset({"data.trace_id", "data.span_id", "data.start_time_unix_nano"})),
                "spans joined by traceId (or pages of Phoenix's /spans/otlpv1): the root span's input.value / "
                "output.value, each RETRIEVER span's retrieval.documents.N.document.content", _traces("otel"),
                upload=True),
    _halueval_format("qa", "qa_data.json"),
    _halueval_format("dialogue", "dialogue_data.json"),
    _halueval_format("summarization", "summarization_data.json"),
    InputFormat("truthfulqa", "TruthfulQA CSV (TruthfulQA.csv)", ("csv",),
                (frozenset({"Question", "Best Answer", "Correct Answers", "Incorrect Answers"}),),
                "Question, Best Answer (label 1) and up to two Incorrect Answers (label 0)", _truthfulqa,
                options=("context",)),
)}
