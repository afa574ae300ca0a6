"""Labels given by people, stored as an append-only JSON Lines file keyed by a stable row key.

The lines are described in :mod:`sgi_core.review.decision_log`: one decision each, with
a random id, a ``retract`` line naming the id it undoes. Nothing is ever rewritten:
every decision stays in the file, in the order it was given.

Appends are atomic between processes (two browser tabs, the app and a script): the
file is opened with ``O_APPEND``, locked with ``flock`` for the write, written in one
``write`` call and ``fsync``-ed. A writer killed in the middle of a line leaves a
damaged last line; the next append starts on a new line, and reading skips the
damaged line with a warning naming its line number, keeping every other decision.

Reading takes in only the bytes appended since the last read: the parsed lines and the
decisions in force are kept per file, with the byte offset read up to, and checked
against the file's inode and size (a file replaced or shortened is read whole again).
The file is opened without following a symbolic link, must be a regular file, and is
read only up to the size ``--labels`` reads (:func:`sgi_core.io.reading.max_input_bytes`).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import unicodedata
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sgi_core.columns import TEXT_COLUMNS
from sgi_core.errors import SGIInputError
from sgi_core.io.reading import max_input_bytes
from sgi_core.review.decision_log import (
    DECISIONS,
    FIELDS,
    ID_HEX_DIGITS,
    KEY_HEX_DIGITS,
    LABEL_VALUE,
    MAX_LINE_BYTES,
    MAX_NOTE_CHARS,
    RETRACT,
    AnnotationFileWarning,
    DecisionLog,
    current_decisions,
    decision_line,
    new_decision_id,
    parse_line,
    read_decisions,
)
from sgi_core.review.store_files import append_locked, fcntl, opened, read_range, read_regular_file, too_large

__all__ = ["DECISIONS", "FIELDS", "ID_HEX_DIGITS", "KEY_HEX_DIGITS", "LABEL_VALUE", "MAX_LINE_BYTES",
           "MAX_NOTE_CHARS", "RETRACT", "AnnotationFileWarning", "AnnotationStore", "annotations_path",
           "append_lines", "current_decisions", "data_dir", "decision_line", "new_decision_id", "normalise_text",
           "read_decisions", "row_key", "row_keys"]

#: Environment variable naming the app's data folder (default ``~/.local/share/sgi_workbench``).
DATA_DIR_ENV = "SGI_DATA_DIR"
#: Longest file name most file systems take, in bytes; a longer annotations file name is shortened with a hash.
NAME_MAX_BYTES = 255
#: Characters of a long data set name kept in its annotations file name, before the hash.
SHORT_STEM_CHARS = 200
#: Annotations files whose parsed lines are kept in memory at once.
MAX_CACHED_FILES = 16
#: What messages call the file.
WHAT = "annotations file"

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_SHARED = fcntl.LOCK_SH if fcntl is not None else None


def normalise_text(text) -> str:
    """The text a row key hashes: Unicode NFC, every run of whitespace one space, no leading or trailing space.

    Whitespace is what :meth:`str.isspace` calls so (Unicode whitespace, the no-break
    space included): the text is split on it and joined with single spaces.

    Case and punctuation are kept. A missing cell (None, NaN) is the empty string.

    Examples
    --------
    >>> normalise_text("  Paris\\r\\n is\\tthe capital. ")
    'Paris is the capital.'
    """
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return ""
    return " ".join(unicodedata.normalize("NFC", str(text)).split())


def row_key(question, context, response) -> str:
    """A stable key of one row: the first 32 hex digits of SHA-256 over its normalised texts.

    ``sha256(len(q) ":" q "\\n" len(c) ":" c "\\n" len(r) ":" r)`` in UTF-8, with
    ``q``, ``c``, ``r`` the :func:`normalise_text` of the question, context and
    response; the length prefixes keep ``("a b", "c")`` and ``("a", "b c")`` apart.
    The same texts give the same key in any file format and any row order; the
    label and every other column play no part.

    Examples
    --------
    >>> row_key("Who?", "Ann wrote it.", "Ann.") == row_key(" Who? ", "Ann  wrote it.", "Ann.\\n")
    True
    >>> row_key("Who?", "Ann wrote it.", "Ann.") == row_key("who?", "Ann wrote it.", "Ann.")
    False
    """
    parts = [normalise_text(text) for text in (question, context, response)]
    payload = "\n".join(f"{len(part)}:{part}" for part in parts)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:KEY_HEX_DIGITS]


def row_keys(frame: pd.DataFrame) -> np.ndarray:
    """:func:`row_key` of every row of a frame with ``question``, ``context`` and ``response`` columns.

    Raises
    ------
    SGIInputError
        When one of the three columns is missing.
    """
    missing = [c for c in TEXT_COLUMNS if c not in frame.columns]
    if missing:
        raise SGIInputError(f"row keys need the columns question, context, response; missing {', '.join(missing)}",
                            hint="Read the file with sgi_core.io.triples.load_triples, which maps the columns")
    columns = [frame[c].tolist() for c in TEXT_COLUMNS]
    return np.array([row_key(q, c, r) for q, c, r in zip(*columns)], dtype=object)


def data_dir() -> Path:
    """``$SGI_DATA_DIR``, else ``~/.local/share/sgi_workbench``: where the app keeps what users make."""
    env = os.environ.get(DATA_DIR_ENV)
    return Path(env).expanduser() if env else Path.home() / ".local" / "share" / "sgi_workbench"


def annotations_path(dataset: str) -> Path:
    """The annotations file of a data set named ``dataset``: ``<data_dir>/annotations/<stem>.jsonl``.

    The file name's stem is used (``qa.csv`` and ``qa.parquet`` share one file), with
    characters other than letters, digits, ``.``, ``_`` and ``-`` replaced by ``_``.
    A stem too long for a file name (over :data:`NAME_MAX_BYTES` bytes with the
    suffix) keeps its first :data:`SHORT_STEM_CHARS` characters and a hash of the whole.

    Examples
    --------
    >>> annotations_path("/tmp/my data.parquet").name
    'my_data.jsonl'
    >>> len(annotations_path("q" * 251 + ".csv").name)
    223
    """
    stem = _UNSAFE_NAME.sub("_", Path(str(dataset)).stem).strip("._") or "data"
    if len(stem) + len(".jsonl") > NAME_MAX_BYTES:  # the stem is ASCII: one byte a character
        stem = f"{stem[:SHORT_STEM_CHARS]}-{hashlib.sha256(stem.encode()).hexdigest()[:16]}"
    return data_dir() / "annotations" / f"{stem}.jsonl"


def append_lines(path: str | os.PathLike, lines: list[bytes]) -> None:
    """Append encoded decision lines to ``path`` in one locked, fsync-ed write (the file is made 0600).

    When a writer died in the middle of a line the file does not end with a newline;
    the write then starts with one, so the damaged line stays one damaged line.

    Raises
    ------
    SGIInputError
        A symbolic link or something other than a regular file at ``path``, or a file
        that would grow past :func:`~sgi_core.io.reading.max_input_bytes`.
    """
    if lines:
        append_locked(path, b"".join(lines), limit=max_input_bytes(), what=WHAT)


@dataclass
class _Read:
    """How far one file has been read: its identity, the bytes taken in and what they said."""

    device: int
    inode: int
    log: DecisionLog
    offset: int = 0
    #: The last line taken in had no newline yet (a line a writer other than this module left unterminated).
    mid_line: bool = False
    #: The last bytes taken in, to tell a file rewritten in place (or a new file on a reused inode) from a longer one.
    seen_end: bytes = b""


_reads: OrderedDict[str, _Read] = OrderedDict()
_reads_lock = threading.Lock()


def _catch_up(entry: _Read, fd: int, size: int) -> tuple[int, str] | None:
    """Take in the bytes appended since ``entry.offset``; returns a damaged unfinished last line, left for later."""
    chunk = read_range(fd, entry.offset, size)
    if entry.mid_line and chunk:
        entry.offset, entry.mid_line, chunk = entry.offset + 1, False, chunk[1:]
    end = chunk.rfind(b"\n") + 1
    entry.log.feed(chunk[:end])
    entry.offset += end
    tail = chunk[end:]
    if not tail.strip():
        return None
    _, problem = parse_line(tail)
    if problem:  # perhaps a line still being written by a writer that takes no lock: read again next time
        return entry.log.n_lines + 1, problem
    entry.log.feed(tail)
    entry.offset, entry.mid_line = entry.offset + len(tail), True
    return None


def _still_valid(entry: _Read | None, fd: int, info: os.stat_result) -> bool:
    """Whether the file is the one ``entry`` read, only longer: same inode, not shorter, the same last bytes read."""
    if entry is None or (entry.device, entry.inode) != (info.st_dev, info.st_ino) or info.st_size < entry.offset:
        return False
    if read_range(fd, entry.offset - len(entry.seen_end), entry.offset) != entry.seen_end:
        return False
    return not entry.mid_line or read_range(fd, entry.offset, entry.offset + 1) in (b"", b"\n")


def _read_file(path: Path, what: str) -> tuple[pd.DataFrame | DecisionLog | None, str | None]:
    """The decisions (``what="decisions"``), the decisions in force (``"current"``) or the log (``"log"``) of a
    file, and its warning."""
    limit = max_input_bytes()
    with opened(path, os.O_RDONLY, what=WHAT, lock=_SHARED) as fd:
        info = os.fstat(fd)
        if info.st_size > limit:
            raise too_large(info.st_size, limit, what=WHAT, source=str(path))
        with _reads_lock:
            entry = _reads.pop(str(path), None)
            if not _still_valid(entry, fd, info):
                entry = _Read(info.st_dev, info.st_ino, DecisionLog(str(path)))
            damaged_tail = _catch_up(entry, fd, info.st_size)
            entry.seen_end = read_range(fd, max(entry.offset - 64, 0), entry.offset)
            _reads[str(path)] = entry
            while len(_reads) > MAX_CACHED_FILES:
                _reads.popitem(last=False)
            if what == "log":
                return entry.log, entry.log.warning(damaged_tail)
            frame = entry.log.decisions() if what == "decisions" else entry.log.current()
            return frame, entry.log.warning(damaged_tail)


@dataclass(frozen=True)
class AnnotationStore:
    """The annotations file of one data set; see the module's docstring for its format."""

    path: Path

    def add(self, key: str, label: str, *, note: str = "", annotator: str = "", queue: str = "",
            design: dict | None = None) -> str:
        """Append one decision (``label`` in :data:`DECISIONS`) from the Review ``queue``; returns its id
        (:meth:`retract`).

        ``design``: the labelling design the key was drawn under, with its inclusion probability
        (:func:`~sgi_core.review.decision_log.check_design`).
        """
        if label == RETRACT:
            raise SGIInputError("undo with AnnotationStore.retract, not a 'retract' label")
        decision_id = new_decision_id()
        append_lines(self.path, [decision_line(key, label, note=note, annotator=annotator, decision_id=decision_id,
                                               queue=queue, design=design)])
        return decision_id

    def retract(self, key: str, decision_id: str, *, annotator: str = "") -> None:
        """Append a retraction of the decision ``decision_id`` on ``key``: it, and no other, stops counting."""
        append_lines(self.path, [decision_line(key, RETRACT, annotator=annotator, retracts=decision_id)])

    def _read(self, what: str) -> pd.DataFrame | None:
        try:
            frame, message = _read_file(self.path, what)
        except FileNotFoundError:
            return None
        if message:
            warnings.warn(message, AnnotationFileWarning, stacklevel=3)
        return frame

    def read(self) -> pd.DataFrame:
        """Every line as :func:`read_decisions` reads it (no line when the file does not exist yet).

        Damaged lines are skipped with one :class:`AnnotationFileWarning`.

        Raises
        ------
        SGIInputError
            The path is a symbolic link or not a regular file, or the file is larger
            than :func:`~sgi_core.io.reading.max_input_bytes`.
        """
        frame = self._read("decisions")
        return DecisionLog().decisions() if frame is None else frame

    def current(self) -> pd.DataFrame:
        """The decision in force on each key (:func:`current_decisions`); raises as :meth:`read` does."""
        frame = self._read("current")
        return DecisionLog().current() if frame is None else frame

    def log(self) -> DecisionLog:
        """The file's :class:`DecisionLog`, caught up with the file (empty when it does not exist yet).

        The same object comes back while the file only grows, holding every line read so far,
        so that a reader can take in only the records added since it last looked
        (:meth:`DecisionLog.keys_since`); a file replaced or shortened gives a new one. It is
        shared: read it, never feed it. Raises as :meth:`read` does.
        """
        log = self._read("log")
        return DecisionLog(str(self.path)) if log is None else log

    def raw(self) -> bytes:
        """The file's bytes (empty when it does not exist yet), for an export; raises as :meth:`read` does."""
        if not os.path.lexists(self.path):
            return b""
        return read_regular_file(self.path, limit=max_input_bytes(), what=WHAT)
