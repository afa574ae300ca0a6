"""The Review page's ``active`` queue: the keys ``sample --design active`` draws, each with its probability.

The queue is made by the same function ``sample`` calls (:func:`~sgi_core.runs.design_labels.run_design`
for one run), so the same run, seed, budget and predictor give the same keys and the same
inclusion probabilities on the page and on the command line. The drawn keys come in the
``random`` queue's seeded order (a hash of each key), those already labelled left out; each
decision given on one records the design and its key's probability
(:meth:`DesignQueue.record`), which the annotations keep and the exported labels carry.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.results import JsonResult
from sgi_core.review.queues import review_queue
from sgi_core.runs.design_labels import run_design, run_units
from sgi_core.runs.sampling_design import LabellingDesign


@dataclass(frozen=True)
class DesignQueue(JsonResult):
    """The rows of a design's sample left to label, in order.

    Attributes
    ----------
    rows : ndarray of int
        0-based positions in the run of the drawn keys' first rows, first to label first; those
        already labelled left out.
    design : LabellingDesign
    unit_rows : ndarray of int
        The run's row of each of ``design.keys``.
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


def refuse_designed_labels(stores, *, reader: str) -> None:
    """Refuse decisions in force that carry a labelling design where ``reader`` would take them for a random sample.

    Parameters
    ----------
    stores : sequence of (str, DataFrame, array_like of str)
        Each store's name, its decisions in force
        (:meth:`~sgi_core.review.annotations.AnnotationStore.current`) and the keys read from it.
    reader : str
        What reads the labels, for the message.

    Raises
    ------
    SGIInputError
        Some of the keys read carry a design (the ``active`` queue's labels).
    """
    from sgi_core.errors import SGIInputError

    for name, current, keys in stores:
        if "design" not in current or current.empty:
            continue
        read = current[current["key"].isin(pd.Index(np.asarray(keys, dtype=object)))]
        designed = int((read["design"].fillna("") != "").sum())
        if designed:
            raise SGIInputError(f"{designed} labels of {name} were given on the active queue and carry its design: "
                                f"{reader} reads a random sample and would weigh them wrongly",
                                hint="Read them with their design: export them (Import / export) and pass the file "
                                     "to `monitor --labels` or `compare --labels`")
