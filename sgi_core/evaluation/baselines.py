"""Trivial baselines that SGI must beat, and whether SGI adds anything beyond length.

On HaluEval the grounded answers are short gold spans and the hallucinated ones
are sentences: response length alone separates them better than SGI. Every report
therefore shows, beside SGI, scores oriented so that **higher = grounded**:

* ``neg_response_length``: minus the response length in characters (shorter =
  grounded, the direction of HaluEval's bias; elsewhere it may point the other way,
  which shows as an AUROC below 0.5);
* ``lexical_groundedness``: share of the response's non-stopword tokens that occur
  in the context (a RAG heuristic; below 0.1 is flagged as ungrounded);
* ``theta_rq``: the response-question angle alone (grounded answers move away from
  the question).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
from sklearn.metrics import roc_auc_score

from sgi_core.columns import WORD_OVERLAP_COLUMN
from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.scores import SCORES, TRIVIAL
from sgi_core.stats.checks import as_labels, as_scores, check_int, validates_inputs
from sgi_core.stats.crossval import fold_ids, out_of_fold_probabilities

#: Below this lexical groundedness a response is flagged as not drawn from its context.
LEXICAL_FLAG_BELOW = 0.1

#: Baseline columns of :func:`baseline_scores` and what they measure (all: higher = grounded).
BASELINE_DESCRIPTIONS = {name: SCORES[name].description for name in TRIVIAL}

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


def _content_tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(str(text).lower()) if t not in ENGLISH_STOP_WORDS]


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
    for start in range(0, len(out), LEXICAL_BLOCK_ROWS):
        # tolist boxes a block's cells in one pass; iterating an Arrow-backed Series boxes them one by one.
        block = slice(start, start + LEXICAL_BLOCK_ROWS)
        pairs = zip(responses.iloc[block].tolist(), contexts.iloc[block].tolist())
        for i, (response, context) in enumerate(pairs, start=start):
            tokens = _content_tokens(response)
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
        return lexical_groundedness(frame["response"], frame["context"])
    shares = frame[WORD_OVERLAP_COLUMN].to_numpy(dtype=np.float64, na_value=np.nan)
    _warn_no_content_word(shares)
    return shares


def baseline_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """Baseline scores of a (scored) triple frame, every column oriented higher = grounded.

    Columns: ``neg_response_length``, ``lexical_groundedness`` and, when the frame
    has it, ``theta_rq``; see :data:`BASELINE_DESCRIPTIONS`. Same index and order as
    ``frame``.

    Examples
    --------
    >>> f = pd.DataFrame({"response": ["Paris", "A city in Spain"], "context": ["Paris, France", "Paris"]})
    >>> baseline_scores(f)["neg_response_length"].tolist()
    [-5, -15]
    """
    missing = [c for c in ("response", "context") if c not in frame.columns]
    if missing:
        raise SGIInputError(f"baseline scores need the columns {', '.join(missing)}", column=missing[0])
    out = pd.DataFrame(index=frame.index)
    out["neg_response_length"] = -response_length(frame["response"])
    out["lexical_groundedness"] = word_overlap(frame)
    if "theta_rq" in frame.columns:
        out["theta_rq"] = frame["theta_rq"].to_numpy(dtype=np.float64)
    return out


#: Mean cross-validated AUROC gain below which SGI is said to add nothing beyond length.
NEGLIGIBLE_GAIN = 0.005
#: Gain below which the addition is called small.
SMALL_GAIN = 0.02
#: Length-alone AUROC from which the labels are called confounded with length.
CONFOUNDED_AUROC = 0.8


@dataclass(frozen=True)
class BeyondLengthResult(JsonResult):
    """Cross-validated AUROC of a logistic model on length alone vs length + score.

    Attributes
    ----------
    n : int
        Labelled rows with both features.
    n_splits : int
    auroc_length, auroc_length_score : float
        Mean AUROC over the folds.
    delta : float
        ``auroc_length_score - auroc_length``.
    fold_deltas : tuple of float
        The gain in each fold (same folds for both models).
    level : {"clear", "small", "none", "undefined"}
        The verdict as data: ``"clear"`` when the mean gain is at least
        :data:`SMALL_GAIN` and positive in every fold, ``"small"`` when it is at
        least :data:`NEGLIGIBLE_GAIN` and positive in every fold, else ``"none"``.
    verdict : str
        Plain-language reading of the numbers (it says what ``level`` says).
    """

    n: int
    n_splits: int
    auroc_length: float
    auroc_length_score: float
    delta: float
    fold_deltas: tuple[float, ...]
    level: str
    verdict: str


def length_level(delta: float, fold_deltas) -> str:
    """``"clear"``, ``"small"`` or ``"none"``: how much a score adds beyond length (see :class:`BeyondLengthResult`).

    Examples
    --------
    >>> length_level(0.05, [0.04, 0.06]), length_level(0.05, [-0.01, 0.11]), length_level(0.01, [0.01, 0.01])
    ('clear', 'none', 'small')
    """
    if delta < NEGLIGIBLE_GAIN or min(fold_deltas) <= 0:
        return "none"
    return "small" if delta < SMALL_GAIN else "clear"


def length_verdict(auroc_length: float, auroc_length_score: float, fold_deltas, score_name: str = "SGI") -> str:
    """The sentence a report prints for a :class:`BeyondLengthResult`."""
    level = length_level(auroc_length_score - auroc_length, fold_deltas)
    numbers = f"(AUROC {auroc_length:.3f} with response length alone, {auroc_length_score:.3f} with length + {score_name})"
    adds = {"none": "adds no consistent signal", "small": "adds a small signal", "clear": "adds clear signal"}[level]
    text = f"{score_name} {adds} beyond response length {numbers}."
    if auroc_length >= CONFOUNDED_AUROC:
        text += (
            f" Response length alone already separates the labels (AUROC {auroc_length:.3f}): "
            "in this data the labels are confounded with answer length."
        )
    return text


@validates_inputs
def beyond_length(lengths, score, y_true, *, n_splits: int = 5, seed: int = 0, score_name: str = "SGI") -> BeyondLengthResult:
    """Does the score add signal beyond length? Cross-validated AUROC with and without it.

    Two logistic regressions (grounded = 1) on the same stratified folds: one on
    length alone, one on length and the score. Each feature is first mapped to
    normal quantiles (fitted on the training fold), which keeps SGI's rare huge
    values (response = context) from dominating the fit.

    Parameters
    ----------
    lengths : array_like of shape (n,)
        E.g. response length in characters.
    score : array_like of shape (n,)
        E.g. SGI.
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled (left out).
    n_splits : int, default 5
    seed : int, default 0
        Seeds the fold shuffling.
    score_name : str, default "SGI"
        Used in the verdict.

    Returns
    -------
    BeyondLengthResult
        NaN with a warning when a class has fewer rows than ``n_splits``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([1, 0], 100)
    >>> res = beyond_length(rng.normal(size=200), y + rng.normal(size=200), y)
    >>> res.delta > 0.2
    True
    """
    n_splits = check_int(n_splits, "n_splits", "beyond_length", minimum=2)
    labels = as_labels(y_true)
    length_values = as_scores(lengths, name="lengths", n=len(labels))
    score_values = as_scores(score, n=len(labels))
    keep = ~np.isnan(labels) & ~np.isnan(length_values) & ~np.isnan(score_values)
    labels = labels[keep]
    n_min = int(min((labels == 1).sum(), (labels == 0).sum()))
    if n_min < n_splits:
        warn_undefined(f"beyond_length needs at least {n_splits} rows of each class; the smaller class has {n_min}")
        nan = math.nan
        return BeyondLengthResult(int(keep.sum()), n_splits, nan, nan, nan, (), "undefined",
                                  f"undefined: too few labelled rows ({n_min} in the smaller class)")
    features = np.column_stack([length_values[keep], score_values[keep]])
    folds = fold_ids(labels, n_splits=n_splits, seed=seed)

    def fold_aurocs(prob: np.ndarray) -> np.ndarray:
        return np.array([roc_auc_score(labels[folds == k], prob[folds == k]) for k in range(n_splits)])

    length_only, with_score = map(fold_aurocs, out_of_fold_probabilities(features, labels, folds, [[0], [0, 1]],
                                                                         seed=seed))
    fold_deltas = tuple((with_score - length_only).tolist())
    return BeyondLengthResult(
        n=len(labels),
        n_splits=n_splits,
        auroc_length=float(length_only.mean()),
        auroc_length_score=float(with_score.mean()),
        delta=float(with_score.mean() - length_only.mean()),
        fold_deltas=fold_deltas,
        level=length_level(float(with_score.mean() - length_only.mean()), fold_deltas),
        verdict=length_verdict(float(length_only.mean()), float(with_score.mean()), fold_deltas, score_name),
    )
