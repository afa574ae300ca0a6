"""Labels given by people, stored as an append-only JSON Lines file keyed by a stable row key.

One line per decision::

    {"key": "<row key>", "label": "grounded", "note": "", "annotator": "ann", "time": "2026-11-24T07:00:00+00:00"}

``label`` is ``grounded``, ``hallucinated``, ``unsure`` or ``retract``. A ``retract``
line undoes the latest decision on its key that is not undone yet, so undoing twice
goes back two decisions; otherwise the latest decision on a key wins. Nothing is ever
rewritten: every decision stays in the file, in the order it was given.

Appends are atomic between processes (two browser tabs, the app and a script): the
file is opened with ``O_APPEND``, locked with ``flock`` for the write, written in one
``write`` call and ``fsync``-ed. A writer killed in the middle of a line leaves a
damaged last line; the next append starts on a new line, and reading skips the
damaged line with a warning naming its line number, keeping every other decision.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import unicodedata
import warnings
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from sgi_core.columns import TEXT_COLUMNS
from sgi_core.errors import SGIInputError
from sgi_core.jsonio import loads_json

try:  # POSIX; elsewhere O_APPEND alone keeps single writes whole
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

#: Labels a person can give; ``unsure`` is stored but counts as unlabelled in every statistic.
DECISIONS = ("grounded", "hallucinated", "unsure")
#: The label of an undo line.
RETRACT = "retract"
#: The numeric label of each decision (1.0 grounded, 0.0 hallucinated, NaN unsure), as ``label`` columns hold it.
LABEL_VALUE = {"grounded": 1.0, "hallucinated": 0.0, "unsure": np.nan}
#: Environment variable naming the app's data folder (default ``~/.local/share/sgi_workbench``).
DATA_DIR_ENV = "SGI_DATA_DIR"
#: Hexadecimal digits kept of the SHA-256 row key (128 bits).
KEY_HEX_DIGITS = 32
#: Longest note or annotator name kept, in characters.
MAX_NOTE_CHARS = 2_000
#: Longest line read back, in bytes: a longer line is damaged, not a decision.
MAX_LINE_BYTES = 16_384

_KEY = re.compile(rf"[0-9a-f]{{{KEY_HEX_DIGITS}}}")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_FIELDS = ("key", "label", "note", "annotator", "time")


class AnnotationFileWarning(UserWarning):
    """A line of an annotations file that could not be read and was skipped."""


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

    Examples
    --------
    >>> annotations_path("/tmp/my data.parquet").name
    'my_data.jsonl'
    """
    stem = _UNSAFE_NAME.sub("_", Path(str(dataset)).stem).strip("._") or "data"
    return data_dir() / "annotations" / f"{stem}.jsonl"


def decision_line(key: str, label: str, *, note: str = "", annotator: str = "", time: str | None = None) -> bytes:
    """One decision as its JSON line (with the newline), after checking it.

    Raises
    ------
    SGIInputError
        A key that is not 32 lowercase hex digits, a label outside :data:`DECISIONS`
        and ``retract``, or a note or annotator name over :data:`MAX_NOTE_CHARS`.
    """
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise SGIInputError(f"a row key must be {KEY_HEX_DIGITS} lowercase hex digits; got {key!r}",
                            hint="Make keys with sgi_core.review.annotations.row_key")
    if label not in (*DECISIONS, RETRACT):
        raise SGIInputError(f"unknown decision {label!r}", hint=f"Use one of {', '.join((*DECISIONS, RETRACT))}")
    for name, text in (("note", note), ("annotator", annotator)):
        if len(str(text)) > MAX_NOTE_CHARS:
            raise SGIInputError(f"the {name} is {len(str(text)):,} characters long, over {MAX_NOTE_CHARS:,}",
                                hint=f"Shorten the {name}")
    record = {"key": key, "label": label, "note": str(note), "annotator": str(annotator),
              "time": time or datetime.now(timezone.utc).isoformat(timespec="milliseconds")}
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


@contextlib.contextmanager
def _locked_for_append(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # closing releases the lock


def append_lines(path: str | os.PathLike, lines: list[bytes]) -> None:
    """Append encoded decision lines to ``path`` in one locked, fsync-ed write (the file is made 0600).

    When a writer died in the middle of a line the file does not end with a newline;
    the write then starts with one, so the damaged line stays one damaged line.
    """
    if not lines:
        return
    with _locked_for_append(Path(path)) as fd:
        size = os.fstat(fd).st_size
        lead = b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""
        payload = lead + b"".join(lines)
        written = 0
        while written < len(payload):
            written += os.write(fd, payload[written:])
        os.fsync(fd)


@dataclass(frozen=True)
class AnnotationStore:
    """The annotations file of one data set; see the module's docstring for its format."""

    path: Path

    def add(self, key: str, label: str, *, note: str = "", annotator: str = "") -> None:
        """Append one decision (``label`` in :data:`DECISIONS`)."""
        if label == RETRACT:
            raise SGIInputError("undo with AnnotationStore.undo, not a 'retract' label")
        append_lines(self.path, [decision_line(key, label, note=note, annotator=annotator)])

    def undo(self, key: str, *, annotator: str = "") -> None:
        """Append a retraction: the latest decision on ``key`` not yet undone no longer counts."""
        append_lines(self.path, [decision_line(key, RETRACT, annotator=annotator)])

    def read(self) -> pd.DataFrame:
        """Every line as read by :func:`read_decisions` (empty when the file does not exist yet)."""
        if not self.path.exists():
            return empty_decisions()
        return read_decisions(self.path.read_bytes(), source=str(self.path))

    def current(self) -> pd.DataFrame:
        """The decision in force on each key (:func:`current_decisions`)."""
        return current_decisions(self.read())


def empty_decisions() -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series(dtype=object) for name in _FIELDS})


def _parse_line(text: bytes):
    """The record of one line, or the reason it is damaged."""
    try:
        record = loads_json(text, max_depth=4)
    except SGIInputError as err:
        return None, err.message[:160]
    if not isinstance(record, dict):
        return None, "not a JSON object"
    if not isinstance(record.get("key"), str) or not _KEY.fullmatch(record["key"]):
        return None, "no row key"
    if record.get("label") not in (*DECISIONS, RETRACT):
        return None, f"unknown decision {str(record.get('label'))[:40]!r}"
    return {name: "" if record.get(name) is None else str(record.get(name))[:MAX_NOTE_CHARS]
            for name in _FIELDS}, None


def read_decisions(raw: bytes, *, source: str = "<annotations>") -> pd.DataFrame:
    """Every decision line of an annotations file, in file order, with its 1-based ``line`` number.

    Each line is read by :func:`sgi_core.jsonio.loads_json`. A damaged line (cut
    short, not JSON, not UTF-8, no row key, unknown decision, longer than
    :data:`MAX_LINE_BYTES`) is skipped with an
    :class:`AnnotationFileWarning` naming the file and its line number; blank lines
    are ignored. The other lines are always kept.
    """
    records, lines = [], []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE_BYTES:
            problem = f"longer than {MAX_LINE_BYTES:,} bytes"
        else:
            record, problem = _parse_line(line)
        if problem:
            warnings.warn(f"{source}: line {number} skipped: {problem}", AnnotationFileWarning, stacklevel=2)
            continue
        records.append(record)
        lines.append(number)
    if not records:
        return empty_decisions().assign(line=pd.Series(dtype=np.int64))
    return pd.DataFrame.from_records(records, columns=list(_FIELDS)).assign(line=np.asarray(lines, dtype=np.int64))


def current_decisions(decisions: pd.DataFrame) -> pd.DataFrame:
    """The decision in force on each key: the latest one, after the retractions have undone theirs.

    Returns one row per key that still has a decision, with ``key``, ``label``,
    ``note``, ``annotator``, ``time`` and ``value`` (:data:`LABEL_VALUE`), in the
    order the keys were first decided.

    Examples
    --------
    >>> lines = pd.DataFrame({"key": ["a", "a", "a", "b", "b"],
    ...                       "label": ["grounded", "hallucinated", "retract", "unsure", "retract"],
    ...                       "note": "", "annotator": "", "time": ""})
    >>> current_decisions(lines)[["key", "label"]].values.tolist()
    [['a', 'grounded']]
    """
    stacks: dict[str, list[int]] = {}
    for position, (key, label) in enumerate(zip(decisions["key"].tolist(), decisions["label"].tolist())):
        stack = stacks.setdefault(key, [])
        if label == RETRACT:
            if stack:
                stack.pop()
        else:
            stack.append(position)
    kept = [stack[-1] for stack in stacks.values() if stack]
    current = decisions.iloc[kept][list(_FIELDS)].reset_index(drop=True)
    return current.assign(value=current["label"].map(LABEL_VALUE).astype(np.float64))
