"""The launcher prints its own app's URL only, honours a base path, raises the open-files limit; the guard
forbids framing on every response and bounds connections whose request never finishes."""

from __future__ import annotations

import contextlib
import http.server
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn

from dashboard.guard import FRAMING_HEADERS, NONCE_HEADER, PROOF_HEADER, TokenGuard, cookie_name, launch_proof
from dashboard.launch import TOKEN_ENV, answers_with_token
from tests.app_server import free_port
from tests.conftest import REPO
from tests.dashboard.test_launch_guard import launched

TOKEN = "t" * 43
FRAMING = {name.decode(): value.decode() for name, value in FRAMING_HEADERS}


def framed(response: httpx.Response) -> bool:
    return all(response.headers.get(name) == value for name, value in FRAMING.items())


class _Ok(http.server.BaseHTTPRequestHandler):
    """Another program's server: answers ``ok`` to everything, as any health check expects."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.send_header(PROOF_HEADER, "0" * 64)  # a guess at the proof
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def foreign_server() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def launcher(*arguments: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "SGI_DASHBOARD_MODEL": "hashing", "PYTHONPATH": str(REPO)}
    env.pop(TOKEN_ENV, None)
    return subprocess.run([sys.executable, "-m", "dashboard.launch", *arguments], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_a_foreign_server_answering_ok_on_the_port_gets_no_url():
    with foreign_server() as port:
        assert httpx.get(f"http://127.0.0.1:{port}/_stcore/health").text == "ok"  # what fooled the old launcher
        assert not answers_with_token(port, TOKEN)
        done = launcher("--server.port", str(port))
    assert done.returncode == 2
    assert "token=" not in done.stdout + done.stderr
    assert f"port {port} on 127.0.0.1 is taken: another program listens on it" in done.stderr


@pytest.mark.parametrize("base", ["a b", "x/../y", "a//b", "<script>"])
def test_a_base_path_the_app_cannot_serve_is_refused_at_once(base):
    started = time.monotonic()
    done = launcher("--server.port", str(free_port()), "--server.baseUrlPath", base)
    assert done.returncode == 2 and time.monotonic() - started < 30
    assert f"--server.baseUrlPath {base!r} is not a path this app can be served under" in done.stderr
    assert "token=" not in done.stdout


@pytest.mark.parametrize("port", ["abc", "0", "70000", "８５０１"])
def test_a_port_that_is_no_port_number_is_refused_at_once(port):
    done = launcher("--server.port", port)
    assert done.returncode == 2 and "token=" not in done.stdout
    assert f"--server.port {port!r} is not a port number: give one from 1 to 65535" in done.stderr


def test_the_launch_raises_the_soft_open_files_limit_to_the_hard_one():
    script = ("import resource; from dashboard.launch import raise_open_files_limit; "
              "hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]; "
              "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard)); "
              "assert resource.getrlimit(resource.RLIMIT_NOFILE) == (256, hard); "
              "print(raise_open_files_limit() == resource.getrlimit(resource.RLIMIT_NOFILE) == (hard, hard))")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


@pytest.fixture(scope="module")
def based(tmp_path_factory):
    folder = tmp_path_factory.mktemp("based")
    with launched(folder, "--server.baseUrlPath", "/tools/sgi/", path="/tools/sgi/") as (port, token, printed):
        yield port, token, printed


def test_with_a_base_path_the_url_and_the_health_check_are_under_it(based):
    port, token, printed = based
    base = f"http://127.0.0.1:{port}/tools/sgi"
    assert f"Open the SGI Workbench at  http://127.0.0.1:{port}/tools/sgi/?token={token}" in printed
    assert answers_with_token(port, token, "tools/sgi") and not answers_with_token(port, token)
    with httpx.Client() as browser:
        handover = browser.get(f"{base}/?token={token}")
        assert 'location.replace("/tools/sgi/")' in handover.text
        page = browser.get(base + "/")
        assert page.status_code == 200 and '<div id="root">' in page.text
    assert httpx.get(base + "/").status_code == 403  # without the cookie


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with launched(tmp_path_factory.mktemp("launched")) as (port, token, printed):
        yield f"http://127.0.0.1:{port}", token


def test_the_health_check_proves_the_token_only_to_a_nonce(app):
    base, token = app
    nonce = "ab" * 16
    answer = httpx.get(base + "/_stcore/health", headers={NONCE_HEADER: nonce})
    assert answer.text == "ok" and answer.headers[PROOF_HEADER] == launch_proof(token, nonce)
    assert answer.headers[PROOF_HEADER] != launch_proof(token, "cd" * 16)  # another nonce, another proof
    assert PROOF_HEADER not in httpx.get(base + "/_stcore/health").headers
    assert PROOF_HEADER not in httpx.get(base + "/_stcore/health", headers={NONCE_HEADER: "not hex"}).headers


def test_every_kind_of_response_forbids_framing_by_other_origins(app):
    base, token = app
    cookie = {"Cookie": f"{cookie_name(token)}={token}"}
    with httpx.Client(base_url=base) as client:
        script = re.search(r'src="\.?(/static/js/[^"]+\.js)"', client.get("/", headers=cookie).text).group(1)
        responses = {
            "health": client.get("/_stcore/health"),
            "refused page": client.get("/"),
            "refused post": client.post("/_stcore/upload_file/x/y", headers={"Origin": base}),
            "refused origin": client.get("/", headers={**cookie, "Origin": "http://127.0.0.1:1"}),
            "hand-over": client.get(f"/?token={token}"),
            "page": client.get("/", headers=cookie),
            "head": client.head("/", headers=cookie),
            "script": client.get(script, headers=cookie),
            "metrics": client.get("/_stcore/metrics", headers=cookie),
            "host config": client.get("/_stcore/host-config", headers=cookie),
            "missing media": client.get("/media/0123456789abcdef.png", headers=cookie),
        }
    assert {name: r.status_code for name, r in responses.items()} == {
        "health": 200, "refused page": 403, "refused post": 403, "refused origin": 403, "hand-over": 200,
        "page": 200, "head": 200, "script": 200, "metrics": 200, "host config": 200, "missing media": 404}
    assert [name for name, response in responses.items() if not framed(response)] == []


def test_a_refused_request_with_an_unfinished_body_is_closed_at_once(app):
    base, _ = app
    port = int(base.rsplit(":", 1)[1])
    request = (f"POST /_stcore/upload_file/x/y HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {base}\r\n"
               "Content-Length: 1000000\r\n\r\n" + "x" * 100).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        answer = _read_until_closed(sock, seconds=3, trickle=True)  # the body keeps coming, a byte at a time
    assert answer.startswith(b"HTTP/1.1 403") and b"connection: close" in answer.lower()


def _read_until_closed(sock: socket.socket, *, seconds: float, trickle: bool = False) -> bytes:
    """What the server sent before closing the connection; fails when it is still open after ``seconds``.

    With ``trickle``, one more byte of the body is sent every quarter of a second meanwhile.
    """
    sock.settimeout(0.25 if trickle else seconds)
    received = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            if not trickle:
                break
            try:
                sock.sendall(b"x")
            except OSError:  # closed by the server
                return received
            continue
        if not chunk:
            return received
        received += chunk
    pytest.fail(f"the connection was still open after {seconds} s; received {received[:200]!r}")


async def _echo_length(scope, receive, send) -> None:
    """A route that reads the whole body and answers its length."""
    if scope["type"] != "http":
        return
    size, more = 0, True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        size += len(message.get("body", b""))
        more = message.get("more_body", False)
    body = str(size).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def bounded_server() -> Iterator[int]:
    """uvicorn serving a body-reading route behind the guard, whose body pause bound is one second."""
    port = free_port()
    config = uvicorn.Config(TokenGuard(_echo_length, token=TOKEN, body_idle_seconds=1.0), host="127.0.0.1",
                            port=port, lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield port
    server.should_exit = True
    thread.join(timeout=10)


def _post_head(port: int, length: int) -> bytes:
    return (f"POST /upload HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n"
            f"Cookie: {cookie_name(TOKEN)}={TOKEN}\r\nContent-Length: {length}\r\n\r\n").encode()


def test_a_body_that_stops_arriving_gets_408_and_its_connection_closed(bounded_server):
    with socket.create_connection(("127.0.0.1", bounded_server), timeout=30) as sock:
        sock.sendall(_post_head(bounded_server, 1000) + b"x" * 10)
        started = time.monotonic()
        answer = _read_until_closed(sock, seconds=10)
    assert 0.9 <= time.monotonic() - started < 10
    assert answer.startswith(b"HTTP/1.1 408") and b"connection: close" in answer.lower()
    assert all(f"{name}: {value}".encode() in answer.lower() for name, value in
               ((n.decode(), v.decode().lower()) for n, v in FRAMING_HEADERS))


def test_a_body_sent_with_short_pauses_is_read_whole(bounded_server):
    with socket.create_connection(("127.0.0.1", bounded_server), timeout=30) as sock:
        sock.sendall(_post_head(bounded_server, 30))
        for _ in range(3):  # three pauses of half the bound: 1.5 s in all, longer than the bound
            time.sleep(0.5)
            sock.sendall(b"x" * 10)
        answer = b""
        while not answer.endswith(b"\r\n\r\n30"):
            chunk = sock.recv(65536)
            assert chunk, f"closed after {answer!r}"
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"\r\n\r\n30")
