"""The connection to a tracing server: URL checks, the bearer key, retries on 5xx, refusals named.

A small real HTTP server on a loopback port plays the server: it answers each request with the
next reply of its script and records what it was sent.
"""

import json
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sgi_core.errors import SGIInputError
from sgi_core.http.client import RetryPolicy
from sgi_core.tracing.connection import Connection, ServerError, check_server_url
from sgi_core.tracing.phoenix_pull import pull_phoenix, window_time


class ScriptedServer:
    """Replies ``(status, body, headers)`` in order (the last one again once the script is done)."""

    def __init__(self, replies):
        self.replies, self.seen = list(replies), []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                length = int(self.headers.get("content-length") or 0)
                owner.seen.append((self.command, self.path, dict(self.headers), self.rfile.read(length)))
                status, body, headers = owner.replies.pop(0) if len(owner.replies) > 1 else owner.replies[0]
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                payload = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = _answer

            def log_message(self, *args):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self):
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def scripted():
    servers = []

    def start(*replies):
        servers.append(ScriptedServer(replies))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_the_key_goes_as_a_bearer_header_and_never_into_repr(scripted, monkeypatch):
    server = scripted((200, {"data": []}, {}))
    monkeypatch.setenv("PHOENIX_API_KEY", "secret-key-1")
    with Connection(server.url) as connection:
        assert connection.get("/v1/projects/p/spans", params={"limit": 5}) == {"data": []}
        assert "secret-key-1" not in repr(connection) and "key=set" in repr(connection)
    method, path, headers, _ = server.seen[0]
    assert (method, path, headers["Authorization"]) == ("GET", "/v1/projects/p/spans?limit=5", "Bearer secret-key-1")


def test_5xx_is_retried_with_backoff_and_then_answered(scripted):
    server = scripted((503, "busy", {}), (502, "busy", {"retry-after": "2"}), (200, {"ok": 1}, {}))
    waits = []
    with Connection(server.url, sleep=waits.append, retry=RetryPolicy(base_delay=1.0)) as connection:
        assert connection.post("/v1/span_annotations", {"data": []}) == {"ok": 1}
        assert connection.n_requests == 3
    # The first wait is d/2 + U(0, d/2) with d = 1 s; the second is the server's Retry-After.
    assert 0.5 <= waits[0] <= 1.0 and waits[1] == 2.0


def test_a_server_that_stays_down_fails_after_the_last_attempt(scripted):
    server = scripted((503, "busy", {}))
    with Connection(server.url, sleep=lambda s: None, retry=RetryPolicy(max_attempts=3)) as connection:
        with pytest.raises(ServerError, match=r"GET /v1/x on 127.0.0.1 failed 3 times \(HTTP 503\)"):
            connection.get("/v1/x")
        assert connection.n_requests == 3


@pytest.mark.parametrize(("status", "message"), [
    (404, r"refused GET /v1/x \(HTTP 404\): Project with name p not found"),
    (401, r"refused the key \(HTTP 401\)\. Set PHOENIX_API_KEY"),
    (302, r"answered GET /v1/x with a redirect \(HTTP 302\), which is not followed"),
])
def test_a_refusal_is_named_at_once_without_a_retry(scripted, status, message):
    server = scripted((status, "Project with name p not found", {"location": "http://elsewhere.example/"}))
    with Connection(server.url, sleep=lambda s: None) as connection:
        with pytest.raises(ServerError, match=message) as caught:
            connection.get("/v1/x")
        assert connection.n_requests == 1 and caught.value.status == status


def test_a_reply_that_is_not_a_json_object_is_named(scripted):
    server = scripted((200, "[1, 2]", {}))
    with Connection(server.url) as connection, pytest.raises(ServerError, match="something other than a JSON object"):
        connection.get("/v1/x")


def test_nothing_listening_is_named():
    with Connection("http://127.0.0.1:9") as connection, pytest.raises(ServerError, match="cannot connect to"):
        connection.get("/healthz")


@pytest.mark.parametrize(("url", "message"), [
    (None, "no server URL given: nothing is sent"), ("  ", "no server URL given"),
    ("file:///etc/passwd", "must start with https:// or http://"),
    ("https://user:pw@phoenix.example.com", "holds a user name or password"),
])
def test_a_url_that_cannot_be_used_is_refused(url, message):
    with pytest.raises(SGIInputError, match=message):
        check_server_url(url)


def test_plain_http_off_this_machine_warns_that_the_key_travels_in_clear():
    with pytest.warns(UserWarning, match="phoenix.example.com is reached over plain http: the API key"):
        check_server_url("http://phoenix.example.com:6006")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert str(check_server_url("https://phoenix.example.com/")) == "https://phoenix.example.com"
        assert str(check_server_url("http://localhost:6006")) == "http://localhost:6006"


def test_a_window_needs_iso_times_in_order():
    with pytest.raises(SGIInputError, match=r"--since 'yesterday' is not an ISO 8601 time"):
        window_time("yesterday", "--since")
    with Connection("http://127.0.0.1:9") as connection, pytest.raises(SGIInputError, match="ends .* before it starts"):
        pull_phoenix(connection, "p", since=window_time("2026-01-02", "--since"),
                     until=window_time("2026-01-01", "--until"))


def test_the_count_line_names_the_traces_without_a_context():
    import pandas as pd

    from sgi_core.render.tracing import count_line
    from sgi_core.tracing.phoenix_pull import PulledWindow

    ids = tuple(f"t{k}" for k in range(7))
    window = PulledWindow(pd.DataFrame({"trace_id": ids}), "p", None, None, 3220, 9000, ids, (), 1.0)
    assert count_line(window) == ("3,220 traces in the window, 7 rows, 7 without a context "
                                  "(t0, t1, t2, t3, t4 and 2 more)")
    assert count_line(PulledWindow(pd.DataFrame(), "p", None, None, 0, 0, (), (), 0.1)) == \
        "0 traces in the window, 0 rows, 0 without a context"


def test_pull_from_a_server_that_is_not_there_exits_2(tmp_path, capsys):
    from sgi_core.cli import main

    assert main(["pull", "phoenix", "http://127.0.0.1:9", "--project", "p", "-o", str(tmp_path / "w.csv")]) == 2
    assert "error: cannot connect to http://127.0.0.1:9" in capsys.readouterr().err
    assert not (tmp_path / "w.csv").exists()
