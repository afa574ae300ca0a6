"""The computed text baselines that SGI must beat: each a function of the scored frame named by its registry entry.

Response length and word overlap with the context cost nothing to compute and can separate grounded from
hallucinated answers by themselves, so every report judges them beside SGI
(:data:`sgi_core.scores.registry.BASELINES`: :func:`neg_response_length`, :func:`word_overlap`).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
from pathlib import Path

import numpy as np
import pandas as pd

from sgi_core.columns import WORD_OVERLAP_COLUMN
from sgi_core.errors import SGIInputError
from sgi_core.results import warn_undefined

#: Below this lexical groundedness a response is flagged as not drawn from its context.
LEXICAL_FLAG_BELOW = 0.1

_TOKEN = re.compile(r"\w+")


def response_length(texts) -> np.ndarray:
    """Length of each text in characters (missing texts count 0).

    Examples
    --------
    >>> response_length(["Paris", "It is in France."]).tolist()
    [5, 16]
    """
    series = texts if isinstance(texts, pd.Series) else pd.Series(list(texts), dtype=object)
    if not isinstance(series.dtype, pd.StringDtype):
        series = series.astype(object).where(series.notna(), "").astype(str)
    return series.str.len().fillna(0).to_numpy(dtype=np.int64)


#: Rows whose texts :func:`lexical_groundedness` turns into Python strings at a time: never a
#: whole column (2,000,000 contexts are about 1 GB as Python strings).
LEXICAL_BLOCK_ROWS = 10_000


def _as_series(texts) -> pd.Series:
    return texts if isinstance(texts, pd.Series) else pd.Series(list(texts), dtype=object)


@functools.cache
def _stop_words() -> frozenset:
    # scikit-learn's list is read from its source file as a literal: importing scikit-learn takes
    # seconds, which a scoring run would pay for one list. The import is the way in only where
    # that file has another shape.
    spec = importlib.util.find_spec("sklearn")
    source = Path(spec.submodule_search_locations[0]) / "feature_extraction" / "_stop_words.py"
    try:
        for node in ast.parse(source.read_text(encoding="utf-8")).body:
            names = [getattr(target, "id", None) for target in getattr(node, "targets", ())]
            if isinstance(node, ast.Assign) and names == ["ENGLISH_STOP_WORDS"]:
                return frozenset(ast.literal_eval(node.value.args[0]))
    except (OSError, SyntaxError, ValueError, AttributeError, IndexError):
        pass
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return ENGLISH_STOP_WORDS


def _content_tokens(text: str, stop_words: frozenset) -> list[str]:
    return [t for t in _TOKEN.findall(str(text).lower()) if t not in stop_words]


def _is_word_character(character: str) -> bool:
    # Exactly what ``\w`` matches in a ``str`` pattern: alphanumeric in Unicode's sense, or "_".
    return character.isalnum() or character == "_"


def occurs_as_word(token: str, text: str) -> bool:
    r"""Whether ``token`` (a run of word characters) is one of the ``\w+`` runs of ``text``.

    The same answer as ``token in set(re.findall(r"\w+", text))``, found with ``str.find``
    instead of cutting the whole text into tokens: a match counts when no word character
    touches it on either side.

    Examples
    --------
    >>> occurs_as_word("paris", "in paris, france"), occurs_as_word("par", "in paris"), occurs_as_word("é", "café")
    (True, False, False)
    """
    end_of_text, width = len(text), len(token)
    start = text.find(token)
    while start >= 0:
        end = start + width
        if (start == 0 or not _is_word_character(text[start - 1])) and (
                end == end_of_text or not _is_word_character(text[end])):
            return True
        start = text.find(token, start + 1)
    return False


def _share_in_context(tokens: list[str], context: str) -> float:
    found: dict[str, bool] = {}
    for token in tokens:
        if token not in found:
            found[token] = occurs_as_word(token, context)
    return sum(found[token] for token in tokens) / len(tokens)


def lexical_groundedness(responses, contexts, *, warn: bool = True) -> np.ndarray:
    r"""Share of the response's non-stopword tokens that occur in the context.

    Tokens are lower-cased ``\w+`` runs; stopwords are scikit-learn's English list;
    repeated response tokens count each time. 1.0 = every content word comes from
    the context; below :data:`LEXICAL_FLAG_BELOW` (0.1) the response is flagged as
    ungrounded. A response with no content token gets NaN (with a warning).

    The context is never cut into tokens: each distinct response token is looked up in
    the lower-cased context as a whole word (:func:`occurs_as_word`), which gives the
    same shares about three times faster than building the context's vocabulary.
    Scoring writes these shares beside the scores (column
    :data:`~sgi_core.columns.WORD_OVERLAP_COLUMN`), with ``warn=False``: the warning
    belongs to the analysis that reads them (:func:`word_overlap`).

    Examples
    --------
    >>> lexical_groundedness(["The capital is Paris", "Berlin"], ["Paris is the capital of France", "Paris"]).tolist()
    [1.0, 0.0]
    """
    responses, contexts = _as_series(responses), _as_series(contexts)
    if len(responses) != len(contexts):
        raise SGIInputError(f"{len(responses)} responses but {len(contexts)} contexts")
    out = np.full(len(responses), np.nan)
    stop_words = _stop_words()
    for start in range(0, len(out), LEXICAL_BLOCK_ROWS):
        # tolist boxes a block's cells in one pass; iterating an Arrow-backed Series boxes them one by one.
        block = slice(start, start + LEXICAL_BLOCK_ROWS)
        pairs = zip(responses.iloc[block].tolist(), contexts.iloc[block].tolist())
        for i, (response, context) in enumerate(pairs, start=start):
            tokens = _content_tokens(response, stop_words)
            if tokens:
                out[i] = _share_in_context(tokens, str(context).lower())
    if warn:
        _warn_no_content_word(out)
    return out


def _warn_no_content_word(shares: np.ndarray) -> None:
    empty = int(np.isnan(shares).sum())
    if empty:
        warn_undefined(f"{empty} responses have no content word: lexical groundedness is NaN there")


def word_overlap(frame: pd.DataFrame) -> np.ndarray:
    """:func:`lexical_groundedness` of a frame's rows: read from a scored frame, else computed.

    A frame written by scoring carries the shares in
    :data:`~sgi_core.columns.WORD_OVERLAP_COLUMN`, computed there by the same function:
    reading them saves one Python pass over every row (about 10 s on 2,000,000 rows).
    A frame without that column (unscored, or scored before it was written) gets them
    computed from its ``response`` and ``context``.

    Examples
    --------
    >>> word_overlap(pd.DataFrame({"response": ["Paris"], "context": ["Paris, France"]})).tolist()
    [1.0]
    >>> word_overlap(pd.DataFrame({"response": ["Paris"], "context": ["x"], "lexical_groundedness": [0.5]})).tolist()
    [0.5]
    """
    if WORD_OVERLAP_COLUMN not in frame.columns:
        missing = [c for c in ("response", "context") if c not in frame.columns]
        if missing:
            raise SGIInputError(f"the word-overlap baseline needs the columns {', '.join(missing)}",
                                column=missing[0], hint="Keep the file's response and context columns")
        return lexical_groundedness(frame["response"], frame["context"])
    shares = frame[WORD_OVERLAP_COLUMN].to_numpy(dtype=np.float64, na_value=np.nan)
    _warn_no_content_word(shares)
    return shares


def neg_response_length(frame: pd.DataFrame) -> np.ndarray:
    """Minus the length of each response in characters: the response-length baseline, higher = grounded.

    Examples
    --------
    >>> neg_response_length(pd.DataFrame({"response": ["Paris", "A city in Spain"]})).tolist()
    [-5, -15]
    """
    if "response" not in frame.columns:
        raise SGIInputError("the response-length baseline needs the column response", column="response")
    return -response_length(frame["response"])
