"""The labelled random sample a monitored run needs, and whether the labels given are it.

A run's hallucination rate can be checked only on labels of that run. The sample is the
first ``n`` rows of the Review page's ``random`` queue (:func:`~sgi_core.review.queues.review_queue`,
the seeded permutation of the rows' keys), so the same seed names the same rows on the page
and on the command line, whatever the order of the file's rows.

**Size.** ``n`` is chosen for the half-width ``h`` of the rate's interval the user asks for,
at the worst case ``p = 1/2`` of the labels alone (the prediction-powered interval with the
policy's score as predictor is about as wide with a useless score and narrower with a good
one; Angelopoulos, Duchi and Zrnic 2023)::

    n = ceil( (z / (2 h))^2 )              (h = 0.05 -> 385 rows at 95%)

It depends on nothing the run has not shown: sizing from the corrected rate would lean on the
very assumption the sample is there to check. A run of ``N < n`` rows cannot reach ``h``: the
plan is then the whole run, and says so with the half-width all ``N`` rows give, ``z / (2 sqrt(N))``.

**Which labels count.** Labels re-validate a run only when they are a prefix of the seeded
order (the first ``m`` rows of it, ``m >= n``): hand-picked rows, or too few, give no
re-validation verdict (:func:`sample_problem` says why).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult

#: Default half-width of the run's rate interval the sample is sized for.
RATE_HALF_WIDTH = 0.05


@dataclass(frozen=True)
class LabelPlan(JsonResult):
    """The labelled random sample a run needs (see the module).

    Attributes
    ----------
    size : int
        Rows to label: the first ``size`` of the seeded random order; the whole run when it
        cannot reach ``half_width``.
    n_rows : int
    seed : int
    half_width : float
        The half-width asked for.
    reachable_half_width : float
        The worst-case half-width ``size`` labels give, ``z / (2 sqrt(size))``.
    whole_run : bool
        ``size`` is every row of the run.
    reachable : bool
        ``reachable_half_width <= half_width``.
    confidence : float
    """

    size: int
    n_rows: int
    seed: int
    half_width: float
    reachable_half_width: float
    whole_run: bool
    reachable: bool
    confidence: float


def plan_sample(n_rows: int, *, half_width: float = RATE_HALF_WIDTH, seed: int = 0,
                confidence: float = 0.95) -> LabelPlan:
    """Rows to label for a rate interval of ``half_width`` on a run of ``n_rows`` (see the module).

    Examples
    --------
    >>> plan = plan_sample(5000)
    >>> plan.size, round(plan.reachable_half_width, 4), plan.whole_run, plan.reachable
    (385, 0.0499, False, True)
    >>> small = plan_sample(138)
    >>> small.size, round(small.reachable_half_width, 3), small.whole_run, small.reachable
    (138, 0.083, True, False)
    """
    if not (isinstance(half_width, float) and 0.0 < half_width < 0.5):
        raise SGIInputError(f"The 'half_width' parameter of plan_sample must be a float in (0, 0.5). "
                            f"Got {half_width!r} instead.", hint="Ask for a half-width such as 0.05 (5 points)")
    if not (isinstance(n_rows, (int, np.integer)) and n_rows >= 0):
        raise SGIInputError(f"The 'n_rows' parameter of plan_sample must be an int >= 0. Got {n_rows!r} instead.")
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    needed = math.ceil((z / (2.0 * half_width)) ** 2)
    size = min(needed, int(n_rows))
    reached = z / (2.0 * math.sqrt(size)) if size else math.inf
    return LabelPlan(size, int(n_rows), int(seed), half_width, reached, 0 < size == n_rows,
                     reached <= half_width, confidence)


def sample_order(frame, seed: int, *, keys=None) -> np.ndarray:
    """Positions of the run's rows in the seeded random order the Review page's ``random`` queue shows.

    ``keys`` are the rows' :func:`~sgi_core.review.annotations.row_keys` when already computed
    (a run read in batches); ``frame`` is then not read.
    """
    from sgi_core.review.annotations import row_keys
    from sgi_core.review.queues import review_queue

    keys = row_keys(frame) if keys is None else keys
    return review_queue(len(keys), strategy="random", seed=seed, keys=keys).rows


def sample_problem(labelled, order, plan: LabelPlan) -> str:
    """Why the labelled rows are not the plan's sample; ``""`` when they are.

    Parameters
    ----------
    labelled : array_like of bool, shape (n,)
        Which rows of the run carry a label.
    order : array_like of int or None
        :func:`sample_order` of the run; None for labels verified as a uniform sample drawn otherwise
        (only their number is checked).
    plan : LabelPlan

    Examples
    --------
    >>> plan = plan_sample(6, half_width=0.45)
    >>> plan.size
    5
    >>> order = np.array([4, 0, 5, 2, 1, 3])
    >>> sample_problem(np.isin(np.arange(6), [4, 0, 5, 2, 1]), order, plan)
    ''
    >>> sample_problem(np.isin(np.arange(6), [0, 1, 2, 3, 4]), order, plan)[:48]
    'the labels are not the seeded random sample (see'
    """
    labelled = np.asarray(labelled, dtype=bool)
    m = int(labelled.sum())
    outside = 0 if order is None else int(np.count_nonzero(~labelled[np.asarray(order)[:m]]))
    if outside:
        return (f"the labels are not the seeded random sample (seed {plan.seed}): {outside} of the {m} labelled rows "
                f"are not among the first {m} rows of its order, so they may be hand-picked and say nothing of the "
                "run's rate")
    if m < plan.size:
        return f"{m} rows of the sample are labelled, fewer than the {plan.size} it needs"
    return ""
