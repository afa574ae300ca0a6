"""A window of traces pulled from a Phoenix server, one row per trace.

Two steps through the documented REST API, ``GET /v1/projects/{project}/spans``: the root
spans that started in the window (``parent_id=null``, ``start_time`` inclusive, ``end_time``
exclusive), then every span of those traces by ``trace_id``, :data:`TRACE_IDS_PER_REQUEST`
at a time; each listing is read to its last cursor page. A trace's spans are found by its id
whatever their own times, so a trace that straddles the window's end is whole. The rows are
made by the trace export reader (:func:`sgi_core.io.convert.registry.trace_conversion`), the one
path of live and exported spans, and keep ``trace_id`` and the root's ``span_id``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING
from urllib.parse import quote

from sgi_core.errors import SGIInputError

if TYPE_CHECKING:
    import pandas as pd

    from sgi_core.tracing.connection import Connection

#: The most spans Phoenix returns in one page.
PAGE_LIMIT = 1000
#: Trace ids asked for in one listing: about 4 KB of query string.
TRACE_IDS_PER_REQUEST = 100


def window_time(text: str | None, option: str) -> datetime | None:
    """An ISO 8601 time as an aware UTC datetime; a time without an offset is read as UTC.

    Raises
    ------
    SGIInputError
        Text that is not an ISO 8601 time, naming the option.

    Examples
    --------
    >>> window_time("2026-01-01T10:00:00+02:00", "--since").isoformat()
    '2026-01-01T08:00:00+00:00'
    >>> window_time("2026-01-01", "--until").isoformat()
    '2026-01-01T00:00:00+00:00'
    """
    if text is None or not str(text).strip():
        return None
    try:
        when = datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
    except ValueError:
        raise SGIInputError(f"{option} '{str(text)[:60]}' is not an ISO 8601 time",
                            hint="Give e.g. 2026-05-14T10:00:00Z or 2026-05-14") from None
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)


@dataclass(frozen=True)
class PulledWindow:
    """The traces of a window, as rows.

    Attributes
    ----------
    frame : DataFrame
        One row per trace: ``trace_id``, ``question``, ``context``, ``response``, ``span_id``
        (the root's) and the root's other fields.
    project : str
    since, until : str or None
        The window, ISO 8601 UTC; None for an open end.
    n_traces : int
        Traces whose root started in the window.
    n_spans : int
        Spans read, roots included.
    without_context : tuple of str
        Trace ids with no retriever step (their rows have an empty context and are not scored).
    warnings : tuple of str
        The reader's notes on gaps, each naming its traces.
    seconds : float
        Time the pull took.
    """

    frame: pd.DataFrame
    project: str
    since: str | None
    until: str | None
    n_traces: int
    n_spans: int
    without_context: tuple[str, ...]
    warnings: tuple[str, ...]
    seconds: float

    def to_dict(self) -> dict:
        """Everything but the frame, as JSON-ready data."""
        return {"project": self.project, "since": self.since, "until": self.until, "n_traces": self.n_traces,
                "n_rows": len(self.frame), "n_spans": self.n_spans, "without_context": list(self.without_context),
                "warnings": list(self.warnings), "seconds": self.seconds}


def listing(connection: Connection, path: str, params: dict) -> list[dict]:
    """Every item of a cursor-paged listing (``{"data": [...], "next_cursor": ...}``), pages of :data:`PAGE_LIMIT`.

    Raises
    ------
    SGIInputError
        A page that is not a listing, or a cursor the server repeats (it would loop).
    """
    items, cursor, seen = [], None, set()
    while True:
        page = connection.get(path, params={**params, "limit": PAGE_LIMIT, **({"cursor": cursor} if cursor else {})})
        if not isinstance(page.get("data"), list):
            raise SGIInputError(f"{path} answered without a data list", hint="Is the URL a Phoenix server's?")
        items += page["data"]
        cursor = page.get("next_cursor")
        if not cursor:
            return items
        if cursor in seen:
            raise SGIInputError(f"{path} gave the cursor {cursor!r} twice after {len(items):,} items",
                                hint="The server's listing loops; report it to its maintainers")
        seen.add(cursor)


def _span_ids(span: dict) -> tuple[str, str]:
    context = span.get("context") if isinstance(span, dict) else None
    if not isinstance(context, dict) or not all(isinstance(context.get(k), str) for k in ("trace_id", "span_id")):
        raise SGIInputError("the server listed a span without context.trace_id and context.span_id",
                            hint="Is the URL a Phoenix server's?")
    return context["trace_id"], context["span_id"]


def pull_phoenix(connection: Connection, project: str, *, since: datetime | None = None,
                 until: datetime | None = None, progress: Callable[[int, int], None] | None = None) -> PulledWindow:
    """Every trace of ``project`` whose root span started in ``[since, until)``, one row each.

    Parameters
    ----------
    connection : Connection
    project : str
        The project's name (or id).
    since, until : datetime, optional
        Aware datetimes (:func:`window_time`); None leaves that end open.
    progress : callable, optional
        ``progress(traces_read, traces_in_window)`` after each batch of traces.

    Raises
    ------
    SGIInputError
        ``until`` not after ``since``, an unknown project, or a refusal.

    Notes
    -----
    The roots listed first are read with the other spans, so every trace of the window has
    its row even if the server drops its other spans in between.
    """
    from sgi_core.io.convert.registry import trace_conversion
    from sgi_core.io.convert.traces import TRACE_ID_COLUMN

    if since is not None and until is not None and until <= since:
        raise SGIInputError(f"the window ends ({until.isoformat()}) before it starts ({since.isoformat()})",
                            hint="Give --until after --since")
    started = time.monotonic()
    path = f"/v1/projects/{quote(project, safe='')}/spans"
    window = {key: when.isoformat() for key, when in (("start_time", since), ("end_time", until)) if when}
    roots = listing(connection, path, {**window, "parent_id": "null"})
    trace_ids = list(dict.fromkeys(_span_ids(root)[0] for root in roots))
    spans = {_span_ids(root)[1]: root for root in roots}
    for start in range(0, len(trace_ids), TRACE_IDS_PER_REQUEST):
        chunk = trace_ids[start:start + TRACE_IDS_PER_REQUEST]
        for span in listing(connection, path, {"trace_id": chunk}):
            spans.setdefault(_span_ids(span)[1], span)
        if progress is not None:
            progress(start + len(chunk), len(trace_ids))
    name = f"{connection.host}/{project}"
    conversion = trace_conversion("phoenix", [(1, {"data": list(spans.values()), "next_cursor": None})], name)
    frame = conversion.frame
    without = tuple(frame.loc[frame["context"].map(len) == 0, TRACE_ID_COLUMN]) if len(frame) else ()
    return PulledWindow(frame, project, window.get("start_time"), window.get("end_time"), len(trace_ids), len(spans),
                        without, conversion.warnings, time.monotonic() - started)
