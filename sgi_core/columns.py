"""Ground floor of the library: the names of the columns and the words of the row status.

Every module that reads or writes a table of triples names its columns and statuses
from here, so that reading (:mod:`sgi_core.data`), limits (:mod:`sgi_core.io.limits`),
scoring (:mod:`sgi_core.scoring`) and the dashboard agree without importing one another.
This module imports nothing from :mod:`sgi_core`.

Status convention (column ``sgi_status``, one per row):

- :data:`STATUS_OK`: the row was scored and its SGI is an ordinary number;
- ``"degenerate: ..."``: scored, but two of its embeddings coincide (SGI ~1, 0 or unbounded);
- ``"not scored: <reason>"`` (:func:`not_scored_status`): an empty question, context or
  response; its scores are NaN and the row is kept.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

TEXT_COLUMNS = ("question", "context", "response")
#: The roles a column can play; ``label`` is 1.0 grounded, 0.0 hallucinated, NaN unlabelled.
ROLES = (*TEXT_COLUMNS, "label")
#: 1-based data row number of each row in its input file.
INPUT_ROW = "input_row"
ANGLE_COLUMNS = ("theta_qc", "theta_rq", "theta_rc")
STATUS_COLUMN = "sgi_status"
#: Columns added by :func:`sgi_core.scoring.score_table`.
SCORE_COLUMNS = (*ANGLE_COLUMNS, "sgi", STATUS_COLUMN)
#: Numeric score columns (every score column but the status).
NUMERIC_SCORE_COLUMNS = (*ANGLE_COLUMNS, "sgi")

#: Columns the library adds (the roles and ``input_row`` in :mod:`sgi_core.data`, the score
#: columns in scoring, ``p_grounded`` and ``flagged_hallucinated`` in
#: :func:`sgi_core.session.apply_session`); input columns that already bear these names are
#: kept under an ``input_`` prefix. The label column is kept so too when it is named
#: ``label``, since ``label`` is rewritten as 1.0 / 0.0 / NaN.
ADDED_COLUMNS = (*ROLES, INPUT_ROW, *SCORE_COLUMNS, "p_grounded", "flagged_hallucinated")

STATUS_OK = "ok"
#: Start of the status of a row that was kept but not scored.
NOT_SCORED_PREFIX = "not scored: "
#: Start of the status of a row whose context embedding equals its question's.
CONTEXT_IS_QUESTION_STATUS = "degenerate: context equals question"


def not_scored_status(reason: str) -> str:
    """The status of a row kept without scores, e.g. ``"not scored: empty response"``."""
    return f"{NOT_SCORED_PREFIX}{reason}"


def _as_series(status) -> pd.Series:
    # A Series is compared as it is: a big file's status column stays Arrow-backed, never copied to objects.
    return status if isinstance(status, pd.Series) else pd.Series(np.asarray(status, dtype=object))


def is_ordinary(status):
    """Where a status (one string, or an array / Series of them) says the SGI is an ordinary number.

    Degenerate rows have an SGI, but one fixed by coinciding embeddings; not-scored
    rows have none. Both are False here. Returns a bool for one string, else a bool array.

    Examples
    --------
    >>> is_ordinary(["ok", "not scored: empty response", "degenerate: response equals question"]).tolist()
    [True, False, False]
    """
    if isinstance(status, str):
        return status == STATUS_OK
    return _as_series(status).eq(STATUS_OK).to_numpy(dtype=bool, na_value=False)


def is_not_scored(status):
    """Where a status (one string, or an array / Series of them) marks a row kept without scores.

    Examples
    --------
    >>> is_not_scored(["ok", "not scored: empty context"]).tolist()
    [False, True]
    """
    if isinstance(status, str):
        return status.startswith(NOT_SCORED_PREFIX)
    return _as_series(status).astype(str).str.startswith(NOT_SCORED_PREFIX).to_numpy(dtype=bool, na_value=False)
