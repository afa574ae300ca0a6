"""Progress lines for long embedding runs: count, rate and time left, as tqdm shows them.

:class:`EmbeddingProgress` is a ``progress(done, total)`` callback (the protocol of
:data:`sgi_core.embedding.base.ProgressCallback`) that writes tqdm's meter to a stream:
on a terminal one line redrawn in place with a bar, elsewhere (a log, a pipe) a plain
line every few seconds. tqdm formats the line; the clock is injectable so the rate and
the estimate can be tested without waiting.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from tqdm import tqdm

_TERMINAL_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} WHAT [{elapsed}<{remaining}, {rate_fmt}]"
_LOG_FORMAT = "{desc}: {percentage:3.0f}% {n_fmt}/{total_fmt} WHAT [{elapsed}<{remaining}, {rate_fmt}]"


#: Seconds of work before a rate is shown: a first update a few microseconds in would read millions per second.
MIN_RATE_SECONDS = 0.5


def rate_line(done: int, total: int, elapsed: float, *, label: str, unit: str) -> str:
    """``label: done / total unit · rate · time left``, for a progress bar drawn elsewhere (the app).

    The rate is ``done / elapsed`` ``unit`` per second and the time left
    ``(total - done) / rate`` (written as tqdm writes a duration); both read "?"
    before the first item is done and before :data:`MIN_RATE_SECONDS` have passed.

    Examples
    --------
    >>> rate_line(256, 1024, 8.0, label="Embedding with minilm", unit="texts")
    'Embedding with minilm: 256 / 1,024 texts · 32.00 texts/s · 00:24 left'
    >>> rate_line(0, 10, 0.0, label="Judging", unit="rows")
    'Judging: 0 / 10 rows · ? rows/s · ? left'
    >>> rate_line(64, 1024, 0.000006, label="Embedding", unit="new texts")
    'Embedding: 64 / 1,024 new texts · ? new texts/s · ? left'
    """
    rate = done / elapsed if done and elapsed >= MIN_RATE_SECONDS else 0.0
    speed = f"{rate:,.2f} {unit}/s" if rate else f"? {unit}/s"
    left = tqdm.format_interval((total - done) / rate) if rate else "?"
    return f"{label}: {done:,} / {total:,} {unit} · {speed} · {left} left"


def _supports(stream: TextIO, text: str) -> bool:
    try:
        text.encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


class EmbeddingProgress:
    """Write ``label: done/total texts embedded`` with the rate and the time left.

    The rate is ``done / elapsed`` texts per second, where ``elapsed`` runs from the
    start of the current run; the time left is ``(total - done) / rate``. A run starts
    when the object is made and again after each finished one (``done >= total``), so
    one callback can follow a file scored chunk by chunk, each chunk a run of its own.
    A call with ``total == 0`` (every text came from the cache) writes nothing.

    Parameters
    ----------
    label : str
        Shown first, usually the model name.
    stream : text stream, optional
        Where to write (default ``sys.stderr``, looked up at each call).
    clock : callable, optional
        Seconds as a float, monotonic (default :func:`time.monotonic`).
    min_interval : float, optional
        Least seconds between two lines of one run; the last line of a run is always
        written. Default 0.5 on a terminal, 10 elsewhere.
    what : str, default "texts embedded"
        What is counted: its first word is the unit of the rate ("pairs scored": pairs/s).

    Examples
    --------
    >>> import io
    >>> ticks = iter([0.0, 10.0])
    >>> out = io.StringIO()
    >>> progress = EmbeddingProgress("minilm", stream=out, clock=lambda: next(ticks))
    >>> progress(512, 512)
    >>> out.getvalue()
    'minilm: 100% 512/512 texts embedded [00:10<00:00, 51.20 texts/s]\\n'
    """

    def __init__(self, label: str, *, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic,
                 min_interval: float | None = None, what: str = "texts embedded"):
        self.label = label
        self.what = what
        self._stream = stream
        self._clock = clock
        self._min_interval = min_interval
        self._start = clock()
        self._last_write = -float("inf")
        self._width = 0

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    def __call__(self, done: int, total: int) -> None:
        now = self._clock()
        finished = done >= total
        if total > 0:
            terminal = self.stream.isatty()
            interval = self._min_interval if self._min_interval is not None else (0.5 if terminal else 10.0)
            if finished or now - self._last_write >= interval:
                self._write(self.line(done, total, now - self._start, terminal=terminal), terminal, finished)
                self._last_write = now
        if finished:
            self._restart(now)

    def line(self, done: int, total: int, elapsed: float, *, terminal: bool = False) -> str:
        """The meter for ``done`` of ``total`` texts after ``elapsed`` seconds.

        Examples
        --------
        >>> EmbeddingProgress("minilm").line(256, 1024, 8.0)
        'minilm:  25% 256/1024 texts embedded [00:08<00:24, 32.00 texts/s]'
        >>> EmbeddingProgress("minilm").line(0, 1024, 0.0)
        'minilm:   0% 0/1024 texts embedded [00:00<?, ? texts/s]'
        """
        return tqdm.format_meter(
            done, total, elapsed, prefix=self.label, unit=f" {self.what.split()[0]}",
            bar_format=(_TERMINAL_FORMAT if terminal else _LOG_FORMAT).replace("WHAT", self.what),
            ascii=not _supports(self.stream, "\u2588"),
        )

    def _write(self, text: str, terminal: bool, finished: bool) -> None:
        if terminal:
            # Redraw in place; pad over the tail of a longer previous line.
            self.stream.write("\r" + text.ljust(self._width) + ("\n" if finished else ""))
            self._width = 0 if finished else len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def _restart(self, now: float) -> None:
        self._start = now
        self._last_write = -float("inf")
