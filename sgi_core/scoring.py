"""Batch scoring: a table of triples -> the same rows with angles and SGI added.

Texts are deduplicated across the question, context and response columns before
encoding (questions and contexts repeat across rows), looked up in the embedding
cache, and only the missing ones are encoded, in length-sorted batches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.columns import (
    ANGLE_COLUMNS,
    CONTEXT_IS_QUESTION_STATUS,
    CONTEXT_PIECES_COLUMN,
    CONTEXT_STRATEGIES,
    DEFAULT_CONTEXT_STRATEGY,
    PASSAGES_COLUMN,
    STATUS_COLUMN,
    STATUS_OK,
    TEXT_COLUMNS,
    UNBOUNDED_SGI_STATUS,
    WORD_OVERLAP_COLUMN,
    not_scored_status,
)
from sgi_core.embedding import EmbeddingCache, Encoder, ProgressCallback, encode_unique
from sgi_core.errors import SGIInputError
from sgi_core.geometry import sgi_bounds, triple_angles
from sgi_core.io.passages import PASSAGE_SEPARATOR, row_passages
from sgi_core.io.triples import TripleTable
from sgi_core.long_context import context_embeddings
from sgi_core.results import JsonResult
from sgi_core.scores.baselines import lexical_groundedness
from sgi_core.stats.checks import check_choice


def _status(angles, unscorable_rows: np.ndarray, reasons: dict[int, str], n: int) -> np.ndarray:
    status = np.full(n, STATUS_OK, dtype=object)
    flags = (
        (angles.context_is_question, f"{CONTEXT_IS_QUESTION_STATUS} (SGI ~1 whatever the response)"),
        (angles.response_is_question, "degenerate: response equals question"),
        (angles.response_is_context, UNBOUNDED_SGI_STATUS),
    )
    scored = np.flatnonzero(~unscorable_rows)
    for mask, text in flags:
        status[scored[mask]] = text
    for row in np.flatnonzero(unscorable_rows):
        status[row] = not_scored_status(reasons[row + 1])
    return status


def _embed(table: TripleTable, encoder: Encoder, *, context_strategy: str, cache, batch_size: int, progress):
    """``(q_emb, c_emb, r_emb, scorable, n_pieces)``; ``n_pieces`` is None under ``joined``."""
    check_choice(context_strategy, "context_strategy", "score_table", CONTEXT_STRATEGIES)
    n = table.n_rows
    scorable = np.ones(n, dtype=bool)
    if table.unscorable:
        scorable[np.asarray(list(table.unscorable), dtype=np.int64) - 1] = False
    joined = context_strategy == "joined"
    roles = TEXT_COLUMNS if joined else ("question", "response")
    rows = table.frame.loc[scorable, list(roles)]
    m = len(rows)
    if m == 0:
        empty = np.empty((0, 0), dtype=np.float32)
        return empty, empty, empty, scorable, None if joined else np.zeros(0, dtype=np.int64)
    texts = np.concatenate([rows[col].to_numpy(dtype=object) for col in roles])
    unique_emb, inverse = encode_unique(encoder, texts, cache=cache, batch_size=batch_size, progress=progress)
    q_emb, r_emb = unique_emb[inverse[:m]], unique_emb[inverse[-m:]]
    if joined:
        return q_emb, unique_emb[inverse[m : 2 * m]], r_emb, scorable, None
    passages = row_passages(table.frame, table.passages)
    chosen = [passages[i] for i in np.flatnonzero(scorable)]
    c_emb, n_pieces = context_embeddings(encoder, chosen, strategy=context_strategy, r_emb=r_emb, cache=cache,
                                         batch_size=batch_size, progress=progress)
    return q_emb, c_emb, r_emb, scorable, n_pieces


def embed_table(
    table: TripleTable,
    encoder: Encoder,
    *,
    context_strategy: str = DEFAULT_CONTEXT_STRATEGY,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    progress: ProgressCallback | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Embeddings of the scorable rows of a table.

    Parameters
    ----------
    table : TripleTable
    encoder : Encoder
    context_strategy : {"joined", "mean", "nearest"}, default "joined"
        How a context becomes one embedding (:data:`~sgi_core.columns.CONTEXT_STRATEGIES`):
        ``joined`` embeds the ``context`` text; ``mean`` and ``nearest`` build it from the
        row's passages (:func:`~sgi_core.io.passages.row_passages`) by
        :func:`~sgi_core.long_context.context_embeddings`.
    cache : EmbeddingCache, optional
    batch_size : int
    progress : callable, optional

    Returns
    -------
    q_emb, c_emb, r_emb : ndarray of shape (m, d)
        One row per scorable triple.
    scorable : ndarray of bool, shape (n,)
        Which rows of ``table.frame`` the embeddings belong to.
    """
    return _embed(table, encoder, context_strategy=context_strategy, cache=cache, batch_size=batch_size,
                  progress=progress)[:4]


def score_table(
    table: TripleTable,
    encoder: Encoder,
    *,
    context_strategy: str = DEFAULT_CONTEXT_STRATEGY,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    progress: ProgressCallback | None = None,
) -> pd.DataFrame:
    """Score every row of a table.

    Adds the :data:`~sgi_core.columns.SCORE_COLUMNS`: ``theta_qc``, ``theta_rq``,
    ``theta_rc`` (radians), ``sgi`` (high = grounded) and ``sgi_status``
    (:data:`~sgi_core.columns.STATUS_OK`, ``"degenerate: ..."`` for rows whose embeddings
    coincide, or ``"not scored: <reason>"`` with NaN scores) to a copy of ``table.frame``,
    and the word-overlap baseline :data:`~sgi_core.columns.WORD_OVERLAP_COLUMN` of every
    row (:func:`~sgi_core.scores.baselines.lexical_groundedness`, NaN where the response
    has no content word), so that no analysis of the scored rows computes it again. A table
    read from lists of passages also gets :data:`~sgi_core.columns.PASSAGES_COLUMN` (each
    row's passages, as a list), and the ``mean`` and ``nearest`` strategies
    :data:`~sgi_core.columns.CONTEXT_PIECES_COLUMN` (0 for a row not scored). The output has
    exactly the input rows, in input order.

    Parameters
    ----------
    table : TripleTable
    encoder : Encoder
    context_strategy : {"joined", "mean", "nearest"}, default "joined"
        See :func:`embed_table`.
    cache : EmbeddingCache, optional
    batch_size : int
    progress : callable, optional
        ``progress(done, total)`` over texts that needed encoding.
    """
    q_emb, c_emb, r_emb, scorable, n_pieces = _embed(table, encoder, context_strategy=context_strategy, cache=cache,
                                                     batch_size=batch_size, progress=progress)
    n = table.n_rows
    out = table.frame.copy()
    if table.passages is not None:
        out[PASSAGES_COLUMN] = pd.Series([list(row) for row in table.passages], index=out.index, dtype=object)
    for col in (*ANGLE_COLUMNS, "sgi"):
        out[col] = np.nan
    if n_pieces is not None:
        out[CONTEXT_PIECES_COLUMN] = 0
    if scorable.any():
        angles = triple_angles(q_emb, c_emb, r_emb)
        out.loc[scorable, "theta_qc"] = angles.theta_qc
        out.loc[scorable, "theta_rq"] = angles.theta_rq
        out.loc[scorable, "theta_rc"] = angles.theta_rc
        out.loc[scorable, "sgi"] = angles.sgi
        if n_pieces is not None:
            out.loc[scorable, CONTEXT_PIECES_COLUMN] = n_pieces
        status = _status(angles, ~scorable, table.unscorable, n)
    else:
        status = np.array([not_scored_status(table.unscorable[i + 1]) for i in range(n)], dtype=object)
    out[STATUS_COLUMN] = status
    out[WORD_OVERLAP_COLUMN] = lexical_groundedness(out["response"], out["context"], warn=False)
    return out


@dataclass(frozen=True)
class ScoreSummary(JsonResult):
    """What a run of ``score`` did, on either engine (:mod:`sgi_core.pipelines.local_engine`,
    :mod:`sgi_core.pipelines.ray_engine`).

    Attributes
    ----------
    engine : {"local", "ray"}
    rows : int
        Rows written (every input row).
    scored : int
        Rows with a finite SGI.
    seconds : float
        Wall time from reading to the written output.
    new_texts : int or None
        Texts that had to be encoded (the rest came from the cache); None on Ray,
        whose actors each keep their own count.
    chunks : int or None
        Chunks of rows read and scored one after another; None on Ray.
    shards : int
        Input files read.
    actors : int
        Encoders scoring at once (one in the local engine).
    blank_passages : int or None
        Blank passages (empty or only whitespace) left out of the context lists before
        embedding (:func:`~sgi_core.io.passages.context_passages`); None on Ray, whose
        actors each validate their own rows.
    """

    engine: str
    rows: int
    scored: int
    seconds: float
    new_texts: int | None = None
    chunks: int | None = None
    shards: int = 1
    actors: int = 1
    blank_passages: int | None = None


@dataclass(frozen=True)
class TripleScore(JsonResult):
    """Angles and SGI of one triple, with the bounds the triangle inequality puts on its SGI.

    Attributes
    ----------
    theta_qc, theta_rq, theta_rc : float
        Angles in radians.
    sgi : float
        ``theta_rq / (theta_rc + 1e-8)``; high = grounded.
    sgi_lower, sgi_upper : float
        Range of SGI over every response at this ``theta_rc`` for this question and
        context (:func:`sgi_core.geometry.sgi_bounds`).
    """

    theta_qc: float
    theta_rq: float
    theta_rc: float
    sgi: float
    sgi_lower: float
    sgi_upper: float


def score_triple(question: str, context: str, response: str, encoder: Encoder, *,
                 cache: EmbeddingCache | None = None, context_strategy: str = DEFAULT_CONTEXT_STRATEGY,
                 passages=None) -> TripleScore:
    """Score one (question, context, response) triple.

    Parameters
    ----------
    question, context, response : str
    encoder : Encoder
    cache : EmbeddingCache, optional
    context_strategy : {"joined", "mean", "nearest"}, default "joined"
        As in :func:`score_table`.
    passages : sequence of str, optional
        The context's passages, for ``mean`` and ``nearest``; by default the context's
        paragraphs (the text between blank lines, as passages are joined).

    Raises
    ------
    SGIInputError
        When a text is empty or only whitespace.

    Examples
    --------
    >>> from sgi_core.embedding import HashingEncoder
    >>> res = score_triple("who wrote hamlet", "hamlet was written by shakespeare", "shakespeare",
    ...                    HashingEncoder())
    >>> res.sgi_lower <= res.sgi <= res.sgi_upper
    True
    """
    for role, text in (("question", question), ("context", context), ("response", response)):
        if not str(text).strip():
            raise SGIInputError(f"the {role} is empty", hint=f"Give a {role} to score the triple")
    check_choice(context_strategy, "context_strategy", "score_triple", CONTEXT_STRATEGIES)
    unique_emb, inverse = encode_unique(encoder, [question, context, response], cache=cache)
    q_emb, c_emb, r_emb = (unique_emb[inverse[i]][None, :] for i in range(3))
    if context_strategy != "joined":
        pieces = [p for p in (passages if passages is not None else context.split(PASSAGE_SEPARATOR)) if p.strip()]
        c_emb, _ = context_embeddings(encoder, [pieces or [context]], strategy=context_strategy, r_emb=r_emb,
                                      cache=cache)
    angles = triple_angles(q_emb, c_emb, r_emb)
    lower, upper = sgi_bounds(angles.theta_qc, angles.theta_rc)
    return TripleScore(
        theta_qc=float(angles.theta_qc[0]), theta_rq=float(angles.theta_rq[0]), theta_rc=float(angles.theta_rc[0]),
        sgi=float(angles.sgi[0]), sgi_lower=float(lower[0]), sgi_upper=float(upper[0]),
    )
