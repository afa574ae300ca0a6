"""Planning, estimating and running the judge over a table of triples.

:func:`plan_judging` checks the metrics and their input columns and lists the distinct
requests (two rows with the same question and passages share one ``relevance``
request); :func:`estimate` says what a run would send; :func:`run_judge` sends what the
cache does not hold, ``concurrency`` requests at a time, each answer cached as it
arrives, and returns one row of judge columns per input row, in input order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.columns import STATUS_OK
from sgi_core.errors import SGIInputError
from sgi_core.http.client import ApiError
from sgi_core.io.passages import row_passages
from sgi_core.judge.cache import AnswerCache, answer_key, cached_values, save_answers
from sgi_core.judge.client import JudgeClient, estimate_tokens
from sgi_core.judge.metrics import METRICS, Metric
from sgi_core.judge.output import BEYOND_MAX_ROWS
from sgi_core.judge.prompts import PROMPT_VERSION, TASKS, AnswerError
from sgi_core.judge.yes_no import warn_without_logprobs
from sgi_core.results import JsonResult
from sgi_core.retrieval import parse_id_list
from sgi_core.stats.checks import check_int

#: ``progress(rows_done, rows_total, tokens_spent)``.
JudgeProgress = Callable[[int, int, int], None]


@dataclass(frozen=True)
class JudgePlan:
    """What to ask, per row and overall.

    Attributes
    ----------
    metrics : tuple of Metric
    rows : list
        Per input row, task -> request key, or the reason the row is not judged.
    requests : dict
        Request key -> (task name, inputs), each distinct request once.
    k : int
        The k of ``retrieval_k_recall``.
    """

    metrics: tuple[Metric, ...]
    rows: list
    requests: dict
    k: int

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(col for metric in self.metrics for col in metric.columns)


@dataclass(frozen=True)
class JudgeEstimate(JsonResult):
    """What a run would send: requests not yet cached and their input tokens (characters / 4)."""

    n_rows: int
    n_judged_rows: int
    n_requests: int
    n_cached: int
    input_tokens: int


@dataclass(frozen=True)
class JudgeSummary(JsonResult):
    """How a run went.

    ``n_to_judge`` rows were asked about, ``n_ok`` of them judged fully; ``n_sent`` counts
    every request sent (retries and second asks after a malformed answer included, each
    may be billed), ``n_cached`` the answers read from the cache, ``tokens`` the tokens the
    server reported (or the estimate, where it reported none or an implausible count).
    ``n_from_answer`` counts the rows whose Yes/No metric (``groundedness``) is the bare
    answer, 0 or 1, because the endpoint gave no log-probabilities to read P(yes) from.
    """

    n_rows: int
    n_to_judge: int
    n_ok: int
    n_sent: int
    n_cached: int
    tokens: int
    n_from_answer: int = 0


def parse_metrics(names) -> tuple[Metric, ...]:
    """Metric names (a comma-separated string or a list) -> metrics, in the order given.

    Examples
    --------
    >>> [m.name for m in parse_metrics("answer_consistency, augmentation_accuracy")]
    ['answer_consistency', 'augmentation_accuracy']
    """
    listed = [n.strip() for n in (names.split(",") if isinstance(names, str) else names) if n.strip()]
    unknown = [n for n in listed if n not in METRICS]
    if unknown or not listed:
        raise SGIInputError(f"unknown judge metric{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}"
                            if unknown else "no judge metric named", hint=f"Choose from {', '.join(METRICS)}")
    return tuple(METRICS[n] for n in dict.fromkeys(listed))


def _check_column(frame, column, metrics, needs, option, source) -> None:
    users = [m.name for m in metrics if m.needs == needs]
    if column is None and users:
        raise SGIInputError(f"{', '.join(users)} need{'s' if len(users) == 1 else ''} a {needs} column",
                            source=source, hint=f"Name it with {option} COLUMN")
    if column is not None and column not in frame.columns:
        raise SGIInputError(f"the {needs} column '{column}' is not in the file", source=source,
                            hint=f"Columns present: {', '.join(map(str, frame.columns))}")


def plan_judging(frame: pd.DataFrame, judge: JudgeClient, metrics, *, contexts_column: str | None = None,
                 passages: tuple | None = None, reference_column: str | None = None, k: int = 3,
                 max_rows: int | None = None, source: str = "<input>") -> JudgePlan:
    """Check the inputs and list the requests, before anything is sent.

    Parameters
    ----------
    frame : DataFrame
        A :class:`~sgi_core.io.triples.TripleTable` frame (``question``, ``context``, ``response``).
    judge : JudgeClient
        Its endpoint and model are part of each request key.
    metrics : str or list of str
        Names from :data:`~sgi_core.judge.metrics.METRICS`.
    contexts_column : str, optional
        Per row, the retrieved passages in rank order (a JSON array, or ``|``-separated);
        needed by the retrieval metrics. Without it each row's passages are the list.
    passages : tuple of tuple of str, optional
        Each row's passages (:attr:`~sgi_core.io.triples.TripleTable.passages`); without them,
        :func:`~sgi_core.io.passages.row_passages` reads a scored file's passages column, else
        the ``context`` cell is the one passage (as it is for a row without passages).
    reference_column : str, optional
        Per row, the reference answer; needed by ``answer_similarity``.
    k : int
        Top-k of ``retrieval_k_recall``.
    max_rows : int, optional
        Judge the first ``max_rows`` rows only; the others are marked :data:`BEYOND_MAX_ROWS`.

    Raises
    ------
    SGIInputError
        An unknown metric, a needed column not named or absent, a bad ``k`` or ``max_rows``.
    """
    chosen = parse_metrics(metrics)
    k = check_int(k, "k", "plan_judging", minimum=1)
    limit = len(frame) if max_rows is None else check_int(max_rows, "max_rows", "plan_judging", minimum=0)
    _check_column(frame, contexts_column, chosen, "contexts", "--contexts-column", source)
    _check_column(frame, reference_column, chosen, "reference", "--reference-column", source)
    tasks = list(dict.fromkeys(t for metric in chosen for t in metric.tasks))
    if contexts_column is not None:
        passages_cells = frame[contexts_column]
    else:
        passages_cells = [list(row) or [context]
                          for row, context in zip(row_passages(frame, passages), frame["context"])]
    references = frame[reference_column].map(_text) if reference_column is not None else [""] * len(frame)
    rows, requests = [], {}
    for position, (question, response, cell, reference) in enumerate(
            zip(frame["question"], frame["response"], passages_cells, references)):
        if position >= limit:
            rows.append(BEYOND_MAX_ROWS)
            continue
        passages = parse_id_list(cell, source=source, column=contexts_column or "context", row=position + 1)
        values = {"question": str(question), "contexts": passages, "response": str(response),
                  "reference_answer": reference}
        empty = [name for t in tasks for name in TASKS[t].inputs if not values[name] or not str(values[name]).strip()]
        if empty:
            rows.append(f"not judged: empty {', '.join(dict.fromkeys(empty))}")
            continue
        keys = {}
        for t in tasks:
            inputs = {name: values[name] for name in TASKS[t].inputs}
            keys[t] = answer_key(judge.endpoint, judge.model, t, inputs)
            requests.setdefault(keys[t], (t, inputs))
        rows.append(keys)
    return JudgePlan(chosen, rows, requests, k)


def _text(cell) -> str:
    return "" if cell is None or (isinstance(cell, float) and np.isnan(cell)) else str(cell)


def estimate(plan: JudgePlan, *, cache: AnswerCache | None = None) -> JudgeEstimate:
    """Requests and input tokens a run of ``plan`` would send (nothing is sent)."""
    cached = set(cache.get_many(plan.requests)) if cache is not None else set()
    tokens = sum(estimate_tokens(TASKS[task].messages(inputs))
                 for key, (task, inputs) in plan.requests.items() if key not in cached)
    return JudgeEstimate(len(plan.rows), sum(isinstance(r, dict) for r in plan.rows), len(plan.requests),
                         len(cached), tokens)


@dataclass(frozen=True)
class _Failed:
    reason: str


def _ask_all(plan, judge, cache, concurrency, progress) -> tuple[dict, int]:
    outcomes = cached_values(plan.requests, cache)
    n_cached = len(outcomes)
    waiting = {i: {k for k in row.values() if k not in outcomes} for i, row in enumerate(plan.rows)
               if isinstance(row, dict)}
    rows_of: dict = {}
    for i, keys in waiting.items():
        for key in keys:
            rows_of.setdefault(key, []).append(i)
    total, done = len(waiting), sum(not keys for keys in waiting.values())
    tokens_before = judge.tokens
    if progress is not None:
        progress(done, total, 0)

    stop = threading.Event()
    unsaved: list = []

    def work(key):
        if stop.is_set():
            return None
        task, inputs = plan.requests[key]
        try:
            reply = judge.ask(TASKS[task], inputs)
        except ApiError as err:
            if err.fatal:
                stop.set()  # no worker starts another request once the endpoint refuses for good
            raise
        if cache is not None:
            try:
                cache.put(key, task, reply.answer)
            except SGIInputError:  # held by another program past its timeout: keep the paid answer
                unsaved.append((key, task, reply.answer))
        return reply

    pool = ThreadPoolExecutor(max_workers=concurrency)
    try:
        futures = {pool.submit(work, key): key for key in plan.requests if key not in outcomes}
        for future in as_completed(futures):
            key = futures[future]
            try:
                reply = future.result()
                if reply is None:
                    continue
                outcomes[key] = reply.value
            except AnswerError as err:
                outcomes[key] = _Failed(str(err))
            except ApiError as err:
                if err.fatal:
                    answered = sum(not isinstance(v, _Failed) for v in outcomes.values())
                    raise SGIInputError(f"{err.message}; stopped with {answered} of {len(plan.requests)} answers "
                                        "in the cache, a new run resumes from there", hint=err.hint) from None
                outcomes[key] = _Failed(f"request failed, {err.message}")
            for i in rows_of.get(key, ()):
                waiting[i].discard(key)
                done += not waiting[i]
            if progress is not None:
                progress(done, total, judge.tokens - tokens_before)
    except BaseException:
        # Ctrl-C or a fatal refusal: requests in flight are abandoned at once, none is started.
        stop.set()
        judge.cancel()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # quick: a cancelled request returns within a poll step
        if stop.is_set():
            judge.resume()
        if unsaved:
            save_answers(cache, unsaved)
    return outcomes, n_cached


def run_judge(plan: JudgePlan, judge: JudgeClient, *, cache: AnswerCache | None = None, concurrency: int = 4,
              progress: JudgeProgress | None = None) -> tuple[pd.DataFrame, JudgeSummary]:
    """Ask what the cache lacks and score every row.

    Returns
    -------
    columns : DataFrame
        One row per input row, in order: ``judge_<metric>`` columns in [0, 1] (NaN where
        not judged or undefined), for a Yes/No metric its
        :attr:`~sgi_core.judge.metrics.Metric.source_column` (``"logprobs"`` where the score
        is P(yes), ``"answer"`` where it is the bare answer, empty where not judged),
        ``judge_status`` (``ok``, ``not judged: <why>`` or ``<metric>: <reason>; ...``),
        ``judge_model`` and ``judge_prompt_version``.
    summary : JudgeSummary

    Warns
    -----
    JudgeProbabilityWarning
        A Yes/No metric's score is the bare answer on some rows (:func:`~sgi_core.judge.yes_no.warn_without_logprobs`).

    Raises
    ------
    SGIInputError
        The endpoint refuses every request (bad key or URL, a redirect, nothing
        listening); answers received so far stay in the cache.
    """
    concurrency = check_int(concurrency, "concurrency", "run_judge", minimum=1)
    requests_before, tokens_before = judge.n_requests, judge.tokens
    outcomes, n_cached = _ask_all(plan, judge, cache, concurrency, progress)
    scores = {col: np.full(len(plan.rows), np.nan) for col in plan.columns}
    sources = {m.source_column: np.full(len(plan.rows), None, dtype=object) for m in plan.metrics if m.source_column}
    status = []
    for i, row in enumerate(plan.rows):
        if isinstance(row, str):
            status.append(row)
            continue
        notes = []
        for metric in plan.metrics:
            answers = {t: outcomes[row[t]] for t in metric.tasks}
            failed = [a.reason for a in answers.values() if isinstance(a, _Failed)]
            if failed:
                notes.append(f"{metric.name}: {failed[0]}")
                continue
            values, note = metric.compute(answers, plan.k)
            for col, value in values.items():
                scores[col][i] = value
            if metric.source_column:
                sources[metric.source_column][i] = answers[metric.tasks[0]].source
            if note:
                notes.append(f"{metric.name}: {note}")
        status.append("; ".join(notes) or STATUS_OK)
    columns = pd.DataFrame({**scores, **sources})
    n_from_answer = warn_without_logprobs(sources)
    columns["judge_status"] = status
    columns["judge_model"] = judge.model
    columns["judge_prompt_version"] = PROMPT_VERSION
    summary = JudgeSummary(len(plan.rows), sum(isinstance(row, dict) for row in plan.rows), status.count(STATUS_OK),
                           judge.n_requests - requests_before, n_cached, judge.tokens - tokens_before, n_from_answer)
    return columns, summary

