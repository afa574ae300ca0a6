"""The order in which rows are put before a person to label, and where a row stands in its file.

Every queue orders all rows first and then drops the ones to skip (already labelled),
so labelling a row never reorders the rest, and the same seed gives the same queue.
Scores are oriented higher = grounded; rows whose score is NaN go last.

==========================  =========================================================
strategy                    order
==========================  =========================================================
``random``                  a seeded permutation (by a hash of each row's key when
                            keys are given: the same rows in any order, the same queue)
``stratified``              round robin over the score's deciles, each shuffled: any
                            first ``k`` rows span the score's range
``uncertain``               ``|p - 0.5|`` ascending for a calibrated probability ``p``,
                            or ``|score - threshold|`` ascending for a policy threshold
``disagreement``            ``|rank_a - rank_b|`` descending, ranks as fractions of rows
``false_alarms``            labelled grounded rows, lowest score first: the worst false
                            positives of a detector that flags hallucinations
``missed_hallucinations``   labelled hallucinated rows, highest score first: its worst
                            false negatives
==========================  =========================================================

Ties are broken by the seeded permutation. With ``keys`` (the rows' content keys,
:func:`sgi_core.review.annotations.row_keys`, or the matched keys of two runs), the
permutation ranks the keys by a seeded hash
(:func:`sgi_core.stats.key_order.canonical_order`): a row's place follows its
content, not its position, so a shuffled file gives the same rows in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import percentileofscore

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult
from sgi_core.stats.key_order import canonical_order

STRATEGIES = ("random", "stratified", "uncertain", "disagreement", "false_alarms", "missed_hallucinations")
#: Every queue the Review page offers: the strategies, and ``active``, the keys a labelling design draws
#: (:func:`sgi_core.runs.review_designs.active_run_queue`, :func:`~sgi_core.runs.review_designs.active_pair_queue` for
#: two runs), whose labels keep their inclusion probability.
QUEUES = (*STRATEGIES, "active")
#: Bins of the ``stratified`` queue.
STRATA = 10


@dataclass(frozen=True)
class ReviewQueue(JsonResult):
    """Rows to review, in order.

    Attributes
    ----------
    rows : ndarray
        0-based positions in the table, first to review first.
    strategy : str
    seed : int
    n_skipped : int
        Rows left out because they are already labelled.
    n_left_out : int
        Other rows the strategy cannot place (no label for ``false_alarms`` /
        ``missed_hallucinations``).
    """

    rows: np.ndarray
    strategy: str
    seed: int
    n_skipped: int
    n_left_out: int


def _scores(values, name: str, n: int) -> np.ndarray:
    if values is None:
        raise SGIInputError(f"this queue needs the {name}", hint="Choose a score column for the queue")
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (n,):
        raise SGIInputError(f"the {name} has {values.size} values for {n} rows")
    return values


def _order_by(key: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """Positions sorted by ``key`` ascending (NaN last), ties in ``tiebreak`` order."""
    key = np.where(np.isnan(key), np.inf, key)
    return np.lexsort((tiebreak, key))


def _permutation(n_rows: int, seed: int, keys) -> np.ndarray:
    """The seeded permutation every queue starts from: by the keys' seeded hash when given, else by position."""
    if keys is None:
        return np.random.default_rng(seed).permutation(n_rows)
    keys = np.asarray(keys, dtype=object)
    if keys.shape != (n_rows,):
        raise SGIInputError(f"the queue was given {keys.size} keys for {n_rows} rows",
                            hint="Give one key per row (sgi_core.review.annotations.row_keys)")
    return canonical_order(keys, seed=int(seed))


def review_queue(n_rows: int, *, strategy: str, seed: int = 0, score=None, second_score=None, probability=None,
                 threshold: float | None = None, labels=None, skip=None, keys=None) -> ReviewQueue:
    """The rows of a table in the order ``strategy`` puts them (see the module's table).

    Parameters
    ----------
    n_rows : int
    strategy : str
        One of :data:`STRATEGIES`.
    seed : int
        Seeds the permutation every strategy starts from.
    score : array, optional
        The chosen score (higher = grounded): needed by all but ``random``
        (``uncertain`` takes ``probability`` instead when given).
    second_score : array, optional
        The other score of ``disagreement``.
    probability : array, optional
        Calibrated P(grounded) for ``uncertain``.
    threshold : float, optional
        Policy threshold on ``score`` for ``uncertain`` without ``probability``.
    labels : array, optional
        1.0 grounded, 0.0 hallucinated, NaN unlabelled: needed by ``false_alarms``
        and ``missed_hallucinations``.
    skip : bool array, optional
        Rows to leave out (already labelled).
    keys : array of str, optional
        Each row's key: the permutation follows the keys' seeded hash, not the row
        positions, so the queue is the same whatever the order of the file's rows.

    Examples
    --------
    >>> q = review_queue(6, strategy="uncertain", probability=[0.05, 0.45, 0.9, 0.52, 0.5, 0.7],
    ...                  skip=[False, False, False, False, True, False])
    >>> q.rows.tolist(), q.n_skipped
    ([3, 1, 5, 2, 0], 1)
    """
    if strategy not in STRATEGIES:
        hint = ("The active queue is made from its design: sgi_core.runs.review_designs.active_run_queue"
                if strategy in QUEUES else f"Choose among {', '.join(STRATEGIES)}")
        raise SGIInputError(f"unknown review queue {strategy!r}", hint=hint)
    permutation = _permutation(n_rows, seed, keys)
    rank_in_permutation = np.empty(n_rows, dtype=np.int64)
    rank_in_permutation[permutation] = np.arange(n_rows)
    eligible = np.ones(n_rows, dtype=bool)
    if strategy == "random":
        order = permutation
    elif strategy == "stratified":
        order = _stratified(_scores(score, "score", n_rows), rank_in_permutation)
    elif strategy == "uncertain":
        if probability is not None:
            distance = np.abs(_scores(probability, "calibrated probability", n_rows) - 0.5)
        elif threshold is not None:
            distance = np.abs(_scores(score, "score", n_rows) - float(threshold))
        else:
            raise SGIInputError("the most uncertain rows need a calibrated probability or a policy threshold",
                                hint="Fit a calibrator or set a threshold on the Calibration session page")
        order = _order_by(distance, rank_in_permutation)
    elif strategy == "disagreement":
        ranks = [pd.Series(_scores(s, name, n_rows)).rank(pct=True).to_numpy()
                 for s, name in ((score, "score"), (second_score, "second score"))]
        order = _order_by(-np.abs(ranks[0] - ranks[1]), rank_in_permutation)
    else:
        values, label = _scores(score, "score", n_rows), _scores(labels, "labels", n_rows)
        wanted = 1.0 if strategy == "false_alarms" else 0.0
        eligible = label == wanted
        order = _order_by(values if wanted == 1.0 else -values, rank_in_permutation)
    skipped = np.zeros(n_rows, dtype=bool) if skip is None else np.asarray(skip, dtype=bool)
    kept = order[eligible[order] & ~skipped[order]]
    return ReviewQueue(kept, strategy, int(seed), int(skipped.sum()), int((~eligible & ~skipped).sum()))


def _stratified(score: np.ndarray, rank_in_permutation: np.ndarray) -> np.ndarray:
    """Round robin over the score's :data:`STRATA` equal-count bins, each in permutation order; NaN scores last."""
    finite = ~np.isnan(score)
    stratum = np.full(len(score), STRATA, dtype=np.int64)
    if finite.any():
        stratum[finite] = pd.qcut(pd.Series(score[finite]).rank(method="first"), min(STRATA, int(finite.sum())),
                                  labels=False).to_numpy()
    # A row's turn is its place within its bin (in permutation order); the bin breaks ties within a turn.
    by_bin = np.lexsort((rank_in_permutation, stratum))
    turn = np.empty(len(score), dtype=np.int64)
    starts = np.searchsorted(stratum[by_bin], stratum[by_bin], side="left")
    turn[by_bin] = np.arange(len(score)) - starts
    return np.lexsort((stratum, turn + np.where(finite, 0, len(score))))


@dataclass(frozen=True)
class RowProfile(JsonResult):
    """Where one row's values stand in its file.

    ``values[name]`` is the row's value of each column and ``percentiles[name]`` the
    share of the file's non-NaN values at or below it, in percent (NaN where the
    row's value is NaN).
    """

    values: dict[str, float]
    percentiles: dict[str, float]


def row_profile(columns: dict, position: int) -> RowProfile:
    """:class:`RowProfile` of the row at 0-based ``position`` over ``columns`` (name -> values of every row).

    Examples
    --------
    >>> row_profile({"length": [10, 20, 30, 40]}, 2).percentiles
    {'length': 75.0}
    """
    values, percentiles = {}, {}
    for name, column in columns.items():
        column = np.asarray(column, dtype=np.float64)
        value = float(column[position])
        finite = column[~np.isnan(column)]
        values[name] = value
        percentiles[name] = float("nan") if np.isnan(value) or not len(finite) else float(
            percentileofscore(finite, value, kind="weak"))
    return RowProfile(values, percentiles)


def paired_queue(decided_base, decided_new, *, seed: int, keys=None) -> np.ndarray:
    """Matched keys of two runs in a seeded random order, those decided in both runs left out.

    The order is the ``random`` queue's permutation (by the keys' seeded hash when
    ``keys`` are given), so that the keys labelled in both runs form a random sample of
    the matched keys: what a paired estimate, and a prediction-powered one, assume. A key
    decided in one run only stays, so that its other answer gets labelled.

    Parameters
    ----------
    decided_base, decided_new : array_like of bool, shape (k,)
        Whether each matched key has a decision in force in each run.
    seed : int
    keys : array of str, shape (k,), optional
        The matched keys: with them, the order is the same whatever the runs' row order.

    Examples
    --------
    >>> paired_queue([True, False, True, False], [True, False, False, False], seed=0).tolist()
    [2, 1, 3]
    """
    decided_base = np.asarray(decided_base, dtype=bool)
    decided_new = np.asarray(decided_new, dtype=bool)
    if decided_base.shape != decided_new.shape:
        raise SGIInputError(f"the two runs' decisions cover {len(decided_base)} and {len(decided_new)} keys",
                            hint="Give one flag per matched key for each run")
    order = _permutation(len(decided_base), seed, keys)
    return order[~(decided_base & decided_new)[order]]
