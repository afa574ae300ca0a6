"""Claim-level grounding: each response sentence against the context, no labels needed.

One vector per response averages a supported claim with an invented one, so each response sentence
is scored alone against the context's sentences (:func:`sentence_scores`) and a row keeps its weakest
and its mean sentence (:func:`claim_scores`), all oriented high = grounded.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sgi_core.columns import TEXT_COLUMNS
from sgi_core.detectors.columns import CLAIM_COLUMNS
from sgi_core.embedding import EmbeddingCache, Encoder, ProgressCallback, encode_unique
from sgi_core.errors import SGIInputError
from sgi_core.geometry import l2_normalize, pairwise_angle, sgi_from_angles
from sgi_core.io.passages import row_passages
from sgi_core.stats.checks import check_int
from sgi_core.text.sentences import DEFAULT_MAX_WORDS, split_pieces


def _texts(frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    missing = [c for c in TEXT_COLUMNS if c not in frame.columns]
    if missing:
        raise SGIInputError(f"claim scoring needs the columns {', '.join(TEXT_COLUMNS)}; "
                            f"missing {', '.join(missing)}",
                            hint="Read the file with sgi_core.io.triples.load_triples, which maps the columns")
    texts = frame[list(TEXT_COLUMNS)].fillna("").astype(str)
    scorable = (texts.apply(lambda col: col.str.strip() != "")).all(axis=1).to_numpy()
    return texts, scorable


def passage_pieces(passages, *, max_words: int = DEFAULT_MAX_WORDS) -> tuple[list[str], list[int]]:
    """The pieces (:func:`split_pieces`) of each passage on its own, and each piece's 1-based passage.

    Examples
    --------
    >>> passage_pieces(["Ann wrote it. Bob read", "it. Carl sang."])
    (['Ann wrote it.', 'Bob read', 'it.', 'Carl sang.'], [1, 1, 2, 2])
    """
    pieces, numbers = [], []
    for number, passage in enumerate(passages, start=1):
        split = split_pieces(passage, max_words=max_words)
        pieces.extend(split)
        numbers.extend([number] * len(split))
    return pieces, numbers


#: Columns returned by :func:`sentence_scores`, and their types.
SENTENCE_COLUMNS = {"row": object, "sentence": object, "support": float, "context_piece": object,
                    "passage": np.int64, "n_passages": np.int64, "sgi": float}


def sentence_scores(
    frame: pd.DataFrame,
    encoder: Encoder,
    *,
    passages: tuple | None = None,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    max_words: int = DEFAULT_MAX_WORDS,
    progress: ProgressCallback | None = None,
) -> pd.DataFrame:
    """Support and SGI of every response sentence against its row's context pieces.

    Parameters
    ----------
    frame : DataFrame
        With ``question``, ``context`` and ``response`` columns. Rows where one of
        them is empty, or whose passages hold no piece, are skipped.
    encoder : Encoder
    passages : tuple of tuple of str, optional
        Each row's passages (:attr:`~sgi_core.io.triples.TripleTable.passages`); without
        them, :func:`~sgi_core.io.passages.row_passages` reads the frame's passages
        column, else takes the context as one passage. One tuple per row of ``frame``, else
        :class:`SGIInputError`.
    cache : EmbeddingCache, optional
        Every distinct question, sentence and context piece is embedded once
        (:func:`sgi_core.embedding.encode_unique`), through the cache if given.
    batch_size : int, default 64
    max_words : int, default 64
        Window size for long sentences (:func:`split_pieces`).
    progress : callable, optional
        ``progress(done, total)`` over the texts encoded.

    Returns
    -------
    DataFrame
        One row per response sentence, with :data:`SENTENCE_COLUMNS`: ``row`` (the
        frame's index label), ``sentence``, ``support`` (``max_j cos(s, c_j)``),
        ``context_piece`` (the nearest ``c_j``; the first such piece on a tie),
        ``passage`` (1-based number of the passage holding it), ``n_passages`` (the
        row's passages) and ``sgi`` (``theta(s, q) / (theta(s, c_j) + 1e-8)``).

    Examples
    --------
    >>> from sgi_core.embedding import HashingEncoder
    >>> frame = pd.DataFrame({"question": ["Who wrote it?"], "context": ["Bob read it.\\n\\nAnn wrote it."],
    ...                       "response": ["Ann wrote it. Carl sang."]})
    >>> out = sentence_scores(frame, HashingEncoder(dim=64), passages=(("Bob read it.", "Ann wrote it."),))
    >>> out["sentence"].tolist(), out["context_piece"].iloc[0], out["passage"].tolist()[0]
    (['Ann wrote it.', 'Carl sang.'], 'Ann wrote it.', 2)
    """
    batch_size = check_int(batch_size, "batch_size", "sentence_scores", minimum=1)
    max_words = check_int(max_words, "max_words", "sentence_scores", minimum=1)
    texts, scorable = _texts(frame)
    if passages is not None and len(passages) != len(frame):
        raise SGIInputError(f"sentence_scores got passages for {len(passages)} rows and a frame of {len(frame)} rows",
                            hint="Give one tuple of passages per row of the frame, in its order")
    every_passages = row_passages(frame, passages)
    split = {i: passage_pieces(every_passages[i], max_words=max_words) for i in np.flatnonzero(scorable)}
    rows = np.array([i for i, (pieces, _) in split.items() if pieces], dtype=np.int64)
    sentences = [split_pieces(texts["response"].iat[i], max_words=max_words) for i in rows]
    contexts = [split[i][0] for i in rows]
    n_sent = np.array([len(s) for s in sentences], dtype=np.int64)
    n_ctx = np.array([len(c) for c in contexts], dtype=np.int64)
    flat_sent = [s for row in sentences for s in row]
    flat_ctx = [c for row in contexts for c in row]
    flat_passage = np.array([n for i in rows for n in split[i][1]], dtype=np.int64)
    questions = texts["question"].to_numpy(dtype=object)[rows].tolist()
    if not flat_sent:
        return pd.DataFrame({column: pd.Series(dtype=kind) for column, kind in SENTENCE_COLUMNS.items()})
    unique_emb, inverse = encode_unique(encoder, questions + flat_sent + flat_ctx, cache=cache,
                                        batch_size=batch_size, progress=progress)
    unit = l2_normalize(unique_emb, name="embeddings")
    q_id = inverse[: len(rows)]
    s_id = inverse[len(rows) : len(rows) + len(flat_sent)]
    c_id = inverse[len(rows) + len(flat_sent) :]
    s_start = np.concatenate([[0], np.cumsum(n_sent)])
    c_start = np.concatenate([[0], np.cumsum(n_ctx)])
    support = np.empty(len(flat_sent))
    nearest = np.empty(len(flat_sent), dtype=np.int64)
    for j in range(len(rows)):
        s_slice, c_ids = slice(s_start[j], s_start[j + 1]), c_id[c_start[j] : c_start[j + 1]]
        cosine = unit[s_id[s_slice]] @ unit[c_ids].T
        best = cosine.argmax(axis=1)
        support[s_slice] = cosine[np.arange(len(best)), best]
        nearest[s_slice] = c_start[j] + best
    sent_q = np.repeat(q_id, n_sent)
    sgi = sgi_from_angles(pairwise_angle(unit[s_id], unit[sent_q]), pairwise_angle(unit[s_id], unit[c_id[nearest]]))
    return pd.DataFrame({
        "row": np.repeat(frame.index.to_numpy()[rows], n_sent),
        "sentence": flat_sent,
        "support": support,
        "context_piece": np.asarray(flat_ctx, dtype=object)[nearest],
        "passage": flat_passage[nearest],
        "n_passages": np.repeat([len(every_passages[i]) for i in rows], n_sent).astype(np.int64),
        "sgi": sgi,
    })


def claims_of_sentences(per_sentence: pd.DataFrame, index: pd.Index) -> pd.DataFrame:
    """Row scores from :func:`sentence_scores`' output: the weakest and the mean sentence of each row.

    Returns
    -------
    DataFrame
        Indexed by ``index``, with :data:`CLAIM_COLUMNS` (see :func:`claim_scores`).

    Examples
    --------
    >>> per_sentence = pd.DataFrame({"row": [0, 0], "support": [0.2, 0.6], "sgi": [1.0, 2.0]})
    >>> claims_of_sentences(per_sentence, pd.RangeIndex(2))["claim_min_support"].tolist()
    [0.2, nan]
    """
    grouped = per_sentence.groupby("row", sort=False)
    out = pd.DataFrame({
        "claim_min_support": grouped["support"].min(),
        "claim_mean_support": grouped["support"].mean(),
        "claim_min_sgi": grouped["sgi"].min(),
        "claim_mean_sgi": grouped["sgi"].mean(),
        "claim_n_sentences": grouped.size(),
    }).reindex(index)
    out["claim_n_sentences"] = out["claim_n_sentences"].fillna(0).astype(np.int64)
    return out[list(CLAIM_COLUMNS)]


def claim_scores(
    frame: pd.DataFrame,
    encoder: Encoder,
    *,
    passages: tuple | None = None,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    max_words: int = DEFAULT_MAX_WORDS,
    progress: ProgressCallback | None = None,
) -> pd.DataFrame:
    """Row scores from the weakest and the average response sentence.

    ``claim_min_support = min_s max_j cos(s, c_j)`` and ``claim_mean_support`` its
    mean over the response sentences ``s``; ``claim_min_sgi`` / ``claim_mean_sgi``
    the same for the sentence SGI ``theta(s, q) / (theta(s, c*) + 1e-8)``. High =
    grounded. See :func:`sentence_scores` for the parameters.

    Returns
    -------
    DataFrame
        Indexed like ``frame``, with the columns :data:`CLAIM_COLUMNS`;
        ``claim_n_sentences`` counts the response sentences scored (0, with NaN
        scores, for a row whose question, context or response is empty).

    Examples
    --------
    >>> from sgi_core.embedding import HashingEncoder
    >>> frame = pd.DataFrame({"question": ["Who wrote it?", "Who?"], "context": ["Ann wrote it.", ""],
    ...                       "response": ["Ann wrote it. Carl sang.", "Ann."]})
    >>> out = claim_scores(frame, HashingEncoder(dim=64))
    >>> out["claim_n_sentences"].tolist(), bool(out["claim_min_support"].isna().iloc[1])
    ([2, 0], True)
    """
    per_sentence = sentence_scores(frame, encoder, passages=passages, cache=cache, batch_size=batch_size,
                                   max_words=max_words, progress=progress)
    return claims_of_sentences(per_sentence, frame.index)
