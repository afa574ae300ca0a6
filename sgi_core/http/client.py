"""One careful HTTP client for OpenAI-compatible endpoints (embeddings and chat completions).

A key sent to another host, a reply that never ends or a decompression bomb must fail the same way
for every caller, so API embeddings and the judge both go through :class:`ApiClient`, whose notes
list what it guarantees.
"""

from __future__ import annotations

import email.utils
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from sgi_core.errors import SGIInputError
from sgi_core.http.reply_body import ACCEPTED_ENCODINGS, BoundedBody, PastDeadline, ReplyRefused
from sgi_core.jsonio import loads_json

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
#: Statuses that no retry fixes and that every other request would meet too.
_FATAL_STATUSES = frozenset({401, 403, 404, 405})
#: Largest reply read, after decompression (a batch of 256 embeddings of width 3,072 is about 17 MB).
DEFAULT_MAX_REPLY_BYTES = 64 * 2**20
#: How often a waiting request checks for a cancel or its deadline, in seconds.
POLL_SECONDS = 0.05


class ApiError(SGIInputError):
    """A request that failed for good.

    ``fatal`` is True when every other request to this endpoint would fail the same
    way (bad key, wrong URL, a redirect, nothing listening), so a batch should stop.
    """

    def __init__(self, message, *, fatal: bool = False, hint=None):
        self.fatal = fatal
        super().__init__(message, hint=hint)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry.

    Attempt ``k`` (0-based) that fails with a retryable error waits
    ``d / 2 + U(0, d / 2)`` seconds with ``d = min(max_delay, base_delay * 2**k)``
    (exponential backoff with jitter), or the server's ``Retry-After`` capped at
    ``max_delay``, then tries again, up to ``max_attempts`` attempts in all.
    """

    max_attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based) with no ``Retry-After``.

        Examples
        --------
        >>> RetryPolicy(base_delay=1.0, max_delay=3.0).backoff(5, random.Random(0)) <= 3.0
        True
        """
        delay = min(self.max_delay, self.base_delay * 2**attempt)
        return delay / 2 + rng.uniform(0, delay / 2)


def check_base_url(url: str) -> httpx.URL:
    """Parse and vet an endpoint base URL.

    Raises
    ------
    SGIInputError
        Not http(s), plain http on a non-loopback host, no host, or a user name or
        password inside the URL.

    Examples
    --------
    >>> str(check_base_url("http://127.0.0.1:8000/v1/"))
    'http://127.0.0.1:8000/v1'
    """
    try:
        parsed = httpx.URL(str(url).strip())
    except (httpx.InvalidURL, TypeError, ValueError):
        raise SGIInputError("the endpoint is not a valid URL",
                            hint="Give a URL like https://api.openai.com/v1") from None
    if parsed.scheme not in ("https", "http") or not parsed.host:
        got = f", not '{parsed.scheme}:'" if parsed.scheme else ""
        raise SGIInputError(f"the endpoint must be an https:// URL{got}", hint="Give a URL like https://api.openai.com/v1")
    if parsed.userinfo:
        raise SGIInputError(f"the endpoint URL for {parsed.host} holds a user name or password",
                            hint="Put the key in OPENAI_API_KEY instead")
    if parsed.scheme == "http" and parsed.host not in LOOPBACK_HOSTS:
        raise SGIInputError(f"plain http is allowed only on this machine, not for {parsed.host}",
                            hint="Use https://, or a loopback address (127.0.0.1, ::1, localhost)")
    return parsed.copy_with(path=parsed.path.rstrip("/") or "/", fragment=None)


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds asked for by a ``Retry-After`` header (delta-seconds or HTTP date), or None.

    Examples
    --------
    >>> retry_after_seconds("2"), retry_after_seconds("soon"), retry_after_seconds(None)
    (2.0, None, None)
    """
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class ApiClient:
    """POST JSON to an OpenAI-compatible endpoint, safely.

    Parameters
    ----------
    base_url : str
        E.g. ``https://api.openai.com/v1`` or ``http://127.0.0.1:8000/v1``; vetted by
        :func:`check_base_url`.
    api_key : str, optional
        Sent as ``Authorization: Bearer <key>`` (or in ``key_header``); none for local servers.
    key_header : str
        ``"Authorization"`` (bearer) or e.g. ``"api-key"`` (Azure, sent as is).
    timeout : float
        Seconds from sending a request to the last byte of its reply (a finite number > 0).
    max_reply_bytes : int
        Longest reply read, decompressed; a longer one fails without a retry.
    retry : RetryPolicy
    sleep : callable, optional
        ``sleep(seconds)`` between retries; injectable so tests need not wait. By default
        the wait ends early on :meth:`cancel`.
    seed : int, optional
        Seed of the jitter.

    Attributes
    ----------
    n_requests : int
        Requests sent so far, retries included (each may be billed).

    Notes
    -----
    What it guarantees, for every caller:

    - the base URL is ``https://``, or ``http://`` on a loopback host only (``127.0.0.1``,
      ``::1``, ``localhost``); any other scheme (``file://``, ``ftp://``) and URLs holding
      a user name or password are refused before anything is sent;
    - redirects are never followed: a 3xx reply is an error, so the key never reaches
      another host or port;
    - each request has one deadline, ``timeout`` seconds from sending to the last byte of the
      reply (a server dripping a byte at a time does not stretch it); 429, 5xx, timeouts and
      dropped connections are retried with exponential backoff and jitter, honouring
      ``Retry-After`` (capped);
    - a reply is read as a stream and refused past ``max_reply_bytes``, counted after
      decompression (gzip or deflate, decoded here in bounded steps, so a compressed bomb never
      expands in memory); other content encodings are not asked for and are refused;
    - :meth:`ApiClient.cancel` (or Ctrl-C in the calling thread) stops waiting at once: a
      request is waited for in steps of :data:`POLL_SECONDS`, never in one blocking read;
    - every failure is one :class:`ApiError` line (what happened, the endpoint's host, what
      to do), never a traceback; server error bodies are not echoed, since a server may
      repeat the key it was sent;
    - the key travels in one request header only and appears in no ``repr``, message or log.
    """

    def __init__(self, base_url: str, *, api_key: str | None = None, key_header: str = "Authorization",
                 timeout: float = 60.0, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
                 retry: RetryPolicy = RetryPolicy(), sleep: Callable[[float], None] | None = None,
                 seed: int | None = None):
        if not (isinstance(timeout, (int, float)) and 0 < timeout and math.isfinite(timeout)):
            raise SGIInputError(f"the request timeout must be a finite number of seconds > 0. Got {timeout} instead",
                                hint="Give e.g. --timeout 60")
        self.base_url = check_base_url(base_url)
        self.host = self.base_url.host
        self.timeout = float(timeout)
        self.max_reply_bytes = int(max_reply_bytes)
        self.retry = retry
        self._cancelled = threading.Event()
        self._sleep = sleep if sleep is not None else self._cancelled.wait
        self._rng = random.Random(seed)
        self._count_lock = threading.Lock()
        self.n_requests = 0
        self._headers = {"Accept-Encoding": ACCEPTED_ENCODINGS}
        if api_key:
            value = api_key if key_header.lower() != "authorization" else f"Bearer {api_key}"
            self._headers[key_header] = value
        self._http = httpx.Client(follow_redirects=False, timeout=self.timeout, trust_env=False)

    def __repr__(self) -> str:
        keyed = len(self._headers) > 1
        return f"ApiClient(base_url={str(self.base_url)!r}, key={'set' if keyed else 'none'})"

    def close(self) -> None:
        self._http.close()

    def cancel(self) -> None:
        """Stop: requests waiting now, and later ones until :meth:`resume`, fail at once (a fatal :class:`ApiError`)."""
        self._cancelled.set()

    def resume(self) -> None:
        """Accept requests again after :meth:`cancel`."""
        self._cancelled.clear()

    def url_for(self, path: str) -> httpx.URL:
        return self.base_url.copy_with(path=self.base_url.path.rstrip("/") + "/" + path.lstrip("/"))

    def post_json(self, path: str, body: dict, *, params: dict | None = None) -> dict:
        """POST ``body`` as JSON to ``base_url/path`` and return the JSON object replied.

        Raises
        ------
        ApiError
            After the last retry, at once for a failure that retrying cannot fix, or
            after :meth:`cancel`.
        """
        url = self.url_for(path)
        last_problem = ""
        for attempt in range(self.retry.max_attempts):
            wait = None
            try:
                status, headers, content = self._exchange(url, params, body)
            except PastDeadline:
                last_problem = f"no complete reply within {self.timeout:g} s"
            except ReplyRefused as err:
                raise ApiError(f"{self.host} {err}", hint="Check that the endpoint URL points to an "
                                                           "OpenAI-compatible API") from None
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
                last_problem = "the connection was dropped"
            except httpx.TimeoutException:
                last_problem = f"no complete reply within {self.timeout:g} s"
            except httpx.ConnectError as err:
                raise ApiError(f"cannot connect to {self.host}: {err or type(err).__name__}", fatal=True,
                               hint="Check the endpoint URL and that the server is running") from None
            except httpx.HTTPError as err:
                raise ApiError(f"request to {self.host} failed: {type(err).__name__}",
                               hint="Check the endpoint URL and the network") from None
            else:
                if status < 300:
                    return self._json_object(content)
                self._raise_unless_retryable(status, headers)
                last_problem = f"HTTP {status}"
                asked = retry_after_seconds(headers.get("retry-after"))
                if asked is not None:
                    wait = min(asked, self.retry.max_delay)
            if attempt + 1 < self.retry.max_attempts:
                self._sleep(wait if wait is not None else self.retry.backoff(attempt, self._rng))
        raise ApiError(f"{self.host} failed {self.retry.max_attempts} times ({last_problem})",
                       hint="The server is overloaded or down; try again later or lower the concurrency")

    def _exchange(self, url, params, body) -> tuple[int, httpx.Headers, bytes]:
        """One request, sent from a helper thread and waited for until the deadline or a cancel."""
        if self._cancelled.is_set():
            raise ApiError("the request was cancelled", fatal=True)
        with self._count_lock:
            self.n_requests += 1
        outcome: dict = {}
        done, abandoned = threading.Event(), threading.Event()

        def send() -> None:
            try:
                outcome["reply"] = self._send(url, params, body, abandoned)
            except BaseException as err:  # handed to the waiting thread, which raises it
                outcome["error"] = err
            finally:
                done.set()

        deadline = time.monotonic() + self.timeout
        # A daemon thread: one a server holds open cannot keep the program from exiting.
        threading.Thread(target=send, name=f"request to {self.host}", daemon=True).start()
        try:
            while not done.wait(POLL_SECONDS):
                if self._cancelled.is_set():
                    raise ApiError("the request was cancelled", fatal=True)
                if time.monotonic() >= deadline:
                    raise PastDeadline
        finally:
            abandoned.set()  # the helper stops at its next chunk; its read timeout ends a silent server
        if "error" in outcome:
            raise outcome["error"]
        return outcome["reply"]

    def _send(self, url, params, body, abandoned: threading.Event) -> tuple[int, httpx.Headers, bytes]:
        with self._http.stream("POST", url, params=params, json=body, headers=self._headers) as response:
            if response.status_code >= 300:
                return response.status_code, response.headers, b""  # error bodies are never read or echoed
            reply = BoundedBody(response.headers.get("content-encoding", ""), self.max_reply_bytes)
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_reply_bytes:
                raise ReplyRefused(f"announced a reply of {int(declared):,} bytes, more than {self.max_reply_bytes:,}")
            for raw in response.iter_raw():
                if abandoned.is_set():
                    break
                reply.feed(raw)
            return response.status_code, response.headers, reply.finish()

    def _raise_unless_retryable(self, status: int, headers: httpx.Headers) -> None:
        if 300 <= status < 400:
            target = httpx.URL(headers.get("location", ""))
            where = f" to {target.host}" if target.host else ""
            raise ApiError(f"{self.host} answered with a redirect (HTTP {status}){where}, which is not followed",
                           fatal=True, hint="Give the final endpoint URL directly")
        if status in _FATAL_STATUSES:
            what = "rejected the key" if status in (401, 403) else "has no such path or model"
            raise ApiError(f"{self.host} {what} (HTTP {status})", fatal=True,
                           hint="Check the key, the endpoint URL and the model name")
        if status != 429 and status < 500:
            raise ApiError(f"{self.host} refused the request (HTTP {status})",
                           hint="Check the model name and that the input fits the model")

    def _json_object(self, content: bytes) -> dict:
        hint = "Check that the endpoint URL points to an OpenAI-compatible API (often ending in /v1)"
        try:
            # Huge integers, 1e400 and deep nesting are refused, not raised as a crash.
            payload = loads_json(content, source=self.host, allow_duplicate_keys=True)
        except SGIInputError as err:
            raise ApiError(f"{self.host} answered with something other than a JSON object ({err.message})",
                           hint=hint) from None
        if not isinstance(payload, dict):
            raise ApiError(f"{self.host} answered with something other than a JSON object", hint=hint)
        return payload
