"""The Review page's ``active`` queue: the keys ``sample --design active`` draws, each with its probability.

The queue is made by the same function ``sample`` calls (:func:`~sgi_core.runs.design_labels.run_design`
for one run, :func:`~sgi_core.runs.design_labels.pair_design` for two), so the same runs, seed, budget
and predictor give the same keys and the same inclusion probabilities on the page and on the command
line. The drawn keys come in the ``random`` queue's seeded order (a hash of each key), those already
labelled left out; each decision given on one records the design and its key's probability
(:meth:`DesignQueue.record`), which the annotations keep and the exported labels carry. The two-runs
estimate reads the annotations under the design they record, verified on the runs (:func:`pair_estimate`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.columns import DESIGN_COLUMNS
from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult
from sgi_core.review.queues import paired_queue, review_queue
from sgi_core.runs.active_labels import active_label_shift
from sgi_core.runs.design_labels import (
    RecordedDesign,
    checked_pair_design,
    design_of_rows,
    pair_design,
    run_design,
    run_units,
)
from sgi_core.runs.labels import LabelShift, label_shift
from sgi_core.runs.sampling_design import LabellingDesign, halluc_probability

#: What to do with annotations whose design cannot be verified.
_STORE_HINT = ("Label these runs on one queue: take back the other queue's labels (Undo), or export each file's "
               "labels (Import / export) and read them with `compare --labels`")


@dataclass(frozen=True)
class DesignQueue(JsonResult):
    """The rows of a design's sample left to label, in order.

    Attributes
    ----------
    rows : ndarray of int
        The drawn units' 0-based positions, first to label first; those already labelled left out.
        One run: the run's row of each unit (its first row); two runs: the matched key's position.
    design : LabellingDesign
    unit_rows : ndarray of int
        The position of each of ``design.keys`` (the run's row; the matched key's position for two runs).
    n_skipped : int
        Drawn keys already labelled.
    """

    rows: np.ndarray
    design: LabellingDesign
    unit_rows: np.ndarray
    n_skipped: int

    def record(self, position: int) -> dict:
        """What a decision on the row at ``position`` stores of the design: its key's inclusion probability and
        the design's fields (:data:`~sgi_core.columns.DESIGN_COLUMNS`)."""
        unit = int(np.flatnonzero(self.unit_rows == position)[0])
        d = self.design
        return {"inclusion_probability": float(d.pi[unit]), "design": d.design, "predictor": d.predictor,
                "seed": d.seed, "budget": d.budget}


def active_run_queue(frame: pd.DataFrame, *, budget: float, seed: int, predictor: str, policy=None, skip=None,
                     source: str = "run") -> DesignQueue:
    """The ``active`` queue of one run: the keys ``sample RUN --design active`` draws, in the seeded order.

    Parameters
    ----------
    frame : DataFrame
        The run's rows (``question``, ``context``, ``response`` and the predictor column).
    budget : float
        Expected number of keys to label (``sample --n``).
    seed : int
    predictor : str
        An oriented probability column (``sample --predictor``).
    policy : Policy, optional
        Maps a score that is not a probability (``sample --policy``).
    skip : array_like of bool of shape (n_rows,), optional
        Rows already labelled.

    Raises
    ------
    SGIInputError
        As :func:`~sgi_core.runs.design_labels.run_design`: no such column, not a probability, a budget
        over the run's keys.
    """
    design = run_design(frame, design="active", budget=budget, seed=seed, predictor=predictor, policy=policy,
                        source=source)
    unit_rows = run_units(frame)[1]
    order = review_queue(len(design.keys), strategy="random", seed=seed, keys=design.keys).rows
    rows = unit_rows[order[design.drawn[order]]]
    done = np.zeros(len(frame), dtype=bool) if skip is None else np.asarray(skip, dtype=bool)
    return DesignQueue(rows[~done[rows]], design, unit_rows, int(done[rows].sum()))


def active_pair_queue(pair, *, budget: float, seed: int, predictor: str, decided_base=None,
                      decided_new=None) -> DesignQueue:
    """The ``active`` queue of two runs: the matched keys ``sample NEW --baseline BASE --design active`` draws.

    Their probabilities follow the uncertainty of the paired difference
    (:mod:`~sgi_core.runs.sampling_design`); the keys come in the two-runs ``random`` queue's
    seeded order (:func:`~sgi_core.review.queues.paired_queue`), those decided in both runs left out.

    Parameters
    ----------
    pair : RunPair
        The runs and their matched keys (:func:`sgi_core.runs.pairing.pair_runs`).
    budget : float
        Expected number of keys to label (``sample --n``).
    seed : int
    predictor : str
        An oriented probability column of both runs (``sample --predictor``).
    decided_base, decided_new : array_like of bool of shape (k,), optional
        Whether each matched key has a decision in force in each run.

    Raises
    ------
    SGIInputError
        The predictor is not a score column of both runs; as :func:`~sgi_core.runs.design_labels.pair_design`
        otherwise (not a probability, a budget over the matched keys).
    """
    if predictor not in pair.matched.scores:
        readable = ", ".join(pair_predictors(pair)) or "none"
        raise SGIInputError(f"the predictor '{predictor}' is not a score column of both runs", column=predictor,
                            hint=f"Name a probability column both runs carry ({readable})")
    design = pair_design(pair, design="active", budget=budget, seed=seed, predictor=predictor)
    nobody = np.zeros(len(design.keys), dtype=bool)
    order = paired_queue(nobody, nobody, seed=seed, keys=design.keys)
    rows = order[design.drawn[order]]
    done = nobody if decided_base is None else (np.asarray(decided_base, bool) & np.asarray(decided_new, bool))
    return DesignQueue(rows[~done[rows]], design, np.arange(len(design.keys)), int(done[rows].sum()))


def pair_predictors(pair) -> list[str]:
    """The score columns of both runs an active design reads as probabilities without a policy (``sample --predictor``).

    A column is one where every value of both runs lies in [0, 1] ([-1, 0] for a ``neg_`` column)
    (:func:`~sgi_core.runs.sampling_design.halluc_probability`).
    """
    in_base = set(run_predictors(pair.matched.base, pair.matched.scores))
    return [column for column in run_predictors(pair.matched.new, pair.matched.scores) if column in in_base]


def run_predictors(frame, columns) -> list[str]:
    """The ``columns`` of one run an active design reads as probabilities without a policy, in their order.

    A column is one of the run's whose every value lies in [0, 1] ([-1, 0] for a ``neg_``
    column) (:func:`~sgi_core.runs.sampling_design.halluc_probability`); an identifier or a raw
    score is not one.
    """
    readable = []
    for column in columns:
        try:
            halluc_probability(frame, column)
        except SGIInputError:
            continue
        readable.append(column)
    return readable


def store_design(stores) -> RecordedDesign | None:
    """The one design the labels in force on the keys read were given under; None when none records one.

    Parameters
    ----------
    stores : sequence of (str, DataFrame, array_like of str)
        Each store's name, its decisions in force
        (:meth:`~sgi_core.review.annotations.AnnotationStore.current`) and the row keys read from it.

    Returns
    -------
    RecordedDesign or None

    Raises
    ------
    SGIInputError
        Labels with a design mixed with labels without one (another queue's), labels of different
        designs, or labels of the same texts with different probabilities.
    """
    read = []
    for name, current, keys in stores:
        labelled = current[current["key"].isin(pd.Index(np.asarray(keys, dtype=object))) & current["value"].notna()]
        read.append((name, labelled, (labelled["design"].fillna("").astype(str) != "").to_numpy()))
    n_designed = sum(int(designed.sum()) for _, _, designed in read)
    if not n_designed:
        return None
    n_plain = sum(int((~designed).sum()) for _, _, designed in read)
    if n_plain:
        counts = "; ".join(f"{name}: {int(designed.sum())} with a design, {int((~designed).sum())} without"
                           for name, _, designed in read)
        raise SGIInputError(f"{n_designed} labels of the matched keys were given on the active queue and carry its "
                            f"design, {n_plain} on another queue without one ({counts}): one estimate needs one "
                            "design, and either reading would weigh some labels wrongly", hint=_STORE_HINT)
    rows = pd.concat([labelled[["key", *DESIGN_COLUMNS]] for _, labelled, _ in read], ignore_index=True)
    return design_of_rows(rows.assign(predictor=rows["predictor"].fillna("")), [name for name, _, _ in read],
                          hint=_STORE_HINT)


@dataclass(frozen=True)
class PairEstimate(JsonResult):
    """What the labels given on two runs' matched keys say, read under the design they were given on.

    Attributes
    ----------
    shift : LabelShift or None
        The estimate; None before any key is labelled in both runs, and for an active sample
        before every key it draws is (a part of a Bernoulli sample has no known probabilities).
    design : LabellingDesign or None
        The labels' design, verified on the runs; None for labels given without one.
    n_labelled : int
        Keys the design draws labelled in both runs (0 without a design).
    """

    shift: LabelShift | None
    design: LabellingDesign | None
    n_labelled: int


def pair_estimate(pair, stores, *, order=None, confidence: float = 0.95) -> PairEstimate:
    """The two runs' hallucination rates from the labels in force, under the design they record.

    Labels without a design are a random sample of the matched keys:
    :func:`~sgi_core.runs.labels.label_shift`, its confidence sequence in ``order``. Labels of
    the ``active`` queue are read as ``compare --labels`` reads an active sample: the design is
    re-computed from its recorded seed, budget and predictor on these runs
    (:func:`~sgi_core.runs.design_labels.checked_pair_design`) and, once every key it draws is
    labelled in both runs, the inverse-probability-weighted prediction-powered estimate
    (:func:`~sgi_core.runs.active_labels.active_label_shift`).

    Parameters
    ----------
    pair : RunPair
        The runs, each matched key's label in force joined (``label``: 1 grounded, 0 hallucinated, NaN).
    stores : sequence of (str, DataFrame, array_like of str)
        As :func:`store_design`, base run first.
    order : array_like of int, optional
        The matched keys in the order they are labelled (the random queue's), for the sequence.

    Raises
    ------
    SGIInputError
        As :func:`store_design`; labels of keys the design does not draw, or whose recorded probability is
        not the re-computed one.
    """
    recorded = store_design(stores)
    if recorded is None:
        return PairEstimate(label_shift(pair.matched, confidence=confidence, order=order), None, 0)
    design = checked_pair_design(recorded, pair, every_drawn=False, hint=_STORE_HINT)
    both = pair.matched.base["label"].notna().to_numpy() & pair.matched.new["label"].notna().to_numpy()
    n_labelled = int((design.drawn & both).sum())
    if n_labelled < design.n_drawn:
        return PairEstimate(None, design, n_labelled)
    shift = label_shift(pair.matched, confidence=confidence, order=order)
    return PairEstimate(active_label_shift(shift, pair.matched, design, confidence=confidence), design, n_labelled)
