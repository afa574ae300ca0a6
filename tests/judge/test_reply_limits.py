"""Replies are bounded: a byte cap after decompression, one deadline per request, a short echo, a quick cancel.

Each test runs a real HTTP server on 127.0.0.1 that misbehaves in one way.
"""

import gzip
import json
import threading
import time
import tracemalloc
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sgi_core.http.client import ApiClient, ApiError, RetryPolicy
from sgi_core.http.reply_body import BoundedBody, ReplyRefused
from sgi_core.judge.client import ECHO_CHARS, MAX_REPLY_BYTES, JudgeClient
from sgi_core.judge.prompts import TASKS, AnswerError

MB = 2**20
ONCE = RetryPolicy(max_attempts=1)
INPUTS = {"question": "Where is the head office?", "contexts": ["The head office is in Delhi."],
          "response": "Delhi."}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        self.server.bodies.append(body)
        try:
            self.server.reply(self, body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up on the reply, which is what most tests want


class Server(ThreadingHTTPServer):
    """``reply(handler, request_body)`` answers every POST; ``bodies`` lists the requests received."""

    daemon_threads = True

    def __init__(self, reply):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reply = reply
        self.bodies = []
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}/v1"

    def handle_error(self, request, client_address):
        pass


@pytest.fixture
def serve():
    started = []

    def start(reply):
        started.append(Server(reply))
        return started[-1]

    yield start
    for server in started:
        server.shutdown()
        server.server_close()


def head(handler, status=200, **headers):
    handler.send_response(status)
    for name, value in {"Content-Type": "application/json", **headers}.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()


def gzip_bomb(expanded_mb: int) -> bytes:
    """A valid JSON object whose gzip body is ~1/1000 of its size: zeros inside a string."""
    out = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [out.compress(b'{"pad": "')]
    zeros = b"0" * MB
    parts += [out.compress(zeros) for _ in range(expanded_mb)]
    parts += [out.compress(b'"}'), out.flush()]
    return b"".join(parts)


def chat_reply(content: str) -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}],
                       "usage": {"total_tokens": 10}}).encode()


def test_a_gzip_bomb_is_refused_within_the_cap_in_bounded_memory(serve):
    bomb = gzip_bomb(200)
    assert len(bomb) < MB  # 200 MB once decompressed

    def reply(handler, body):
        head(handler, Content_Encoding="gzip", Content_Length=str(len(bomb)))
        handler.wfile.write(bomb)

    server = serve(reply)
    client = ApiClient(server.base_url, retry=ONCE, max_reply_bytes=4 * MB)
    tracemalloc.start()
    try:
        with pytest.raises(ApiError, match=r"answered with more than 4,194,304 bytes \(decompressed\)"):
            client.post_json("chat/completions", {})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # httpx would have held the 200 MB; here at most the cap plus one compressed chunk is held.
    assert peak < 8 * MB, peak
    assert len(server.bodies) == 1  # too large is not retried


def test_the_judge_refuses_a_50_mb_reply_without_a_retry(serve):
    def reply(handler, body):
        head(handler)  # no Content-Length: the size is known only by reading
        piece = b"x" * MB
        for _ in range(50):
            handler.wfile.write(piece)

    server = serve(reply)
    judge = JudgeClient(server.base_url, "m", timeout=10)
    with pytest.raises(ApiError, match=f"answered with more than {MAX_REPLY_BYTES:,} bytes"):
        judge.ask(TASKS["support"], INPUTS)
    assert len(server.bodies) == 1


def test_a_malformed_answer_is_echoed_back_truncated(serve):
    garbage = "not json " * 300_000  # 2.7 MB, under the cap

    def reply(handler, body):
        data = chat_reply(garbage)
        head(handler, Content_Length=str(len(data)))
        handler.wfile.write(data)

    server = serve(reply)
    judge = JudgeClient(server.base_url, "m")
    with pytest.raises(AnswerError, match=r"malformed answer twice \(the reply is not JSON\)"):
        judge.ask(TASKS["support"], INPUTS)
    assert len(server.bodies) == 2
    echoed = server.bodies[1]["messages"][2]
    assert echoed["role"] == "assistant" and echoed["content"] == garbage[:ECHO_CHARS]


def test_a_dripping_reply_does_not_outlast_the_deadline(serve):
    def reply(handler, body):
        head(handler, Content_Length="1000")
        for _ in range(1000):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.5)

    server = serve(reply)
    client = ApiClient(server.base_url, timeout=3, retry=ONCE)
    started = time.monotonic()
    with pytest.raises(ApiError, match=r"failed 1 times \(no complete reply within 3 s\)"):
        client.post_json("chat/completions", {})
    assert 3.0 <= time.monotonic() - started < 3.5


def test_cancel_ends_a_waiting_request_at_once(serve):
    def reply(handler, body):
        time.sleep(30)

    server = serve(reply)
    judge = JudgeClient(server.base_url, "m", timeout=60)
    threading.Timer(0.3, judge.cancel).start()
    started = time.monotonic()
    with pytest.raises(ApiError, match="the request was cancelled"):
        judge.ask(TASKS["support"], INPUTS)
    assert time.monotonic() - started < 0.6
    judge.resume()
    assert judge.n_requests == 1


@pytest.mark.parametrize("encoding, body", [
    ("gzip", gzip.compress(b'{"a": 1}', mtime=0)),
    ("deflate", zlib.compress(b'{"a": 1}')),
    ("identity", b'{"a": 1}'),
])
def test_the_encodings_asked_for_are_decoded(serve, encoding, body):
    def reply(handler, request):
        assert handler.headers["Accept-Encoding"] == "gzip, deflate"
        head(handler, Content_Encoding=encoding, Content_Length=str(len(body)))
        handler.wfile.write(body)

    assert ApiClient(serve(reply).base_url, retry=ONCE).post_json("x", {}) == {"a": 1}


def test_bounded_body_limits_each_step():
    inflating = BoundedBody("gzip", 1000)
    with pytest.raises(ReplyRefused, match="more than 1,000 bytes"):
        inflating.feed(gzip.compress(b"0" * 1001))
    exact = BoundedBody("gzip", 1000)
    exact.feed(gzip.compress(b"0" * 1000))
    assert exact.finish() == b"0" * 1000
    # bytes after the end of a gzip stream count against the cap too
    trailing = BoundedBody("gzip", 1000)
    with pytest.raises(ReplyRefused, match="more than 1,000 bytes"):
        trailing.feed(gzip.compress(b"{}") + b"\0" * 2000)
    with pytest.raises(ReplyRefused, match="content encoding 'br', which was not asked for"):
        BoundedBody("br", 1000)
    with pytest.raises(ReplyRefused, match="does not decompress"):
        BoundedBody("gzip", 1000).feed(b"\x1f\x8b not gzip")


HOSTILE_JSON = [("5" * 5000, "more than 4,300 digits"), ("1e400", "too large for a floating-point value"),
                ("[" * 100_000 + "]" * 100_000, "nested")]


@pytest.mark.parametrize("number, reason", HOSTILE_JSON)
def test_an_api_body_json_cannot_hold_crashes_nothing(serve, number, reason):
    def reply(handler, body):
        data = ('{"choices": [], "x": ' + number + "}").encode()
        head(handler, Content_Length=str(len(data)))
        handler.wfile.write(data)

    with pytest.raises(ApiError, match=f"answered with something other than a JSON object \\(.*{reason}"):
        ApiClient(serve(reply).base_url, retry=ONCE).post_json("x", {})


@pytest.mark.parametrize("number, reason", HOSTILE_JSON)
def test_a_judge_answer_json_cannot_hold_is_a_malformed_answer(serve, number, reason):
    def reply(handler, body):
        data = chat_reply('{"statements": [], "n": ' + number + "}")
        head(handler, Content_Length=str(len(data)))
        handler.wfile.write(data)

    judge = JudgeClient(serve(reply).base_url, "m")
    with pytest.raises(AnswerError, match=f"malformed answer twice \\(the reply's JSON cannot be read: .*{reason}"):
        judge.ask(TASKS["support"], INPUTS)
