"""The app's gate: with a launch token set (:data:`~dashboard.launch.TOKEN_ENV`), a session must bring it.

A browser session is let in once its URL carries ``?token=<the launch's token>``
(compared in constant time); the token is then kept in the URL so a reload opens the
app again. Without the variable (``streamlit run`` started by hand, the tests) there is
no gate.
"""

from __future__ import annotations

import hmac
import os

import streamlit as st

from dashboard.launch import TOKEN_ENV

_GRANTED = "access.granted"


def granted() -> bool:
    """Whether this session may see the app."""
    expected = os.environ.get(TOKEN_ENV)
    if not expected:
        return True
    given = st.query_params.get("token", "")
    if not st.session_state.get(_GRANTED) and not hmac.compare_digest(given.encode(), expected.encode()):
        return False
    st.session_state[_GRANTED] = True
    if given != expected:
        st.query_params["token"] = expected  # page switches drop it: keep the URL one that reopens the app
    return True
