"""The app's own gate: with a launch token set (:data:`~dashboard.launch.TOKEN_ENV`), a session must bring it.

``python -m dashboard.launch`` serves the app behind :class:`dashboard.guard.TokenGuard`, which refuses every
request without the token before Streamlit sees it; that guard hands the token over as a cookie, and a session
whose websocket brought that cookie is let in here. This gate is the second line, and the only one when the app
is served without the guard but with the variable set (``streamlit run dashboard/app.py``, the tests): then a
session is let in once its URL carries ``?token=<the launch's token>`` (compared in constant time), and the
token is kept in the URL so a reload opens the app again. Without the variable there is no gate.
"""

from __future__ import annotations

import os

import streamlit as st

from dashboard.guard import TOKEN_PARAMETER, cookie_name, holds
from dashboard.launch import TOKEN_ENV

_GRANTED = "access.granted"


def granted() -> bool:
    """Whether this session may see the app."""
    expected = os.environ.get(TOKEN_ENV)
    if not expected:
        return True
    if holds(st.context.cookies.get(cookie_name(expected)), expected):
        st.session_state[_GRANTED] = True
        return True
    given = st.query_params.get(TOKEN_PARAMETER, "")
    if not st.session_state.get(_GRANTED) and not holds(given, expected):
        return False
    st.session_state[_GRANTED] = True
    if given != expected:
        st.query_params[TOKEN_PARAMETER] = expected  # page switches drop it: keep the URL one that reopens the app
    return True
