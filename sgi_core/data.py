"""Reading and validating files of (question, context, response[, label]) triples.

Supported formats: CSV/TSV (separator and encoding detected: UTF-8, UTF-8 with BOM,
UTF-16 with BOM, else Latin-1), Parquet and JSON Lines. All cells are read as text,
so ``"NA"`` or ``"None"`` stays a string and ``"007"`` keeps its zeros. Extra columns
are kept untouched and rows keep their order; a row that cannot be scored is kept
and marked (see :class:`TripleTable`), never dropped.

Label convention: ``label`` is 1 for grounded / valid / faithful responses and 0 for
hallucinated ones; ``NaN`` means unlabelled.
"""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterable

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError

TEXT_COLUMNS = ("question", "context", "response")

#: Accepted column names for each role, in order of preference (compared lower-cased).
COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "question": ("question", "query", "q", "prompt", "user_input", "input", "instruction", "user_query"),
    "context": (
        "context", "knowledge", "passage", "passages", "documents", "document", "contexts",
        "retrieved_context", "retrieved_contexts", "reference", "evidence", "source_text", "c",
    ),
    "response": (
        "response", "answer", "output", "generation", "completion", "generated_answer",
        "prediction", "model_answer", "r",
    ),
    "label": (
        "label", "is_valid", "is_grounded", "grounded", "valid", "faithful",
        "hallucination", "hallucinated", "is_hallucinated", "is_hallucination", "target", "y",
    ),
}

#: Label column names whose 1/true/yes means hallucinated.
HALLUCINATION_LABEL_NAMES = frozenset({"hallucination", "hallucinated", "is_hallucinated", "is_hallucination"})

# Words that say which class they are, whatever the column's direction.
_GROUNDED_WORDS = frozenset({"grounded", "valid", "faithful", "correct", "supported", "right", "truthful"})
_HALLUCINATED_WORDS = frozenset(
    {"hallucinated", "hallucination", "invalid", "unfaithful", "incorrect", "unsupported", "wrong", "false_answer"}
)
# Words whose meaning depends on which class the column marks as positive.
_POSITIVE_WORDS = frozenset({"1", "1.0", "true", "yes", "y", "t", "pass"})
_NEGATIVE_WORDS = frozenset({"0", "0.0", "false", "no", "n", "f", "fail"})
_MISSING_WORDS = frozenset({"", "nan", "na", "n/a", "none", "null"})

_SEPARATORS = [",", ";", "\t", "|"]
_SNIFF_BYTES = 64 * 1024


@dataclass(frozen=True)
class ColumnMapping:
    """Which input column plays each role. ``label`` is ``None`` for unlabelled data."""

    question: str
    context: str
    response: str
    label: str | None = None

    def to_dict(self) -> dict:
        return {"question": self.question, "context": self.context, "response": self.response, "label": self.label}


@dataclass(frozen=True)
class TripleTable:
    """A validated table of triples, in input order.

    Attributes
    ----------
    frame : DataFrame
        All input columns untouched, plus ``question``, ``context``, ``response``
        (text; empty string where the cell was missing), ``label`` (1.0 grounded,
        0.0 hallucinated, NaN unlabelled) and ``input_row`` (1-based data row number
        in the file). Input columns whose names collide with these are renamed with
        an ``input_`` prefix.
    source : str
        File name or other origin, used in messages.
    mapping : ColumnMapping
    label_positive : {"grounded", "hallucinated"}
        What 1/true/yes meant in the input label column.
    unscorable : dict
        1-based row number -> reason, for rows with an empty question, context or
        response. They stay in ``frame`` and get no scores.
    warnings : list of str
    """

    frame: pd.DataFrame
    source: str
    mapping: ColumnMapping
    label_positive: str = "grounded"
    unscorable: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)

    @property
    def has_labels(self) -> bool:
        return bool(self.frame["label"].notna().any())

    @property
    def n_rows(self) -> int:
        return len(self.frame)


def _source_name(source) -> str:
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    return getattr(source, "name", None) or "<upload>"


def _read_bytes(source) -> bytes:
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise SGIInputError("file not found", source=str(path))
        return path.read_bytes()
    if isinstance(source, bytes):
        return source
    data = source.read()
    return data.encode("utf-8") if isinstance(data, str) else data


def decode_text(raw: bytes, source: str) -> str:
    """Decode file bytes: UTF-16/UTF-8 BOMs, then UTF-8, then Latin-1.

    Raises
    ------
    SGIInputError
        If the bytes look binary (NUL bytes without a UTF-16 BOM).
    """
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    if b"\x00" in raw[:_SNIFF_BYTES]:
        raise SGIInputError(
            "the file is binary, not text", source=source,
            hint="Upload a CSV, TSV, JSON Lines or Parquet file",
        )
    if raw.startswith(b"\xef\xbb\xbf"):
        return raw[3:].decode("utf-8")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _sniff_separator(text: str) -> str:
    sample = text[:_SNIFF_BYTES]
    try:
        return csv.Sniffer().sniff(sample, delimiters="".join(_SEPARATORS)).delimiter
    except csv.Error:
        first_line = sample.splitlines()[0] if sample else ""
        return max(_SEPARATORS, key=first_line.count)


def _check_columns(columns: Iterable, source: str) -> None:
    seen, dupes = set(), []
    for col in columns:
        if col in seen:
            dupes.append(col)
        seen.add(col)
    if dupes:
        raise SGIInputError(
            f"duplicate column names: {', '.join(map(str, sorted(set(dupes))))}",
            source=source, hint="Rename the columns so that each name appears once",
        )


def _read_csv_text(text: str, source: str) -> pd.DataFrame:
    if not text.strip():
        raise SGIInputError("the file is empty", source=source, hint="Upload a file with a header row and data rows")
    sep = _sniff_separator(text)
    header = next(csv.reader(io.StringIO(text), delimiter=sep))
    _check_columns([h.strip() for h in header], source)
    try:
        frame = pd.read_csv(
            io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_filter=False,
            engine="c", skipinitialspace=False,
        )
    except (pd.errors.ParserError, ValueError) as err:
        raise SGIInputError(f"cannot parse as CSV: {err}", source=source,
                            hint="Check quoting and that every row has the header's number of fields") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _read_jsonl_text(text: str, source: str) -> pd.DataFrame:
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise SGIInputError(f"invalid JSON: {err.msg}", source=source, rows=[number],
                                hint="Each line must be one JSON object") from None
        if not isinstance(record, dict):
            raise SGIInputError("a JSON Lines record must be an object", source=source, rows=[number])
        records.append(record)
    if not records:
        raise SGIInputError("the file is empty", source=source, hint="Upload a file with one JSON object per line")
    frame = pd.DataFrame.from_records(records)
    return frame.apply(lambda col: col.map(_cell_to_text))


def _cell_to_text(value) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _read_parquet_bytes(raw: bytes, source: str) -> pd.DataFrame:
    try:
        frame = pd.read_parquet(io.BytesIO(raw))
    except Exception as err:  # pyarrow raises several unrelated types for corrupt files
        raise SGIInputError(f"cannot read as Parquet: {err}", source=source) from None
    _check_columns(frame.columns, source)
    return frame


def read_table(source: str | os.PathLike | BinaryIO | bytes, *, name: str | None = None) -> pd.DataFrame:
    """Read a CSV, TSV, JSON Lines or Parquet file into a frame of raw columns.

    Parameters
    ----------
    source : path, bytes or binary file object
    name : str, optional
        File name used to pick the format and in messages (defaults to the path).

    Returns
    -------
    DataFrame
        Text columns as ``str`` (CSV/JSONL) with missing cells as ``""``.

    Raises
    ------
    SGIInputError
        Empty, binary or unparsable files, duplicate column names.
    """
    source_name = name or _source_name(source)
    raw = _read_bytes(source)
    suffix = Path(source_name).suffix.lower()
    if suffix in (".parquet", ".pq") or raw[:4] == b"PAR1":
        return _read_parquet_bytes(raw, source_name)
    text = decode_text(raw, source_name)
    if suffix in (".jsonl", ".ndjson") or (suffix == ".json" and text.lstrip().startswith("{")):
        return _read_jsonl_text(text, source_name)
    return _read_csv_text(text, source_name)


def detect_mapping(columns: Iterable[str]) -> dict[str, str | None]:
    """Guess which column plays each role from :data:`COLUMN_ALIASES`.

    Returns a dict role -> column name or ``None`` when no alias matched.
    """
    by_lower: dict[str, str] = {}
    for col in columns:
        by_lower.setdefault(str(col).strip().lower(), col)
    found: dict[str, str | None] = {}
    used: set[str] = set()
    for role in ("question", "context", "response", "label"):
        found[role] = None
        for alias in COLUMN_ALIASES[role]:
            col = by_lower.get(alias)
            if col is not None and col not in used:
                found[role] = col
                used.add(col)
                break
    return found


def default_label_positive(label_column: str | None) -> str:
    """``"hallucinated"`` if the column's name says 1 = hallucination, else ``"grounded"``."""
    if label_column and label_column.strip().lower() in HALLUCINATION_LABEL_NAMES:
        return "hallucinated"
    return "grounded"


def parse_labels(values: pd.Series, *, label_positive: str = "grounded", source: str = "<input>",
                 column: str = "label") -> np.ndarray:
    """Map label cells to 1.0 (grounded), 0.0 (hallucinated) or NaN (missing).

    Words naming a class (grounded/valid/faithful/correct vs hallucinated/invalid/
    unfaithful/incorrect) map to that class. Direction-free forms (1/0, true/false,
    yes/no) mean grounded when ``label_positive="grounded"`` and hallucinated when
    ``label_positive="hallucinated"``. Empty, ``NaN``, ``None`` and ``null`` are missing.

    Raises
    ------
    SGIInputError
        Naming the rows (1-based) that hold any other value.
    """
    if label_positive not in ("grounded", "hallucinated"):
        raise SGIInputError(
            f"label_positive must be 'grounded' or 'hallucinated'; got {label_positive!r}"
        )
    positive_value = 1.0 if label_positive == "grounded" else 0.0
    table = {w: 1.0 for w in _GROUNDED_WORDS}
    table.update({w: 0.0 for w in _HALLUCINATED_WORDS})
    table.update({w: positive_value for w in _POSITIVE_WORDS})
    table.update({w: 1.0 - positive_value for w in _NEGATIVE_WORDS})
    text = values.map(_cell_to_text).str.strip().str.lower()
    parsed = text.map(table)
    unknown = parsed.isna() & ~text.isin(_MISSING_WORDS)
    if unknown.any():
        rows = (np.flatnonzero(unknown.to_numpy()) + 1).tolist()
        examples = ", ".join(repr(v) for v in pd.unique(values[unknown].astype(str))[:5])
        raise SGIInputError(
            f"unknown label values {examples}", source=source, column=column, rows=rows,
            hint="Use 1/0, true/false, yes/no, grounded/hallucinated, valid/invalid or faithful/unfaithful",
        )
    return parsed.to_numpy(dtype=np.float64)


def validate_triples(
    frame: pd.DataFrame,
    *,
    mapping: ColumnMapping | dict | None = None,
    label_positive: str | None = None,
    source: str = "<input>",
) -> TripleTable:
    """Check a raw frame and build a :class:`TripleTable`.

    Parameters
    ----------
    frame : DataFrame
        Raw columns, e.g. from :func:`read_table`.
    mapping : ColumnMapping or dict, optional
        Role -> column. Missing roles are detected from :data:`COLUMN_ALIASES`.
    label_positive : {"grounded", "hallucinated"}, optional
        What 1/true/yes means in the label column; by default guessed from its name.
    source : str
        File name used in messages.

    Raises
    ------
    SGIInputError
        Missing required columns, a mapped column that does not exist, unknown labels.
    """
    _check_columns(frame.columns, source)
    given = mapping.to_dict() if isinstance(mapping, ColumnMapping) else dict(mapping or {})
    detected = detect_mapping(frame.columns)
    roles = {role: given.get(role) or detected[role] for role in ("question", "context", "response", "label")}
    if "label" in given and given["label"] is None:
        roles["label"] = None
    for role, col in roles.items():
        if col is not None and col not in frame.columns:
            raise SGIInputError(f"the {role} column '{col}' is not in the file", source=source,
                                hint=f"Columns present: {', '.join(map(str, frame.columns))}")
    missing = [role for role in TEXT_COLUMNS if roles[role] is None]
    if missing:
        raise SGIInputError(
            f"no column for {', '.join(missing)}", source=source,
            hint=(f"Columns present: {', '.join(map(str, frame.columns))}. Name them question, context, "
                  "response (and label), or map them explicitly"),
        )
    col_map = ColumnMapping(roles["question"], roles["context"], roles["response"], roles["label"])
    positive = label_positive or default_label_positive(col_map.label)

    out = frame.reset_index(drop=True).copy()
    reserved = {"question", "context", "response", "label", "input_row"}
    renames = {c: f"input_{c}" for c in out.columns if c in reserved and c not in col_map.to_dict().values()}
    out = out.rename(columns=renames)
    source_cols = {role: renames.get(col, col) for role, col in col_map.to_dict().items() if col is not None}

    unscorable: dict[int, str] = {}
    for role in TEXT_COLUMNS:
        text = out[source_cols[role]].map(_cell_to_text)
        blank = text.str.strip() == ""
        for row in np.flatnonzero(blank.to_numpy()) + 1:
            unscorable.setdefault(int(row), f"empty {role}")
        out[role] = text
    if col_map.label is not None:
        out["label"] = parse_labels(out[source_cols["label"]], label_positive=positive, source=source,
                                    column=col_map.label)
    else:
        out["label"] = np.nan
    out["input_row"] = np.arange(1, len(out) + 1)

    warnings = []
    if renames:
        warnings.append(f"input columns {', '.join(renames)} were renamed to {', '.join(renames.values())}")
    if unscorable:
        warnings.append(f"{len(unscorable)} row(s) have an empty question, context or response and get no score")
    labels = out["label"].to_numpy()
    if col_map.label is not None and np.isnan(labels).all():
        warnings.append(f"the label column '{col_map.label}' is empty in every row: treated as unlabelled")
    elif col_map.label is not None and len(np.unique(labels[~np.isnan(labels)])) == 1:
        warnings.append("only one label class is present: label-based metrics are undefined")
    return TripleTable(out, source, col_map, positive, unscorable, warnings)


def load_triples(
    source, *, name: str | None = None, mapping: ColumnMapping | dict | None = None,
    label_positive: str | None = None,
) -> TripleTable:
    """Read a file and validate it: :func:`read_table` then :func:`validate_triples`."""
    source_name = name or _source_name(source)
    frame = read_table(source, name=source_name)
    return validate_triples(frame, mapping=mapping, label_positive=label_positive, source=source_name)
