"""The one long-context rule of every grounding adapter: overlapping chunks of whole sentences.

A model reads ``max_length`` tokens. With ``h`` the tokens of the row's longest
hypothesis (a response sentence, or the whole response) and ``o`` the template's own
tokens, a chunk of context may hold

    budget = max_length - o - h

tokens. The hypothesis is never cut to make room. Each passage of the context (the
passages of a list context, :mod:`sgi_core.io.passages`; a plain context is one
passage) is a chunk boundary:

- a passage that fits the budget is one chunk, as written;
- a longer one is split into sentences (:func:`sgi_core.text.sentences.split_sentences`)
  and read in windows of whole sentences, each taking sentences while their tokens plus
  one per sentence stay within the budget; the next window starts at the last sentence
  of the one before, so consecutive chunks overlap by one sentence;
- a single sentence over the budget is a chunk of its own, which the tokenizer cuts
  (the row is marked *cut*).

A hypothesis's support is the best over the chunks of its row, and a row's score
aggregates its hypotheses (:mod:`sgi_core.grounding.scoring`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ContextChunks:
    """A context cut for one model.

    Attributes
    ----------
    chunks : tuple of str
        What the model reads as premises, in order.
    passages : tuple of int
        The 1-based passage of each chunk.
    cut : bool
        True when some text was not read whole: a sentence longer than the budget.
    """

    chunks: tuple[str, ...]
    passages: tuple[int, ...]
    cut: bool


def sentence_windows(counts: Sequence[int], budget: int) -> list[tuple[int, int]]:
    """``(start, stop)`` windows of whole sentences of ``counts`` tokens, overlapping by one sentence.

    A window takes sentences while ``sum(tokens) + number of sentences <= budget``
    (one token per sentence for the joining space); a sentence over the budget is a
    window alone.

    Examples
    --------
    >>> sentence_windows([4, 4, 4, 4], 10)
    [(0, 2), (1, 3), (2, 4)]
    >>> sentence_windows([3, 20, 3], 10)
    [(0, 1), (1, 2), (2, 3)]
    >>> sentence_windows([2, 2], 10)
    [(0, 2)]
    """
    windows: list[tuple[int, int]] = []
    start, n = 0, len(counts)
    while start < n:
        stop, used = start, 0
        while stop < n and used + counts[stop] + 1 <= budget:
            used += counts[stop] + 1
            stop += 1
        stop = max(stop, start + 1)
        windows.append((start, stop))
        if stop >= n:
            break
        start = stop - 1 if stop - 1 > start else stop
    return windows


def context_chunks(passages: Sequence[str], budget: int, count_tokens: Callable[[list[str]], np.ndarray]
                   ) -> ContextChunks:
    """Cut a context, given as its passages, into chunks of at most ``budget`` tokens (module notes).

    Parameters
    ----------
    passages : sequence of str
        The context's passages (one for a plain context).
    budget : int
        Tokens a chunk may hold, at least 1.
    count_tokens : callable
        ``count_tokens(texts)``: the tokens of each text, without special tokens.

    Examples
    --------
    >>> words = lambda texts: np.array([len(t.split()) for t in texts])
    >>> context_chunks(["One two. Three four. Five six."], 6, words)
    ContextChunks(chunks=('One two. Three four. Five six.',), passages=(1,), cut=False)
    >>> context_chunks(["One two. Three four. Five six. Seven eight."], 6, words).chunks
    ('One two. Three four.', 'Three four. Five six.', 'Five six. Seven eight.')
    >>> context_chunks(["A b.", "C d e f g h i j k."], 5, words).cut
    True
    """
    from sgi_core.text.sentences import split_sentences

    passages = [p for p in passages if p and p.strip()]
    chunks, where, cut = [], [], False
    whole = count_tokens(passages) if passages else np.zeros(0, dtype=np.int64)
    for number, (passage, tokens) in enumerate(zip(passages, whole), start=1):
        if tokens <= budget:
            chunks.append(passage)
            where.append(number)
            continue
        sentences = split_sentences(passage) or [passage]
        counts = count_tokens(sentences)
        for start, stop in sentence_windows(counts, budget):
            cut = cut or bool(stop - start == 1 and counts[start] > budget)
            chunks.append(" ".join(sentences[start:stop]))
            where.append(number)
    return ContextChunks(tuple(chunks), tuple(where), bool(cut))
