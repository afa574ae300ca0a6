"""Cached calls into sgi_core: reading and scoring a file, its report, and the embedding models.

With the modules beside it, one per topic (calibration, compare, confound, detector, evidence,
geometry, judging, label exchange, model, monitor, paired review, report, review), the only
modules with ``st.cache_*`` and heavy library calls; pages call them and draw.

Computed frames are cached keyed on the :class:`~dashboard.state.DataKey` and the model
*name*; arguments whose names start with ``_`` (the raw bytes, the table, the frame) are
not hashed, because the key already determines them. The file's frame, its table and
its scores are held once with ``st.cache_resource`` (shared, never copied: nothing may
modify them), since ``st.cache_data`` would hand every rerun a fresh copy of a frame
that can hold millions of rows; files are scored :data:`SCORE_CHUNK_ROWS` rows at a
time, so only one chunk's float32 embeddings are held at once.
Embeddings also go to sgi_core's on-disk cache, so a file seen before is not
re-embedded even after the app restarts.

The app's Arrow buffers (its text columns and everything computed from them) come from
the C library's ``malloc``, which hands freed memory back, not from Arrow's default
allocator, which keeps it for reuse: on a 2,000,000-row scored file the Data page then
peaks at 2,001 MiB instead of 2,243 and the Calibration page at 2,691 instead of 2,910
(``benchmarks/bench_dashboard_memory.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from dashboard import state
from dashboard.devices import chosen_backend, chosen_device
from dashboard.services.resamples import REPORT_N_BOOT, app_resamples
from sgi_core import evaluation
from sgi_core.columns import DEFAULT_CONTEXT_STRATEGY, one_label_column
from sgi_core.detectors.folds import question_groups
from sgi_core.embedding import (
    DEFAULT_MODEL,
    EmbeddingCache,
    default_cache_dir,
    load_encoder,
    model_availability,
)
from sgi_core.evaluation import detectors
from sgi_core.evaluation.report import with_declared
from sgi_core.evaluation.retrieval_report import RetrievalReport, retrieval_report
from sgi_core.io.convert.detection import read_input
from sgi_core.io.export import to_csv_bytes
from sgi_core.io.limits import LIMIT_ENV as LIMIT_ENV  # the Data page names the variables
from sgi_core.io.limits import InputLimits, is_scored
from sgi_core.io.passages import row_passages
from sgi_core.io.scored import scored_table
from sgi_core.io.triples import TripleTable, validate_triples
from sgi_core.retrieval import find_retrieval_columns
from sgi_core.scores import column_spec
from sgi_core.scores.baselines import response_length
from sgi_core.scores.oriented import oriented_scores
from sgi_core.scores.selection import trivial_names
from sgi_core.scoring import TripleScore, embed_table, score_table, score_triple
from sgi_core.stats.bootstrap import BOOTSTRAP_MAX_ROWS as BOOTSTRAP_MAX_ROWS  # pages state it
from sgi_core.stats.calibration import CalibrationResult, calibration_analysis
from sgi_core.stats.ranking import score_percentile
from sgi_core.stats.thresholds import ThresholdChoice, choose_threshold

pa.set_memory_pool(pa.system_memory_pool())

SAMPLE_CSV = Path(__file__).resolve().parents[2] / "sample_data" / "halueval_qa_sample.csv"

#: Environment variable naming the model scored on first open (tests use "hashing").
MODEL_ENV = "SGI_DASHBOARD_MODEL"


def default_model() -> str:
    return os.environ.get(MODEL_ENV, DEFAULT_MODEL)


def model_choices() -> tuple[list[str], list]:
    """Names the user can score with, and the registered models that are not available here."""
    registry = model_availability()
    names = [m.name for m in registry if m.available]
    if default_model() not in names:
        names.insert(0, default_model())
    return names, [m for m in registry if not m.available]


@st.cache_resource(show_spinner="Loading the embedding model...")
def encoder(model_name: str, device: str, backend: str):
    return load_encoder(model_name, device=device, backend=backend)


def model_encoder(model_name: str):
    """The encoder of ``model_name`` on the device and backend chosen in the sidebar."""
    return encoder(model_name, chosen_device(), chosen_backend())


@st.cache_resource
def _embedding_cache(model_id: str, cache_dir: str) -> EmbeddingCache:
    return EmbeddingCache(model_id, cache_dir)


def disk_cache(model_name: str) -> EmbeddingCache:
    """The on-disk embedding cache of a model (shared with the CLI), opened once per model and folder."""
    return _embedding_cache(model_encoder(model_name).model_id, str(default_cache_dir()))


#: Rows embedded and scored at a time: one chunk's embeddings are held, never the whole file's.
SCORE_CHUNK_ROWS = 10_000


def env_limits() -> InputLimits:
    """The limits of the environment (:data:`LIMIT_ENV`), the Data page's starting values."""
    return InputLimits.from_env()


def input_limits() -> InputLimits:
    """The limits set on the Data page, else those of the environment (``SGI_MAX_ROWS``, ...)."""
    return state.input_limits(InputLimits.from_env())


@st.cache_resource(show_spinner="Reading the file...", max_entries=2)
def raw_frame(name: str, digest: str, _raw, limits: InputLimits | None = None) -> pd.DataFrame:
    """The file's raw columns, read under ``limits`` (default: the environment's); shared, not copied.

    A trace export (Phoenix, Langfuse, OpenTelemetry) opens as its triples
    (:func:`~sgi_core.io.convert.detection.read_input`).
    """
    return read_input(_raw, name=name, limits=limits or InputLimits.from_env())


@st.cache_resource(show_spinner=False, max_entries=2)
def opened_file(key: state.DataKey, _raw, limits: InputLimits | None = None) -> tuple[TripleTable, pd.DataFrame | None]:
    """The file validated, and its scores when it is already scored (:func:`~sgi_core.io.scored.scored_table`)."""
    frame = raw_frame(key.name, key.digest, _raw, limits)
    if is_scored(frame.columns):
        return scored_table(frame, source=key.name)
    table = validate_triples(frame, mapping=state.mapping_dict(key), label_positive=key.label_positive,
                             source=key.name, label_map=dict(key.label_map) or None)
    return table, None


def triple_table(key: state.DataKey, _raw, limits: InputLimits | None = None) -> TripleTable:
    return opened_file(key, _raw, limits)[0]


def file_scores(key: state.DataKey, _raw, limits: InputLimits | None = None) -> pd.DataFrame | None:
    """The scores an already scored file carries, or None when it needs scoring."""
    return opened_file(key, _raw, limits)[1]


def embed(table: TripleTable, model_name: str, *, context_strategy: str = DEFAULT_CONTEXT_STRATEGY,
          progress=None) -> None:
    """Put the embeddings of a table's texts in the disk cache, :data:`SCORE_CHUNK_ROWS` rows at a time.

    ``progress(done, total, chunk, chunks)`` sees the new texts of chunk ``chunk`` of ``chunks``.
    """
    chunks = -(-table.n_rows // SCORE_CHUNK_ROWS)
    for index, part in enumerate(table.chunks(SCORE_CHUNK_ROWS), start=1):
        step = None if progress is None else (lambda done, total, index=index: progress(done, total, index, chunks))
        embed_table(part, model_encoder(model_name), context_strategy=context_strategy, cache=disk_cache(model_name),
                    progress=step)


@st.cache_resource(show_spinner=False, max_entries=4)
def scored_frame(key: state.DataKey, model_name: str, _table: TripleTable) -> pd.DataFrame:
    """The table scored :data:`SCORE_CHUNK_ROWS` rows at a time; shared, not copied."""
    model, cache = model_encoder(model_name), disk_cache(model_name)
    parts = [score_table(part, model, context_strategy=key.context_strategy, cache=cache)
             for part in _table.chunks(SCORE_CHUNK_ROWS)]
    return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)


@st.cache_resource(show_spinner="Computing the baselines...", max_entries=4)
def baselines(key: state.DataKey, model_name: str, _frame: pd.DataFrame) -> pd.DataFrame | None:
    """The trivial scores per row, oriented (shared, not copied), or None without response and context columns."""
    if not {"response", "context"} <= set(_frame.columns):
        return None
    return oriented_scores(_frame, trivial_names(_frame.columns))


# Results holding a value per row or per threshold (ROC curves, threshold grids: 100 MB and more at millions
# of rows) are cached as shared objects (st.cache_resource); st.cache_data would keep a pickled copy and
# hand each rerun another. The results are frozen dataclasses and frames that no page changes.
@st.cache_resource(show_spinner="Computing statistics...", max_entries=8)
def file_report(key: state.DataKey, model_name: str, _frame: pd.DataFrame) -> evaluation.EvaluationReport:
    """The file's report: SGI, the trivial scores and the score columns the file carries, each judged once
    (:func:`sgi_core.evaluation.report.evaluate`)."""
    return evaluation.evaluate(_frame, baselines=baselines(key, model_name, _frame),
                               n_boot=app_resamples(REPORT_N_BOOT))


@st.cache_resource(show_spinner="Judging the detector columns...", max_entries=16)
def report(key: state.DataKey, model_name: str, _frame: pd.DataFrame, specs: tuple = ()) -> evaluation.EvaluationReport:
    """:func:`file_report` with the detector columns ``specs`` ((column, higher_is), ...) judged too: declaring a
    column judges that column only (:func:`sgi_core.evaluation.report.with_declared`)."""
    base = file_report(key, model_name, _frame)
    if not specs:
        return base
    declared = [column_spec(column, higher_is=higher_is) for column, higher_is in specs]
    return with_declared(base, _frame, declared, n_boot=app_resamples(REPORT_N_BOOT))


def numeric_columns(table: TripleTable) -> list[str]:
    """Input columns, other than the mapped ones, that can serve as detector scores (e.g. an LLM judge)."""
    return detectors.numeric_score_columns(table.frame[table.unmapped_columns])


def _detector_values(table: TripleTable, column: str, higher_is: str) -> np.ndarray:
    return column_spec(column, higher_is=higher_is).oriented(table.frame[column], source=table.source)


@st.cache_resource(show_spinner="Comparing detectors...", max_entries=32)
def detector_comparison(key: state.DataKey, model_name: str, specs: tuple, _table: TripleTable,
                        _frame: pd.DataFrame) -> detectors.DetectorComparison:
    """SGI and the declared detector columns ``specs`` ((column, higher_is), ...), alone and combined.

    Each column is keyed by its oriented name (``neg_<column>`` when given as hallucinated-high).
    Every score's judgement is the report's, not made again.
    """
    judged = report(key, model_name, _frame, specs)
    scores = {judged.score_col: _frame[judged.score_col].to_numpy()}
    scores.update({column_spec(column, higher_is=higher_is).oriented_name: _detector_values(_table, column, higher_is)
                   for column, higher_is in specs})
    return detectors.compare_detectors(scores, _frame["label"].to_numpy(), groups=question_groups(_frame),
                                       lengths=response_length(_frame["response"]),
                                       judgements={name: judged.judgements[name] for name in scores},
                                       n_boot=app_resamples(REPORT_N_BOOT))


@st.cache_data(show_spinner=False, max_entries=64)
def detector_calibration(key: state.DataKey, column: str, higher_is: str, method: str,
                         _table: TripleTable) -> CalibrationResult:
    return calibration_analysis(_table.frame["label"].to_numpy(),
                                           _detector_values(_table, column, higher_is), method=method)


@st.cache_data(show_spinner=False, max_entries=64)
def detector_threshold(key: state.DataKey, column: str, higher_is: str,
                       _table: TripleTable) -> ThresholdChoice:
    """Youden's J threshold of a detector column (on the oriented score)."""
    return choose_threshold(_table.frame["label"].to_numpy(), _detector_values(_table, column, higher_is),
                                       method="youden")


def has_retrieval_columns(columns) -> bool:
    return None not in find_retrieval_columns(columns)


@st.cache_data(show_spinner="Computing retrieval metrics...", max_entries=32)
def retrieval(key: state.DataKey, model_name: str, grounded_threshold: float,
              _frame: pd.DataFrame) -> RetrievalReport | None:
    return retrieval_report(_frame, grounded_threshold=grounded_threshold, source=key.name)




@st.cache_data(show_spinner=False, max_entries=256)
def triple_score(model_name: str, question: str, context: str, response: str, backend: str,
                 context_strategy: str = DEFAULT_CONTEXT_STRATEGY, passages: tuple | None = None) -> TripleScore:
    """Angles, SGI and the SGI bounds of one typed triple, embedded through ``backend`` with ``context_strategy``."""
    return score_triple(question, context, response, encoder(model_name, chosen_device(), backend),
                        cache=disk_cache(model_name), context_strategy=context_strategy, passages=passages)


def row_passages_of(row: pd.Series) -> tuple:
    """One row's passages (:func:`~sgi_core.io.passages.row_passages`): its list, or its context alone."""
    return row_passages(row.to_frame().T)[0]


@st.cache_data(show_spinner=False, max_entries=256)
def sgi_percentile(key: state.DataKey, model_name: str, value: float, _frame: pd.DataFrame) -> float:
    return score_percentile(_frame["sgi"].to_numpy(), value)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The scored frame as a CSV download (formula-like cells escaped), with one label column."""
    return to_csv_bytes(one_label_column(frame))


