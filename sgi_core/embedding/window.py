"""Texts far longer than a model reads are cut before they are tokenised, without changing any embedding.

A sentence-transformers model reads the first ``max_seq_length`` tokens of a text
(MiniLM: 256) and ignores the rest, but its tokenizer first splits the whole text:
one 50 MB cell took 8.6 GB to tokenise. :func:`cut_to_window` keeps a prefix that
still holds more tokens than the model reads, so the tokens the model sees, and so
the embedding, are exactly those of the full text.

The prefix ends before a whitespace character, so every word in it is whole: the
tokenizers used here (WordPiece, SentencePiece, byte-level BPE) split text at
whitespace before anything else, and the tokens of whole words are the same in the
prefix as in the full text. The prefix's tokens are counted to make sure it holds
more than the window; when it does not (long runs of whitespace or of characters the
tokenizer drops), a prefix four times longer is tried, up to the whole text.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence

#: Characters first kept per token of the window: a token of English text averages
#: about four characters, so eight per token leaves a wide margin.
CHARS_PER_TOKEN = 8

_LAST_WHITESPACE = re.compile(r".*\s", re.DOTALL)


class LongTextWarning(UserWarning):
    """Texts were cut to a prefix before tokenising; their embeddings are unchanged."""


def _window_prefix(text: str, chars: int, tokenizer, max_tokens: int) -> str:
    """The shortest whole-word prefix of at least ``chars`` characters tried that holds more than ``max_tokens``
    tokens."""
    while chars < len(text):
        before_space = _LAST_WHITESPACE.match(text, 0, chars)
        if before_space is not None:
            prefix = text[: before_space.end() - 1]
            n_tokens = len(tokenizer(prefix, add_special_tokens=True, truncation=False)["input_ids"])
            if n_tokens > max_tokens:
                return prefix
        chars *= 4
    return text


def cut_to_window(texts: Sequence[str], tokenizer, max_tokens: int | None) -> list[str]:
    """``texts`` with each text far beyond the model's window cut to a prefix the model reads the same.

    Parameters
    ----------
    texts : sequence of str
    tokenizer : callable
        A Hugging Face tokenizer (``tokenizer(text)["input_ids"]``).
    max_tokens : int or None
        The model's ``max_seq_length``, special tokens included; ``None`` cuts nothing.

    Returns
    -------
    list of str
        Texts of at most ``max_tokens * CHARS_PER_TOKEN`` characters unchanged; a
        longer text replaced by its shortest whole-word prefix that still holds more
        than ``max_tokens`` tokens, so ``tokens(prefix)[:max_tokens]`` equals
        ``tokens(text)[:max_tokens]`` (up to the closing special token, added after
        truncation). A :class:`LongTextWarning` says how many were cut.
    """
    texts = list(texts)
    if not max_tokens:
        return texts
    keep = max_tokens * CHARS_PER_TOKEN
    n_cut = 0
    for position, text in enumerate(texts):
        if len(text) > keep:
            prefix = _window_prefix(text, keep, tokenizer, max_tokens)
            n_cut += len(prefix) < len(text)
            texts[position] = prefix
    if n_cut:
        warnings.warn(f"{n_cut} text{'s' if n_cut > 1 else ''} longer than {keep:,} characters "
                      f"{'were' if n_cut > 1 else 'was'} cut before tokenising; the model reads only its first "
                      f"{max_tokens} tokens, which the cut keeps, so the scores are unchanged", LongTextWarning,
                      stacklevel=3)
    return texts
