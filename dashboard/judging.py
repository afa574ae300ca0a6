"""The Judge page's calls into :mod:`sgi_core.judge`: plan, estimate, run and the judged file.

The endpoint's key is read from the environment of the process running the app
(:data:`JUDGE_KEY_ENV`); the app never asks for it and never shows it.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pandas as pd

from dashboard.services import raw_frame
from sgi_core.data import TripleTable
from sgi_core.frames import take_rows
from sgi_core.judge import (
    METRICS,
    PROMPT_VERSION,
    AnswerCache,
    JudgeClient,
    JudgeEstimate,
    JudgePlan,
    JudgeSummary,
    estimate,
    plan_judging,
    run_judge,
    with_judge_columns,
)
from sgi_core.projection import sample_rows

#: Environment variable the Judge page reads the endpoint's key from.
JUDGE_KEY_ENV = "OPENAI_API_KEY"
#: ``judge_status`` of the rows outside the Judge page's sample.
NOT_SAMPLED = "not judged: not in the sample"
#: Ways the Judge page picks its rows: the first N, or a seeded random sample of N.
SAMPLE_FIRST, SAMPLE_RANDOM = "first", "random"
#: The choice "no column" of the Judge page's passages and reference select boxes.
NONE_COLUMN = "(none)"
#: Name ending of a file with judge columns added by the Judge page.
JUDGED_SUFFIX = ".judged.parquet"


def judge_metric_needs() -> dict:
    """Judge metric name -> the extra column it needs: ``"contexts"``, ``"reference"`` or None."""
    return {name: metric.needs for name, metric in METRICS.items()}


def judge_key_is_set() -> bool:
    """Whether :data:`JUDGE_KEY_ENV` holds a key (its value is never read out)."""
    return bool(os.environ.get(JUDGE_KEY_ENV))


def judge_input_columns(table: TripleTable) -> list[str]:
    """Input columns that can hold the retrieved passages or the reference answer (not mapped, not judge output)."""
    return [column for column in table.unmapped_columns if not column.startswith("judge_")]


def _judge(endpoint: str, model: str) -> JudgeClient:
    return JudgeClient(endpoint, model, api_key=os.environ.get(JUDGE_KEY_ENV) or None)


def judge_plan(table: TripleTable, endpoint: str, model: str, metrics: list, *, contexts_column: str | None,
               reference_column: str | None, k: int, how: str, size: int) -> tuple[np.ndarray, JudgePlan]:
    """Positions of the sampled rows and the requests judging them needs; nothing is sent.

    Raises
    ------
    SGIInputError
        A refused endpoint (not a URL, plain http to another machine), no model name,
        a metric's column missing, unparsable passages.
    """
    rows = np.arange(min(size, table.n_rows)) if how == SAMPLE_FIRST else sample_rows(table.n_rows, size)
    judge = _judge(endpoint, model)
    try:
        return rows, plan_judging(take_rows(table.frame, rows), judge, metrics, contexts_column=contexts_column,
                                  reference_column=reference_column, k=k, source=table.source)
    finally:
        judge.close()


def judge_estimate(plan: JudgePlan) -> JudgeEstimate:
    """Requests and input tokens a run would send, given the answers already in the disk cache."""
    cache = AnswerCache()
    try:
        return estimate(plan, cache=cache)
    finally:
        cache.close()


def judge_sample(plan: JudgePlan, rows: np.ndarray, n_rows: int, endpoint: str, model: str, *, concurrency: int,
                 progress=None) -> tuple[pd.DataFrame, JudgeSummary]:
    """Judge the sampled rows; the columns have one row per file row, :data:`NOT_SAMPLED` outside the sample.

    Raises
    ------
    SGIInputError
        The endpoint refuses every request (bad key or URL, nothing listening); the
        answers received so far stay in the cache.
    """
    judge, cache = _judge(endpoint, model), AnswerCache()
    try:
        sampled, summary = run_judge(plan, judge, cache=cache, concurrency=concurrency, progress=progress)
    finally:
        judge.close()
        cache.close()
    columns = sampled.set_axis(rows).reindex(range(n_rows))
    columns["judge_status"] = columns["judge_status"].fillna(NOT_SAMPLED)
    columns["judge_model"] = judge.model
    columns["judge_prompt_version"] = PROMPT_VERSION
    return columns.reset_index(drop=True), summary


def judged_file(name: str, digest: str, raw: bytes, columns: pd.DataFrame) -> tuple[str, bytes]:
    """The file ``raw`` with the judge ``columns`` appended, as Parquet (column types kept, texts unchanged)."""
    buffer = io.BytesIO()
    with_judge_columns(raw_frame(name, digest, raw), columns).to_parquet(buffer, index=False)
    stem = name[:-len(JUDGED_SUFFIX)] if name.endswith(JUDGED_SUFFIX) else Path(name).stem
    return stem + JUDGED_SUFFIX, buffer.getvalue()
