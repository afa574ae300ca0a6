"""Ground floor of the library: the names of the columns and the words of the row status.

Every module that reads or writes a table of triples names its columns and statuses
from here, so that reading (:mod:`sgi_core.io.triples`), limits (:mod:`sgi_core.io.limits`),
scoring (:mod:`sgi_core.scoring`) and the dashboard agree without importing one another.
This module imports nothing from :mod:`sgi_core`.

:func:`one_label_column` drops the reader's copy of an input label column from a table
about to be written, when ``label`` says all it said.

Status convention (column ``sgi_status``, one per row):

- :data:`STATUS_OK`: the row was scored and its SGI is an ordinary number;
- ``"degenerate: ..."``: scored, but two of its embeddings coincide (SGI ~1, 0 or unbounded);
- ``"not scored: <reason>"`` (:func:`not_scored_status`): an empty question, context or
  response; its scores are NaN and the row is kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

TEXT_COLUMNS = ("question", "context", "response")
#: The roles a column can play; ``label`` is 1.0 grounded, 0.0 hallucinated, NaN unlabelled.
ROLES = (*TEXT_COLUMNS, "label")
#: 1-based data row number of each row in its input file.
INPUT_ROW = "input_row"
#: When a row of a labels table was labelled (a date and time); without it the rows' order is the labelling order.
LABELLED_AT = "labelled_at"
ANGLE_COLUMNS = ("theta_qc", "theta_rq", "theta_rc")
#: A labelling design's columns beside a label: what re-computes the design it was drawn under.
DESIGN_COLUMNS = ("inclusion_probability", "design", "predictor", "seed", "budget")
STATUS_COLUMN = "sgi_status"
#: Prefix of a grounding model's columns, ``grounding_<name>_<suffix>`` (:mod:`sgi_core.grounding.scoring`).
GROUNDING_PREFIX = "grounding_"
#: Its per-row columns: the weakest and the mean hypothesis's support (the scores), chunks read, anything cut.
GROUNDING_SUFFIXES = ("min", "mean", "chunks", "cut")
#: The suffixes that are scores (higher = grounded).
GROUNDING_SCORE_SUFFIXES = ("min", "mean")


def grounding_columns(name: str) -> tuple[str, ...]:
    """The columns a grounding model called ``name`` writes.

    Examples
    --------
    >>> grounding_columns("nli")
    ('grounding_nli_min', 'grounding_nli_mean', 'grounding_nli_chunks', 'grounding_nli_cut')
    """
    return tuple(f"{GROUNDING_PREFIX}{name}_{suffix}" for suffix in GROUNDING_SUFFIXES)


#: Columns added by :func:`sgi_core.scoring.score_table`.
SCORE_COLUMNS = (*ANGLE_COLUMNS, "sgi", STATUS_COLUMN)
#: Numeric score columns (every score column but the status).
NUMERIC_SCORE_COLUMNS = (*ANGLE_COLUMNS, "sgi")

#: The word-overlap baseline (:func:`sgi_core.scores.baselines.lexical_groundedness`), written by
#: scoring beside the scores so that every analysis of a scored file reads it instead of
#: recomputing it; a scored file without it (written before it was added) still opens.
WORD_OVERLAP_COLUMN = "lexical_groundedness"

#: The passages of each row's context, written by scoring when the context was given as lists
#: (:mod:`sgi_core.io.passages`), so that a scored file keeps them apart: a list per row (a JSON
#: array in a CSV cell). ``context`` holds the same passages joined by a blank line.
PASSAGES_COLUMN = "context_passages"
#: How many pieces (passages, or windows of a passage longer than the model reads) each
#: row's context embedding was built from, under the ``mean`` and ``nearest`` context strategies.
CONTEXT_PIECES_COLUMN = "context_pieces"

#: How a row's context becomes one embedding (:func:`sgi_core.scoring.score_table`): ``joined``
#: embeds its passages joined by a blank line (cut at the model's input length); ``mean``
#: averages the unit vectors of its passages, each cut into windows the model reads whole;
#: ``nearest`` keeps the passage (or window) nearest the response.
CONTEXT_STRATEGIES = ("joined", "mean", "nearest")
DEFAULT_CONTEXT_STRATEGY = "joined"

#: The status of a scored row whose response embeds as its context: theta(r,c) ~ 0, SGI unbounded (~1e8).
UNBOUNDED_SGI_STATUS = "degenerate: response equals context (SGI unbounded)"

#: Columns the library adds (the roles and ``input_row`` in :mod:`sgi_core.io.triples`, the score
#: columns and the word overlap in scoring, ``p_grounded`` and ``flagged_hallucinated`` in
#: :func:`sgi_core.policy.sessions.apply_session`); input columns that already bear these names are
#: kept under an ``input_`` prefix. The label column is kept so too when it is named
#: ``label``, since ``label`` is rewritten as 1.0 / 0.0 / NaN.
ADDED_COLUMNS = (*ROLES, INPUT_ROW, *SCORE_COLUMNS, WORD_OVERLAP_COLUMN, "p_grounded", "flagged_hallucinated")

#: Where the reader keeps the cells of an input ``label`` column that it rewrites as 1/0.
INPUT_LABEL_COPY = "input_label"


def one_label_column(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without ``input_label`` when ``label`` says all it said, for a file that reopens with one label.

    The copy is dropped when every row with an ``input_label`` cell has a ``label``
    (1 grounded, 0 hallucinated): the copy then only spells the same classes
    differently, and reopened it would be a second label column. It is kept when
    some of its cells were read as unlabelled (a value mapped to "unlabelled"), since
    they would be lost.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"input_label": ["yes", "no"], "label": [1.0, 0.0]})
    >>> one_label_column(f).columns.tolist()
    ['label']
    >>> one_label_column(f.assign(label=[1.0, float("nan")])).columns.tolist()
    ['input_label', 'label']
    """
    if INPUT_LABEL_COPY not in frame.columns or "label" not in frame.columns:
        return frame
    copy = frame[INPUT_LABEL_COPY]
    filled = copy.notna() & (copy.astype(str).str.strip() != "")
    if bool((filled & frame["label"].isna()).any()):
        return frame
    return frame.drop(columns=INPUT_LABEL_COPY)


def input_name(column: str, taken: set) -> str:
    """The name an input column is kept under beside a library column of its name: ``input_<column>``.

    Prefixed again while the name is in ``taken``, to which the new name is added.

    Examples
    --------
    >>> taken = {"sgi", "input_sgi"}
    >>> input_name("sgi", taken), "input_input_sgi" in taken
    ('input_input_sgi', True)
    """
    new = f"input_{column}"
    while new in taken:
        new = f"input_{new}"
    taken.add(new)
    return new


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
    # Here: the command line's parser reads this module and must import neither numpy nor pandas.
    import numpy as np
    import pandas as pd

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


def count_ordinary(*statuses) -> int:
    """Rows whose SGI is an ordinary number under every one of several status columns (:func:`is_ordinary`).

    Examples
    --------
    >>> count_ordinary(["ok", "ok", "not scored: empty response"], ["ok", "degenerate: context equals question", "ok"])
    1
    """
    import numpy as np

    ordinary = np.logical_and.reduce([is_ordinary(status) for status in statuses])
    return int(np.count_nonzero(ordinary))


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
