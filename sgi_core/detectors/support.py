"""A file's sentence supports: the scale against which one sentence's support is read.

A sentence's support is a cosine, whose value says nothing by itself; it is read by its percentile among
the supports of its file (or a seeded sample of its rows), and the same rows give each row's
weakest-sentence support, whose AUROC says whether the similarity separates in this file
(:func:`file_supports`, :func:`support_percentiles`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.columns import PASSAGES_COLUMN, TEXT_COLUMNS
from sgi_core.detectors.claims import claims_of_sentences, sentence_scores
from sgi_core.embedding import EmbeddingCache, Encoder, ProgressCallback
from sgi_core.results import JsonResult, frozen_array, warn_undefined
from sgi_core.stats.checks import check_int

#: Rows read at most: a bigger file is read through a seeded random sample of this many rows.
DEFAULT_MAX_ROWS = 1_000


@dataclass(frozen=True)
class FileSupports(JsonResult):
    """The supports of a file's response sentences.

    Attributes
    ----------
    support : ndarray of float
        Every scored response sentence's support in the rows read, sorted.
    rows : tuple of int
        0-based positions of the rows read, ascending: every row, or the sample.
    weakest : ndarray of float
        Each row read's weakest-sentence support (``claim_min_support``, high =
        grounded), in the order of ``rows``; NaN for a row not scored.
    n_file_rows : int
        Rows of the file.
    seed : int
        Seed of the sample.
    """

    support: np.ndarray
    rows: tuple[int, ...]
    weakest: np.ndarray
    n_file_rows: int
    seed: int

    @property
    def sampled(self) -> bool:
        """Whether the rows read are a sample of the file's."""
        return len(self.rows) < self.n_file_rows


def file_supports(
    frame: pd.DataFrame,
    encoder: Encoder,
    *,
    passages: tuple | None = None,
    max_rows: int = DEFAULT_MAX_ROWS,
    seed: int = 0,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    progress: ProgressCallback | None = None,
) -> FileSupports:
    """The supports of the response sentences of a file, or of a seeded sample of its rows.

    Parameters
    ----------
    frame : DataFrame
        With ``question``, ``context`` and ``response`` columns (and the passages column
        of a scored file, if any).
    encoder : Encoder
    passages : tuple of tuple of str, optional
        Each row's passages, as :func:`~sgi_core.detectors.claims.sentence_scores` takes them.
    max_rows : int, default 1000
        With more rows, ``numpy.random.default_rng(seed).choice(n, max_rows, replace=False)``
        of them are read.
    seed : int, default 0
    cache, batch_size, progress
        As :func:`~sgi_core.detectors.claims.sentence_scores` takes them.

    Returns
    -------
    FileSupports

    Examples
    --------
    >>> from sgi_core.embedding import HashingEncoder
    >>> frame = pd.DataFrame({"question": ["Who?"] * 3, "context": ["Ann wrote it."] * 3,
    ...                       "response": ["Ann wrote it.", "Bob sang. Ann wrote it.", "Carl."]})
    >>> found = file_supports(frame, HashingEncoder(dim=64), max_rows=2)
    >>> found.rows, found.n_file_rows, found.sampled
    ((1, 2), 3, True)
    """
    max_rows = check_int(max_rows, "max_rows", "file_supports", minimum=1)
    seed = check_int(seed, "seed", "file_supports", minimum=0)
    n = len(frame)
    rows = (np.arange(n) if n <= max_rows else
            np.sort(np.random.default_rng(seed).choice(n, max_rows, replace=False)))
    columns = [c for c in (*TEXT_COLUMNS, PASSAGES_COLUMN) if c in frame.columns]
    subset = frame.iloc[rows][columns].reset_index(drop=True)
    chosen = None if passages is None else tuple(passages[i] for i in rows)
    per_sentence = sentence_scores(subset, encoder, passages=chosen, cache=cache, batch_size=batch_size,
                                   progress=progress)
    weakest = claims_of_sentences(per_sentence, subset.index)["claim_min_support"].to_numpy(dtype=np.float64)
    return FileSupports(frozen_array(np.sort(per_sentence["support"].to_numpy(dtype=np.float64))),
                        tuple(rows.tolist()), frozen_array(weakest), n, seed)


def support_percentiles(support, reference) -> np.ndarray:
    """Each support's percentile among ``reference``: the percent of its values at or below it.

    ``100 * #{r in reference : r <= s} / #{r}`` over the finite ``r``
    (:func:`scipy.stats.percentileofscore` with ``kind="weak"``). NaN for a NaN support,
    and for every support when ``reference`` holds no finite value (with an
    :class:`~sgi_core.results.UndefinedStatisticWarning`).

    Examples
    --------
    >>> support_percentiles([0.2, 0.5, np.nan], [0.1, 0.2, 0.3, 0.4]).tolist()
    [50.0, 100.0, nan]
    """
    support = np.asarray(support, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    finite = np.sort(reference[np.isfinite(reference)])
    if not len(finite):
        warn_undefined("no support to compare with: the percentiles are NaN")
        return np.full(support.shape, np.nan)
    at_or_below = np.searchsorted(finite, support, side="right")
    return np.where(np.isnan(support), np.nan, 100.0 * at_or_below / len(finite))
