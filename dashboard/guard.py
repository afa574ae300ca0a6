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

A refused HTTP request gets 403 and a line saying how to open the app; a refused websocket is closed before
it is accepted (the handshake answers 403).
"""

from __future__ import annotations

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
_SAFE_METHODS = frozenset({"GET", "HEAD"})
_COOKIE_SAFE = re.compile(r"[A-Za-z0-9_-]{16,}")
_BROWSER_SCHEME = {"ws": "http", "wss": "https"}


def cookie_name(token: str) -> str:
    """The session cookie's name, distinct per launch so two apps on one host never overwrite each other's.

    >>> cookie_name("x" * 43)
    'sgi_workbench_cc0b1c2c66f3bb9f'
    """
    return "sgi_workbench_" + hashlib.sha256(token.encode()).hexdigest()[:16]


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
    """

    def __init__(self, app, *, token: str) -> None:
        if not isinstance(token, str) or not _COOKIE_SAFE.fullmatch(token):
            raise ValueError("The launch token must be at least 16 characters of A-Z, a-z, 0-9, '_' and '-'; "
                             "start the app with `python -m dashboard.launch`, which makes one.")
        self.app = app
        self.token = token
        self.cookie = cookie_name(token)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        websocket = scope["type"] == "websocket"
        method = "GET" if websocket else scope["method"]
        origin = headers.get("origin")
        if origin is None and (websocket or method not in _SAFE_METHODS):
            await _refuse(scope, send)
            return
        if origin is not None and origin.lower() != _own_origin(scope, headers):
            await _refuse(scope, send)
            return
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [value for name, value in query if name == TOKEN_PARAMETER]
        if given and not websocket and method == "GET":
            if len(given) == 1 and holds(given[0], self.token):
                await self._hand_over(scope, query, send)
            else:
                await _refuse(scope, send)
            return
        if (scope["path"] == HEALTH_PATH and method in _SAFE_METHODS) or self._has_cookie(headers):
            await self.app(scope, receive, send)
            return
        await _refuse(scope, send)

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


async def _refuse(scope, send) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})  # before accept: the handshake answers 403
        return
    body = (f"<!doctype html><meta charset=\"utf-8\"><title>SGI Workbench</title><p>{html.escape(REFUSAL)}</p>"
            ).encode()
    await _respond(send, 403, body, [(b"cache-control", b"no-store")])


async def _respond(send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/html; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})
