"""The lines of an annotations file: one decision each, written checked, read back line by line.

One line per decision::

    {"key": "<row key>", "label": "grounded", "note": "", "annotator": "ann",
     "time": "2026-11-24T07:00:00+00:00", "id": "<16 hex digits>"}

A decision on a key of a design's sample (the Review page's ``active`` queue) carries the design
(:data:`~sgi_core.columns.DESIGN_COLUMNS`): the label keeps the probability its key was drawn
with. Lines without them (older files, other queues) read with those fields empty.

``label`` is ``grounded``, ``hallucinated``, ``unsure`` or ``retract``. Each decision
carries a random ``id``; a ``retract`` line written today names the decision it undoes
(``"retracts": "<id>"``), so an undo takes back one decision and nothing else, whoever
decided the same row since. Files written before ids existed still read as they did:
a decision without an ``id`` is a decision, and a ``retract`` line without
``retracts`` undoes the latest decision on its key not undone yet. Otherwise the
latest decision on a key wins.

:class:`DecisionLog` reads a file's lines as they come, keeping the decision in force
on every key up to date, so that a file that only grows is never parsed twice.
"""

from __future__ import annotations

import json
import re
import secrets
import warnings
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from sgi_core.columns import DESIGN_COLUMNS
from sgi_core.errors import SGIInputError
from sgi_core.jsonio import loads_json

#: Labels a person can give; ``unsure`` is stored but counts as unlabelled in every statistic.
DECISIONS = ("grounded", "hallucinated", "unsure")
#: The label of an undo line.
RETRACT = "retract"
#: The numeric label of each decision (1.0 grounded, 0.0 hallucinated, NaN unsure), as ``label`` columns hold it.
LABEL_VALUE = {"grounded": 1.0, "hallucinated": 0.0, "unsure": np.nan}
#: Hexadecimal digits kept of the SHA-256 row key (128 bits).
KEY_HEX_DIGITS = 32
#: Hexadecimal digits of a decision's random id (64 bits).
ID_HEX_DIGITS = 16
#: Longest note or annotator name kept, in characters.
MAX_NOTE_CHARS = 2_000
#: Longest line read back, in bytes: a longer line is damaged, not a decision.
MAX_LINE_BYTES = 16_384
#: Damaged lines named in the one warning about them; the others are counted.
DAMAGED_NAMED = 5

KEY_PATTERN = re.compile(rf"[0-9a-f]{{{KEY_HEX_DIGITS}}}")
_ID = re.compile(rf"[0-9a-f]{{{ID_HEX_DIGITS}}}")
#: What each decision holds, in the order of the frames returned.
FIELDS = ("key", "label", "note", "annotator", "time", "id", "queue", *DESIGN_COLUMNS)
_TEXT_FIELDS = ("note", "annotator", "time", "queue", *DESIGN_COLUMNS)
#: Queues whose order is a seeded random permutation: the labels they give are a random sample of the rows, as a
#: prediction-powered estimate assumes. A decision with no queue recorded (older files, imports) is of unknown origin.
RANDOM_QUEUES = ("random",)


def is_targeted(queue: str) -> bool:
    """Whether a decision came from a queue that is not a random order (most uncertain, disagreement, ...).

    Examples
    --------
    >>> is_targeted("uncertain"), is_targeted("random"), is_targeted("")
    (True, False, False)
    """
    return bool(queue) and queue not in RANDOM_QUEUES


class AnnotationFileWarning(UserWarning):
    """Lines of an annotations file that could not be read and were skipped."""


def new_decision_id() -> str:
    """A random id for one decision: :data:`ID_HEX_DIGITS` lowercase hex digits."""
    return secrets.token_hex(ID_HEX_DIGITS // 2)


def decision_line(key: str, label: str, *, note: str = "", annotator: str = "", time: str | None = None,
                  decision_id: str | None = None, retracts: str | None = None, queue: str = "",
                  design: dict | None = None) -> bytes:
    """One decision as its JSON line (with the newline), after checking it.

    ``decision_id`` is made by :func:`new_decision_id` when not given; ``retracts``,
    for a ``retract`` line only, is the id of the decision it undoes; ``queue`` names the
    Review queue the row came from (``random``, ``uncertain``, ...; empty when unknown);
    ``design``, for a key of a labelling design's sample, maps each of
    :data:`~sgi_core.columns.DESIGN_COLUMNS` to its value (:func:`check_design`).

    Raises
    ------
    SGIInputError
        A key that is not 32 lowercase hex digits, a label outside :data:`DECISIONS`
        and ``retract``, an id that is not 16 lowercase hex digits, a retraction naming
        no decision, or a note or annotator name over :data:`MAX_NOTE_CHARS`.
    """
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        raise SGIInputError(f"a row key must be {KEY_HEX_DIGITS} lowercase hex digits; got {key!r}",
                            hint="Make keys with sgi_core.review.annotations.row_key")
    if label not in (*DECISIONS, RETRACT):
        raise SGIInputError(f"unknown decision {label!r}", hint=f"Use one of {', '.join((*DECISIONS, RETRACT))}")
    decision_id = new_decision_id() if decision_id is None else decision_id
    for name, value in (("decision id", decision_id), ("retracted id", retracts)):
        if value is not None and not (isinstance(value, str) and _ID.fullmatch(value)):
            raise SGIInputError(f"a {name} must be {ID_HEX_DIGITS} lowercase hex digits; got {value!r}")
    if (label == RETRACT) != (retracts is not None):
        raise SGIInputError("a retract line names the id of the decision it undoes, and only a retract line does")
    for name, text in (("note", note), ("annotator", annotator)):
        if len(str(text)) > MAX_NOTE_CHARS:
            raise SGIInputError(f"the {name} is {len(str(text)):,} characters long, over {MAX_NOTE_CHARS:,}",
                                hint=f"Shorten the {name}")
    record = {"key": key, "label": label, "note": str(note), "annotator": str(annotator),
              "time": time or datetime.now(timezone.utc).isoformat(timespec="milliseconds"), "id": decision_id}
    if queue:
        record["queue"] = str(queue)[:MAX_NOTE_CHARS]
    if design is not None:
        if label == RETRACT:
            raise SGIInputError("a retract line carries no design: it undoes the decision that did")
        record.update(check_design(design))
    if retracts is not None:
        record["retracts"] = retracts
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


def check_design(design: dict) -> dict:
    """A decision's design fields, checked: JSON values that read back to the same numbers.

    Raises
    ------
    SGIInputError
        Fields other than :data:`~sgi_core.columns.DESIGN_COLUMNS`, or values out of range.

    Examples
    --------
    >>> check_design({"inclusion_probability": 0.25, "design": "active", "predictor": "p", "seed": 3, "budget": 40})
    {'inclusion_probability': 0.25, 'design': 'active', 'predictor': 'p', 'seed': 3, 'budget': 40.0}
    """
    if not isinstance(design, dict) or set(design) != set(DESIGN_COLUMNS):
        raise SGIInputError(f"a decision's design must give exactly {', '.join(DESIGN_COLUMNS)}; got {design!r}")
    pi, seed, budget = design["inclusion_probability"], design["seed"], design["budget"]
    number = (float, int, np.floating, np.integer)
    for wrong, what in ((not (isinstance(pi, number) and 0.0 < float(pi) <= 1.0), "inclusion_probability in (0, 1]"),
                        (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0, "seed >= 0"),
                        (not (isinstance(budget, number) and float(budget) > 0), "budget > 0"),
                        (design["design"] not in ("uniform", "active"), "design uniform or active")):
        if wrong:
            raise SGIInputError(f"a decision's design needs {what}; got {design!r}")
    return {"inclusion_probability": float(pi), "design": design["design"], "predictor": str(design["predictor"]),
            "seed": int(seed), "budget": float(budget)}


def parse_line(text: bytes):
    """``(record, None)`` for a decision line (:data:`FIELDS`, ``retracts``), ``(None, reason)`` for a damaged one."""
    if len(text) > MAX_LINE_BYTES:
        return None, f"longer than {MAX_LINE_BYTES:,} bytes"
    try:
        record = loads_json(text, max_depth=4)
    except SGIInputError as err:
        return None, err.message[:160]
    if not isinstance(record, dict):
        return None, "not a JSON object"
    if not isinstance(record.get("key"), str) or not KEY_PATTERN.fullmatch(record["key"]):
        return None, "no row key"
    label = record.get("label")
    if label not in (*DECISIONS, RETRACT):
        return None, f"unknown decision {str(label)[:40]!r}"
    retracts = record.get("retracts")
    if retracts is not None and (label != RETRACT or not isinstance(retracts, str) or not _ID.fullmatch(retracts)):
        return None, "a retraction naming no decision id"
    decision_id = record.get("id")
    parsed = {"key": record["key"], "label": label,
              # An id that is not one of ours is no id: the decision still counts, only nothing can retract it by id.
              "id": decision_id if isinstance(decision_id, str) and _ID.fullmatch(decision_id) else "",
              "retracts": retracts or ""}
    parsed.update({name: "" if record.get(name) is None else str(record.get(name))[:MAX_NOTE_CHARS]
                   for name in _TEXT_FIELDS})
    return parsed, None


class DecisionLog:
    """The lines of one annotations file read so far, and the decision in force on each key.

    Feed it the file's bytes in order (:meth:`feed`); it parses only what it is given.
    Damaged lines (cut short, not JSON, not UTF-8, no row key, unknown decision, longer
    than :data:`MAX_LINE_BYTES`) are skipped and counted, the first few named, for one
    :class:`AnnotationFileWarning` (:meth:`warn`); blank lines are ignored.

    Examples
    --------
    >>> log = DecisionLog("a.jsonl")
    >>> key = "0" * 32
    >>> log.feed(decision_line(key, "grounded", decision_id="a" * 16) + decision_line(key, "hallucinated"))
    >>> log.feed(decision_line(key, "retract", retracts="a" * 16))
    >>> log.current()["label"].tolist(), log.n_lines
    (['hallucinated'], 3)
    """

    def __init__(self, source: str = "<annotations>") -> None:
        self.source = source
        self.n_lines = 0
        self.n_damaged = 0
        self.damaged: list[tuple[int, str]] = []
        self._columns: dict[str, list] = {name: [] for name in (*FIELDS, "retracts", "line")}
        # Per key, the positions of its decisions still in force, oldest first; keys in the order first seen.
        self._stacks: dict[str, list[int]] = {}
        self._frames: dict[str, pd.DataFrame] = {}
        self._arrays: dict[str, np.ndarray] = {}
        # Records taken in whole, counted last in add(): a reader in another thread sees no record half taken in.
        self.n_records = 0

    def feed(self, raw: bytes) -> None:
        """Read ``raw``: whole lines, numbered on from the lines read so far (a last line may lack its newline)."""
        if not raw:
            return
        lines = raw.split(b"\n")
        if raw.endswith(b"\n"):
            lines.pop()
        for line in lines:
            self.n_lines += 1
            if line.strip():
                self.add(*parse_line(line))
        self._frames.clear()

    def add(self, record: dict | None, problem: str | None) -> None:
        """Take one parsed line (numbered :attr:`n_lines`): a record, or the reason it is damaged."""
        if problem:
            self.n_damaged += 1
            if len(self.damaged) < DAMAGED_NAMED:
                self.damaged.append((self.n_lines, problem))
            return
        columns = self._columns
        position = len(columns["key"])
        for name, value in record.items():
            columns[name].append(value)
        columns["line"].append(self.n_lines)
        stack = self._stacks.setdefault(record["key"], [])
        if record["label"] != RETRACT:
            stack.append(position)
        elif not record["retracts"]:
            if stack:  # a retraction written before ids existed: the latest decision on the key
                stack.pop()
        else:
            ids = columns["id"]
            for index in range(len(stack) - 1, -1, -1):
                if ids[stack[index]] == record["retracts"]:
                    del stack[index]
                    break
        self.n_records += 1

    def keys_since(self, start: int) -> list[str]:
        """The keys of records ``start`` to :attr:`n_records` (0-based; retractions counted, damaged lines not)."""
        return self._columns["key"][start:self.n_records]

    def in_force(self, key: str) -> tuple[str, str] | None:
        """``(label, queue)`` of the decision in force on ``key``; None when it has none."""
        stack = self._stacks.get(key)
        if not stack:
            return None
        return self._columns["label"][stack[-1]], self._columns["queue"][stack[-1]]

    def _array(self, name: str) -> np.ndarray:
        """A column as an object array, extended by the lines read since it was last asked for."""
        values, cached = self._columns[name], self._arrays.get(name)
        done = 0 if cached is None else len(cached)
        if done < len(values):
            tail = np.empty(len(values) - done, dtype=object)
            tail[:] = values[done:]
            cached = tail if cached is None else np.concatenate([cached, tail])
            self._arrays[name] = cached
        return cached if cached is not None else np.empty(0, dtype=object)

    def decisions(self) -> pd.DataFrame:
        """Every line read, in file order: :data:`FIELDS`, ``retracts`` and the 1-based ``line`` number."""
        if "all" not in self._frames:
            frame = pd.DataFrame({name: self._array(name) for name in (*FIELDS, "retracts")}, dtype=object)
            frame["line"] = np.asarray(self._columns["line"], dtype=np.int64)
            self._frames["all"] = frame
        return self._frames["all"].copy()

    def current(self) -> pd.DataFrame:
        """The decision in force on each key: :data:`FIELDS` and ``value`` (:data:`LABEL_VALUE`), keys as first seen."""
        if "current" not in self._frames:
            kept = np.fromiter((stack[-1] for stack in self._stacks.values() if stack), dtype=np.int64)
            frame = pd.DataFrame({name: self._array(name)[kept] for name in FIELDS}, dtype=object)
            label = frame["label"].to_numpy()
            frame["value"] = np.where(label == "grounded", LABEL_VALUE["grounded"],
                                      np.where(label == "hallucinated", LABEL_VALUE["hallucinated"], np.nan))
            self._frames["current"] = frame
        return self._frames["current"].copy()

    def warning(self, extra: tuple[int, str] | None = None) -> str | None:
        """The one message about the damaged lines (and ``extra``, a damaged line not taken in); None without any."""
        damaged = [*self.damaged, *([extra] if extra else [])]
        count = self.n_damaged + bool(extra)
        if not count:
            return None
        if count == 1:
            return f"{self.source}: line {damaged[0][0]} skipped: {damaged[0][1]}"
        named = ", ".join(f"line {number} ({problem})" for number, problem in damaged[:DAMAGED_NAMED])
        more = f" and {count - DAMAGED_NAMED:,} more" if count > DAMAGED_NAMED else ""
        return f"{self.source}: {count:,} damaged lines skipped, every other decision kept: {named}{more}"

    def warn(self, extra: tuple[int, str] | None = None, *, stacklevel: int = 3) -> None:
        """Issue :meth:`warning` as one :class:`AnnotationFileWarning`."""
        message = self.warning(extra)
        if message:
            warnings.warn(message, AnnotationFileWarning, stacklevel=stacklevel)


def read_decisions(raw: bytes, *, source: str = "<annotations>") -> pd.DataFrame:
    """Every decision line of an annotations file, in file order, with its 1-based ``line`` number.

    Damaged lines are skipped with one :class:`AnnotationFileWarning` naming the file,
    how many were skipped and the first few line numbers; the other lines are kept.
    """
    log = DecisionLog(source)
    log.feed(raw)
    log.warn()
    return log.decisions()


def current_decisions(decisions: pd.DataFrame) -> pd.DataFrame:
    """The decision in force on each key: the latest one, after the retractions have undone theirs.

    ``decisions`` holds the lines of a file (:func:`read_decisions`); ``id`` and
    ``retracts`` may be missing (files written before ids existed). Returns one row
    per key that still has a decision, with :data:`FIELDS` and ``value``
    (:data:`LABEL_VALUE`), in the order the keys were first decided.

    Examples
    --------
    >>> lines = pd.DataFrame({"key": ["a", "a", "a", "b", "b"],
    ...                       "label": ["grounded", "hallucinated", "retract", "unsure", "retract"],
    ...                       "note": "", "annotator": "", "time": ""})
    >>> current_decisions(lines)[["key", "label"]].values.tolist()
    [['a', 'grounded']]
    """
    log = DecisionLog()
    filled = {name: decisions[name].tolist() if name in decisions else [""] * len(decisions)
              for name in (*FIELDS, "retracts")}
    for values in zip(*filled.values()):
        log.add(dict(zip(filled, values)), None)
    return log.current()
