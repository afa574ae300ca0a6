"""Validating tables of (question, context, response[, label]) triples.

:func:`load_triples` reads a file (see :mod:`sgi_core.reading`) and hands it to
:func:`validate_triples`, which finds the question, context, response and label
columns, normalises the labels and builds a :class:`TripleTable`. Extra columns are
kept untouched and rows keep their order; a row that cannot be scored is kept and
marked, never dropped. Input that is valid but degenerate (context equal to the
question, one label class, very short responses, ...) is accepted with a warning.

Label convention: ``label`` is 1 for grounded / valid / faithful responses and 0 for
hallucinated ones; ``NaN`` means unlabelled.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError, format_rows
from sgi_core.results import JsonResult
from sgi_core.reading import cell_to_text, check_unique_columns, read_table, source_name

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

#: Columns the library adds (``theta_*``, ``sgi``, ``sgi_status`` in scoring); input
#: columns that already bear these names are kept under an ``input_`` prefix.
ADDED_COLUMNS = (
    "question", "context", "response", "label", "input_row", "theta_qc", "theta_rq", "theta_rc", "sgi", "sgi_status",
)

#: The paper's protocol drops responses shorter than this; SGI is not validated on them.
SHORT_RESPONSE_CHARS = 20

_NUMBER = r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"


@dataclass(frozen=True)
class ColumnMapping(JsonResult):
    """Which input column plays each role. ``label`` is ``None`` for unlabelled data."""

    question: str
    context: str
    response: str
    label: str | None = None


@dataclass(frozen=True)
class TripleTable:
    """A validated table of triples, in input order.

    Attributes
    ----------
    frame : DataFrame
        All input columns untouched, plus ``question``, ``context``, ``response``
        (text; empty string where the cell was missing), ``label`` (1.0 grounded,
        0.0 hallucinated, NaN unlabelled) and ``input_row`` (1-based data row number
        in the file). Input columns named like a column the library adds (see
        :data:`ADDED_COLUMNS`) are renamed with an ``input_`` prefix.
    source : str
        File name or other origin, used in messages.
    mapping : ColumnMapping
    label_positive : {"grounded", "hallucinated"}
        What 1/true/yes meant in the input label column.
    unscorable : dict
        1-based position in ``frame`` -> reason, for rows with an empty question,
        context or response. They stay in ``frame`` and get no scores.
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
                 column: str = "label", first_row: int = 1) -> np.ndarray:
    """Map label cells to 1.0 (grounded), 0.0 (hallucinated) or NaN (missing).

    Words naming a class (grounded/valid/faithful/correct vs hallucinated/invalid/
    unfaithful/incorrect) map to that class. Direction-free forms (1/0, true/false,
    yes/no) mean grounded when ``label_positive="grounded"`` and hallucinated when
    ``label_positive="hallucinated"``. Empty, ``NaN``, ``None`` and ``null`` are missing.
    Case and surrounding spaces are ignored; forms may be mixed in one column.

    Parameters
    ----------
    first_row : int
        Row number of ``values[0]`` in messages (1 = first data row of the file).

    Raises
    ------
    SGIInputError
        Naming the rows that hold any other value.
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
    # A label column holds a handful of distinct cells: parse each once.
    codes, uniques = pd.factorize(values, sort=False)
    words = [cell_to_text(value).strip().lower() for value in uniques]
    value_of_code = np.array([table.get(word, np.nan) for word in words] + [np.nan])  # code -1: missing cell
    known = np.array([word in table or word in _MISSING_WORDS for word in words] + [True])
    unknown = ~known[codes]
    if unknown.any():
        examples = ", ".join(repr(cell_to_text(uniques[code])) for code in pd.unique(codes[unknown])[:5])
        raise SGIInputError(
            f"unknown label values {examples}", source=source, column=column,
            rows=(np.flatnonzero(unknown) + first_row).tolist(),
            hint="Use 1/0, true/false, yes/no, grounded/hallucinated, valid/invalid or faithful/unfaithful",
        )
    return value_of_code[codes]


def _as_text(column: pd.Series) -> pd.Series:
    """The column as ``str`` cells, missing cells as ``""``."""
    if not (pd.api.types.is_string_dtype(column) and column.notna().all()):
        column = column.map(cell_to_text)
    # The "str" dtype keeps the per-row checks vectorised (Arrow-backed where pandas has it).
    return column.astype("str")


def _resolve_mapping(frame: pd.DataFrame, mapping: ColumnMapping | dict | None, source: str) -> ColumnMapping:
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
    return ColumnMapping(roles["question"], roles["context"], roles["response"], roles["label"])


def _prefixed_names(columns, mapped) -> dict:
    """``input_``-prefixed names for input columns that clash with :data:`ADDED_COLUMNS`."""
    taken = set(map(str, columns)) | set(ADDED_COLUMNS)
    renames = {}
    for column in columns:
        if column in ADDED_COLUMNS and column not in mapped:
            new = f"input_{column}"
            while new in taken:
                new = f"input_{new}"
            taken.add(new)
            renames[column] = new
    return renames


#: The warning for a file whose every context equals its question.
CONTEXT_IS_QUESTION_EVERYWHERE = (
    "the context equals the question in every row (the paper's TruthfulQA setup): SGI is ~1 whatever "
    "the response, so it cannot separate grounded from hallucinated responses; give each row its own context"
)


def _text_warnings(out: pd.DataFrame, mapping: ColumnMapping, scorable: np.ndarray, first_row: int,
                   whole_file: bool) -> list[str]:
    warnings = []
    normalised = {}
    for role in TEXT_COLUMNS:
        text = out[role].str.strip()
        looks_missing = (text.str.lower().isin(_MISSING_WORDS - {""})).to_numpy()
        if looks_missing.any():
            warnings.append(
                f"the {role} reads like a missing value ('NaN', 'None', ...) in "
                f"{format_rows((np.flatnonzero(looks_missing) + first_row).tolist())}: it is scored as that text; "
                "leave the cell empty to mark it missing"
            )
        filled = text[scorable]
        if len(filled) and filled.str.fullmatch(_NUMBER).all():
            warnings.append(f"every {role} in column '{getattr(mapping, role)}' is a number: "
                            f"check that the right column is used as the {role}")
        # An explicit ASCII class rather than \s keeps pandas on its vectorised Arrow path (30x faster).
        normalised[role] = text.str.replace(r"[ \t\r\n\f\v]+", " ", regex=True).str.lower().to_numpy(dtype=object)

    same_cq = (normalised["context"] == normalised["question"]) & scorable
    if whole_file and scorable.any() and same_cq[scorable].all():
        warnings.append(CONTEXT_IS_QUESTION_EVERYWHERE)
    elif same_cq.any():
        warnings.append(f"the context equals the question in {format_rows(np.flatnonzero(same_cq) + first_row)}: "
                        "SGI is ~1 there whatever the response")
    for same, what in (
        ((normalised["response"] == normalised["context"]) & scorable,
         "the response equals the context in {rows}: theta_rc is 0, so SGI is unbounded (about 1e8 x theta_rq) there"),
        ((normalised["response"] == normalised["question"]) & scorable,
         "the response repeats the question in {rows}: theta_rq is 0, so SGI is 0 there"),
        ((out["response"].str.strip().str.len().to_numpy() < SHORT_RESPONSE_CHARS) & scorable,
         f"the response is shorter than {SHORT_RESPONSE_CHARS} characters in {{rows}}: it is scored, but the paper "
         "dropped such responses and did not validate SGI on them"),
    ):
        if same.any():
            warnings.append(what.format(rows=format_rows((np.flatnonzero(same) + first_row).tolist())))
    return warnings


def label_class_warnings(n_grounded: int, n_hallucinated: int, label_column: str | None) -> list[str]:
    """Warnings about the label classes of a whole file: none labelled, or only one class."""
    if label_column is None:
        return []
    if n_grounded == 0 and n_hallucinated == 0:
        return [f"the label column '{label_column}' is empty in every row: treated as unlabelled"]
    if n_grounded == 0 or n_hallucinated == 0:
        only = "grounded" if n_hallucinated == 0 else "hallucinated"
        return [f"only one label class is present (every labelled row is {only}): scores are computed, "
                "but label-based metrics (AUROC, effect size, calibration, thresholds) are undefined"]
    return []


def _label_warnings(labels: np.ndarray, mapping: ColumnMapping, first_row: int, whole_file: bool) -> list[str]:
    if mapping.label is None:
        return []
    missing = np.isnan(labels)
    warnings = []
    if missing.any() and not missing.all():
        warnings.append(f"the label is missing in {format_rows((np.flatnonzero(missing) + first_row).tolist())}: "
                        "those rows count as unlabelled")
    if whole_file:
        warnings += label_class_warnings(int((labels == 1.0).sum()), int((labels == 0.0).sum()), mapping.label)
    return warnings


def validate_triples(
    frame: pd.DataFrame,
    *,
    mapping: ColumnMapping | dict | None = None,
    label_positive: str | None = None,
    source: str = "<input>",
    first_row: int = 1,
    whole_file: bool = True,
) -> TripleTable:
    """Check a raw frame and build a :class:`TripleTable`.

    Parameters
    ----------
    frame : DataFrame
        Raw columns, e.g. from :func:`~sgi_core.reading.read_table`.
    mapping : ColumnMapping or dict, optional
        Role -> column. Missing roles are detected from :data:`COLUMN_ALIASES`.
    label_positive : {"grounded", "hallucinated"}, optional
        What 1/true/yes means in the label column; by default guessed from its name.
    source : str
        File name used in messages.
    first_row : int
        Row number of ``frame``'s first row in the file, for ``input_row`` and
        messages (a chunk of a larger file starts past 1).
    whole_file : bool, default True
        False for a chunk of a larger file: warnings that speak of every row (one
        label class, no labels, context = question everywhere) are left to the
        caller, who sees the whole file (:func:`label_class_warnings`).

    Raises
    ------
    SGIInputError
        Duplicate or missing required columns, a mapped column that does not
        exist, unknown labels.
    """
    check_unique_columns(frame.columns, source)
    col_map = _resolve_mapping(frame, mapping, source)
    positive = label_positive or default_label_positive(col_map.label)

    renames = _prefixed_names(frame.columns, set(col_map.to_dict().values()))
    out = frame.reset_index(drop=True).rename(columns=renames)
    source_cols = {role: renames.get(col, col) for role, col in col_map.to_dict().items() if col is not None}

    unscorable: dict[int, str] = {}
    for role in TEXT_COLUMNS:
        text = _as_text(out[source_cols[role]])
        for position in np.flatnonzero((text.str.strip() == "").to_numpy()) + 1:
            unscorable.setdefault(int(position), f"empty {role}")
        out[role] = text
    if col_map.label is not None:
        out["label"] = parse_labels(out[source_cols["label"]], label_positive=positive, source=source,
                                    column=col_map.label, first_row=first_row)
    else:
        out["label"] = np.nan
    out["input_row"] = np.arange(first_row, first_row + len(out))

    scorable = np.ones(len(out), dtype=bool)
    scorable[np.asarray(list(unscorable), dtype=np.int64) - 1] = False
    warnings = []
    if renames:
        warnings.append(f"input columns {', '.join(renames)} were renamed to {', '.join(renames.values())}")
    if unscorable:
        rows = sorted(position + first_row - 1 for position in unscorable)
        warnings.append(f"the question, context or response is empty in {format_rows(rows)}: "
                        "those rows are kept with no score")
    warnings += _text_warnings(out, col_map, scorable, first_row, whole_file)
    warnings += _label_warnings(out["label"].to_numpy(), col_map, first_row, whole_file)
    return TripleTable(out, source, col_map, positive, unscorable, warnings)


def load_triples(
    source: str | os.PathLike | BinaryIO | bytes, *, name: str | None = None,
    mapping: ColumnMapping | dict | None = None, label_positive: str | None = None,
) -> TripleTable:
    """Read a file and validate it: :func:`~sgi_core.reading.read_table` then :func:`validate_triples`."""
    name = name or source_name(source)
    frame = read_table(source, name=name)
    return validate_triples(frame, mapping=mapping, label_positive=label_positive, source=name)
