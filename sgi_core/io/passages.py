"""A context is a list of passages: the one path by which list-valued context cells are read.

RAG evaluation tools write a row's retrieved context as a list of passages (RAGAS
``retrieved_contexts``, DeepEval ``retrieval_context``); every reader hands such cells to
:func:`context_passages`, so a file of lists scores exactly like the plain file of the joined text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.columns import PASSAGES_COLUMN
from sgi_core.errors import SGIInputError, format_rows
from sgi_core.io.reading import cell_to_text
from sgi_core.jsonio import loads_json

#: What joins a row's passages into its context text: one blank line.
PASSAGE_SEPARATOR = "\n\n"

_OPENS_ARRAY = re.compile(r"[ \t\r\n\f\v]*\[")
# A text that opens an array of strings (``["``, ``['``, ``[]``) or closes one: an array that did not parse.
# A citation such as "[1] Smith (2020) ..." is neither, so it stays text without a warning.
_ARRAY_OF_STRINGS_START = re.compile(r"[ \t\r\n\f\v]*\[[ \t\r\n\f\v]*[\"'\]]")
_CLOSES_ARRAY = re.compile(r"\][ \t\r\n\f\v]*\Z")
_PASSAGES_HINT = ('Give each row\'s passages as a list of strings, e.g. ["first passage", "second passage"] '
                  "(in a CSV cell: that JSON text, with double quotes), or map another column as the context")


@dataclass(frozen=True)
class ContextPassages:
    """The passages of a context column that holds lists, and the context text they make.

    Attributes
    ----------
    passages : tuple of tuple of str
        One tuple per row, in row order. A list cell gives its strings that are not
        blank (an empty list gives ``()``); a text cell in the same column gives
        ``(text,)``, a missing or empty cell ``()``.
    text : list of str
        ``PASSAGE_SEPARATOR.join(passages[i])`` for each row ``i``.
    n_blank : int
        Blank passages (empty or only whitespace) left out of the lists.
    """

    passages: tuple
    text: list
    n_blank: int = 0


def join_passages(passages) -> str:
    """The context text of a list of passages: ``"\\n\\n".join(passages)``.

    Examples
    --------
    >>> join_passages(["Paris is in France.", "It is the capital."])
    'Paris is in France.\\n\\nIt is the capital.'
    """
    return PASSAGE_SEPARATOR.join(passages)


def is_blank(passage: str) -> bool:
    """Whether a passage holds no text: empty, or only whitespace (``str.isspace``, Unicode included).

    Examples
    --------
    >>> [is_blank(p) for p in ["", " \\n", "\\u3000", "a"]]
    [True, True, True, False]
    """
    return not passage.strip()


def _cell_items(cell):
    """``(items, looked_like_array)``: the items of a list cell or of a JSON array in a text cell, else ``None``."""
    if isinstance(cell, np.ndarray):
        return cell.tolist(), True
    if isinstance(cell, (list, tuple)):
        return list(cell), True
    if not (isinstance(cell, str) and _OPENS_ARRAY.match(cell)):
        return None, False
    try:
        parsed = loads_json(cell)
    except SGIInputError:
        return None, bool(_ARRAY_OF_STRINGS_START.match(cell) or _CLOSES_ARRAY.search(cell))
    return (parsed, True) if isinstance(parsed, list) else (None, True)


def context_passages(
    column: pd.Series, *, source: str = "<input>", column_name: str = "context", first_row: int = 1,
) -> tuple[ContextPassages | None, list[str]]:
    """Read a context column's list cells into passages.

    Parameters
    ----------
    column : Series
        The raw cells of the column mapped as the context.
    source : str
        File name, in messages.
    column_name : str
        The column's name in the file, in messages.
    first_row : int
        File row number of the column's first cell.

    Returns
    -------
    passages : ContextPassages or None
        ``None`` when no cell is a list (a plain-text column, read as before);
        otherwise every row's passages and joined text.
    warnings : list of str
        Text cells that look like an array of strings but are not JSON (they are kept
        as text), and the rows whose lists held blank passages (left out, counted).

    Raises
    ------
    SGIInputError
        A list holding anything but strings (numbers, objects, nulls, nested lists),
        naming the column and the first rows.

    Notes
    -----
    RAG evaluation tools write a row's retrieved context as a list of passages (RAGAS
    ``retrieved_contexts``, DeepEval ``retrieval_context``). Whatever the file format,
    such a cell reaches :func:`context_passages` in one of two shapes:

    - a list object: a Parquet/Arrow list column (NumPy arrays), or a frame built in code;
    - a JSON array as text: a JSON or JSON Lines array (which
      :func:`~sgi_core.io.reading.read_table` writes as JSON text, like every nested
      value) or a CSV/TSV cell holding ``["first passage", "second passage"]``.

    Either way the row's passages are the array's strings, and its context text is the
    passages joined by a blank line, :data:`PASSAGE_SEPARATOR`::

        context = passage_1 + "\\n\\n" + passage_2 + ... + "\\n\\n" + passage_k

    so a file of lists scores exactly like the plain file holding that joined text. A list
    is never embedded as its JSON text. Blank passages (empty, or only whitespace: retrieved
    chunks with no text, as trace exports hold) are left out before anything is embedded, so
    ``[P]``, ``["", P]`` and ``[" ", P]`` score alike under every context strategy; a row left
    with no passage is not scored (empty context), and a warning counts them. An array holding
    anything but strings is refused; a text cell that looks like an array (it opens with ``["``,
    ``['`` or ``[]``, or opens with ``[`` and ends with ``]``) but is not JSON (a Python list in
    single quotes, an array cut off by a spreadsheet) is kept as text, with a warning.

    Examples
    --------
    >>> found, warnings = context_passages(pd.Series(['["a", "b"]', "plain", "[]"]))
    >>> found.passages, found.text
    ((('a', 'b'), ('plain',), ()), ['a\\n\\nb', 'plain', ''])
    >>> context_passages(pd.Series(["[1] Smith (2020) says so."]))
    (None, [])
    >>> found, warnings = context_passages(pd.Series(['["", "a"]', '[" "]']))
    >>> found.passages, found.text, found.n_blank
    ((('a',), ()), ['a', ''], 2)
    """
    cells = column.to_numpy(dtype=object)
    lists: dict[int, tuple] = {}
    not_text: dict[int, object] = {}
    unparsed, blank_rows = [], []
    n_blank = 0
    for position, cell in enumerate(cells):
        items, looked_like_array = _cell_items(cell)
        if items is None:
            if looked_like_array:
                unparsed.append(position + first_row)
            continue
        not_strings = [item for item in items if not isinstance(item, str)]
        if not_strings:
            not_text[position + first_row] = not_strings[0]
        else:
            lists[position] = tuple(item for item in items if not is_blank(item))
            if len(lists[position]) < len(items):
                n_blank += len(items) - len(lists[position])
                blank_rows.append(position + first_row)
    if not_text:
        rows = list(not_text)
        raise SGIInputError(
            f"the context lists hold passages that are not strings; the first, in row {rows[0]}, is "
            f"{_describe(not_text[rows[0]])}", source=source, column=column_name, rows=rows, hint=_PASSAGES_HINT,
        )
    warnings = []
    if unparsed:
        warnings.append(
            f"the context in column '{column_name}' looks like a list but is not a JSON array in "
            f"{format_rows(unparsed)}: it is scored as that text. To score it as passages, write it as a JSON "
            'array of strings in double quotes, e.g. ["first passage", "second passage"]'
        )
    if blank_rows:
        warnings.append(blank_passages_warning(n_blank, blank_rows, column_name))
    if not lists:
        return None, warnings
    passages = tuple(lists[position] if position in lists else _plain_passages(cell)
                     for position, cell in enumerate(cells))
    return ContextPassages(passages, [join_passages(row) for row in passages], n_blank), warnings


def blank_passages_warning(n_blank: int, rows, column_name: str = "context") -> str:
    """The warning counting blank passages left out of a context column's lists, naming their rows.

    Examples
    --------
    >>> message = blank_passages_warning(3, [2, 5])
    >>> message[:76]
    "3 blank passages (empty or only whitespace) in column 'context' in rows 2, 5"
    >>> message[76:]
    ' were left out before embedding; a row left with none is not scored (empty context)'
    """
    return (f"{n_blank} blank passage{'s' if n_blank != 1 else ''} (empty or only whitespace) in column "
            f"'{column_name}' in {format_rows(list(rows))} were left out before embedding; a row left with none "
            "is not scored (empty context)")


def row_passages(frame: pd.DataFrame, passages: tuple | None = None) -> tuple:
    """Every row's passages: the reader's lists, else a scored file's passages column, else the context itself.

    Parameters
    ----------
    frame : DataFrame
        Rows with a ``context`` column (a :class:`~sgi_core.io.triples.TripleTable`'s frame or a
        scored file).
    passages : tuple of tuple of str, optional
        :attr:`~sgi_core.io.triples.TripleTable.passages`, when the reader found lists.

    Returns
    -------
    tuple of tuple of str
        One tuple per row. Without ``passages``, the cells of
        :data:`~sgi_core.columns.PASSAGES_COLUMN` (lists, or JSON arrays as text) where the
        frame has it and the cell holds a list, else ``(context,)`` (``()`` for an empty context).
        Blank passages are left out either way.

    Examples
    --------
    >>> row_passages(pd.DataFrame({"context": ["a\\n\\nb", ""]}))
    (('a\\n\\nb',), ())
    >>> row_passages(pd.DataFrame({"context": ["a\\n\\nb"], "context_passages": ['["a", "b"]']}))
    (('a', 'b'),)
    """
    if passages is not None:
        return tuple(tuple(p for p in row if not is_blank(p)) for row in passages)
    contexts = frame["context"].to_numpy(dtype=object)
    if PASSAGES_COLUMN not in frame.columns:
        return tuple(_plain_passages(cell) for cell in contexts)
    out = []
    for cell, context in zip(frame[PASSAGES_COLUMN].to_numpy(dtype=object), contexts):
        items, _ = _cell_items(cell)
        strings = items is not None and all(isinstance(item, str) for item in items)
        out.append(tuple(item for item in items if not is_blank(item)) if strings else _plain_passages(context))
    return tuple(out)


def _plain_passages(cell) -> tuple:
    text = cell_to_text(cell)
    return (text,) if text else ()


def _describe(item) -> str:
    """A passage that is not text, for a message: ``3 (int)``, ``null``, ``{'id': 'd1'} (dict)``."""
    if item is None:
        return "null"
    shown = repr(item.tolist() if isinstance(item, np.ndarray) else item)
    return f"{shown[:60]}{'...' if len(shown) > 60 else ''} ({type(item).__name__})"
