"""The launch token: ``make run`` prints the one URL that opens the app; a session without the token sees nothing."""

import os
import re
import subprocess
import sys
import time
import urllib.request

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import access
from dashboard.launch import TOKEN_ENV, free_port
from tests.app_server import running_app
from tests.conftest import REPO
from tests.dashboard.conftest import APP, assert_clean, goto
from tests.dashboard.test_browser_e2e import CHROMIUM_ARGS, chromium  # noqa: F401 - fixture

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


def test_make_run_prints_the_url_with_a_fresh_token(tmp_path):
    port = free_port(20000)
    env = {**os.environ, "SGI_CACHE_DIR": str(tmp_path), "SGI_DASHBOARD_MODEL": "hashing", "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, "-m", "dashboard.launch", "--server.port", str(port)], cwd=REPO,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        deadline, printed = time.monotonic() + 120, ""
        while "?token=" not in printed and time.monotonic() < deadline and child.poll() is None:
            printed += child.stdout.readline()
        (token,) = re.findall(rf"http://127\.0\.0\.1:{port}/\?token=([A-Za-z0-9_-]+)", printed)
        assert len(token) >= 40  # 32 random bytes, URL-safe base64
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as response:
            assert response.read() == b"ok"
    finally:
        child.terminate()
        child.wait(timeout=30)


def test_in_a_browser_only_the_printed_url_opens_the_app(chromium, tmp_path):  # noqa: F811
    from playwright.sync_api import sync_playwright

    env = {"SGI_CACHE_DIR": str(tmp_path), "SGI_DASHBOARD_MODEL": "hashing"}
    with running_app(env, tmp_path / "streamlit.log", token=TOKEN) as port, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"http://127.0.0.1:{port}/")
        page.get_by_text(REFUSAL).wait_for()
        assert page.get_by_text("Upload CSV, TSV, Parquet or JSON Lines").count() == 0
        page.goto(f"http://127.0.0.1:{port}/?token={TOKEN}")
        page.get_by_text("Upload CSV, TSV, Parquet or JSON Lines").wait_for()
        page.get_by_role("link", name="Overview").first.click()
        page.wait_for_url(re.compile(r"/overview\?token="))
        page.reload()  # the URL kept the token: a reload opens the page again
        page.get_by_role("heading", name="Overview").first.wait_for()
        assert page.get_by_text(REFUSAL).count() == 0
        browser.close()
