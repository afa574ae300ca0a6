"""Contexts longer than the model's input: how many get truncated, and a chunked alternative.

A sentence-transformers model reads at most ``max_seq_length`` tokens (MiniLM: 256)
and silently drops the rest, so the embedding of a long context describes only its
beginning. :func:`truncation_report` counts the affected texts. The chunked strategy
splits each text into consecutive windows that fit, embeds every window and then
either averages the L2-normalised window embeddings (``"mean"``) or keeps the window
nearest the response (``"nearest"``). A text that fits in one window gets exactly its
plain embedding, so rows with short contexts score the same under every strategy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.io.triples import TripleTable
from sgi_core.embedding import EmbeddingCache, encode_unique
from sgi_core.embedding.sentence_transformer import tokenizing_past_the_limit
from sgi_core.errors import SGIInputError
from sgi_core.evaluation.checks import check_choice
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.geometry import l2_normalize, triple_angles
from sgi_core.scoring import embed_table, score_table

STRATEGIES = ("mean", "nearest")

#: Special tokens ([CLS]/[SEP], <s>/</s>) the model adds around each window.
_SPECIAL_TOKENS = 2


@dataclass(frozen=True)
class TruncationResult(JsonResult):
    """How many texts exceed the model's input length.

    Attributes
    ----------
    model_id : str
    max_seq_length : int or None
        None when the encoder has no tokenizer to count with (then all counts are None/NaN).
    n_texts : int
    n_truncated : int or None
        Texts whose token count (special tokens included) exceeds ``max_seq_length``.
    share_truncated : float
    median_tokens, max_tokens : float
    """

    model_id: str
    max_seq_length: int | None
    n_texts: int
    n_truncated: int | None
    share_truncated: float
    median_tokens: float
    max_tokens: float


def truncation_report(encoder, texts) -> TruncationResult:
    """Count the texts an encoder truncates (token count > ``max_seq_length``).

    Parameters
    ----------
    encoder : Encoder
        Needs ``token_counts(texts)`` and ``max_seq_length`` (the sentence-transformers
        backend has both); otherwise the counts are unknown (NaN, with a warning).
    texts : sequence of str
        E.g. the context column; every row counts.

    Returns
    -------
    TruncationResult
    """
    texts = [str(t) for t in texts]
    max_len = getattr(encoder, "max_seq_length", None)
    if max_len is None or not hasattr(encoder, "token_counts"):
        warn_undefined(f"encoder '{encoder.model_id}' has no tokenizer: truncation cannot be counted")
        return TruncationResult(encoder.model_id, None, len(texts), None, math.nan, math.nan, math.nan)
    inverse, unique = pd.factorize(pd.Series(texts, dtype=object))
    counts = encoder.token_counts(list(unique))[inverse] if len(texts) else np.array([], dtype=np.int64)
    n_truncated = int((counts > max_len).sum())
    return TruncationResult(
        model_id=encoder.model_id,
        max_seq_length=int(max_len),
        n_texts=len(texts),
        n_truncated=n_truncated,
        share_truncated=n_truncated / len(texts) if len(texts) else math.nan,
        median_tokens=float(np.median(counts)) if len(texts) else math.nan,
        max_tokens=float(counts.max()) if len(texts) else math.nan,
    )


def split_into_windows(text: str, tokenizer, max_tokens: int) -> list[str]:
    """Cut a text into consecutive pieces of at most ``max_tokens`` tokens each.

    Cuts fall between tokens, at character offsets from the (fast) tokenizer, so each
    piece is a verbatim substring. A text that fits is returned whole.
    """
    if max_tokens < 1:
        raise SGIInputError(f"window size must be at least 1 token; got {max_tokens}")
    with tokenizing_past_the_limit():
        offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    if len(offsets) <= max_tokens:
        return [text]
    return [
        text[offsets[start][0] : offsets[min(start + max_tokens, len(offsets)) - 1][1]]
        for start in range(0, len(offsets), max_tokens)
    ]


def chunked_context_embeddings(
    encoder,
    contexts,
    *,
    strategy: str = "mean",
    r_emb: np.ndarray | None = None,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
) -> tuple[np.ndarray, np.ndarray]:
    """One embedding per context built from windows that fit the model.

    Parameters
    ----------
    encoder : Encoder
        With ``tokenizer`` and ``max_seq_length`` (sentence-transformers backend).
    contexts : sequence of str
    strategy : {"mean", "nearest"}
        ``mean``: average of the L2-normalised window embeddings; ``nearest``: the
        window with the smallest angle to the row's response (needs ``r_emb``).
    r_emb : ndarray of shape (n, d), optional
        Response embeddings, row-aligned with ``contexts``.
    cache : EmbeddingCache, optional
        Windows are cached like any text (a context that fits is its own window).
    batch_size : int

    Returns
    -------
    c_emb : ndarray of shape (n, d)
    n_windows : ndarray of int, shape (n,)
    """
    check_choice(strategy, "strategy", "chunked_context_embeddings", STRATEGIES)
    tokenizer, max_len = getattr(encoder, "tokenizer", None), getattr(encoder, "max_seq_length", None)
    if tokenizer is None or max_len is None:
        raise SGIInputError(
            f"encoder '{encoder.model_id}' has no tokenizer, so contexts cannot be cut into windows",
            hint="Use a sentence-transformers model (e.g. minilm) for the chunked strategy",
        )
    contexts = [str(c) for c in contexts]
    if strategy == "nearest" and (r_emb is None or len(r_emb) != len(contexts)):
        raise SGIInputError("the 'nearest' strategy needs one response embedding per context (r_emb)")
    windows = [split_into_windows(c, tokenizer, int(max_len) - _SPECIAL_TOKENS) for c in contexts]
    n_windows = np.array([len(w) for w in windows], dtype=np.int64)
    flat = [piece for pieces in windows for piece in pieces]
    unique_emb, inverse = encode_unique(encoder, flat, cache=cache, batch_size=batch_size)
    window_emb = l2_normalize(unique_emb[inverse], name="window embeddings")
    owner = np.repeat(np.arange(len(contexts)), n_windows)
    if strategy == "mean":
        sums = np.zeros((len(contexts), window_emb.shape[1]))
        np.add.at(sums, owner, window_emb)
        return sums / n_windows[:, None], n_windows
    similarity = np.einsum("ij,ij->i", window_emb, l2_normalize(r_emb, name="r_emb")[owner])
    best = pd.Series(similarity).groupby(owner).idxmax().to_numpy()
    return window_emb[best], n_windows


def score_table_chunked(
    table: TripleTable,
    encoder,
    *,
    strategy: str = "mean",
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
) -> pd.DataFrame:
    """:func:`sgi_core.scoring.score_table` with chunked instead of truncated contexts.

    ``theta_qc``, ``theta_rc`` and ``sgi`` use the chunked context embedding; the
    added column ``context_windows`` says how many windows each context needed (1 =
    it fits, and the row scores exactly as with plain truncation). ``sgi_status`` is
    that of plain scoring.
    """
    check_choice(strategy, "strategy", "score_table_chunked", STRATEGIES)
    out = score_table(table, encoder, cache=cache, batch_size=batch_size)
    q_emb, _, r_emb, scorable = embed_table(table, encoder, cache=cache, batch_size=batch_size)
    out["context_windows"] = 0
    if scorable.any():
        contexts = table.frame.loc[scorable, "context"]
        c_emb, n_windows = chunked_context_embeddings(
            encoder, contexts, strategy=strategy, r_emb=r_emb, cache=cache, batch_size=batch_size
        )
        angles = triple_angles(q_emb, c_emb, r_emb)
        out.loc[scorable, "theta_qc"] = angles.theta_qc
        out.loc[scorable, "theta_rc"] = angles.theta_rc
        out.loc[scorable, "sgi"] = angles.sgi
        out.loc[scorable, "context_windows"] = n_windows
    return out
