"""Cached calls behind the Monitor page: a run held to a policy, the run history, the flagged rows."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import state
from dashboard.services import confound_services
from dashboard.services.resamples import REPORT_N_BOOT, app_resamples
from sgi_core.errors import SGIInputError
from sgi_core.frames import take_rows
from sgi_core.monitoring.store import RunHistory, append_run, default_db_path, read_history
from sgi_core.monitoring.summary import MonitorSummary, flagged_positions, monitor_run
from sgi_core.policy.file import Policy, policy_from_json, policy_to_json
from sgi_core.policy.rules import check_made_by
from sgi_core.render.provenance import provenance


def read_policy(raw: bytes, source: str) -> str:
    """The uploaded policy as the JSON the page keeps (strictly read: :func:`policy_from_json`)."""
    return policy_to_json(policy_from_json(raw, source=source))


def policy(policy_json: str) -> Policy:
    return policy_from_json(policy_json)


def _scores(policy: Policy, frame: pd.DataFrame):
    if policy.score_column not in frame.columns:
        raise SGIInputError(f"the policy holds score '{policy.score_column}', which this file's scores lack",
                            hint="Load a policy written for SGI, or a file with that score column")
    return frame[policy.score_column].to_numpy(dtype=float)


def summary(key: state.DataKey, model_name: str, policy_json: str, frame: pd.DataFrame) -> MonitorSummary:
    """The run (this file, its labels) held to the policy: :func:`monitor_run`.

    SGI made by another model, precision, backend or context strategy than the policy's is refused by
    :func:`~sgi_core.policy.rules.check_made_by`, the check ``monitor`` makes.
    """
    held = policy(policy_json)
    if held.score_column == "sgi":
        made_by = confound_services.scored_with(key, model_name)
        check_made_by(held, dict(zip(("model", "precision", "backend", "context_strategy"), made_by)), key.name)
    return _summary(key, model_name, policy_json, frame)


@st.cache_data(show_spinner="Holding the run to the policy...", max_entries=16)
def _summary(key: state.DataKey, model_name: str, policy_json: str, _frame: pd.DataFrame) -> MonitorSummary:
    held = policy(policy_json)
    return monitor_run(held, _frame, _scores(held, _frame), y_true=_frame["label"].to_numpy(dtype=float),
                       n_boot=app_resamples(REPORT_N_BOOT))


def history(policy_id: str) -> RunHistory:
    """The recorded runs of the policy, oldest first, and the damaged ones named (read at every draw: other writers
    append)."""
    return read_history(default_db_path(), policy_id)


def record(summary: MonitorSummary, key: state.DataKey, model_name: str) -> int:
    """Append this run to the history database; its id."""
    return append_run(default_db_path(), summary, file=key.name, file_sha256=key.digest, model=model_name,
                      context_strategy=key.context_strategy)


def database_path() -> str:
    return str(default_db_path())


@st.cache_data(show_spinner=False, max_entries=16)
def flagged_rows(key: state.DataKey, model_name: str, policy_json: str, _frame: pd.DataFrame) -> pd.DataFrame:
    """The rows the policy flags: file row, score and response."""
    held = policy(policy_json)
    rows = take_rows(_frame, flagged_positions(_scores(held, _frame), held.threshold))
    return rows[[c for c in ("input_row", held.score_column, "response") if c in rows.columns]]


def report_facts(key: state.DataKey, model_name: str, summary: MonitorSummary) -> dict:
    """The report's provenance, computed when the page draws (a download builder runs outside the session)."""
    return provenance(file=key.name, fingerprint=f"sha256:{key.digest[:16]}", rows=summary.n_rows, model=model_name,
                      policy=summary.policy_id, history=str(default_db_path()))
