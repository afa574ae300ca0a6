"""Scores read back from a scored file that ``score`` could not have written."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sgi_core.columns import NUMERIC_SCORE_COLUMNS, STATUS_COLUMN, WORD_OVERLAP_COLUMN, not_scored_status
from sgi_core.errors import SGIInputError, format_rows

#: The status of a row whose score in the file is infinite.
INFINITE_SCORE_STATUS = not_scored_status("an infinite score in the file")


def unscore_infinite_rows(scores: pd.DataFrame) -> list[str]:
    """Keep rows with an infinite angle or SGI as rows without scores, in place; the warning, if any.

    ``score`` never writes an infinite value (a degenerate row gets NaN and a status), so
    such a file was edited; an infinite score cannot be ranked, binned or averaged, and
    the row is kept as ``score`` keeps a row it cannot score: NaN scores and the status
    :data:`INFINITE_SCORE_STATUS`.

    Examples
    --------
    >>> scores = pd.DataFrame({"theta_qc": [1.0, 1.0], "theta_rq": [0.5, 0.5], "theta_rc": [0.5, 0.5],
    ...                        "sgi": [1.0, float("inf")], "sgi_status": ["ok", "ok"]})
    >>> unscore_infinite_rows(scores), scores["sgi_status"].tolist()
    (["the file's scores are infinite in row 2: those rows are kept as not scored"], ['ok', 'not scored: an infinite score in the file'])
    """
    infinite = np.isinf(scores[list(NUMERIC_SCORE_COLUMNS)].to_numpy(dtype=np.float64)).any(axis=1)
    if not infinite.any():
        return []
    for column in NUMERIC_SCORE_COLUMNS:
        scores[column] = scores[column].mask(infinite)
    scores[STATUS_COLUMN] = scores[STATUS_COLUMN].mask(infinite, INFINITE_SCORE_STATUS)
    rows = format_rows((np.flatnonzero(infinite) + 1).tolist())
    return [f"the file's scores are infinite in {rows}: those rows are kept as not scored"]


def numbers_in(cells: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """A scored file's numeric column as numbers, and the positions of the cells that are not one.

    A CSV is read as text, so an empty cell (a row without a label, or without scores)
    arrives as ``""``: blank cells are empty, as missing values of a Parquet file are,
    and become NaN. Any other cell that is not a number is returned by position.

    Examples
    --------
    >>> numbers, bad = numbers_in(pd.Series(["0.5", "", " ", "x"]))
    >>> numbers.tolist(), bad.tolist()
    ([0.5, nan, nan, nan], [3])
    """
    numbers = pd.to_numeric(cells, errors="coerce")
    if pd.api.types.is_numeric_dtype(cells):
        return numbers, np.array([], dtype=np.int64)
    filled = cells.notna() & cells.astype(str).str.strip().ne("")
    return numbers, np.flatnonzero((numbers.isna() & filled).to_numpy())


def read_word_overlap(scores: pd.DataFrame, source: str) -> None:
    """Check a scored file's word-overlap column, when it has one, and hold it as float64, in place.

    ``score`` writes :data:`~sgi_core.columns.WORD_OVERLAP_COLUMN` as a share from 0 to 1,
    or empty where the response has no content word; anything else was not written by it.

    Raises
    ------
    SGIInputError
        Naming the rows whose share is not a number from 0 to 1 or empty.

    Examples
    --------
    >>> scores = pd.DataFrame({"lexical_groundedness": ["0.5", None]})
    >>> read_word_overlap(scores, "s.csv"); scores["lexical_groundedness"].tolist()
    [0.5, nan]
    """
    if WORD_OVERLAP_COLUMN not in scores.columns:
        return
    shares, not_numbers = numbers_in(scores[WORD_OVERLAP_COLUMN])
    bad = np.union1d(not_numbers, np.flatnonzero(((shares < 0) | (shares > 1)).to_numpy()))
    if len(bad):
        raise SGIInputError(f"a scored file's {WORD_OVERLAP_COLUMN} must be a share from 0 to 1 or empty",
                            source=source, column=WORD_OVERLAP_COLUMN, rows=(bad + 1).tolist(),
                            hint="Score the unscored file again with `score`, or drop the column to have it computed")
    scores[WORD_OVERLAP_COLUMN] = shares.astype(np.float64)
