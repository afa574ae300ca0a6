"""The library's one error type for bad user input."""

from __future__ import annotations

from collections.abc import Sequence

#: Row numbers listed in a message before the rest are summed up as "and N more".
MAX_ROWS_SHOWN = 10


def format_rows(rows: Sequence[int]) -> str:
    """Row numbers for a message, the first :data:`MAX_ROWS_SHOWN` of them spelled out.

    Examples
    --------
    >>> format_rows([3])
    'row 3'
    >>> format_rows(list(range(1, 13)))
    'rows 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more'
    """
    shown = ", ".join(str(r) for r in rows[:MAX_ROWS_SHOWN])
    more = f" and {len(rows) - MAX_ROWS_SHOWN} more" if len(rows) > MAX_ROWS_SHOWN else ""
    return f"row{'s' if len(rows) > 1 else ''} {shown}{more}"


class SGIInputError(ValueError):
    """Input that the library cannot use, with where it was found and what to do.

    Parameters
    ----------
    message : str
        What is wrong.
    source : str, optional
        File name (or other origin) of the input.
    column : str, optional
        Column the problem was found in.
    rows : sequence of int, optional
        1-based data row numbers (the header is row 0), at most a few are shown.
    hint : str, optional
        What the user can do about it.
    """

    def __init__(self, message, *, source=None, column=None, rows=None, hint=None):
        self.message = message
        self.source = source
        self.column = column
        self.rows = list(rows) if rows is not None else []
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.source:
            where.append(f"file '{self.source}'")
        if self.column:
            where.append(f"column '{self.column}'")
        if self.rows:
            where.append(format_rows(self.rows))
        text = self.message
        if where:
            text = f"{text} ({', '.join(where)})"
        if self.hint:
            text = f"{text}. {self.hint}"
        return text
