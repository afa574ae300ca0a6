"""Which input column plays each role (question, context, response, label), and the input columns renamed.

:func:`detect_mapping` guesses the roles from :data:`COLUMN_ALIASES`;
:func:`resolve_mapping` adds what the user chose and checks the result;
:func:`input_renames` names the input columns kept under an ``input_`` prefix because
the library adds columns of their names (:data:`sgi_core.columns.ADDED_COLUMNS`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from sgi_core.columns import ADDED_COLUMNS, ROLES, TEXT_COLUMNS, input_name
from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult

#: Accepted column names for each role, in order of preference (compared lower-cased). They include
#: the names RAG evaluation tools write: RAGAS (``user_input``, ``retrieved_contexts``, ``response``;
#: its ``reference`` is a reference answer, never a context, and stays an extra column) and DeepEval
#: (``input``, ``retrieval_context``, ``actual_output``). What the model retrieved comes first, so
#: DeepEval's ``retrieval_context`` is the context beside its ``context`` (the ideal one, kept as
#: ``input_context``). List cells become passages (:mod:`sgi_core.io.passages`).
COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "question": ("question", "query", "q", "prompt", "user_input", "input", "instruction", "user_query"),
    "context": (
        "retrieval_context", "retrieved_contexts", "retrieved_context", "context", "knowledge", "passage",
        "passages", "documents", "document", "contexts", "evidence", "source_text", "c",
    ),
    "response": (
        "response", "answer", "output", "actual_output", "generation", "completion", "generated_answer",
        "prediction", "model_answer", "r",
    ),
    "label": (
        "label", "is_valid", "is_grounded", "grounded", "valid", "faithful",
        "hallucination", "hallucinated", "is_hallucinated", "is_hallucination", "target", "y",
    ),
}


@dataclass(frozen=True)
class ColumnMapping(JsonResult):
    """Which input column plays each role. ``label`` is ``None`` for unlabelled data."""

    question: str
    context: str
    response: str
    label: str | None = None


def detect_mapping(columns: Iterable[str]) -> dict[str, str | None]:
    """Guess which column plays each role from :data:`COLUMN_ALIASES`.

    Returns a dict role -> column name or ``None`` when no alias matched.
    """
    by_lower: dict[str, str] = {}
    for col in columns:
        by_lower.setdefault(str(col).strip().lower(), col)
    found: dict[str, str | None] = {}
    used: set[str] = set()
    for role in ROLES:
        found[role] = None
        for alias in COLUMN_ALIASES[role]:
            col = by_lower.get(alias)
            if col is not None and col not in used:
                found[role] = col
                used.add(col)
                break
    return found


def resolve_mapping(frame: pd.DataFrame, mapping: ColumnMapping | dict | None, source: str) -> ColumnMapping:
    """The column of each role: those given in ``mapping``, the rest detected (:func:`detect_mapping`).

    Raises
    ------
    SGIInputError
        A given column that is not in the frame, or no column for a text role.
    """
    given = mapping.to_dict() if isinstance(mapping, ColumnMapping) else dict(mapping or {})
    detected = detect_mapping(frame.columns)
    roles = {role: given.get(role) or detected[role] for role in ROLES}
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


def input_renames(columns, mapped) -> dict:
    """``input_``-prefixed names for input columns that clash with :data:`ADDED_COLUMNS`.

    A mapped text column keeps its name (its cells become the role's text as they
    are); ``label`` is renamed even when mapped, since its cells are rewritten.
    """
    taken = set(map(str, columns)) | set(ADDED_COLUMNS)
    renames = {}
    for column in columns:
        if column in ADDED_COLUMNS and (column not in mapped or column == "label"):
            renames[column] = input_name(column, taken)
    return renames
