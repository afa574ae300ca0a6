"""What every page does first: the current file scored, the report, the active calibrator, the same messages.

Pages import only ``dashboard.*``; this module turns library errors into messages on
screen and keeps the session bookkeeping (which file, which models, what was embedded)
out of the pages.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import PurePath

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import services, state
from dashboard.services import calibration_services, model_services, review_services
from dashboard.views import texts
from sgi_core.errors import SGIInputError
from sgi_core.frames import take_rows
from sgi_core.io.triples import TripleTable
from sgi_core.progress import rate_line
from sgi_core.render.truncation import truncation_text

#: Session-state key of the (file, model) pairs already embedded with a progress bar.
EMBEDDED = "services.embedded"

#: Most rows a chart that draws one mark per row draws (:func:`drawn`).
DRAWN_ROWS = 20_000
#: Session-state key of the sidebar switch that draws SGI axes on a log scale.
LOG_AXES = "charts.log_axes"

__all__ = ["ProgressBar", "SGIInputError", "ScoredData", "active_calibration", "current_columns", "current_table",
           "download_name", "drawn", "file_row", "has_retrieval_columns", "header", "log_axes", "log_axes_switch",
           "scored_data", "show_error", "take_rows", "truncation_note", "verdict"]


def show_error(err: Exception) -> None:
    """An input error on screen, as plain text (cells and file names may hold Markdown)."""
    st.error(texts.plain(err))


def verdict(level: str, text: str) -> None:
    """A verdict coloured by its level: green when the signal is there, blue when small, amber when not."""
    box = {"clear": st.success, "gain": st.success, "small": st.info}.get(level, st.warning)
    box(text)


class ProgressBar:
    """A progress bar whose text gives the count, the rate and the time left (:func:`sgi_core.progress.rate_line`).

    Call it with ``(done, total)``; a call with ``restart=True`` starts the clock
    again (the next chunk of a file, whose count starts from 0).
    """

    def __init__(self, label: str, unit: str):
        self.label, self.unit = label, unit
        self._bar = st.progress(0.0, text=f"{label}: starting...")
        self._start = time.monotonic()

    def __call__(self, done: int, total: int, *, note: str = "", restart: bool = False) -> None:
        if restart:
            self._start = time.monotonic()
        if total:
            line = rate_line(done, total, time.monotonic() - self._start, label=self.label, unit=self.unit)
            self._bar.progress(min(done / total, 1.0), text=line + note)

    def close(self) -> None:
        self._bar.empty()


def _embed_with_progress(table: TripleTable, model_name: str, context_strategy: str) -> None:
    """Embed the texts missing from the disk cache, drawing a bar with texts embedded, rate and time left."""
    bar = ProgressBar(f"Embedding with {model_name}", "new texts")
    current = [0]

    def report(done: int, total: int, chunk: int, chunks: int) -> None:
        where = f" (rows chunk {chunk:,} of {chunks:,})" if chunks > 1 else ""
        bar(done, total, note=where, restart=chunk != current[0])
        current[0] = chunk

    services.embed(table, model_name, context_strategy=context_strategy, progress=report)
    bar.close()


def scored_frame(key: state.DataKey, table: TripleTable, model_name: str) -> pd.DataFrame:
    """The table scored with one model; the first call in a session shows embedding progress."""
    done = st.session_state.setdefault(EMBEDDED, set())
    if (key, model_name) not in done:
        _embed_with_progress(table, model_name, key.context_strategy)
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


def log_axes_switch() -> None:
    """The sidebar switch for log-scale SGI axes (histograms, scatters, the threshold curves)."""
    st.sidebar.toggle("Log scale for SGI axes", key=LOG_AXES, persist_state="session",
                      help="SGI is a ratio: a log axis shows 0.5 and 2 as far from 1. Axes span the central 99% of "
                           "the scores either way; the rows beyond are counted in the chart's title.")


def log_axes() -> bool:
    """Whether SGI axes are drawn on a log scale (the sidebar switch)."""
    return bool(st.session_state.get(LOG_AXES, False))


def download_name(data: ScoredData, what: str) -> str:
    """``<data set>_<what>``: the file's name without its suffix (characters other than letters, digits, ``.-_``
    made ``_``) before what was downloaded, so downloads of several data sets do not overwrite one another.

    Examples
    --------
    >>> download_name(ScoredData(state.DataKey("my eval.v2.csv", "d", (), None), None, {}, "m"), "sgi_scores.csv")
    'my_eval.v2_sgi_scores.csv'
    """
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", PurePath(data.key.name).stem).strip("._") or "data"
    return f"{stem}_{what}"


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
    return take_rows(frame, rows), (f"Drawn: a random sample of {limit:,} of the {len(frame):,} rows; "
                                    "the numbers use every row.")


def header(*, require_labels: bool = False, caption: str = ""):
    """The current data and its report, with the model and file named under the title.

    With ``require_labels`` a page that needs both label classes says what is missing
    and stops.
    """
    data = scored_data()
    report = services.report(data.key, data.model, data.frame, state.detector_specs())
    st.caption(f"Model: **{data.model}** · file: {texts.plain(data.key.name)} · "
               f"{review_services.label_source_line(data)}{caption}")
    if require_labels:
        missing = texts.labels_missing(report.n_valid, report.n_halluc)
        if missing:
            st.info(missing)
            st.stop()
    return data, report


def truncation_note(data: ScoredData) -> None:
    """How many contexts are longer than the shown model reads: a warning when some are, else a caption."""
    result = model_services.truncation(data.key, data.model, data.table)
    if result is None:
        st.caption(f"Contexts cut off at the model's input length are not counted above "
                   f"{model_services.TRUNCATION_MAX_ROWS:,} rows; `python -m sgi_core report` counts them.")
    elif result.max_seq_length is None:
        st.caption(f"**{data.model}** has no tokenizer, so contexts longer than it reads cannot be counted.")
    else:
        cut, sentence = truncation_text(result, f"**{texts.plain(data.model)}**")
        if cut:
            st.warning(f"{sentence} The Strata page shows SGI within context-length terciles; the context "
                       "strategy in the sidebar can embed long contexts in windows instead.")
        else:
            st.caption(sentence)


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
        return ActiveCalibration(calibration_services.calibrator_from_dict(loaded["calibrator"]),
                                 f"loaded from the session saved {texts.plain(loaded['created'])}")
    method = st.session_state.get(state.CALIBRATION_METHOD, "platt")
    result = calibration_services.calibration(data.key, data.model, method, data.frame)
    fitted = f"{method} calibrator fitted on {result.n_fit:,} labelled rows (half, split by label)"
    return ActiveCalibration(result.calibrator, fitted, result)
