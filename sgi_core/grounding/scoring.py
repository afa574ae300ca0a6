"""Rows scored by a grounding model: each hypothesis's best chunk, the row's weakest and mean hypothesis.

For a row with hypotheses ``h_1..h_m`` (its response sentences, or the whole response
for adapters that read it whole) and context chunks ``c_1..c_k``
(:func:`~sgi_core.grounding.chunking.context_chunks`),

    support(h_j) = max_i P(supported | premise = c_i, hypothesis = h_j)
    grounding_<name>_min  = min_j support(h_j)
    grounding_<name>_mean = mean_j support(h_j)

both higher = grounded, in [0, 1]. ``grounding_<name>_chunks`` counts the chunks read
and ``grounding_<name>_cut`` is 1 where some text was cut to fit (a context sentence,
or a hypothesis, longer than the model reads). A row with an empty context or response
keeps its place with NaN scores and 0 chunks.

Each distinct (premise, hypothesis) pair is scored once, looked up first in the cache
(an :class:`~sgi_core.embedding.cache.EmbeddingCache` holding one number per pair,
keyed by the model folder's fingerprint, how it is read, the premise and the
hypothesis), so a rerun costs no forward pass.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sgi_core.columns import grounding_columns
from sgi_core.errors import SGIInputError
from sgi_core.grounding.chunking import context_chunks

#: Least tokens left for context in one input; a longer hypothesis is cut by the tokenizer and its row marked.
MIN_CONTEXT_TOKENS = 16
SENTENCE_COLUMNS = ("row", "sentence", "support", "chunk", "passage", "premise")


def pair_key(premise: str, hypothesis: str, source: str) -> bytes:
    """The cache key of one pair: SHA-256 of the model's source and the length-prefixed texts."""
    from sgi_core.embedding.cache import text_key

    return text_key(f"{len(premise)}:{premise}\x00{hypothesis}", source)


def cached_support(model, premises: list[str], hypotheses: list[str], *, cache=None, batch_size: int = 16,
                   progress=None) -> np.ndarray:
    """:meth:`~sgi_core.grounding.runtime.GroundingModel.support` of each pair, scoring only the pairs the cache
    lacks."""
    out = np.full(len(premises), np.nan)
    missing = np.arange(len(premises))
    keys = []
    if cache is not None and len(premises):
        keys = [pair_key(p, h, model.cache_source) for p, h in zip(premises, hypotheses)]
        found, values = cache.get_many(keys, dimension=1)
        out[found] = values[:, 0] if len(found) else out[found]
        missing = np.setdiff1d(missing, found)
    if len(missing):
        new = model.support([premises[i] for i in missing], [hypotheses[i] for i in missing],
                            batch_size=batch_size, progress=progress)
        out[missing] = new
        if cache is not None:
            cache.put_many([keys[i] for i in missing], new.reshape(-1, 1))
    elif progress is not None:
        progress(0, 0)
    return out


def _hypotheses(response: str, model) -> list[str]:
    from sgi_core.text.sentences import split_sentences

    if model.adapter.hypothesis == "response":
        tokens = int(model.count_tokens([response])[0])
        if model.max_length - model.overhead - tokens >= MIN_CONTEXT_TOKENS:
            return [response]
    return split_sentences(response) or [response.strip()]


def grounding_sentences(frame: pd.DataFrame, model, *, passages: tuple | None = None, cache=None,
                        batch_size: int = 16, progress=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every hypothesis of every row with its best chunk, and each row's chunk count and cut flag.

    Returns
    -------
    sentences : DataFrame
        :data:`SENTENCE_COLUMNS`: the row's position, the hypothesis, its support, the
        best chunk's position among the row's chunks, that chunk's 1-based passage and
        its text.
    rows : DataFrame
        ``chunks`` and ``cut`` per row, indexed like ``frame``.
    """
    from sgi_core.io.passages import row_passages

    contexts = row_passages(frame, passages)
    responses = frame["response"].fillna("").astype(str).to_numpy()
    n_chunks, cut = np.zeros(len(frame), dtype=np.int64), np.zeros(len(frame), dtype=np.int64)
    pairs: dict[tuple[str, str], int] = {}
    plan = []  # (row, hypothesis, chunk texts, chunk passages, pair ids)
    for row, (context, response) in enumerate(zip(contexts, responses)):
        if not response.strip() or not any(p.strip() for p in context):
            continue
        hypotheses = _hypotheses(response, model)
        longest = int(model.count_tokens(hypotheses).max())
        budget = model.max_length - model.overhead - longest
        chunked = context_chunks(context, max(budget, MIN_CONTEXT_TOKENS), model.count_tokens)
        n_chunks[row], cut[row] = len(chunked.chunks), int(chunked.cut or budget < MIN_CONTEXT_TOKENS)
        for hypothesis in hypotheses:
            ids = [pairs.setdefault((chunk, hypothesis), len(pairs)) for chunk in chunked.chunks]
            plan.append((row, hypothesis, chunked.chunks, chunked.passages, ids))
    unique = list(pairs)
    support = cached_support(model, [p for p, _ in unique], [h for _, h in unique], cache=cache,
                             batch_size=batch_size, progress=progress)
    records = []
    for row, hypothesis, chunks, where, ids in plan:
        values = support[ids]
        best = int(np.argmax(values))
        records.append((row, hypothesis, float(values[best]), best, where[best], chunks[best]))
    sentences = pd.DataFrame.from_records(records, columns=list(SENTENCE_COLUMNS))
    return sentences, pd.DataFrame({"chunks": n_chunks, "cut": cut}, index=frame.index)


def grounding_scores(frame: pd.DataFrame, model, *, passages: tuple | None = None, cache=None,
                     batch_size: int = 16, progress=None) -> pd.DataFrame:
    """The four columns of :func:`~sgi_core.columns.grounding_columns` for every row of ``frame`` (module notes).

    Raises
    ------
    SGIInputError
        When ``frame`` lacks ``context`` or ``response``, or already has a column of
        that name (it would be overwritten).
    """
    missing = [c for c in ("context", "response") if c not in frame.columns]
    if missing:
        raise SGIInputError(f"grounding models read the columns context and response; missing {', '.join(missing)}",
                            hint="Read the file with sgi_core.io.triples.load_triples, which maps the columns")
    names = grounding_columns(model.name)
    clash = [c for c in names if c in frame.columns]
    if clash:
        raise SGIInputError(f"the file already has a column named {clash[0]}, which the grounding model "
                            f"'{model.name}' would overwrite", column=clash[0],
                            hint="Name the model otherwise (--grounding-model OTHER=DIR), or drop that column")
    sentences, rows = grounding_sentences(frame, model, passages=passages, cache=cache, batch_size=batch_size,
                                          progress=progress)
    per_row = sentences.groupby("row")["support"].agg(["min", "mean"])
    out = pd.DataFrame(np.nan, index=frame.index, columns=list(names[:2]))
    out.iloc[per_row.index.to_numpy(), 0] = per_row["min"].to_numpy()
    out.iloc[per_row.index.to_numpy(), 1] = per_row["mean"].to_numpy()
    out[names[2]] = rows["chunks"].to_numpy()
    out[names[3]] = rows["cut"].to_numpy()
    return out
