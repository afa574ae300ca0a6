"""The library's one error type for bad user input."""

from __future__ import annotations


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
            shown = ", ".join(str(r) for r in self.rows[:10])
            more = f" and {len(self.rows) - 10} more" if len(self.rows) > 10 else ""
            where.append(f"row{'s' if len(self.rows) > 1 else ''} {shown}{more}")
        text = self.message
        if where:
            text = f"{text} ({', '.join(where)})"
        if self.hint:
            text = f"{text}. {self.hint}"
        return text
