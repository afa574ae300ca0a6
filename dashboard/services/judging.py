"""The Judge page's calls into :mod:`sgi_core.judge`: plan, estimate, run and the judged file.

Whoever reaches the app can type an endpoint, so the key in the app's environment
(:data:`JUDGE_KEY_ENV`) goes only to the endpoint the operator named in
:data:`JUDGE_ENDPOINT_ENV`; any other endpoint gets only a key typed on the page for
that session (kept in the session's memory, never shown, logged or written), or none.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pandas as pd

from dashboard.services import input_limits, raw_frame
from sgi_core.frames import take_rows
from sgi_core.http.client import RetryPolicy, check_base_url
from sgi_core.io.triples import TripleTable
from sgi_core.judge import (
    METRICS,
    NOT_IN_SAMPLE,
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

#: Environment variable holding the key of the operator's endpoint.
JUDGE_KEY_ENV = "OPENAI_API_KEY"
#: Environment variable naming the one endpoint the environment's key is sent to (the page's default).
JUDGE_ENDPOINT_ENV = "SGI_JUDGE_ENDPOINT"
#: The page's endpoint when the operator names none: a judge server on this machine (vLLM's default port).
LOCAL_ENDPOINT = "http://127.0.0.1:8000/v1"
#: Session-state key of the key typed on the Judge page (this session's memory only).
SESSION_KEY = "judge.session_key"
#: ``judge_status`` of the rows outside the Judge page's sample.
NOT_SAMPLED = NOT_IN_SAMPLE
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


def configured_endpoint() -> str | None:
    """The endpoint named by :data:`JUDGE_ENDPOINT_ENV`, or None."""
    return os.environ.get(JUDGE_ENDPOINT_ENV, "").strip() or None


def default_endpoint() -> str:
    """The page's starting endpoint: the operator's, else :data:`LOCAL_ENDPOINT` (never a paid hosted API)."""
    return configured_endpoint() or LOCAL_ENDPOINT


def _same_endpoint(a: str, b: str) -> bool:
    try:
        return str(check_base_url(a)) == str(check_base_url(b))
    except ValueError:
        return False


def is_configured_endpoint(endpoint: str) -> bool:
    """Whether ``endpoint`` is the operator's (:data:`JUDGE_ENDPOINT_ENV`), compared after normalising both URLs."""
    configured = configured_endpoint()
    return configured is not None and _same_endpoint(endpoint, configured)


def key_note(endpoint: str, session_key: str | None) -> str:
    """What the page says about the key a request to ``endpoint`` will carry (never the key itself)."""
    if session_key:
        return "The key typed above is sent to this endpoint, for this session only."
    configured = configured_endpoint()
    if is_configured_endpoint(endpoint):
        return (f"The key in `{JUDGE_KEY_ENV}` is sent: this is the endpoint the operator named in "
                f"`{JUDGE_ENDPOINT_ENV}`." if judge_key_is_set() else
                f"No key is sent: `{JUDGE_KEY_ENV}` is not set, as local servers expect.")
    named = "none named" if configured is None else configured
    kept = (f"`{JUDGE_KEY_ENV}` is set but is not sent here: it goes only to the endpoint named in "
            f"`{JUDGE_ENDPOINT_ENV}` ({named}). ") if judge_key_is_set() else ""
    return kept + "No key is sent, as local servers expect; type one above for a hosted endpoint."


def endpoint_key(endpoint: str, session_key: str | None) -> str | None:
    """The key a request to ``endpoint`` carries.

    The key typed in this session when there is one; else the environment's key, but
    only for the operator's endpoint; else none.
    """
    if session_key:
        return session_key
    return (os.environ.get(JUDGE_KEY_ENV) or None) if is_configured_endpoint(endpoint) else None


def judge_input_columns(table: TripleTable) -> list[str]:
    """Input columns that can hold the retrieved passages or the reference answer (not mapped, not judge output)."""
    return [column for column in table.unmapped_columns if not column.startswith("judge_")]


def endpoint_host(endpoint: str) -> str:
    """The host of a vetted endpoint URL."""
    return check_base_url(endpoint).host


def check_connection(endpoint: str, model: str, session_key: str | None) -> str:
    """One tiny request to ``endpoint`` (a single attempt, 15 s at most); the model name it answered as.

    Raises
    ------
    SGIInputError
        A refused URL, or an endpoint that cannot be reached, rejects the key or the model.
    """
    judge = JudgeClient(endpoint, model, api_key=endpoint_key(endpoint, session_key), timeout=15,
                        retry=RetryPolicy(max_attempts=1))
    try:
        return judge.check_connection()
    finally:
        judge.close()


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
    judge = JudgeClient(endpoint, model)  # planning sends nothing, so it needs no key
    try:
        passages = None if table.passages is None else tuple(table.passages[int(row)] for row in rows)
        return rows, plan_judging(take_rows(table.frame, rows), judge, metrics, contexts_column=contexts_column,
                                  passages=passages, reference_column=reference_column, k=k, source=table.source)
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
                 session_key: str | None = None, progress=None) -> tuple[pd.DataFrame, JudgeSummary]:
    """Judge the sampled rows; the columns have one row per file row, :data:`NOT_SAMPLED` outside the sample.

    The requests carry :func:`endpoint_key` of ``endpoint`` and ``session_key``.

    Raises
    ------
    SGIInputError
        The endpoint refuses every request (bad key or URL, nothing listening); the
        answers received so far stay in the cache.
    """
    judge, cache = JudgeClient(endpoint, model, api_key=endpoint_key(endpoint, session_key)), AnswerCache()
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
    """The file ``raw`` with the judge ``columns`` appended, as Parquet (column types kept, texts unchanged).

    Earlier judge values of rows outside this sample are kept
    (:func:`~sgi_core.judge.with_judge_columns`). The file is read under the Data page's
    limits, which may have been raised to open it.
    """
    buffer = io.BytesIO()
    with_judge_columns(raw_frame(name, digest, raw, input_limits()), columns).to_parquet(buffer, index=False)
    stem = name[:-len(JUDGED_SUFFIX)] if name.endswith(JUDGED_SUFFIX) else Path(name).stem
    return stem + JUDGED_SUFFIX, buffer.getvalue()
