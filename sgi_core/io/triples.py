"""Validating tables of (question, context, response[, label]) triples.

:func:`load_triples` reads a file (see :mod:`sgi_core.io.reading`) and hands it to
:func:`validate_triples`, which finds the question, context, response and label
columns, normalises the labels and builds a :class:`TripleTable`. Extra columns are
kept untouched (an input ``label`` column as ``input_label``) and rows keep their order;
a row that cannot be scored is kept and marked, never dropped. A context column of lists
becomes passages, joined by a blank line (:mod:`sgi_core.io.passages`). Input that is
valid but degenerate (context equal to the question, one label class, very short
responses, ...) is accepted with a warning.

Label convention: ``label`` is 1 for grounded / valid / faithful responses and 0 for
hallucinated ones; ``NaN`` means unlabelled.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import numpy as np
import pandas as pd

from sgi_core.columns import INPUT_ROW, ROLES, TEXT_COLUMNS
from sgi_core.errors import format_rows
from sgi_core.frames import take_rows
from sgi_core.io.labels import (
    MISSING_WORDS,
    default_label_positive,
    label_warnings,
    parse_labels,
    rewritten_label_warning,
    unmapped_label_warnings,
)
from sgi_core.io.limits import InputLimits, is_scored
from sgi_core.io.mapping import ColumnMapping, input_renames, resolve_mapping
from sgi_core.io.passages import context_passages
from sgi_core.io.reading import cell_to_text, read_table, source_name
from sgi_core.io.table_formats import PLAIN_NUMBER, check_unique_columns

#: The paper's protocol drops responses shorter than this; SGI is not validated on them.
SHORT_RESPONSE_CHARS = 20


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
        :data:`~sgi_core.columns.ADDED_COLUMNS`), the label column ``label`` among them, are renamed
        with an ``input_`` prefix.
    source : str
        File name or other origin, used in messages.
    mapping : ColumnMapping
    label_positive : {"grounded", "hallucinated"}
        What 1/true/yes meant in the input label column.
    unscorable : dict
        1-based position in ``frame`` -> reason, for rows with an empty question,
        context or response. They stay in ``frame`` and get no scores.
    warnings : list of str
    renamed : dict
        Input column -> its name in ``frame``, for the input columns renamed with an
        ``input_`` prefix (``{"label": "input_label"}`` when the label column is ``label``).
    passages : tuple of tuple of str, or None
        The context's passages, one tuple per row of ``frame``, when the context column
        holds lists (:mod:`sgi_core.io.passages`): a list cell gives its strings, a
        text cell ``(text,)``, an empty cell ``()``. ``frame["context"]`` is then
        ``"\\n\\n".join(passages[i])``, and an input column of another name keeps its cells. ``None`` when
        every context is plain text: each row is then one passage, its context.
        Blank passages (empty or only whitespace) are left out.
    blank_passages : int
        How many blank passages the context lists held (left out; a warning names their rows).
    """

    frame: pd.DataFrame
    source: str
    mapping: ColumnMapping
    label_positive: str = "grounded"
    unscorable: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    renamed: dict = field(default_factory=dict)
    passages: tuple | None = None
    blank_passages: int = 0

    @property
    def has_labels(self) -> bool:
        return bool(self.frame["label"].notna().any())

    @property
    def n_rows(self) -> int:
        return len(self.frame)

    @property
    def unmapped_columns(self) -> list[str]:
        """Input columns, in order, that play no role: not a role, not ``input_row``, not mapped or renamed.

        These are what a user can pick as a group, a detector score or a judge input.
        """
        taken = {*ROLES, INPUT_ROW, *(c for c in self.mapping.to_dict().values() if c), *self.renamed.values()}
        return [column for column in self.frame.columns if column not in taken]

    def subset(self, positions) -> TripleTable:
        """The rows at 0-based ``positions`` of :attr:`frame`, as a table of their own (order kept).

        ``unscorable`` is renumbered to the new positions and ``passages`` taken at them;
        ``input_row`` still names file rows.
        Warnings and the count of blank passages are left out: they speak of the whole table.

        Examples
        --------
        >>> table = validate_triples(pd.DataFrame({"question": ["q1", "q2", "q3"], "context": ["c", "c", "c"],
        ...                                        "response": ["r1", "", "r3"]}))
        >>> part = table.subset([1, 2])
        >>> part.frame["input_row"].tolist(), part.unscorable
        ([2, 3], {1: 'empty response'})
        """
        positions = np.asarray(positions, dtype=np.int64)
        new_position = {int(old): new for new, old in enumerate(positions, start=1)}
        unscorable = {new_position[old - 1]: reason for old, reason in self.unscorable.items()
                      if old - 1 in new_position}
        passages = None if self.passages is None else tuple(self.passages[int(p)] for p in positions)
        return TripleTable(take_rows(self.frame, positions).reset_index(drop=True), self.source, self.mapping,
                           self.label_positive, unscorable, [], self.renamed, passages)

    def chunks(self, chunk_rows: int) -> Iterator[TripleTable]:
        """Consecutive sub-tables of at most ``chunk_rows`` rows (:meth:`subset`), in order."""
        for start in range(0, self.n_rows, chunk_rows):
            yield self.subset(np.arange(start, min(start + chunk_rows, self.n_rows)))


def as_text(column: pd.Series) -> pd.Series:
    """The column as ``str`` cells, missing cells as ``""``."""
    if not (pd.api.types.is_string_dtype(column) and column.notna().all()):
        column = column.map(cell_to_text)
    # The "str" dtype keeps the per-row checks vectorised (Arrow-backed where pandas has it).
    return column.astype("str")


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
        looks_missing = (text.str.lower().isin(MISSING_WORDS - {""})).to_numpy()
        if looks_missing.any():
            warnings.append(
                f"the {role} reads like a missing value ('NaN', 'None', ...) in "
                f"{format_rows((np.flatnonzero(looks_missing) + first_row).tolist())}: it is scored as that text; "
                "leave the cell empty to mark it missing"
            )
        filled = text[scorable]
        if len(filled) and filled.str.fullmatch(PLAIN_NUMBER.pattern).all():
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


def validate_triples(
    frame: pd.DataFrame,
    *,
    mapping: ColumnMapping | dict | None = None,
    label_positive: str | None = None,
    source: str = "<input>",
    first_row: int = 1,
    whole_file: bool = True,
    label_map: dict | None = None,
) -> TripleTable:
    """Check a raw frame and build a :class:`TripleTable`.

    Parameters
    ----------
    frame : DataFrame
        Raw columns, e.g. from :func:`~sgi_core.io.reading.read_table`.
    mapping : ColumnMapping or dict, optional
        Role -> column. Missing roles are detected from :data:`~sgi_core.io.mapping.COLUMN_ALIASES`.
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
    label_map : dict, optional
        Label value -> grounded / hallucinated / unlabelled (:func:`~sgi_core.io.labels.parse_labels`).

    Raises
    ------
    SGIInputError
        Duplicate or missing required columns, a mapped column that does not
        exist, unknown labels.
    """
    check_unique_columns(frame.columns, source)
    col_map = resolve_mapping(frame, mapping, source)
    positive = label_positive or default_label_positive(col_map.label)

    renames = input_renames(frame.columns, set(col_map.to_dict().values()))
    out = frame.reset_index(drop=True).rename(columns=renames)
    source_cols = {role: renames.get(col, col) for role, col in col_map.to_dict().items() if col is not None}

    found, passage_warnings = context_passages(out[source_cols["context"]], source=source,
                                               column_name=col_map.context, first_row=first_row)
    unscorable: dict[int, str] = {}
    for role in TEXT_COLUMNS:
        cells = out[source_cols[role]]
        text = as_text(pd.Series(found.text, index=out.index) if role == "context" and found else cells)
        for position in np.flatnonzero((text.str.strip() == "").to_numpy()) + 1:
            unscorable.setdefault(int(position), f"empty {role}")
        out[role] = text
    if col_map.label is not None:
        out["label"] = parse_labels(out[source_cols["label"]], label_positive=positive, source=source,
                                    column=col_map.label, first_row=first_row, label_map=label_map)
    else:
        out["label"] = np.nan
    out[INPUT_ROW] = np.arange(first_row, first_row + len(out))

    scorable = np.ones(len(out), dtype=bool)
    scorable[np.asarray(list(unscorable), dtype=np.int64) - 1] = False
    warnings = []
    renamed = {old: new for old, new in renames.items() if old != col_map.label}
    if renamed:
        warnings.append(f"input columns {', '.join(renamed)} were renamed to {', '.join(renamed.values())}")
    warnings += passage_warnings
    if col_map.label in renames:
        warnings += rewritten_label_warning(out[source_cols["label"]], out["label"].to_numpy(), renames[col_map.label],
                                             first_row)
    if unscorable:
        rows = sorted(position + first_row - 1 for position in unscorable)
        warnings.append(f"the question, context or response is empty in {format_rows(rows)}: "
                        "those rows are kept with no score")
    warnings += _text_warnings(out, col_map, scorable, first_row, whole_file)
    if col_map.label is not None:
        warnings += unmapped_label_warnings(out[source_cols["label"]], label_map, positive, first_row)
    # `score` writes a label column whatever its input held; an empty one in its output was reported when it scored.
    if not (col_map.label == "label" and is_scored(frame.columns) and np.isnan(out["label"].to_numpy()).all()):
        warnings += label_warnings(out["label"].to_numpy(), col_map.label, first_row, whole_file)
    return TripleTable(out, source, col_map, positive, unscorable, warnings, renames,
                       found.passages if found else None, found.n_blank if found else 0)


def load_triples(
    source: str | os.PathLike | BinaryIO | bytes, *, name: str | None = None,
    mapping: ColumnMapping | dict | None = None, label_positive: str | None = None,
    limits: InputLimits | None = None, label_map: dict | None = None,
) -> TripleTable:
    """Read a file and validate it: :func:`~sgi_core.io.reading.read_table` then :func:`validate_triples`.

    ``limits`` (:class:`~sgi_core.io.limits.InputLimits`) bounds the rows, columns and
    cell lengths read; by default only the file size is.
    """
    name = name or source_name(source)
    frame = read_table(source, name=name, limits=limits)
    return validate_triples(frame, mapping=mapping, label_positive=label_positive, source=name, label_map=label_map)
