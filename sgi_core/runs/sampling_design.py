"""Which keys to label: a uniform or an active design, reproducible from its seed and the run, and its plan.

A design gives every unit (a matched key of two runs, or a row key of one run) a
labelling probability ``pi_i`` fixed before any label is seen and draws it when
``U_i < pi_i``, with ``U_i`` the seeded hash of the unit's key over 2^64
(:func:`~sgi_core.stats.key_order.key_hash`): the same seed and run give the same
probabilities and keys in any row order. The number of keys drawn is random, ``budget``
on average (Bernoulli sampling, as the estimator needs).

* **uniform**: ``pi_i = budget / N``;
* **active**: ``pi_i`` follows the predictor's uncertainty, mixed with uniform
  (:func:`~sgi_core.stats.active_inference.inclusion_probabilities`). For one run the
  uncertainty of a key is ``sqrt(p (1 - p))`` with ``p`` the predictor's P(hallucinated);
  for two runs that of the paired difference, ``sqrt(p_b (1 - p_b) + p_n (1 - p_n))``
  (the runs' labels taken as independent given the predictor), and 0 for a key whose
  answer did not change: the same texts carry the same label in both runs, so its
  difference is 0 without a label (it keeps the uniform floor).

The predictor is an oriented score column (higher = grounded). Before any label, its
P(hallucinated) is ``1 - value`` for a column of probabilities in [0, 1] (a grounding
model's or a judge's; for a ``neg_`` column of [-1, 0], ``-value``), or ``1 - P(grounded)``
of a policy's calibrator fitted on its own held-out data. A column of another range needs
a policy. An uncalibrated probability only makes the design less efficient: validity needs
only that ``pi_i`` is known. A key with no predictor value is taken as the most uncertain,
``p = 1/2``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from sgi_core.columns import DESIGN_COLUMNS
from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult
from sgi_core.stats.active_inference import inclusion_probabilities, labels_for_half_width, planned_variance
from sgi_core.stats.key_order import key_hash

#: The designs ``sample`` draws.
DESIGNS = ("uniform", "active")
__all__ = ["DESIGNS", "DESIGN_COLUMNS", "N_FOLDS", "PROBABILITY_TOLERANCE", "DesignPlan", "LabellingDesign",
           "halluc_probability", "make_design", "plan_labels", "unit_uniforms"]
#: Folds of the predictor's cross-fitting, assigned by a hash of the key.
N_FOLDS = 5
#: Relative difference below which a recorded probability matches the re-computed one (a text round trip).
PROBABILITY_TOLERANCE = 1e-9


@dataclass(frozen=True)
class LabellingDesign(JsonResult):
    """The labelling probability of every unit and which units it draws.

    Attributes
    ----------
    design : {"uniform", "active"}
    predictor : str
        The oriented score column ("" for a uniform design without one).
    seed : int
    budget : float
        Expected number of units drawn, ``sum(pi)``.
    keys : ndarray of str
        The units, in the caller's order.
    pi : ndarray of float
    drawn : ndarray of bool
    p_halluc : ndarray of shape (N, k)
        The predictor's P(hallucinated) of each unit in each run (k = 1 or 2; NaN without a predictor).
    unchanged : ndarray of bool
        Units whose target is 0 without a label (two runs' identical rows); all False for one run.
    """

    design: str
    predictor: str
    seed: int
    budget: float
    keys: np.ndarray
    pi: np.ndarray
    drawn: np.ndarray
    p_halluc: np.ndarray
    unchanged: np.ndarray

    @property
    def n_drawn(self) -> int:
        return int(self.drawn.sum())

    def folds(self) -> np.ndarray:
        """The cross-fitting fold of each unit: a seeded hash of its key, so no label and no row order moves it."""
        return (key_hash([f"fold:{key}" for key in self.keys], seed=self.seed) % N_FOLDS).astype(np.int64)

    def target(self) -> tuple[np.ndarray, np.ndarray]:
        """The predictor's prediction of the target and its conditional variance per unit.

        One run: ``p`` and ``p (1 - p)``; two runs: ``p_n - p_b`` and ``p_b (1 - p_b) + p_n (1 - p_n)``;
        0 and 0 for an unchanged unit.
        """
        p = self.p_halluc
        prediction = p[:, 0] if p.shape[1] == 1 else p[:, 1] - p[:, 0]
        return (np.where(self.unchanged, 0.0, prediction),
                np.where(self.unchanged, 0.0, np.sum(p * (1 - p), axis=1)))


def halluc_probability(frame, predictor: str, *, policy=None, source: str = "<run>") -> np.ndarray:
    """The predictor's P(hallucinated) of each row, before any label (see the module notes).

    Raises
    ------
    SGIInputError
        The column is missing, or not a probability and no policy maps it.
    """
    if predictor not in frame.columns:
        oriented = ", ".join(str(c) for c in frame.columns if str(c) not in ("question", "context", "response"))
        raise SGIInputError(f"the predictor column '{predictor}' is not in the run", source=source, column=predictor,
                            hint=f"Name an oriented score column ({oriented}); a column where high means hallucinated "
                                 "is neg_<name> with --hallucinated-high <name>")
    values = frame[predictor].to_numpy(dtype=np.float64)
    if policy is not None:
        from sgi_core.stats.calibration import Calibrator

        if policy.score_column != predictor:
            raise SGIInputError(f"the policy calibrates '{policy.score_column}', not the predictor '{predictor}'",
                                column=predictor, hint=f"Pass --predictor {policy.score_column}, or no policy")
        p = 1.0 - Calibrator.from_dict(policy.calibrator).predict(values)
    else:
        known = values[~np.isnan(values)]
        negated = predictor.startswith("neg_")
        low, high = (-1.0, 0.0) if negated else (0.0, 1.0)
        if known.size and not ((known >= low) & (known <= high)).all():
            raise SGIInputError(f"the predictor '{predictor}' is not a probability: its values run from "
                                f"{known.min():.4g} to {known.max():.4g}, outside [{low:g}, {high:g}]",
                                source=source, column=predictor,
                                hint="Pass --policy P (a policy whose held-out calibrator maps this score to a "
                                     "probability), or name a probability column (a grounding model's, a judge's)")
        p = -values if negated else 1.0 - values
    return np.where(np.isnan(p), 0.5, p)


def unit_uniforms(keys, seed: int) -> np.ndarray:
    """``U_i``: the seeded hash of each key over 2^64, uniform on [0, 1) and fixed by the key and the seed alone."""
    return key_hash(keys, seed=seed).astype(np.float64) / 2.0 ** 64


def make_design(keys, p_halluc, *, design: str, budget: float, seed: int, predictor: str = "",
                unchanged=None) -> LabellingDesign:
    """The design of ``keys`` given the predictor's P(hallucinated) in each run (see the module notes).

    Parameters
    ----------
    keys : array_like of shape (N,)
        Distinct unit keys.
    p_halluc : array_like of shape (N, k)
        P(hallucinated) per unit in each of ``k`` runs (1 or 2); NaN without a predictor.
    design : {"uniform", "active"}
    budget : float in (0, N]
        Expected number of units to label.
    seed : int >= 0
    predictor : str
        Recorded with the design; an active design needs one.
    unchanged : array_like of bool of shape (N,), optional
        Two runs' keys whose rows are the same texts in both: their difference is 0.

    Examples
    --------
    >>> d = make_design(["a", "b", "c", "d"], [[0.5], [0.5], [0.0], [0.0]], design="active", budget=2, seed=0,
    ...                 predictor="p")
    >>> d.pi.tolist()
    [0.9, 0.9, 0.1, 0.1]
    """
    keys = np.asarray(keys, dtype=object).ravel()
    if len(set(keys.tolist())) != len(keys):
        raise SGIInputError("the units of a design must have distinct keys", hint="Match the runs' rows by key first")
    if design not in DESIGNS:
        raise SGIInputError(f"the design must be one of {', '.join(DESIGNS)}; got {design!r}")
    if design == "active" and not predictor:
        raise SGIInputError("an active design needs a predictor", hint="Pass --predictor COLUMN or --policy P")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise SGIInputError(f"the seed must be an int >= 0; got {seed!r}")
    p = np.asarray(p_halluc, dtype=np.float64).reshape(len(keys), -1)
    budget = float(budget)
    if not (len(keys) and 0 < budget <= len(keys)):
        raise SGIInputError(f"the number of keys to label must be in (0, {len(keys)}], the keys at hand; got "
                            f"{budget:g}", hint=f"Ask for at most {len(keys)} keys with --n")
    unchanged = np.zeros(len(keys), bool) if unchanged is None else np.asarray(unchanged, dtype=bool)
    made = LabellingDesign(design, predictor, int(seed), budget, keys, np.full(len(keys), budget / len(keys)),
                           np.zeros(len(keys), bool), p, unchanged)
    pi = inclusion_probabilities(np.sqrt(made.target()[1]), budget) if design == "active" else made.pi
    return replace(made, pi=pi, drawn=unit_uniforms(keys, int(seed)) < pi)


@dataclass(frozen=True)
class DesignPlan(JsonResult):
    """Keys to label for an interval of ``+/- half_width``, by design, from the predictor's uncertainty.

    Attributes
    ----------
    half_width, confidence : float
    n_units : int
    keys_uniform, keys_active : float
        Expected keys to label (``inf`` when even all ``n_units`` keys fall short).
    planned_half_width : float
        The half-width the design at hand plans at its own budget.
    """

    half_width: float
    confidence: float
    n_units: int
    keys_uniform: float
    keys_active: float
    planned_half_width: float


def plan_labels(design: LabellingDesign, half_width: float, *, confidence: float = 0.95) -> DesignPlan:
    """Keys each design needs for ``+/- half_width``, with the predictor taken as calibrated.

    The planned variance is :func:`~sgi_core.stats.active_inference.planned_variance`
    (``lam = 1``); the keys are found by
    :func:`~sgi_core.stats.active_inference.labels_for_half_width`.

    Raises
    ------
    SGIInputError
        A design without a predictor: nothing to plan from.
    """
    from scipy import stats

    if not design.predictor:
        raise SGIInputError("a plan needs a predictor's probabilities", hint="Pass --predictor COLUMN or --policy P")
    prediction, variance = design.target()
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    planned = z * math.sqrt(planned_variance(prediction, variance, design.pi))
    needed = [labels_for_half_width(prediction, variance, half_width, confidence=confidence, active=active)
              for active in (False, True)]
    return DesignPlan(float(half_width), float(confidence), len(design.keys), *needed, planned)
