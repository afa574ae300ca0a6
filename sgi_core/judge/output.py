"""The judge's columns added to a file: earlier judge values kept, the user's own columns renamed."""

from __future__ import annotations

import pandas as pd

from sgi_core.columns import input_name
from sgi_core.scores.registry import JUDGE_RUN_COLUMNS

BEYOND_MAX_ROWS = "not judged: beyond --max-rows"
#: ``judge_status`` of rows outside a run's random sample (the Judge page's).
NOT_IN_SAMPLE = "not judged: not in the sample"
#: Statuses of rows a run left alone: a file judged before keeps their earlier judge values.
LEFT_ALONE = (BEYOND_MAX_ROWS, NOT_IN_SAMPLE)
#: Columns every run writes; a file holding all three was judged before.
RUN_COLUMNS = JUDGE_RUN_COLUMNS


def renamed_input_columns(frame: pd.DataFrame, columns: pd.DataFrame) -> dict:
    """Input columns that bear a judge column's name but are the user's own, -> an ``input_``-prefixed name.

    A file holding all of :data:`RUN_COLUMNS` was judged before and its judge columns are
    the judge's; in any other file a ``judge_*`` column is the user's and is kept, renamed
    as :func:`~sgi_core.io.triples.validate_triples` renames input columns named like its own.
    """
    if all(c in frame.columns for c in RUN_COLUMNS):
        return {}
    taken = {*map(str, frame.columns), *columns.columns}
    return {column: input_name(column, taken) for column in columns.columns if column in frame.columns}


def with_judge_columns(frame: pd.DataFrame, columns: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the judge columns of :func:`run_judge` appended.

    In a file judged before, rows this run left alone (:data:`LEFT_ALONE`: beyond
    ``max_rows`` or outside the sample) keep their earlier judge values, status and
    model; the rows judged now take the new ones. A user's own columns of the same
    names are kept under the names of :func:`renamed_input_columns`.

    Examples
    --------
    >>> earlier = pd.DataFrame({"judge_x": [0.5, 1.0], "judge_status": ["ok", "ok"], "judge_model": ["a", "a"],
    ...                         "judge_prompt_version": ["v", "v"]})
    >>> now = pd.DataFrame({"judge_x": [0.0, float("nan")], "judge_status": ["ok", BEYOND_MAX_ROWS],
    ...                     "judge_model": ["b", "b"], "judge_prompt_version": ["v", "v"]})
    >>> with_judge_columns(earlier, now)[["judge_x", "judge_model"]].values.tolist()
    [[0.0, 'b'], [1.0, 'a']]
    """
    frame, columns = frame.reset_index(drop=True), columns.reset_index(drop=True)
    renames = renamed_input_columns(frame, columns)
    if renames:
        return pd.concat([frame.rename(columns=renames), columns], axis=1)
    clashing = [c for c in columns.columns if c in frame.columns]
    left_alone = columns["judge_status"].isin(LEFT_ALONE).to_numpy() if clashing else None
    merged = columns.copy()
    for column in clashing:
        merged[column] = frame[column].where(left_alone, columns[column])
    return pd.concat([frame.drop(columns=clashing), merged], axis=1)
