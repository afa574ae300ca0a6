"""Cached calls behind the Review page's evidence: a row's passages, its sentences against the file's.

Each response sentence's similarity to its nearest context sentence
(:func:`sgi_core.detectors.claims.sentence_scores`) is read against the similarities of
the file's sentences (:mod:`sgi_core.detectors.support`), computed once per file and
model; the weakest-sentence score's AUROC follows the labels the pages use.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import services, state
from dashboard.services.resamples import REPORT_N_BOOT, app_resamples
from sgi_core.detectors.claims import sentence_scores
from sgi_core.detectors.support import FileSupports, file_supports, support_percentiles
from sgi_core.frames import take_rows
from sgi_core.io.passages import row_passages
from sgi_core.io.triples import TripleTable
from sgi_core.stats.ranking import RocResult, roc_analysis

__all__ = ["file_sentence_supports", "passages_of_row", "sentence_evidence", "sentence_support",
           "weakest_sentence_roc"]


def passages_of_row(table: TripleTable, frame: pd.DataFrame, position: int) -> tuple:
    """The passages of the row at ``position`` (:func:`sgi_core.io.passages.row_passages`), that row alone read."""
    own = None if table.passages is None else (table.passages[position],)
    return row_passages(take_rows(frame, [position]), own)[0]


@st.cache_data(show_spinner="Scoring the response's sentences...", max_entries=64)
def sentence_support(model_name: str, question: str, context: str, response: str, passages: tuple,
                     backend: str) -> pd.DataFrame:
    """Each response sentence's similarity to its nearest context sentence, and that sentence's passage."""
    frame = pd.DataFrame({"question": [question], "context": [context], "response": [response]})
    encoder = services.encoder(model_name, services.chosen_device(), backend)
    return sentence_scores(frame, encoder, passages=(passages,), cache=services.disk_cache(model_name))


@st.cache_resource(show_spinner="Scoring the file's sentences, once for the file...", max_entries=4)
def file_sentence_supports(key: state.DataKey, model_name: str, backend: str, _table: TripleTable,
                           _frame: pd.DataFrame) -> FileSupports:
    """The similarities of the file's response sentences (of a seeded sample of its rows, when it is big)."""
    encoder = services.encoder(model_name, services.chosen_device(), backend)
    return file_supports(_frame, encoder, passages=_table.passages, cache=services.disk_cache(model_name))


def sentence_evidence(data, row, position: int, backend: str) -> tuple[pd.DataFrame, FileSupports]:
    """The row's sentences with the ``percentile`` of each similarity in the file, and the file's similarities."""
    scored = sentence_support(data.model, row["question"], row["context"], row["response"],
                              passages_of_row(data.table, data.frame, position), backend)
    supports = file_sentence_supports(data.key._replace(labels="file"), data.model, backend, data.table, data.frame)
    return scored.assign(percentile=support_percentiles(scored["support"], supports.support)), supports


@st.cache_resource(show_spinner=False, max_entries=8)
def weakest_sentence_roc(key: state.DataKey, model_name: str, backend: str, _supports: FileSupports,
                         _labels: np.ndarray) -> RocResult:
    """AUROC (with its interval) of the weakest-sentence similarity on the labels of the rows it was read on.

    ``key`` names the labels the pages use, for the cache; an undefined AUROC (one class
    labelled) is NaN, which the page says needs labels.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return roc_analysis(np.asarray(_labels, dtype=np.float64)[list(_supports.rows)], _supports.weakest,
                            n_boot=app_resamples(REPORT_N_BOOT))


@st.cache_data(show_spinner="Reading the response with the grounding models...", max_entries=64)
def grounding_evidence(grounding: tuple, context: str, response: str, passages: tuple) -> dict[str, pd.DataFrame]:
    """Each grounding model's evidence for one row (:func:`sgi_core.grounding.evidence.row_evidence`), by model name.

    ``grounding`` names the models as the Detectors page loaded them, the choice of its
    ``grounding_models`` resource (:func:`dashboard.services.detector_services.resource_objects`).
    """
    from dashboard.services.detector_services import resource_objects
    from sgi_core.grounding.evidence import row_evidence

    return {model.name: row_evidence(model, context, response, passages)
            for model in resource_objects("grounding_models", grounding)}
