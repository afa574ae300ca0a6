"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests, with faults on request.

It speaks ``POST /v1/chat/completions`` and ``POST /v1/embeddings``. Chat answers are
deterministic functions of the judge prompt (a lexical stand-in for a judge model):

- ``relevance``: a passage is relevant when it shares a content word with the question;
- ``usage``: a passage is used when it shares a content word with the response;
- ``support``: the response's sentences are its statements; one is supported when all its
  content words occur in the passages;
- ``similarity``: ``round(5 * Jaccard(content words of response, of reference))``;
- ``grounded`` (answered Yes or No): P(yes) is the share of the response's content words
  found in the passages (:func:`grounded_share`); the answer is Yes when it is at least
  0.5. Asked with ``logprobs``, the reply carries the first token's top alternatives
  (:func:`yes_no_alternatives`), unless :attr:`FakeServer.logprobs` is False (a server
  that ignores the option) or the request's fault is ``"no_logprobs"``; the fault
  ``"lead_newline"`` puts a newline token before the answer.

A chat request that is no judge task (a connection check) is answered ``OK``.

Content words are lower-cased runs of letters, digits and apostrophes longer than three
characters. Each request waits :attr:`delay` seconds first; :attr:`max_in_flight` is the
most requests it held at once. Embeddings are :class:`~sgi_core.embedding.HashingEncoder` vectors.

Faults are queued with :meth:`FakeServer.inject` and each spoils the next request that
arrives: ``"429"`` (with ``Retry-After``), ``"500"``, ``"401"``, ``"slow"`` (replies after
:attr:`slow_seconds`), ``"drop"`` (closes the connection without a reply),
``"malformed"`` (a 200 reply that is not JSON), ``"bad_answer"`` (a chat reply whose
content is not the JSON asked for), ``"redirect"`` (307 to :attr:`redirect_target`),
``"one_vector"`` / ``"bad_index"`` / ``"ragged"`` (embeddings replies that do not match
the request); ``"ok"`` lets one request through. A response holding ``ALWAYS_BAD`` always gets a malformed chat answer.
"""

from __future__ import annotations

import json
import math
import re
import socket
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from sgi_core.embedding import HashingEncoder

_WORD = re.compile(r"[a-z0-9']+")
_TASK = re.compile(r"judge task '(\w+)'")


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 3}


def grounded_share(inputs: dict) -> float:
    """The fake Yes/No judge's P(yes): the share of the response's content words found in the passages."""
    words, known = content_words(inputs["response"]), content_words(" ".join(inputs.get("contexts", [])))
    return len(words & known) / len(words) if words else 1.0


def yes_no_alternatives(p_yes: float) -> list[dict]:
    """The first answer token's top alternatives: 0.9 * P(yes) split 2:1 over "Yes" and " yes", 0.9 * P(no) over
    "No" and "NO", 0.1 on "The"; a token of probability 0 is left out, as a real top list would."""
    mass = {"Yes": 0.6 * p_yes, " yes": 0.3 * p_yes, "No": 0.6 * (1 - p_yes), "NO": 0.3 * (1 - p_yes), "The": 0.1}
    ranked = sorted(((token, p) for token, p in mass.items() if p > 0), key=lambda item: -item[1])
    return [{"token": token, "logprob": math.log(p), "bytes": list(token.encode())} for token, p in ranked]


def judge_answer(task: str, inputs: dict) -> dict:
    """The deterministic answer of the fake judge (see the module docstring)."""
    passages = inputs.get("contexts", [])
    if task == "relevance":
        question = content_words(inputs["question"])
        return {"relevant": [bool(question & content_words(p)) for p in passages]}
    if task == "usage":
        response = content_words(inputs["response"])
        return {"used": [bool(response & content_words(p)) for p in passages]}
    if task == "support":
        known = content_words(" ".join(passages))
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", inputs["response"].strip()) if content_words(s)]
        return {"statements": [{"statement": s, "supported": content_words(s) <= known} for s in sentences]}
    if task == "similarity":
        a, b = content_words(inputs["response"]), content_words(inputs["reference_answer"])
        return {"score": round(5 * len(a & b) / len(a | b)) if a | b else 5}
    raise ValueError(task)


class _Handler(BaseHTTPRequestHandler):
    server: FakeServer

    def log_message(self, *args):
        pass

    def _send(self, status: int, body: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        fault = self.server.record(self.path, dict(self.headers), body)
        try:
            self._answer(body, fault)
        finally:
            self.server.leave()

    def _answer(self, body: dict, fault: str | None) -> None:
        if fault == "drop":
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        if fault == "slow":
            time.sleep(self.server.slow_seconds)
        if fault in ("429", "500", "401"):
            headers = {"Retry-After": self.server.retry_after} if fault == "429" else {}
            return self._send(int(fault), b'{"error": {"message": "injected"}}', headers)
        if fault == "redirect":
            return self._send(307, b"", {"Location": self.server.redirect_target})
        if fault == "malformed":
            return self._send(200, b'{"choices": [')
        path = urlsplit(self.path).path.rstrip("/")
        if path.endswith("/embeddings"):
            return self._send(200, json.dumps(self.server.embeddings_reply(body["input"], fault)).encode())
        if path.endswith("/chat/completions"):
            return self._send(200, json.dumps(self.server.chat_reply(body, fault)).encode())
        self._send(404, b'{"error": "no such path"}')


class FakeServer(ThreadingHTTPServer):
    """Start with ``with FakeServer() as server:``; ``server.base_url`` ends in ``/v1``."""

    daemon_threads = True

    def __init__(self, *, retry_after: str = "1", slow_seconds: float = 1.0):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.retry_after = retry_after
        self.slow_seconds = slow_seconds
        self.redirect_target = ""
        self.requests: list[dict] = []
        self.delay = 0.0
        self.logprobs = True
        self.in_flight = self.max_in_flight = 0
        self._faults: deque = deque()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}/v1"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()

    def handle_error(self, request, client_address):
        """A dropped connection is the point of the ``drop`` fault, not an error."""

    def inject(self, *faults: str) -> None:
        with self._lock:
            self._faults.extend(faults)

    def record(self, path: str, headers: dict, body: dict) -> str | None:
        with self._lock:
            self.requests.append({"path": path, "headers": {k.lower(): v for k, v in headers.items()}, "body": body})
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            fault = self._faults.popleft() if self._faults else None
            fault = None if fault == "ok" else fault
        time.sleep(self.delay)
        return fault

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def chat_requests(self, task: str | None = None) -> list[dict]:
        with self._lock:
            chats = [r for r in self.requests if r["path"].endswith("/chat/completions")]
        return [r for r in chats if task is None or f"judge task '{task}'" in r["body"]["messages"][0]["content"]]

    def chat_reply(self, body: dict, fault: str | None) -> dict:
        messages = body["messages"]
        asked = _TASK.search(messages[0]["content"])
        logprobs = None
        if asked is None:  # not a judge task (a connection check): a short plain answer
            content = "OK"
        elif asked.group(1) == "grounded":
            inputs = json.loads(messages[1]["content"])
            p_yes = grounded_share(inputs)
            content = "Yes" if p_yes >= 0.5 else "No"
            if fault == "bad_answer" or "ALWAYS_BAD" in inputs.get("response", ""):
                content, p_yes = "It depends.", 0.0
            if body.get("logprobs") and self.logprobs and fault != "no_logprobs":
                alternatives = yes_no_alternatives(p_yes)
                chosen = next((a["logprob"] for a in alternatives if a["token"] == content), math.log(0.1))
                tokens = [{"token": content, "logprob": chosen, "top_logprobs": alternatives}]
                if fault == "lead_newline":
                    tokens.insert(0, {"token": "\n", "logprob": 0.0, "top_logprobs": [{"token": "\n", "logprob": 0.0}]})
                    content = "\n" + content
                logprobs = {"content": tokens}
        else:
            inputs = json.loads(messages[1]["content"])
            spoiled = fault == "bad_answer" or "ALWAYS_BAD" in inputs.get("response", "")
            content = "I think the answer is fine." if spoiled else json.dumps(judge_answer(asked.group(1), inputs))
        prompt_chars = sum(len(m["content"]) for m in messages)
        return {"object": "chat.completion", "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "logprobs": logprobs, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(content) // 4,
                          "total_tokens": prompt_chars // 4 + len(content) // 4}}

    def embeddings_reply(self, inputs: list[str], fault: str | None) -> dict:
        vectors = HashingEncoder(8).encode(inputs).tolist()
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        if fault == "one_vector":
            data = data[:1]
        elif fault == "bad_index":
            data = [{**item, "index": 0} for item in data]
        elif fault == "ragged":
            data[-1] = {**data[-1], "embedding": data[-1]["embedding"][:4]}
        return {"object": "list", "data": data}
