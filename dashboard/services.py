"""Cached calls into sgi_core: the only module with ``st.cache_*`` and heavy library calls.

Computed frames are cached with ``st.cache_data`` keyed on the :class:`~dashboard.state.DataKey`
and the model *name*; arguments whose names start with ``_`` (the raw bytes, the
table, the frame) are not hashed, because the key already determines them.
Embeddings also go to sgi_core's on-disk cache, so a file seen before is not
re-embedded even after the app restarts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import state
from sgi_core import evaluation
from sgi_core.data import TripleTable, read_table, validate_triples
from sgi_core.embedding import (
    DEFAULT_MODEL,
    EmbeddingCache,
    default_cache_dir,
    load_encoder,
    model_availability,
)
from sgi_core.errors import SGIInputError
from sgi_core.evaluation import detectors
from sgi_core.evaluation.retrieval_report import RetrievalReport, retrieval_report
from sgi_core.projection import TripleProjection, project_triples, sample_rows
from sgi_core.retrieval import find_retrieval_columns
from sgi_core.scoring import TripleScore, embed_table, score_table, score_triple
from sgi_core.session import data_fingerprint

SAMPLE_CSV = Path(__file__).resolve().parents[1] / "sample_data" / "halueval_qa_sample.csv"

#: Environment variable naming the model scored on first open (tests use "hashing").
MODEL_ENV = "SGI_DASHBOARD_MODEL"

EMBEDDED = "services.embedded"


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
def encoder(model_name: str):
    return load_encoder(model_name)


@st.cache_resource
def _embedding_cache(model_id: str, cache_dir: str) -> EmbeddingCache:
    return EmbeddingCache(model_id, cache_dir)


def _disk_cache(model_name: str) -> EmbeddingCache:
    return _embedding_cache(encoder(model_name).model_id, str(default_cache_dir()))


@st.cache_data(show_spinner=False, max_entries=8)
def raw_frame(name: str, digest: str, _raw: bytes) -> pd.DataFrame:
    return read_table(_raw, name=name)


@st.cache_data(show_spinner=False, max_entries=8)
def triple_table(key: state.DataKey, _raw: bytes) -> TripleTable:
    frame = raw_frame(key.name, key.digest, _raw)
    return validate_triples(frame, mapping=state.mapping_dict(key), label_positive=key.label_positive,
                            source=key.name)


def _embed_with_progress(table: TripleTable, model_name: str) -> None:
    """Embed the texts missing from the disk cache, drawing a progress bar of texts embedded / total."""
    bar = st.empty()

    def report(done: int, total: int) -> None:
        if total:
            bar.progress(done / total, text=f"Embedding with {model_name}: {done:,} / {total:,} new texts")

    embed_table(table, encoder(model_name), cache=_disk_cache(model_name), progress=report)
    bar.empty()


@st.cache_data(show_spinner=False, max_entries=16)
def _scored_frame(key: state.DataKey, model_name: str, _table: TripleTable) -> pd.DataFrame:
    return score_table(_table, encoder(model_name), cache=_disk_cache(model_name))


def scored_frame(key: state.DataKey, table: TripleTable, model_name: str) -> pd.DataFrame:
    """The table scored with one model; the first call in a session shows embedding progress."""
    done = st.session_state.setdefault(EMBEDDED, set())
    if (key, model_name) not in done:
        _embed_with_progress(table, model_name)
        done.add((key, model_name))
    return _scored_frame(key, model_name, table)


@dataclass(frozen=True)
class ScoredData:
    """The current file, validated and scored with each chosen model."""

    key: state.DataKey
    table: TripleTable
    frames: dict
    model: str

    @property
    def frame(self) -> pd.DataFrame:
        """Scores of the model shown on the analysis pages."""
        return self.frames[self.model]


def current_columns() -> list[str]:
    """Columns of the current file (the bundled sample on first open), seeding the mapping from them.

    Raises
    ------
    SGIInputError
        If the file cannot be read.
    """
    if not state.has_file():
        state.set_file(SAMPLE_CSV.name, SAMPLE_CSV.read_bytes())
    name, raw = state.raw_file()
    columns = list(raw_frame(name, state.data_digest(), raw).columns)
    state.seed_mapping(columns)
    return columns


def current_table() -> tuple[state.DataKey, TripleTable]:
    """The current file validated with the chosen mapping; raises SGIInputError when it does not fit."""
    current_columns()
    key = state.data_key()
    return key, triple_table(key, state.raw_file()[1])


def scored_data() -> ScoredData:
    """Current file scored with every chosen model; shows the error and stops the page when it cannot."""
    try:
        key, table = current_table()
        models = state.chosen_models(default_model())
        frames = {name: scored_frame(key, table, name) for name in models}
    except SGIInputError as err:
        st.error(f"{err}")
        st.info("Fix the file or the column mapping on the Data page.")
        st.stop()
    return ScoredData(key, table, frames, state.shown_model(models))


@st.cache_data(show_spinner="Computing statistics...", max_entries=64)
def report(key: state.DataKey, model_name: str, _frame: pd.DataFrame) -> evaluation.EvaluationReport:
    return evaluation.evaluate(_frame)


@st.cache_data(show_spinner=False, max_entries=64)
def baseline_curves(key: state.DataKey, model_name: str, _frame: pd.DataFrame) -> dict:
    """ROC curves of the trivial baselines (their AUROC intervals are in the report)."""
    scores = evaluation.baseline_scores(_frame)
    labels = _frame["label"].to_numpy()
    return {name: evaluation.roc_analysis(labels, scores[name].to_numpy(dtype=np.float64), n_boot=0)
            for name in scores.columns}


def numeric_columns(table: TripleTable) -> list[str]:
    """Input columns, other than the mapped ones, that can serve as detector scores (e.g. an LLM judge)."""
    roles = {*state.ROLES, "input_row", *(c for c in table.mapping.to_dict().values() if c)}
    return detectors.numeric_score_columns(table.frame, exclude=roles)


def _detector_values(table: TripleTable, column: str, higher_is: str) -> np.ndarray:
    return detectors.orient_detector_score(table.frame[column], higher_is=higher_is, source=table.source,
                                           column=column)


@st.cache_data(show_spinner=False, max_entries=64)
def column_roc(key: state.DataKey, column: str, higher_is: str, _table: TripleTable) -> evaluation.RocResult:
    """ROC of a numeric input column taken as a detector score, oriented by ``higher_is``."""
    return evaluation.roc_analysis(_table.frame["label"].to_numpy(), _detector_values(_table, column, higher_is))


@st.cache_data(show_spinner="Comparing detectors...", max_entries=32)
def detector_comparison(key: state.DataKey, model_name: str, specs: tuple, _table: TripleTable,
                        _frame: pd.DataFrame) -> detectors.DetectorComparison:
    """SGI and the declared detector columns ``specs`` ((column, higher_is), ...), alone and combined."""
    scores = {"SGI": _frame["sgi"].to_numpy()}
    scores.update({column: _detector_values(_table, column, higher_is) for column, higher_is in specs})
    return detectors.compare_detectors(scores, _frame["label"].to_numpy())


@st.cache_data(show_spinner=False, max_entries=64)
def detector_calibration(key: state.DataKey, column: str, higher_is: str, method: str,
                         _table: TripleTable) -> evaluation.CalibrationResult:
    return evaluation.calibration_analysis(_table.frame["label"].to_numpy(),
                                           _detector_values(_table, column, higher_is), method=method)


@st.cache_data(show_spinner=False, max_entries=64)
def detector_threshold(key: state.DataKey, column: str, higher_is: str,
                       _table: TripleTable) -> evaluation.ThresholdChoice:
    """Youden's J threshold of a detector column (on the oriented score)."""
    return evaluation.choose_threshold(_table.frame["label"].to_numpy(), _detector_values(_table, column, higher_is),
                                       method="youden")


def has_retrieval_columns() -> bool:
    """Whether the current file lists retrieved and relevant ids (False while it cannot be read)."""
    try:
        columns = current_columns()
    except SGIInputError:
        return False
    return None not in find_retrieval_columns(columns)


@st.cache_data(show_spinner="Computing retrieval metrics...", max_entries=32)
def retrieval(key: state.DataKey, model_name: str, grounded_threshold: float,
              _frame: pd.DataFrame) -> RetrievalReport | None:
    return retrieval_report(_frame, grounded_threshold=grounded_threshold, source=key.name)


@st.cache_data(show_spinner=False, max_entries=64)
def calibration(key: state.DataKey, model_name: str, method: str,
                _frame: pd.DataFrame) -> evaluation.CalibrationResult:
    return evaluation.calibration_analysis(_frame["label"].to_numpy(), _frame["sgi"].to_numpy(), method=method)


@st.cache_data(show_spinner=False, max_entries=64)
def threshold_grid(key: state.DataKey, model_name: str, _frame: pd.DataFrame) -> pd.DataFrame:
    return evaluation.threshold_metrics_grid(_frame["label"].to_numpy(), _frame["sgi"].to_numpy())


def threshold_metrics(frame: pd.DataFrame, threshold: float) -> evaluation.ThresholdMetrics:
    """Not cached: it is one pass over the scores, and the slider asks for a new threshold each move."""
    return evaluation.threshold_metrics(frame["label"].to_numpy(), frame["sgi"].to_numpy(), threshold)


@st.cache_data(show_spinner=False, max_entries=256)
def choose_threshold(key: state.DataKey, model_name: str, method: str, target: float | None,
                     cost_ratio: float | None, _frame: pd.DataFrame) -> evaluation.ThresholdChoice:
    return evaluation.choose_threshold(_frame["label"].to_numpy(), _frame["sgi"].to_numpy(), method=method,
                                       target=target, cost_ratio=cost_ratio)


@st.cache_data(show_spinner=False, max_entries=16)
def fingerprint(key: state.DataKey, _frame: pd.DataFrame) -> str:
    return data_fingerprint(_frame)


@st.cache_data(show_spinner=False, max_entries=16)
def agreement(key: state.DataKey, models: tuple, _frames: dict) -> evaluation.AgreementResult:
    return evaluation.cross_model_agreement({name: _frames[name]["sgi"].to_numpy() for name in models})


@st.cache_data(show_spinner=False, max_entries=16)
def projection(key: state.DataKey, model_name: str, method: str, size: int, _table: TripleTable,
               _frame: pd.DataFrame) -> tuple[np.ndarray, TripleProjection]:
    """Positions in the frame of up to ``size`` sampled rows with an ordinary SGI, and their 2-D projection."""
    q_emb, c_emb, r_emb, scorable = embed_table(_table, encoder(model_name), cache=_disk_cache(model_name))
    frame_rows = np.flatnonzero(scorable)
    ordinary = np.flatnonzero(_frame["sgi_status"].to_numpy()[frame_rows] == "ok")
    picked = ordinary[sample_rows(len(ordinary), size)]
    return frame_rows[picked], project_triples(q_emb[picked], c_emb[picked], r_emb[picked], method=method)


@st.cache_data(show_spinner=False, max_entries=256)
def triple_score(model_name: str, question: str, context: str, response: str) -> TripleScore:
    """Angles, SGI and the SGI bounds of one typed triple."""
    return score_triple(question, context, response, encoder(model_name), cache=_disk_cache(model_name))


@st.cache_data(show_spinner=False, max_entries=256)
def sgi_percentile(key: state.DataKey, model_name: str, value: float, _frame: pd.DataFrame) -> float:
    return evaluation.score_percentile(_frame["sgi"].to_numpy(), value)


@dataclass(frozen=True)
class ActiveCalibration:
    """The calibrator the pages use: fitted here on a split, or loaded from a saved session."""

    calibrator: evaluation.Calibrator
    origin: str
    result: evaluation.CalibrationResult | None = None


def active_calibration(data: ScoredData) -> ActiveCalibration:
    """The loaded session's calibrator when one applies to the model shown, else one fitted on a split.

    Raises
    ------
    SGIInputError
        When the data have too few labelled rows of each class to fit one.
    """
    loaded = st.session_state.get(state.CALIBRATION_LOADED)
    if loaded is not None and loaded["model"] == data.model:
        return ActiveCalibration(evaluation.Calibrator.from_dict(loaded["calibrator"]),
                                 f"loaded from the session saved {loaded['created']}")
    method = st.session_state.get(state.CALIBRATION_METHOD, "platt")
    result = calibration(data.key, data.model, method, data.frame)
    return ActiveCalibration(result.calibrator, f"{method} calibrator fitted on {result.n_fit:,} labelled rows (half, split by label)", result)
