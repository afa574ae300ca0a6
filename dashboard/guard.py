"""The launch token at the door: an ASGI layer that answers for Streamlit until a client shows the token.

``python -m dashboard.launch`` serves the app through :class:`TokenGuard` (:mod:`dashboard.serve`), which sees
every request before any Streamlit route does (pages, static files, the websocket, uploads, media, metrics,
components, the agent API):

- ``GET <any path>?token=<the token>`` answers a short page that sets a host-only, ``HttpOnly``,
  ``SameSite=Strict`` session cookie holding the token and replaces its own URL by the same one without the
  token (so the token leaves the address bar and a reload opens the app again);
- every other request must carry that cookie, compared in constant time; ``/_stcore/health`` alone answers
  without it, since it says only ``ok`` and the launcher polls it;
- a request whose ``Origin`` header is not exactly this server as the browser reached it (scheme, host and
  port: ``http://`` + its ``Host`` header) is refused, and the websocket and every request that is not
  ``GET`` or ``HEAD`` must carry an ``Origin``. Cookies ignore ports, so without this a page served from any
  other port of ``127.0.0.1`` in the user's browser would ride on the cookie.

A refused HTTP request gets 403 and a line saying how to open the app, and its connection is closed; a refused
websocket is closed before it is accepted (the handshake answers 403).

Every HTTP response, refusals and Streamlit's own alike, carries ``Content-Security-Policy: frame-ancestors
'self'`` and ``X-Frame-Options: SAMEORIGIN`` (:data:`FRAMING_HEADERS`): no page of another origin, another port
of 127.0.0.1 included, can show the app in a frame. A request whose body stops arriving for
:data:`BODY_IDLE_SECONDS` gets 408 and its connection is closed. A health request carrying
:data:`NONCE_HEADER` gets :func:`launch_proof` of its nonce in :data:`PROOF_HEADER`, so the launcher can tell its
own app from another server answering ``ok`` on the port without the token ever leaving the process.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import html
import json
import re
from urllib.parse import parse_qsl, quote, urlencode

TOKEN_PARAMETER = "token"
#: The one route that answers without the token.
HEALTH_PATH = "/_stcore/health"
REFUSAL = ("Open the app with the URL printed in the terminal when it started: it ends in ?token=..., which is "
           "new at every launch.")
#: Sent on every HTTP response: only pages of the app's own origin may frame it (the older header for old browsers).
FRAMING_HEADERS = ((b"content-security-policy", b"frame-ancestors 'self'"), (b"x-frame-options", b"SAMEORIGIN"))
#: Header of a health request carrying a nonce, and of the answer proving the server knows the token.
NONCE_HEADER = "x-sgi-launch-nonce"
PROOF_HEADER = "x-sgi-launch-proof"
#: Seconds a request body may pause before the request is answered 408 and its connection closed.
BODY_IDLE_SECONDS = 30.0
_NONCE = re.compile(r"[0-9a-f]{32,128}")
_CLOSE = (b"connection", b"close")
#: How much of a refused request's body is read before the 403, so that closing never resets the answer.
REFUSED_BODY_BYTES = 1 << 20
REFUSED_BODY_SECONDS = 1.0
#: A refused body that pauses longer than this is not waited for: the answer goes at once.
REFUSED_BODY_PAUSE = 0.1
_SAFE_METHODS = frozenset({"GET", "HEAD"})
_COOKIE_SAFE = re.compile(r"[A-Za-z0-9_-]{16,}")
_BROWSER_SCHEME = {"ws": "http", "wss": "https"}


def cookie_name(token: str) -> str:
    """The session cookie's name, distinct per launch so two apps on one host never overwrite each other's.

    >>> cookie_name("x" * 43)
    'sgi_workbench_cc0b1c2c66f3bb9f'
    """
    return "sgi_workbench_" + hashlib.sha256(token.encode()).hexdigest()[:16]


def launch_proof(token: str, nonce: str) -> str:
    """HMAC-SHA256 of ``nonce`` under the launch token (hex): what the health check answers to the launcher.

    The message is prefixed with ``sgi-launch-health:`` so that the answer is of use for
    nothing but this check; it reveals nothing of the token.

    >>> launch_proof("x" * 43, "0" * 32) == launch_proof("x" * 43, "0" * 32) != launch_proof("y" * 43, "0" * 32)
    True
    """
    return hmac.new(token.encode(), b"sgi-launch-health:" + nonce.encode(), hashlib.sha256).hexdigest()


def holds(presented: object, token: str) -> bool:
    """Whether ``presented`` is the token, compared in constant time; anything but a string is not."""
    return isinstance(presented, str) and hmac.compare_digest(presented.encode(), token.encode())


class TokenGuard:
    """ASGI middleware letting through only requests that carry the launch token's cookie, from this origin.

    Parameters
    ----------
    app
        The ASGI application behind the guard (Streamlit's).
    token
        The launch's token: at least 16 characters of ``A-Z a-z 0-9 _ -`` (``secrets.token_urlsafe`` makes
        such), so it travels unquoted in a URL and a cookie.
    base_path
        Streamlit's ``server.baseUrlPath`` (``""`` for none): the health check answers at
        ``/<base_path>/_stcore/health``.
    body_idle_seconds
        How long a request body may pause before the request is answered 408 and its connection closed.
    """

    def __init__(self, app, *, token: str, base_path: str = "", body_idle_seconds: float = BODY_IDLE_SECONDS) -> None:
        if not isinstance(token, str) or not _COOKIE_SAFE.fullmatch(token):
            raise ValueError("The launch token must be at least 16 characters of A-Z, a-z, 0-9, '_' and '-'; "
                             "start the app with `python -m dashboard.launch`, which makes one.")
        self.app = app
        self.token = token
        self.cookie = cookie_name(token)
        base = str(base_path or "").strip("/")
        self.health_path = f"/{base}{HEALTH_PATH}" if base else HEALTH_PATH
        self.body_idle_seconds = body_idle_seconds

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            bounded = _BoundedBody(receive, _framed(send), self.body_idle_seconds)
            receive, send = bounded.receive, bounded.send
        elif scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        await self._guard(scope, receive, send)

    async def _guard(self, scope, receive, send) -> None:
        headers = _headers(scope)
        websocket = scope["type"] == "websocket"
        method = "GET" if websocket else scope["method"]
        origin = headers.get("origin")
        if origin is None and (websocket or method not in _SAFE_METHODS):
            await _refuse(scope, receive, send)
            return
        if origin is not None and origin.lower() != _own_origin(scope, headers):
            await _refuse(scope, receive, send)
            return
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [value for name, value in query if name == TOKEN_PARAMETER]
        if given and not websocket and method == "GET":
            if len(given) == 1 and holds(given[0], self.token):
                await self._hand_over(scope, query, send)
            else:
                await _refuse(scope, receive, send)
            return
        if scope["path"] == self.health_path and method in _SAFE_METHODS:
            nonce = headers.get(NONCE_HEADER, "")
            proof = launch_proof(self.token, nonce).encode() if _NONCE.fullmatch(nonce) else None
            await self.app(scope, receive, _with_headers(send, [(PROOF_HEADER.encode(), proof)] if proof else []))
            return
        if self._has_cookie(headers):
            await self.app(scope, receive, send)
            return
        await _refuse(scope, receive, send)

    def _has_cookie(self, headers: dict[str, str]) -> bool:
        for pair in headers.get("cookie", "").split(";"):
            name, _, value = pair.strip().partition("=")
            if name == self.cookie and holds(value, self.token):
                return True
        return False

    async def _hand_over(self, scope, query: list[tuple[str, str]], send) -> None:
        """Set the cookie and send the browser on to the same URL without the token (history entry replaced)."""
        rest = urlencode([(name, value) for name, value in query if name != TOKEN_PARAMETER])
        # Quoted and with one leading slash: the target can only be a path on this server.
        target = "/" + quote(scope["path"], safe="/:@!$&'()*+,;=-._~").lstrip("/") + ("?" + rest if rest else "")
        script_target = json.dumps(target).replace("<", "\\u003c")
        body = ("<!doctype html><meta charset=\"utf-8\"><title>SGI Workbench</title>"
                f"<script>location.replace({script_target})</script>"
                f"<noscript><a href=\"{html.escape(target)}\">Open the SGI Workbench</a></noscript>").encode()
        secure = "; Secure" if scope["scheme"] == "https" else ""
        cookie = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict{secure}"
        await _respond(send, 200, body, [(b"set-cookie", cookie.encode()), (b"cache-control", b"no-store"),
                                         (b"referrer-policy", b"no-referrer")])


def _headers(scope) -> dict[str, str]:
    """Request headers by lower-case name; a repeated header keeps its values joined as HTTP allows (cookies by ';')."""
    joined: dict[str, list[str]] = {}
    for name, value in scope.get("headers", []):
        joined.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
    return {name: ("; " if name == "cookie" else ", ").join(values) for name, values in joined.items()}


def _own_origin(scope, headers: dict[str, str]) -> str | None:
    """This server's origin as the browser reached it (an SSH tunnel's port included), or None without a Host."""
    host = headers.get("host")
    if not host:
        return None
    scheme = scope.get("scheme", "http")
    return f"{_BROWSER_SCHEME.get(scheme, scheme)}://{host}".lower()


def _with_headers(send, extra):
    """``send`` adding ``extra`` headers to the response's start (those it already has are replaced)."""
    names = {name for name, _ in extra}

    async def sending(message) -> None:
        if message["type"] == "http.response.start" and extra:
            kept = [(name, value) for name, value in message.get("headers", []) if name.lower() not in names]
            message = {**message, "headers": [*kept, *extra]}
        await send(message)

    return sending


def _framed(send):
    """``send`` adding :data:`FRAMING_HEADERS` to every HTTP response."""
    return _with_headers(send, list(FRAMING_HEADERS))


class _BoundedBody:
    """A request's ``receive`` and ``send`` that answer 408 and end the request when its body pauses too long.

    Once the body is in, :meth:`receive` is passed through unbounded (a streamed response waits
    on it for the client's disconnect); after a 408 whatever the app still sends is dropped.
    """

    def __init__(self, receive, send, idle_seconds: float) -> None:
        self._receive, self._send, self.idle_seconds = receive, send, idle_seconds
        self._body_in = self._timed_out = self._started = False

    async def receive(self):
        if self._body_in:
            return await self._receive()
        try:
            message = await asyncio.wait_for(self._receive(), self.idle_seconds)
        except asyncio.TimeoutError:
            self._body_in = True
            if not self._started:
                self._timed_out = True
                await _respond(self._send, 408, b"The request body stopped arriving; send it again.",
                               [(b"cache-control", b"no-store"), _CLOSE], content_type=b"text/plain")
            return {"type": "http.disconnect"}
        self._body_in = message["type"] != "http.request" or not message.get("more_body", False)
        return message

    async def send(self, message) -> None:
        if not self._timed_out:
            self._started = True
            await self._send(message)


async def _drain(receive) -> None:
    """Read a refused request's body as it arrives, up to :data:`REFUSED_BODY_BYTES` and :data:`REFUSED_BODY_SECONDS`,
    stopping at the first pause longer than :data:`REFUSED_BODY_PAUSE`.

    Closing a connection whose request body is still unread resets it, and a client still sending
    then never sees the 403; a body beyond either bound is left unread and the connection closed anyway.
    """
    loop = asyncio.get_running_loop()
    read, deadline = 0, loop.time() + REFUSED_BODY_SECONDS
    while read <= REFUSED_BODY_BYTES and (left := deadline - loop.time()) > 0:
        try:
            message = await asyncio.wait_for(receive(), min(left, REFUSED_BODY_PAUSE))
        except asyncio.TimeoutError:
            return
        if message["type"] != "http.request" or not message.get("more_body", False):
            return
        read += len(message.get("body", b""))


async def _refuse(scope, receive, send) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})  # before accept: the handshake answers 403
        return
    await _drain(receive)
    body = (f"<!doctype html><meta charset=\"utf-8\"><title>SGI Workbench</title><p>{html.escape(REFUSAL)}</p>"
            ).encode()
    # Closed after the answer: a body the client keeps sending never holds the connection open.
    await _respond(send, 403, body, [(b"cache-control", b"no-store"), _CLOSE])


async def _respond(send, status: int, body: bytes, headers: list[tuple[bytes, bytes]], *,
                   content_type: bytes = b"text/html") -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type + b"; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})
