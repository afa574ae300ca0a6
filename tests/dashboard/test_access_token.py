"""The app's own gate (:mod:`dashboard.access`), the second line behind the launch guard: a session without the
token sees nothing. The launched app, its guard and the browser are tested in ``test_launch_guard.py``."""

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import access
from dashboard.launch import TOKEN_ENV
from tests.dashboard.conftest import APP, assert_clean, goto

TOKEN = "launch-token-for-this-test-0123456789abcdef"
REFUSAL = "Open the app with the URL printed in the terminal when it started"


def opened(monkeypatch, token: str | None) -> AppTest:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    at = AppTest.from_file(str(APP), default_timeout=120)
    if token is not None:
        at.query_params["token"] = token
    return at.run()


@pytest.mark.parametrize("given", [None, "", "wrong", TOKEN[:-1], TOKEN + "x"])
def test_a_session_without_the_token_sees_nothing(app, monkeypatch, given):
    at = opened(monkeypatch, given)
    assert [e.value for e in at.error] == [f"{REFUSAL}: it ends in `?token=...`, which is new at every launch."]
    assert not at.title and not at.text_input and not at.button and not at.get("file_uploader")


def test_the_token_opens_the_app_and_stays_for_the_session(app, monkeypatch):
    at = opened(monkeypatch, TOKEN)
    assert_clean(at)
    assert at.title[0].value == "Data"
    goto(at, "overview")
    assert_clean(at)
    assert at.session_state["access.granted"] is True and at.query_params["token"] == TOKEN


def test_no_gate_without_a_launch_token(app, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert access.TOKEN_ENV == TOKEN_ENV and app.title[0].value == "Data"
