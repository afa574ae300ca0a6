"""Scores read back from a scored file that ``score`` could not have written."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sgi_core.columns import NUMERIC_SCORE_COLUMNS, STATUS_COLUMN, not_scored_status
from sgi_core.errors import format_rows

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
