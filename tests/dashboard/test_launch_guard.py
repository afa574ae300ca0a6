"""``make run``'s token guards every route: the app started as ``python -m dashboard.launch`` starts it, then asked
by clients without the token (pages, metrics, websocket, upload, ``clear_cache``), with it, and from another origin."""

from __future__ import annotations

import base64
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from dashboard.guard import REFUSAL, TokenGuard, cookie_name
from dashboard.launch import TOKEN_ENV
from tests.app_server import free_port
from tests.conftest import REPO
from tests.dashboard.test_browser_e2e import CHROMIUM_ARGS, chromium  # noqa: F401 - fixture

START_SECONDS = 120
SCRIPT_SECONDS = 120
UPLOAD = {"file": ("rows.csv", b"question,context,response\n" + b"x" * 1_000_000, "text/csv")}
SCORED = 'cache="dashboard.services.scored_frame",cache_type="st_cache_resource"'


@contextlib.contextmanager
def launched(folder: Path, *arguments: str, path: str = "/") -> Iterator[tuple[int, str, str]]:
    """``python -m dashboard.launch`` on a free port with its own data and cache folders; yields (port, token, output).

    ``arguments`` go to the launcher; ``path`` is where the printed URL opens the app. The token is read
    from the URL the launcher prints; the launcher and its app stop as on Ctrl-C.
    """
    port = free_port()
    env = {**os.environ, "SGI_CACHE_DIR": str(folder / "cache"), "SGI_DATA_DIR": str(folder / "data"),
           "SGI_JUDGE_CACHE_DIR": str(folder / "judge"), "SGI_DASHBOARD_MODEL": "hashing", "PYTHONPATH": str(REPO)}
    env.pop(TOKEN_ENV, None)
    log = folder / "launch.log"
    with log.open("w") as out:
        child = subprocess.Popen([sys.executable, "-m", "dashboard.launch", "--server.port", str(port), *arguments],
                                 cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + START_SECONDS
        url = re.escape(f"http://127.0.0.1:{port}{path}?token=")
        while not (found := re.search(url + "([A-Za-z0-9_-]+)", log.read_text())):
            if child.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the launcher printed no URL; see {log}")
            time.sleep(0.3)
        yield port, found.group(1), log.read_text()
    finally:
        os.killpg(child.pid, signal.SIGINT)  # as Ctrl-C in the terminal: the launcher and the app both get it
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with launched(tmp_path_factory.mktemp("launched")) as (port, token, printed):
        yield port, token, printed


@pytest.fixture
def base(app) -> str:
    return f"http://127.0.0.1:{app[0]}"


@pytest.fixture
def cookie(app) -> str:
    """The Cookie header of a browser that opened the printed URL."""
    _, token, _ = app
    return f"{cookie_name(token)}={token}"


def ws_status(port: int, *, origin: str | None, headers: dict[str, str] | None = None) -> int:
    """HTTP status of the websocket handshake on the app's stream (101 when it opened)."""
    try:
        with connect(f"ws://127.0.0.1:{port}/_stcore/stream", origin=origin, additional_headers=headers or {},
                     subprotocols=["streamlit"], open_timeout=30):
            return 101
    except InvalidStatus as refused:
        return refused.response.status_code


def send(ws: ClientConnection, **field) -> None:
    message = BackMsg()
    for name, value in field.items():
        if name == "rerun_script":
            message.rerun_script.query_string = value
        else:
            setattr(message, name, value)
    ws.send(message.SerializeToString())


def run_script(ws: ClientConnection) -> list[ForwardMsg]:
    """Run the app's script in this session; the messages it sent, up to the end of the run."""
    send(ws, rerun_script="")
    messages = []
    while not messages or messages[-1].WhichOneof("type") != "script_finished":
        messages.append(ForwardMsg())
        messages[-1].ParseFromString(ws.recv(timeout=SCRIPT_SECONDS))
    return messages


def session(base: str, cookie: str) -> ClientConnection:
    return connect(base.replace("http", "ws", 1) + "/_stcore/stream", origin=base, subprotocols=["streamlit"],
                   additional_headers={"Cookie": cookie}, open_timeout=30)


def metric(base: str, cookie: str, line: str) -> int:
    """The value of the metrics line starting with ``line``, read with the cookie."""
    text = httpx.get(base + "/_stcore/metrics", headers={"Cookie": cookie}).text
    (value,) = [row.rsplit(" ", 1)[1] for row in text.splitlines() if row.startswith(line)]
    return int(float(value))


def refused(response: httpx.Response) -> bool:
    return response.status_code == 403 and REFUSAL in response.text


def test_the_launcher_prints_the_one_url_with_a_fresh_token(app):
    port, token, printed = app
    assert len(token) >= 40  # 32 random bytes, URL-safe base64
    assert f"Open the SGI Workbench at  http://127.0.0.1:{port}/?token={token}" in printed


def test_only_the_health_check_answers_without_the_token(base):
    response = httpx.get(base + "/_stcore/health")
    assert (response.status_code, response.text) == (200, "ok")


@pytest.mark.parametrize("path", ["/", "/overview", "/_stcore/metrics", "/_stcore/host-config",
                                  "/_stcore/script-health-check", "/media/0123456789abcdef.png", "/favicon.png",
                                  "/static/js/index.js", "/component/x/index.html", "/?token=wrong", "/?token="])
def test_no_route_answers_a_client_without_the_token(base, app, path):
    _, token, _ = app
    assert refused(httpx.get(base + path))
    assert refused(httpx.get(base + path, headers={"Cookie": f"{cookie_name(token)}={token[:-1]}"}))
    assert refused(httpx.get(base + path, headers={"Cookie": f"sgi_workbench_other={token}"}))


def test_the_printed_url_sets_a_strict_cookie_and_leaves_the_address_bar(base, app):
    _, token, _ = app
    with httpx.Client(base_url=base) as browser:
        handover = browser.get(f"/?token={token}")
        assert handover.status_code == 200 and 'location.replace("/")' in handover.text
        set_cookie = handover.headers["set-cookie"]
        assert set_cookie == f"{cookie_name(token)}={token}; Path=/; HttpOnly; SameSite=Strict"  # no Domain: host-only
        assert handover.headers["cache-control"] == "no-store" and handover.headers["referrer-policy"] == "no-referrer"
        page = browser.get("/")
        assert page.status_code == 200 and '<div id="root">' in page.text
        assert browser.get("/_stcore/metrics").status_code == 200
    # Other parameters stay; the target is always a path on this server.
    assert 'location.replace("/overview?x=1")' in httpx.get(f"{base}/overview?token={token}&x=1").text
    assert 'location.replace("/evil.example/")' in httpx.get(f"{base}//evil.example/?token={token}").text


def test_a_websocket_without_the_token_opens_no_session(base, app, cookie):
    port = app[0]
    connects = metric(base, cookie, "session_events_total{type=\"connect\"}")
    assert ws_status(port, origin=base) == 403
    assert ws_status(port, origin=None) == 403
    assert ws_status(port, origin=base, headers={"Cookie": cookie[:-1]}) == 403
    assert metric(base, cookie, "session_events_total{type=\"connect\"}") == connects


def test_with_the_cookie_a_session_runs_the_app(base, cookie):
    with session(base, cookie) as ws:
        kinds = [message.WhichOneof("type") for message in run_script(ws)]
    assert kinds[0] == "new_session" and "delta" in kinds


def test_clear_cache_without_the_token_clears_nothing(base, app, cookie):
    port = app[0]
    with session(base, cookie) as ws:
        run_script(ws)
        misses = metric(base, cookie, f'cache_lookups_total{{{SCORED},result="miss"}}')
        # The attacker's clear_cache never gets a socket to travel on.
        assert ws_status(port, origin=base) == 403
        run_script(ws)
        assert metric(base, cookie, f'cache_lookups_total{{{SCORED},result="miss"}}') == misses
        # The control: the same message from a session that holds the token does empty the cache.
        send(ws, clear_cache=True)
        deadline = time.monotonic() + 30
        while metric(base, cookie, f'cache_lookups_total{{{SCORED},result="miss"}}') == misses:
            assert time.monotonic() < deadline, "clear_cache from a session with the token did nothing"
            run_script(ws)


def test_an_upload_without_the_token_is_refused(base, cookie):
    with session(base, cookie) as ws, httpx.Client(base_url=base) as client:
        session_id = run_script(ws)[0].new_session.initialize.session_id
        client.get("/_stcore/health")  # Streamlit's XSRF cookie, so that only the token is missing
        xsrf = client.cookies["_streamlit_xsrf"]
        url = f"/_stcore/upload_file/{session_id}/file-1"
        same_origin = {"Origin": base, "X-Xsrftoken": xsrf}
        assert refused(client.put(url, files=UPLOAD, headers=same_origin))
        assert refused(client.post(url, files=UPLOAD, headers=same_origin))
        assert refused(client.delete(url, headers=same_origin))
        # With the token but no Origin, or another one, a state-changing request is still refused.
        both = f"{cookie}; _streamlit_xsrf={xsrf}"  # a Cookie header replaces the client's own cookies
        assert refused(client.put(url, files=UPLOAD, headers={"X-Xsrftoken": xsrf, "Cookie": both}))
        assert refused(client.put(url, files=UPLOAD, headers={**same_origin, "Origin": "http://127.0.0.1:1",
                                                              "Cookie": both}))
        # The control: the same upload with the cookie is taken.
        assert client.put(url, files=UPLOAD, headers={**same_origin, "Cookie": both}).status_code == 204


def test_a_page_from_another_origin_cannot_use_the_cookie(base, app, cookie):
    port = app[0]
    for origin in (f"http://127.0.0.1:{free_port()}", f"http://localhost:{port}", f"https://127.0.0.1:{port}",
                   f"http://127.0.0.1:{port}.evil.example", "null"):
        assert ws_status(port, origin=origin, headers={"Cookie": cookie}) == 403, origin
        assert refused(httpx.get(base + "/_stcore/metrics", headers={"Cookie": cookie, "Origin": origin}))
    assert ws_status(port, origin=base, headers={"Cookie": cookie}) == 101


def test_behind_the_guard_the_websocket_still_opens_only_for_loopback_hosts(app, cookie):
    # A DNS-rebinding page would not have the cookie; with it, Streamlit's own Host check still holds.
    port = app[0]
    for host, status in ((f"evil.example:{port}", 403), (f"localhost:{port}", 101)):
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\nCookie: {cookie}\r\n"
                   "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Protocol: streamlit\r\n\r\n")
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(request.encode())
            assert int(sock.recv(256).decode("latin-1").split()[1]) == status, host


def test_the_guard_needs_a_real_token():
    for token in ("", "short", "a" * 15, "with space and more than sixteen", "semi;colon-0123456789"):
        with pytest.raises(ValueError, match=r"^The launch token must be at least 16 characters"):
            TokenGuard(None, token=token)


def test_the_served_app_does_not_start_without_a_token(tmp_path):
    env = {**os.environ, "SGI_CACHE_DIR": str(tmp_path)}
    env.pop(TOKEN_ENV, None)
    done = subprocess.run([sys.executable, "-m", "streamlit", "run", "dashboard/serve.py", "--server.port",
                           str(free_port())], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and f"behind the launch token in ${TOKEN_ENV}, which is not set" in done.stderr


def test_in_a_browser_only_the_printed_url_opens_the_app(chromium, base, app):  # noqa: F811
    from playwright.sync_api import sync_playwright

    _, token, _ = app
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(60_000)
        refusals = []
        page.on("response", lambda response: response.status == 403 and refusals.append(response.url))
        page.goto(base + "/")
        page.get_by_text(REFUSAL).wait_for()
        page.goto(f"{base}/?token={token}")
        page.get_by_text("Upload CSV, TSV, Parquet or JSON Lines").wait_for()
        assert page.url == base + "/"  # the token left the address bar
        assert token not in page.evaluate("document.cookie")  # HttpOnly: no script reads it
        page.get_by_role("link", name="Overview").first.click()
        page.wait_for_url(re.compile(r"/overview$"))
        page.reload()  # the cookie opens the page again
        page.get_by_role("heading", name="Overview").first.wait_for()
        assert refusals == [base + "/"]  # after the printed URL, every script, font and call carried the cookie
        browser.close()
