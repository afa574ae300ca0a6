"""The hallucination rates a comparison shows: each set named, and each difference the difference of its rates.

A :class:`~sgi_core.runs.labels.LabelShift` holds two estimates of the runs'
hallucination rates: the labels alone, and (when only a sample of the matched keys is
labelled) prediction-powered inference over every matched key. Shown side by side without
names, "42.5% / 29.2% / -0.149" reads as a sum that does not add up. Here each estimate is
one :class:`RateLine`:

* **labels only**: each run's share of hallucinated labels on the keys behind the
  labels' interval (labelled in both runs when paired) and ``new - base`` of those two
  rates, with Newcombe's interval;
* **prediction-powered**: the base run's PPI++ rate (its own labelled keys and every
  key's scores), the paired PPI++ difference ``d`` (estimated on the keys labelled in
  both, the estimate the verdict and the gate read) with its interval, and the new run's
  rate as ``rate_base + d``, so that the line adds up. The new run's separately
  estimated rate stays in the result (``own_rate_new``);
* **active**: the same line from labels drawn under an active design
  (:mod:`sgi_core.runs.active_labels`); its labels-only line is then weighted by the design.

``difference = rate_new - rate_base`` on every line (up to float rounding); a rise is a
regression.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sgi_core.results import JsonResult

LABELS_ONLY = "labels only"
PREDICTION_POWERED = "prediction-powered"
ACTIVE = "active"


@dataclass(frozen=True)
class RateLine(JsonResult):
    """One named estimate of both runs' hallucination rates.

    Attributes
    ----------
    name : str
        :data:`LABELS_ONLY`, :data:`PREDICTION_POWERED` or :data:`ACTIVE`.
    rate_base, rate_new : float
    difference : float
        ``rate_new - rate_base``.
    ci : (float, float)
        Interval of ``difference``.
    n_keys : int
        Keys labelled in both runs (paired) or in either (unpaired) behind the labels.
    own_rate_new : float
        The new run's rate estimated on its own (equal to ``rate_new`` for the labels).
    """

    name: str
    rate_base: float
    rate_new: float
    difference: float
    ci: tuple[float, float]
    n_keys: int
    own_rate_new: float


@dataclass(frozen=True)
class HeadlineRates(JsonResult):
    """The labels-only line first, then the prediction-powered one when there is one; ``lines[-1]`` decides."""

    lines: tuple[RateLine, ...]


def headline_rates(shift) -> HeadlineRates:
    """The named rate lines of a :class:`~sgi_core.runs.labels.LabelShift` (see the module notes).

    Examples
    --------
    >>> from types import SimpleNamespace as S
    >>> shift = S(labels_rate_base=0.425, labels_rate_new=0.275, labels_only_ci=(-0.3, 0.0), n_keys=40,
    ...           method="prediction-powered (cross-fitted logistic on 2 scores)", rate_base=0.425, rate_new=0.292,
    ...           difference=-0.149, ci=(-0.27, -0.03))
    >>> [(line.name, round(line.rate_new, 3), round(line.difference, 3)) for line in headline_rates(shift).lines]
    [('labels only', 0.275, -0.15), ('prediction-powered', 0.276, -0.149)]
    """
    labels = RateLine(LABELS_ONLY, shift.labels_rate_base, shift.labels_rate_new,
                      shift.labels_rate_new - shift.labels_rate_base, tuple(shift.labels_only_ci), shift.n_keys,
                      shift.labels_rate_new)
    name = next((name for name in (PREDICTION_POWERED, ACTIVE) if shift.method.startswith(name)), None)
    if name is None:
        return HeadlineRates((labels,))
    rate_new = shift.rate_base + shift.difference if not math.isnan(shift.difference) else math.nan
    powered = RateLine(name, shift.rate_base, rate_new, shift.difference, tuple(shift.ci),
                       shift.n_keys, shift.rate_new)
    return HeadlineRates((labels, powered))
