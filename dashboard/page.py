"""What every page does first: the current file scored, the report, the active calibrator, the same messages.

Pages import only ``dashboard.*``; this module turns library errors into messages on
screen and keeps the session bookkeeping (which file, which models, what was embedded)
out of the pages.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import review_services, services, state, texts
from sgi_core.data import TripleTable
from sgi_core.errors import SGIInputError
from sgi_core.frames import take_rows

#: Session-state key of the (file, model) pairs already embedded with a progress bar.
EMBEDDED = "services.embedded"

#: Most rows a chart that draws one mark per row draws (:func:`drawn`).
DRAWN_ROWS = 20_000

__all__ = ["SGIInputError", "ScoredData", "active_calibration", "current_columns", "current_table", "drawn",
           "file_row", "header", "has_retrieval_columns", "scored_data", "show_error", "take_rows", "verdict"]


def show_error(err: Exception) -> None:
    """An input error on screen, as plain text (cells and file names may hold Markdown)."""
    st.error(texts.plain(err))


def verdict(level: str, text: str) -> None:
    """A verdict coloured by its level: green when the signal is there, blue when small, amber when not."""
    box = {"clear": st.success, "gain": st.success, "small": st.info}.get(level, st.warning)
    box(text)


def _embed_with_progress(table: TripleTable, model_name: str) -> None:
    """Embed the texts missing from the disk cache, drawing a progress bar of texts embedded / total."""
    bar = st.empty()

    def report(done: int, total: int, chunk: int, chunks: int) -> None:
        if total:
            where = f" (rows chunk {chunk:,} of {chunks:,})" if chunks > 1 else ""
            bar.progress(done / total, text=f"Embedding with {model_name}: {done:,} / {total:,} new texts{where}")

    services.embed(table, model_name, progress=report)
    bar.empty()


def scored_frame(key: state.DataKey, table: TripleTable, model_name: str) -> pd.DataFrame:
    """The table scored with one model; the first call in a session shows embedding progress."""
    done = st.session_state.setdefault(EMBEDDED, set())
    if (key, model_name) not in done:
        _embed_with_progress(table, model_name)
        done.add((key, model_name))
    return services.scored_frame(key, model_name, table)


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
        state.set_file(services.SAMPLE_CSV.name, services.SAMPLE_CSV.read_bytes())
    name, raw = state.raw_file()
    columns = list(services.raw_frame(name, state.data_digest(), raw, services.input_limits()).columns)
    state.seed_mapping(columns)
    return columns


def current_table() -> tuple[state.DataKey, TripleTable]:
    """The current file validated with the chosen mapping; raises SGIInputError when it does not fit."""
    current_columns()
    key = state.data_key()
    return key, services.triple_table(key, state.raw_file()[1], services.input_limits())


def scored_data() -> ScoredData:
    """Current file scored with every chosen model; shows the error and stops the page when it cannot."""
    try:
        key, table = current_table()
        models = state.chosen_models(services.default_model())
        scores = services.file_scores(key, state.raw_file()[1], services.input_limits())
        if scores is None:
            frames = {name: scored_frame(key, table, name) for name in models}
        else:
            frames = {models[0]: scores}
            st.caption(f"Scores read from the scored file ({len(scores):,} rows): nothing re-embedded. The Geometry "
                       f"map and the Explorer embed only the rows they show, with **{models[0]}**.")
        key, table, frames = review_services.apply_label_source(key, table, frames)
    except SGIInputError as err:
        show_error(err)
        st.info("Fix the file or the column mapping on the Data page.")
        st.stop()
    return ScoredData(key, table, frames, state.shown_model(models))


def file_row(frame: pd.DataFrame, input_row: int) -> pd.Series:
    """The row of ``frame`` whose ``input_row`` (1-based row of the file) is ``input_row``.

    Selected through :func:`take_rows`: a boolean filter of the frame would copy every
    text column of a big Parquet file to return one row.
    """
    return take_rows(frame, np.flatnonzero(frame["input_row"].to_numpy() == input_row)[:1]).iloc[0]


def drawn(frame: pd.DataFrame, limit: int | None = None) -> tuple[pd.DataFrame, str]:
    """At most ``limit`` rows (default :data:`DRAWN_ROWS`) of ``frame`` for a chart that draws one mark per row.

    Returns the rows and a caption saying so. The sample is seeded (the same rows on
    every rerun) and keeps the frame's order; the caption is empty when every row is
    drawn. Statistics never use it.
    """
    limit = DRAWN_ROWS if limit is None else limit
    if len(frame) <= limit:
        return frame, ""
    rows = np.sort(np.random.default_rng(0).choice(len(frame), size=limit, replace=False))
    return take_rows(frame, rows), f"Drawn: a random sample of {limit:,} of the {len(frame):,} rows; the numbers use every row."


def header(*, require_labels: bool = False, caption: str = ""):
    """The current data and its report, with the model and file named under the title.

    With ``require_labels`` a page that needs both label classes says what is missing
    and stops.
    """
    data = scored_data()
    report = services.report(data.key, data.model, data.frame)
    st.caption(f"Model: **{data.model}** · file: {texts.plain(data.key.name)} · "
               f"{review_services.label_source_line(data)}{caption}")
    if require_labels:
        missing = texts.labels_missing(report.n_valid, report.n_halluc)
        if missing:
            st.info(missing)
            st.stop()
    return data, report


def has_retrieval_columns() -> bool:
    """Whether the current file lists retrieved and relevant ids (False while it cannot be read)."""
    try:
        columns = current_columns()
    except SGIInputError:
        return False
    return services.has_retrieval_columns(columns)


@dataclass(frozen=True)
class ActiveCalibration:
    """The calibrator the pages use: fitted here on a split, or loaded from a saved session."""

    calibrator: object
    origin: str
    result: object | None = None


def active_calibration(data: ScoredData) -> ActiveCalibration:
    """The loaded session's calibrator when one applies to the model shown, else one fitted on a split.

    Raises
    ------
    SGIInputError
        When the data have too few labelled rows of each class to fit one.
    """
    loaded = st.session_state.get(state.CALIBRATION_LOADED)
    if loaded is not None and loaded["model"] == data.model:
        return ActiveCalibration(services.calibrator_from_dict(loaded["calibrator"]),
                                 f"loaded from the session saved {texts.plain(loaded['created'])}")
    method = st.session_state.get(state.CALIBRATION_METHOD, "platt")
    result = services.calibration(data.key, data.model, method, data.frame)
    return ActiveCalibration(result.calibrator, f"{method} calibrator fitted on {result.n_fit:,} labelled rows (half, split by label)", result)
