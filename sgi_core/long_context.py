"""Contexts longer than the model's input: how many get truncated, and embeddings built passage by passage.

A sentence-transformers model reads at most ``max_seq_length`` tokens (MiniLM: 256)
and silently drops the rest, so the embedding of a long context describes only its
beginning. :func:`truncation_report` counts the affected texts. The ``mean`` and
``nearest`` context strategies (:data:`~sgi_core.columns.CONTEXT_STRATEGIES`) embed a
context piece by piece instead: each of its passages, cut into consecutive windows that
fit, then either average the L2-normalised piece embeddings (``"mean"``) or keep the
piece nearest the response (``"nearest"``). A context of one passage that fits is one
piece, so such rows score the same under every strategy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.columns import CONTEXT_STRATEGIES
from sgi_core.embedding import EmbeddingCache, encode_unique
from sgi_core.embedding.sentence_transformer import tokenizing_past_the_limit
from sgi_core.errors import SGIInputError
from sgi_core.geometry import l2_normalize
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.checks import check_choice

#: The context strategies that embed a context piece by piece (``joined`` embeds it whole).
PIECE_STRATEGIES = tuple(s for s in CONTEXT_STRATEGIES if s != "joined")

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
    context_strategy : str
        How the contexts were embedded: under ``joined`` a truncated context is embedded
        from its first ``max_seq_length`` tokens only; under ``mean`` and ``nearest`` each
        passage is embedded in windows that fit, so nothing is cut.
    n_passages, n_passages_truncated : int or None
        When the contexts are lists of passages: how many passages, and how many of them
        are longer than the model reads on their own (under ``mean`` and ``nearest``, the
        passages embedded in more than one window). None for plain contexts.
    """

    model_id: str
    max_seq_length: int | None
    n_texts: int
    n_truncated: int | None
    share_truncated: float
    median_tokens: float
    max_tokens: float
    context_strategy: str = "joined"
    n_passages: int | None = None
    n_passages_truncated: int | None = None


def _token_counts(encoder, texts: list[str]) -> np.ndarray:
    """Token count of each text (special tokens included), each distinct text tokenised once."""
    if not texts:
        return np.array([], dtype=np.int64)
    inverse, unique = pd.factorize(pd.Series(texts, dtype=object))
    return encoder.token_counts(list(unique))[inverse]


def truncation_report(encoder, texts, *, passages=None, context_strategy: str = "joined") -> TruncationResult:
    """Count the texts an encoder truncates (token count > ``max_seq_length``), and the passages too.

    Parameters
    ----------
    encoder : Encoder
        Needs ``token_counts(texts)`` and ``max_seq_length`` (the sentence-transformers
        and ONNX backends have both); otherwise the counts are unknown (NaN, with a warning).
    texts : sequence of str
        E.g. the context column; every row counts.
    passages : sequence of sequence of str, optional
        Each row's passages (:func:`~sgi_core.io.passages.row_passages`) when the contexts
        were lists: every passage is counted too.
    context_strategy : {"joined", "mean", "nearest"}, default "joined"
        Recorded, for the words that say what truncation does to the scores.

    Returns
    -------
    TruncationResult
    """
    check_choice(context_strategy, "context_strategy", "truncation_report", CONTEXT_STRATEGIES)
    texts = [str(t) for t in texts]
    flat = None if passages is None else [str(p) for row in passages for p in row]
    max_len = getattr(encoder, "max_seq_length", None)
    if max_len is None or not hasattr(encoder, "token_counts"):
        warn_undefined(f"encoder '{encoder.model_id}' has no tokenizer: truncation cannot be counted")
        return TruncationResult(encoder.model_id, None, len(texts), None, math.nan, math.nan, math.nan,
                                context_strategy, None if flat is None else len(flat))
    counts = _token_counts(encoder, texts)
    n_truncated = int((counts > max_len).sum())
    return TruncationResult(
        model_id=encoder.model_id,
        max_seq_length=int(max_len),
        n_texts=len(texts),
        n_truncated=n_truncated,
        share_truncated=n_truncated / len(texts) if len(texts) else math.nan,
        median_tokens=float(np.median(counts)) if len(texts) else math.nan,
        max_tokens=float(counts.max()) if len(texts) else math.nan,
        context_strategy=context_strategy,
        n_passages=None if flat is None else len(flat),
        n_passages_truncated=None if flat is None else int((_token_counts(encoder, flat) > max_len).sum()),
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


def context_pieces(encoder, passages) -> list[list[str]]:
    """The pieces each row's context embedding is built from: its passages, each cut into windows that fit.

    Parameters
    ----------
    encoder : Encoder
        With ``tokenizer`` and ``max_seq_length`` a passage longer than the model reads is
        cut into consecutive windows of ``max_seq_length - 2`` tokens
        (:func:`split_into_windows`); an encoder without them (an API model, the hashing
        encoder) takes each passage whole.
    passages : sequence of sequence of str
        One sequence of passages per row. Blank passages (empty or only whitespace)
        are left out: a blank piece would pull the mean towards the embedding of
        nothing, and ``nearest`` could pick it.

    Returns
    -------
    list of list of str
        Row by row, the windows of its passages in order.
    """
    texts = [[str(p) for p in row if str(p).strip()] for row in passages]
    tokenizer, max_len = getattr(encoder, "tokenizer", None), getattr(encoder, "max_seq_length", None)
    if tokenizer is None or max_len is None:
        return texts
    window = int(max_len) - _SPECIAL_TOKENS
    return [[piece for p in row for piece in split_into_windows(p, tokenizer, window)] for row in texts]


def context_embeddings(
    encoder,
    passages,
    *,
    strategy: str,
    r_emb: np.ndarray | None = None,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    progress=None,
) -> tuple[np.ndarray, np.ndarray]:
    """One embedding per context built from its passages (:func:`context_pieces`).

    With ``u_ij`` the unit vector of piece ``j`` of row ``i`` (``n_i`` pieces) and ``r_i``
    the row's response embedding:

    - ``mean``: ``c_i = (1 / n_i) * sum_j u_ij``;
    - ``nearest``: ``c_i = u_ik`` with ``k = argmax_j cos(u_ij, r_i)`` (the first on a tie).

    A context of one passage that fits is one piece, so its embedding is its plain
    embedding (up to normalisation, which the angles ignore) under either strategy.

    Parameters
    ----------
    encoder : Encoder
    passages : sequence of sequence of str
        One sequence of passages per row, at least one of them not blank.
    strategy : {"mean", "nearest"}
    r_emb : ndarray of shape (n, d), optional
        Response embeddings, row-aligned with ``passages``; needed by ``nearest``.
    cache : EmbeddingCache, optional
        Pieces are cached like any text.
    batch_size : int
    progress : callable, optional
        ``progress(done, total)`` over pieces that needed encoding.

    Returns
    -------
    c_emb : ndarray of shape (n, d)
    n_pieces : ndarray of int, shape (n,)
    """
    check_choice(strategy, "strategy", "context_embeddings", PIECE_STRATEGIES)
    if strategy == "nearest" and (r_emb is None or len(r_emb) != len(passages)):
        raise SGIInputError("the 'nearest' strategy needs one response embedding per context (r_emb)")
    pieces = context_pieces(encoder, passages)
    n_pieces = np.array([len(row) for row in pieces], dtype=np.int64)
    if (n_pieces == 0).any():
        raise SGIInputError(f"{int((n_pieces == 0).sum())} contexts have no passage to embed")
    flat = [piece for row in pieces for piece in row]
    unique_emb, inverse = encode_unique(encoder, flat, cache=cache, batch_size=batch_size, progress=progress)
    piece_emb = l2_normalize(unique_emb[inverse], name="passage embeddings")
    owner = np.repeat(np.arange(len(pieces)), n_pieces)
    if strategy == "mean":
        sums = np.zeros((len(pieces), piece_emb.shape[1]))
        np.add.at(sums, owner, piece_emb)
        return sums / n_pieces[:, None], n_pieces
    similarity = np.einsum("ij,ij->i", piece_emb, l2_normalize(r_emb, name="r_emb")[owner])
    best = pd.Series(similarity).groupby(owner).idxmax().to_numpy()
    return piece_emb[best], n_pieces
