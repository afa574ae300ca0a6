"""Retrieval metrics: Recall@K and MRR from ranked retrieved ids and relevant ids.

Per query, with ``retrieved`` the ranked list of retrieved ids and ``relevant``
the set of relevant ids:

- ``hit@K = 1`` if any of the first ``K`` retrieved ids is relevant, else 0
  (a list shorter than ``K`` is used whole). ``Recall@K`` is the mean of
  ``hit@K`` over queries: the share of queries with at least one relevant id in
  the top ``K``.
- ``RR = 1 / rank`` of the first relevant retrieved id (ranks start at 1; a
  repeated id keeps the rank of its first appearance), 0 when none is retrieved.
  ``MRR`` is the mean of ``RR``.

A query with no relevant ids cannot be judged: its metrics are NaN, it is left out
of the means, and it is counted in ``n_without_relevant``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.jsonio import loads_json
from sgi_core.results import JsonResult

DEFAULT_KS = (3, 5, 10)

#: Column names recognised for retrieved and relevant id lists.
RETRIEVED_COLUMNS = ("retrieved_ids", "retrieved", "retrieved_doc_ids")
RELEVANT_COLUMNS = ("relevant_ids", "relevant", "gold_ids", "relevant_doc_ids")


def parse_id_list(cell, *, source: str = "<input>", column: str = "ids", row: int | None = None) -> list[str]:
    """Parse one cell into a list of ids.

    Accepts a JSON array (``["d1", "d2"]``), a ``|``-separated string (``d1|d2``),
    a Python list, or an empty / missing cell (empty list). Ids are compared as
    strings, stripped of surrounding spaces.

    Examples
    --------
    >>> parse_id_list('["a", 2]'), parse_id_list("a | b"), parse_id_list("")
    (['a', '2'], ['a', 'b'], [])
    """
    if cell is None or (isinstance(cell, float) and np.isnan(cell)):
        return []
    if isinstance(cell, (list, tuple, np.ndarray)):
        return [str(x).strip() for x in cell if str(x).strip()]
    text = str(cell).strip()
    if not text:
        return []
    if text.startswith("["):
        where = {"source": source, "column": column, "rows": [row] if row is not None else None}
        parsed = loads_json(text, **where, hint='Write ids as a flat JSON array like ["d1", "d2"] or as d1|d2')
        if not isinstance(parsed, list):
            raise SGIInputError("expected a list of ids", **where)
        return [str(x).strip() for x in parsed if str(x).strip()]
    return [part.strip() for part in text.split("|") if part.strip()]


def find_retrieval_columns(columns) -> tuple[str | None, str | None]:
    """Names of the retrieved-ids and relevant-ids columns, or ``None`` where absent."""
    lower = {str(c).strip().lower(): c for c in columns}
    retrieved = next((lower[n] for n in RETRIEVED_COLUMNS if n in lower), None)
    relevant = next((lower[n] for n in RELEVANT_COLUMNS if n in lower), None)
    return retrieved, relevant


def first_relevant_rank(retrieved: list[str], relevant: set[str]) -> int:
    """1-based rank of the first relevant id in ``retrieved``, 0 when none."""
    for rank, doc_id in enumerate(retrieved, start=1):
        if doc_id in relevant:
            return rank
    return 0


@dataclass(frozen=True)
class RetrievalResult(JsonResult):
    """Retrieval metrics over a set of queries.

    Attributes
    ----------
    ks : tuple of int
    n_queries : int
        All rows, judged or not.
    n_without_relevant : int
        Rows with no relevant ids (metrics NaN, left out of the means).
    recall_at_k : dict
        ``K -> Recall@K``.
    mrr : float
    first_relevant_rank : list of int
        Per row: rank of the first relevant retrieved id, 0 when none, -1 when the
        row has no relevant ids.
    """

    ks: tuple[int, ...]
    n_queries: int
    n_without_relevant: int
    recall_at_k: dict[int, float]
    mrr: float
    first_relevant_rank: list

    def hits(self, k: int) -> np.ndarray:
        """Per-row hit@K as 1.0 / 0.0, NaN for rows with no relevant ids."""
        ranks = np.asarray(self.first_relevant_rank)
        out = ((ranks >= 1) & (ranks <= k)).astype(float)
        out[ranks < 0] = np.nan
        return out

    def reciprocal_ranks(self) -> np.ndarray:
        """Per-row 1/rank, 0 when no relevant id is retrieved, NaN when none exists."""
        ranks = np.asarray(self.first_relevant_rank, dtype=float)
        out = np.where(ranks >= 1, 1.0 / np.maximum(ranks, 1), 0.0)
        out[ranks < 0] = np.nan
        return out


def retrieval_metrics(retrieved_lists, relevant_lists, *, ks=DEFAULT_KS) -> RetrievalResult:
    """Recall@K for each ``K`` in ``ks`` and MRR (see the module docstring).

    Parameters
    ----------
    retrieved_lists : sequence of list of str
        Ranked retrieved ids per query.
    relevant_lists : sequence of list of str
        Relevant ids per query.
    ks : sequence of int

    Examples
    --------
    >>> r = retrieval_metrics([["a", "b"], ["c", "d", "e"]], [["b"], ["x"]], ks=(1, 3))
    >>> r.recall_at_k, r.mrr
    ({1: 0.0, 3: 0.5}, 0.25)
    """
    if len(retrieved_lists) != len(relevant_lists):
        raise SGIInputError(f"{len(retrieved_lists)} retrieved lists but {len(relevant_lists)} relevant lists")
    bad_k = [k for k in ks if int(k) != k or k < 1]
    if bad_k:
        raise SGIInputError(f"K must be an int >= 1. Got {bad_k[0]!r} instead")
    ranks = [
        first_relevant_rank(list(retrieved), set(relevant)) if len(relevant) else -1
        for retrieved, relevant in zip(retrieved_lists, relevant_lists)
    ]
    rank_array = np.asarray(ranks, dtype=float)
    judged = rank_array >= 0
    n_without = int((~judged).sum())
    if n_without:
        warnings.warn(f"{n_without} queries have no relevant ids and are left out of Recall@K and MRR",
                      stacklevel=2)
    if judged.any():
        judged_ranks = rank_array[judged]
        recall = {int(k): float(np.mean((judged_ranks >= 1) & (judged_ranks <= k))) for k in ks}
        mrr = float(np.mean(np.where(judged_ranks >= 1, 1.0 / np.maximum(judged_ranks, 1), 0.0)))
    else:
        recall, mrr = {int(k): float("nan") for k in ks}, float("nan")
    return RetrievalResult(tuple(int(k) for k in ks), len(ranks), n_without, recall, mrr, [int(r) for r in ranks])


def retrieval_metrics_from_frame(frame: pd.DataFrame, *, retrieved_col: str | None = None,
                                 relevant_col: str | None = None, ks=DEFAULT_KS,
                                 source: str = "<input>") -> RetrievalResult | None:
    """Parse the id-list columns of a frame and compute :func:`retrieval_metrics`.

    Returns ``None`` when the frame has no retrieved/relevant id columns.
    """
    found_retrieved, found_relevant = find_retrieval_columns(frame.columns)
    retrieved_col = retrieved_col or found_retrieved
    relevant_col = relevant_col or found_relevant
    if retrieved_col is None or relevant_col is None:
        return None
    retrieved = [parse_id_list(v, source=source, column=retrieved_col, row=i + 1)
                 for i, v in enumerate(frame[retrieved_col].tolist())]
    relevant = [parse_id_list(v, source=source, column=relevant_col, row=i + 1)
                for i, v in enumerate(frame[relevant_col].tolist())]
    return retrieval_metrics(retrieved, relevant, ks=ks)


@dataclass(frozen=True)
class Diagnosis(JsonResult):
    """One verdict of :func:`diagnose`: when it applies and what it asks for.

    Attributes
    ----------
    name : str
    rule : str
        The condition, tested only on queries that no earlier diagnosis took.
    meaning : str
        What to fix.
    """

    name: str
    rule: str
    meaning: str


#: Per-query diagnoses in the order they are tested; each query gets the first whose rule applies.
DIAGNOSES = (
    Diagnosis("no relevant ids", "the row lists no relevant id", "retrieval cannot be judged"),
    Diagnosis("retrieval miss", "no relevant id in the top K", "fix retrieval (recall)"),
    Diagnosis("generation", "the response is not grounded (SGI below the threshold)",
              "retrieval found a relevant document but the response does not draw on its context"),
    Diagnosis("ranking", "the first relevant id is below rank 1", "consider a reranker (MRR)"),
    Diagnosis("ok", "otherwise: relevant document ranked first and the response grounded", "nothing to fix"),
)


def diagnose(result: RetrievalResult, grounded: np.ndarray, *, k: int = 5) -> pd.DataFrame:
    """Classify each query by where a RAG pipeline fails.

    Each query gets the first of :data:`DIAGNOSES` whose rule applies: no relevant
    ids -> ``"no relevant ids"``; no relevant id in the top ``k`` -> ``"retrieval
    miss"``; response not grounded (``grounded`` False, e.g. SGI below the chosen
    threshold) -> ``"generation"``; first relevant id below rank 1 -> ``"ranking"``;
    else ``"ok"``.

    Parameters
    ----------
    result : RetrievalResult
    grounded : array_like of bool
        Per query, whether the response counts as grounded.
    k : int

    Returns
    -------
    DataFrame
        Columns ``diagnosis``, ``rule``, ``meaning``, ``n``, ``share``, one row per
        diagnosis in the order of :data:`DIAGNOSES`.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     res = retrieval_metrics([["a"], ["x"], ["x", "a"], ["x", "a"], ["a"]], [["a"], ["a"], ["a"], ["a"], []])
    >>> diagnose(res, [True, True, False, True, True], k=5)["n"].tolist()
    [1, 1, 1, 1, 1]
    """
    ranks = np.asarray(result.first_relevant_rank)
    grounded = np.asarray(grounded, dtype=bool)
    if len(grounded) != len(ranks):
        raise SGIInputError(f"{len(ranks)} queries but {len(grounded)} groundedness values")
    applies = {
        "no relevant ids": ranks < 0,
        "retrieval miss": (ranks == 0) | (ranks > k),
        "generation": ~grounded,
        "ranking": ranks > 1,
    }
    tested, fallback = DIAGNOSES[:-1], DIAGNOSES[-1]
    labels = np.select([applies[d.name] for d in tested], [d.name for d in tested], default=fallback.name)
    counts = pd.Series(labels).value_counts()
    rows = [{"diagnosis": d.name, "rule": d.rule, "meaning": d.meaning, "n": int(counts.get(d.name, 0))}
            for d in DIAGNOSES]
    table = pd.DataFrame(rows)
    table["share"] = table["n"] / max(len(ranks), 1)
    return table
