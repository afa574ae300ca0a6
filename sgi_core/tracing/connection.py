"""One connection to a tracing server's REST API: explicit URL, bearer key, timeouts, retries.

Nothing is sent without a URL the user gave. The key comes from ``PHOENIX_API_KEY`` and
travels as ``Authorization: Bearer``; a plain ``http://`` URL to a host other than this
machine warns that it would travel in clear. Redirects are not followed (the key would
follow them). 5xx, 429, timeouts and dropped connections are retried with the backoff of
:class:`sgi_core.http.client.RetryPolicy`; any other refusal is a :class:`ServerError` at once,
holding the server's message for the caller to read (Phoenix names unknown span ids in it).
"""

from __future__ import annotations

import os
import random
import time
import warnings
from collections.abc import Callable

import httpx

from sgi_core.errors import SGIInputError
from sgi_core.http.client import LOOPBACK_HOSTS, RetryPolicy, retry_after_seconds
from sgi_core.jsonio import loads_json

#: Environment variable holding the server's API key.
API_KEY_ENV = "PHOENIX_API_KEY"
#: Seconds to connect, and to wait for each read of a reply.
CONNECT_TIMEOUT, READ_TIMEOUT = 10.0, 60.0
#: Characters of a server's refusal kept in a message.
MESSAGE_CHARS = 300
#: Retries of a :class:`Connection` given none: :class:`RetryPolicy`'s defaults.
DEFAULT_RETRY = RetryPolicy()


class ServerError(SGIInputError):
    """A request the server refused or never answered; ``status`` is its HTTP status (None: no answer).

    ``detail`` is the start of the server's reply, for callers that read it (which span ids
    are unknown); it never holds the key, which is sent in a header only.
    """

    def __init__(self, message, *, status: int | None = None, detail: str = "", hint=None):
        self.status = status
        self.detail = detail
        super().__init__(message, hint=hint)


def check_server_url(url: str | None) -> httpx.URL:
    """Parse and vet a server's base URL; warn when plain http leaves this machine.

    Raises
    ------
    SGIInputError
        No URL, not http(s), no host, or a user name or password inside it.

    Examples
    --------
    >>> str(check_server_url("http://127.0.0.1:6006/"))
    'http://127.0.0.1:6006'
    """
    hint = "Give the server's URL, e.g. http://127.0.0.1:6006 or https://phoenix.example.com"
    if url is None or not str(url).strip():
        raise SGIInputError("no server URL given: nothing is sent to a server unless its URL is given", hint=hint)
    try:
        parsed = httpx.URL(str(url).strip())
    except (httpx.InvalidURL, TypeError, ValueError):
        raise SGIInputError(f"'{str(url)[:80]}' is not a valid URL", hint=hint) from None
    if parsed.scheme not in ("https", "http") or not parsed.host:
        raise SGIInputError(f"the server URL must start with https:// or http://, not '{str(url)[:80]}'", hint=hint)
    if parsed.userinfo:
        raise SGIInputError(f"the URL for {parsed.host} holds a user name or password",
                            hint=f"Put the key in {API_KEY_ENV} instead")
    if parsed.scheme == "http" and parsed.host not in LOOPBACK_HOSTS:
        warnings.warn(f"{parsed.host} is reached over plain http: the API key and the traces travel in clear; "
                      "use https:// for a server on another machine", UserWarning, stacklevel=2)
    return parsed.copy_with(path=parsed.path.rstrip("/") or "", query=None, fragment=None)


class Connection:
    """JSON requests to one server.

    Parameters
    ----------
    url : str
        The server's base URL (``http://127.0.0.1:6006``); vetted by :func:`check_server_url`.
    api_key : str, optional
        Default: ``$PHOENIX_API_KEY``; none for a server without authentication.
    retry : RetryPolicy, optional
        Default: :data:`DEFAULT_RETRY`.
    timeout : httpx.Timeout, optional
        Default: :data:`CONNECT_TIMEOUT` to connect, :data:`READ_TIMEOUT` per read.
    sleep : callable, optional
        ``sleep(seconds)`` between retries.

    Attributes
    ----------
    n_requests : int
        Requests sent, retries included.
    """

    def __init__(self, url: str, *, api_key: str | None = None, retry: RetryPolicy = DEFAULT_RETRY,
                 timeout: httpx.Timeout | None = None, sleep: Callable[[float], None] = time.sleep):
        self.base_url = check_server_url(url)
        self.host = self.base_url.host
        self.retry = retry
        self._sleep = sleep
        self._rng = random.Random(0)
        self.n_requests = 0
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.Client(base_url=self.base_url, headers=headers, follow_redirects=False, trust_env=False,
                                  timeout=timeout or httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT))

    def __repr__(self) -> str:
        keyed = "Authorization" in self._http.headers
        return f"Connection(url={str(self.base_url)!r}, key={'set' if keyed else 'none'})"

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc) -> None:
        self._http.close()

    def request(self, method: str, path: str, *, params=None, body: dict | None = None) -> dict:
        """Send one request (retried on 5xx, 429, timeouts and dropped connections) and return the JSON object replied.

        Raises
        ------
        ServerError
            A refusal (4xx, a redirect), a reply that is not a JSON object, or the last retry failed.
        """
        last = ""
        for attempt in range(self.retry.max_attempts):
            wait = None
            self.n_requests += 1
            try:
                reply = self._http.request(method, path, params=params, json=body)
            except httpx.ConnectError:
                raise ServerError(f"cannot connect to {self.base_url}",
                                  hint="Check the URL and that the server is running") from None
            except (httpx.TimeoutException, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as err:
                last = f"{type(err).__name__} after {self._http.timeout.read:g} s" if isinstance(
                    err, httpx.TimeoutException) else "the connection was dropped"
            else:
                if reply.status_code < 300:
                    return self._json_object(reply, path)
                if reply.status_code != 429 and reply.status_code < 500:
                    raise self._refusal(reply, method, path)
                last = f"HTTP {reply.status_code}"
                wait = retry_after_seconds(reply.headers.get("retry-after"))
            if attempt + 1 < self.retry.max_attempts:
                self._sleep(min(wait, self.retry.max_delay) if wait is not None
                            else self.retry.backoff(attempt, self._rng))
        raise ServerError(f"{method} {path} on {self.host} failed {self.retry.max_attempts} times ({last})",
                          hint="The server is overloaded or down; try again later")

    def get(self, path: str, params=None) -> dict:
        return self.request("GET", path, params=params)

    def post(self, path: str, body: dict, params=None) -> dict:
        return self.request("POST", path, params=params, body=body)

    def put(self, path: str, body: dict | None = None) -> dict:
        return self.request("PUT", path, body=body)

    def _refusal(self, reply: httpx.Response, method: str, path: str) -> ServerError:
        detail = reply.text[:MESSAGE_CHARS]
        if 300 <= reply.status_code < 400:
            return ServerError(f"{self.host} answered {method} {path} with a redirect (HTTP {reply.status_code}), "
                               "which is not followed", status=reply.status_code, hint="Give the final URL directly")
        if reply.status_code in (401, 403):
            return ServerError(f"{self.host} refused the key (HTTP {reply.status_code})", status=reply.status_code,
                               hint=f"Set {API_KEY_ENV} to a key of this server")
        return ServerError(f"{self.host} refused {method} {path} (HTTP {reply.status_code}): {detail}",
                           status=reply.status_code, detail=detail,
                           hint="Check the project name and the URL")

    def _json_object(self, reply: httpx.Response, path: str) -> dict:
        try:
            payload = loads_json(reply.content, source=self.host, allow_duplicate_keys=True)
        except SGIInputError as err:
            raise ServerError(f"{self.host} answered {path} with something other than JSON ({err.message})",
                              hint="Check that the URL is the server's base URL") from None
        if not isinstance(payload, dict):
            raise ServerError(f"{self.host} answered {path} with something other than a JSON object",
                              hint="Check that the URL is the server's base URL")
        return payload
