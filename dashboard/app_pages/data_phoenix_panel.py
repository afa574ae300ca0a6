"""The Data page's Phoenix source, beside the uploader: a window of traces pulled from a running server."""

from __future__ import annotations

import streamlit as st

from dashboard import page, state
from dashboard.services import phoenix_services
from dashboard.views import texts


def _pull() -> None:
    given = {name: st.session_state.get(key) or "" for name, key in state.PHOENIX_KEYS.items()}
    try:
        name, raw, warnings, counts = phoenix_services.pull_window(given["url"], given["project"], given["since"],
                                                                   given["until"])
    except page.SGIInputError as err:
        st.session_state[state.PHOENIX_NOTES] = {"error": str(err)}
        return
    state.set_file(name, raw)
    st.session_state[state.PHOENIX_NOTES] = {"warnings": warnings, "counts": counts}


def phoenix_source() -> None:
    """URL, project and window; the pull makes the window the current file, one row per trace."""
    with st.expander("Or pull a window of traces from a running Phoenix server"):
        st.caption("One row per trace whose root span started in the window: its `trace_id`, root `span_id`, "
                   "question, retrieved passages and answer, as `python -m sgi_core pull phoenix` writes them. "
                   "The key, if the server needs one, is read from `PHOENIX_API_KEY` where the app runs.")
        url_slot, project_slot = st.columns(2)
        url_slot.text_input("Phoenix URL", key=state.PHOENIX_KEYS["url"], placeholder="http://127.0.0.1:6006")
        project_slot.text_input("Project", key=state.PHOENIX_KEYS["project"], placeholder="default")
        since_slot, until_slot = st.columns(2)
        since_slot.text_input("Since (ISO 8601; empty: the first trace)", key=state.PHOENIX_KEYS["since"],
                              placeholder="2026-05-14T00:00:00Z")
        until_slot.text_input("Until, not included (empty: now)", key=state.PHOENIX_KEYS["until"],
                              placeholder="2026-05-15T00:00:00Z")
        st.button("Pull the window", on_click=_pull, disabled=not (
            st.session_state.get(state.PHOENIX_KEYS["url"]) and st.session_state.get(state.PHOENIX_KEYS["project"])))
        notes = st.session_state.get(state.PHOENIX_NOTES) or {}
        if "error" in notes:
            st.error(texts.plain(notes["error"]))
        for warning in notes.get("warnings", ()):
            st.warning(texts.plain(warning))
        if "counts" in notes:
            st.success(texts.plain(notes["counts"]))
