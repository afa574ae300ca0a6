"""Cached calls behind the Calibration page: calibrators, threshold grids and choices, flagged rows and sessions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import state
from sgi_core.columns import is_ordinary, one_label_column
from sgi_core.io.export import to_csv_bytes
from sgi_core.policy.sessions import (
    CalibrationSession,
    apply_session,
    data_fingerprint,
    load_session,
    new_session,
    session_to_json,
)
from sgi_core.stats import thresholds
from sgi_core.stats.calibration import CalibrationResult, Calibrator, calibration_analysis
from sgi_core.stats.thresholds import (
    ThresholdChoice,
    ThresholdMetrics,
    count_threshold_candidates,
    threshold_metrics_grid,
)

#: Where the threshold slider ends: past it a few extreme SGIs would squeeze the useful range into pixels.
THRESHOLD_UPPER_QUANTILE = 0.99


def calibrator_from_dict(data: dict) -> Calibrator:
    return Calibrator.from_dict(data)


@st.cache_resource(show_spinner=False, max_entries=16)
def calibration(key: state.DataKey, model_name: str, method: str,
                _frame: pd.DataFrame) -> CalibrationResult:
    """Fitted and judged on the rows with an ordinary SGI: one SGI near 1e8 flattens a Platt or min-max fit."""
    ordinary = np.where(is_ordinary(_frame["sgi_status"]), _frame["sgi"].to_numpy(), np.nan)
    return calibration_analysis(_frame["label"].to_numpy(), ordinary, method=method)


@st.cache_resource(show_spinner=False, max_entries=8)
def threshold_grid(key: state.DataKey, model_name: str, max_rows: int,
                   _frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The metrics at ``max_rows`` thresholds spread along all of them, and how many there are in all."""
    labels, sgi = _frame["label"].to_numpy(), _frame["sgi"].to_numpy()
    return (threshold_metrics_grid(labels, sgi, max_rows=max_rows),
            count_threshold_candidates(sgi))


@st.cache_data(show_spinner=False, max_entries=64)
def threshold_range(key: state.DataKey, model_name: str, _frame: pd.DataFrame) -> tuple[float, float]:
    """From the lowest SGI to the :data:`THRESHOLD_UPPER_QUANTILE` quantile of the ordinary ones."""
    return thresholds.threshold_range(_frame["sgi"].to_numpy(), ordinary=is_ordinary(_frame["sgi_status"]),
                                      upper_quantile=THRESHOLD_UPPER_QUANTILE)


def threshold_metrics(frame: pd.DataFrame, threshold: float) -> ThresholdMetrics:
    """Not cached: it is one pass over the scores, and the slider asks for a new threshold each move."""
    return thresholds.threshold_metrics(frame["label"].to_numpy(), frame["sgi"].to_numpy(), threshold)


@st.cache_data(show_spinner=False, max_entries=256)
def choose_threshold(key: state.DataKey, model_name: str, method: str, target: float | None,
                     cost_ratio: float | None, _frame: pd.DataFrame) -> ThresholdChoice:
    return thresholds.choose_threshold(_frame["label"].to_numpy(), _frame["sgi"].to_numpy(), method=method,
                                       target=target, cost_ratio=cost_ratio)


@st.cache_data(show_spinner=False, max_entries=16)
def fingerprint(key: state.DataKey, _frame: pd.DataFrame) -> str:
    return data_fingerprint(_frame)


def p_grounded(calibrator, score: float) -> float:
    """The calibrator's P(grounded) at one score (a threshold, or the SGI of the triple in the Explorer)."""
    return calibrator.probability(score)


def flagged_csv(frame: pd.DataFrame, calibrator, threshold: float) -> bytes:
    """Built only when the download is clicked: a large file costs nothing until asked for."""
    return to_csv_bytes(apply_session(one_label_column(frame), calibrator, threshold))


def session_json(key: state.DataKey, model_name: str, calibrator, threshold: float, frame: pd.DataFrame) -> bytes:
    """The session as saved; the data's fingerprint comes from :func:`fingerprint`'s cache, not recomputed."""
    return session_to_json(new_session(model=model_name, calibrator=calibrator, threshold=threshold, frame=frame,
                                       fingerprint=fingerprint(key, frame)))


def read_session(raw: bytes, *, source: str) -> CalibrationSession:
    return load_session(raw, source=source)
