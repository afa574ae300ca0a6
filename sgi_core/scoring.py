"""Batch scoring: a table of triples -> the same rows with angles and SGI added.

Texts are deduplicated across the question, context and response columns before
encoding (questions and contexts repeat across rows), looked up in the embedding
cache, and only the missing ones are encoded, in length-sorted batches.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sgi_core.data import TEXT_COLUMNS, TripleTable
from sgi_core.embedding import EmbeddingCache, Encoder, ProgressCallback, encode_unique
from sgi_core.geometry import triple_angles

#: Columns added by :func:`score_table`.
SCORE_COLUMNS = ("theta_qc", "theta_rq", "theta_rc", "sgi", "sgi_status")

STATUS_OK = "ok"
#: Start of the ``sgi_status`` of a row whose context embedding equals its question's.
CONTEXT_IS_QUESTION_STATUS = "degenerate: context equals question"


def _status(angles, unscorable_rows: np.ndarray, reasons: dict[int, str], n: int) -> np.ndarray:
    status = np.full(n, STATUS_OK, dtype=object)
    flags = (
        (angles.context_is_question, f"{CONTEXT_IS_QUESTION_STATUS} (SGI ~1 whatever the response)"),
        (angles.response_is_question, "degenerate: response equals question"),
        (angles.response_is_context, "degenerate: response equals context (SGI unbounded)"),
    )
    scored = np.flatnonzero(~unscorable_rows)
    for mask, text in flags:
        status[scored[mask]] = text
    for row in np.flatnonzero(unscorable_rows):
        status[row] = f"not scored: {reasons[row + 1]}"
    return status


def embed_table(
    table: TripleTable,
    encoder: Encoder,
    *,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    progress: ProgressCallback | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Embeddings of the scorable rows of a table.

    Returns
    -------
    q_emb, c_emb, r_emb : ndarray of shape (m, d), float32
        One row per scorable triple.
    scorable : ndarray of bool, shape (n,)
        Which rows of ``table.frame`` the embeddings belong to.
    """
    n = table.n_rows
    scorable = np.ones(n, dtype=bool)
    if table.unscorable:
        scorable[np.asarray(list(table.unscorable), dtype=np.int64) - 1] = False
    rows = table.frame.loc[scorable, list(TEXT_COLUMNS)]
    texts = np.concatenate([rows[col].to_numpy(dtype=object) for col in TEXT_COLUMNS])
    unique_emb, inverse = encode_unique(encoder, texts, cache=cache, batch_size=batch_size, progress=progress)
    m = len(rows)
    if m == 0:
        empty = np.empty((0, 0), dtype=np.float32)
        return empty, empty, empty, scorable
    return unique_emb[inverse[:m]], unique_emb[inverse[m : 2 * m]], unique_emb[inverse[2 * m :]], scorable


def score_table(
    table: TripleTable,
    encoder: Encoder,
    *,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    progress: ProgressCallback | None = None,
) -> pd.DataFrame:
    """Score every row of a table.

    Adds ``theta_qc``, ``theta_rq``, ``theta_rc`` (radians), ``sgi`` (high =
    grounded) and ``sgi_status`` (``"ok"``, ``"degenerate: ..."`` for rows whose
    embeddings coincide, or ``"not scored: <reason>"`` with NaN scores) to a copy of
    ``table.frame``. The output has exactly the input rows, in input order.

    Parameters
    ----------
    table : TripleTable
    encoder : Encoder
    cache : EmbeddingCache, optional
    batch_size : int
    progress : callable, optional
        ``progress(done, total)`` over texts that needed encoding.
    """
    q_emb, c_emb, r_emb, scorable = embed_table(table, encoder, cache=cache, batch_size=batch_size, progress=progress)
    n = table.n_rows
    out = table.frame.copy()
    for col in ("theta_qc", "theta_rq", "theta_rc", "sgi"):
        out[col] = np.nan
    if scorable.any():
        angles = triple_angles(q_emb, c_emb, r_emb)
        out.loc[scorable, "theta_qc"] = angles.theta_qc
        out.loc[scorable, "theta_rq"] = angles.theta_rq
        out.loc[scorable, "theta_rc"] = angles.theta_rc
        out.loc[scorable, "sgi"] = angles.sgi
        status = _status(angles, ~scorable, table.unscorable, n)
    else:
        status = np.array([f"not scored: {table.unscorable[i + 1]}" for i in range(n)], dtype=object)
    out["sgi_status"] = status
    return out
