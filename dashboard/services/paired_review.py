"""Cached calls behind the Review page's two-runs mode: both answers to one key, labelled into each file's store.

The base run is the current file; the new run is the one opened on the Compare runs page.
Each matched key's two answers are labelled in their own file's annotations store (so the
Compare runs page and every page of either file find them). The ``random`` queue gives the
keys in a seeded random order (:func:`sgi_core.review.queues.paired_queue`), so the keys
labelled in both runs are a random sample of the matched ones, as the paired and
prediction-powered estimates assume; the ``active`` queue gives the keys
``sample NEW --baseline BASE --design active`` draws (:func:`sgi_core.runs.review_designs.active_pair_queue`),
each label keeping its key's probability, and the estimate reads them under that design.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import services, state
from dashboard.services import compare_services, review_services
from sgi_core.frames import take_rows
from sgi_core.review.annotations import AnnotationStore, annotations_path, row_keys
from sgi_core.review.queues import paired_queue
from sgi_core.review.row_labels import RowLabelTracker
from sgi_core.runs.labels import LabelShift
from sgi_core.runs.matching import MatchedRuns
from sgi_core.runs.pairing import RunPair
from sgi_core.runs.review_designs import DesignQueue, PairEstimate, active_pair_queue, pair_estimate, pair_predictors
from sgi_core.stats.proportions import KeysToDecide, keys_to_decide

#: The queues of the two-runs mode.
QUEUES = ("random", "active")
__all__ = ["QUEUES", "PairedRuns", "active_queue", "estimate", "keys_needed", "open_pair", "order", "pair_labels",
           "predictor_columns"]


@dataclass(frozen=True)
class PairedRuns:
    """The two runs matched, and where each answer's label goes.

    ``base_keys`` and ``new_keys`` are the row keys of each matched key's first row in
    each run; ``base_rows`` and ``new_rows`` those rows in each run's frame. ``base_labels``
    and ``new_labels`` keep each store's decisions on those keys, a click taking in only the
    decision it appended. ``runs`` holds both runs and their matching, as ``sample`` and
    ``compare`` pair them.
    """

    matched: MatchedRuns
    base_frame: pd.DataFrame
    new_frame: pd.DataFrame
    base_keys: np.ndarray
    new_keys: np.ndarray
    base_store: AnnotationStore
    new_store: AnnotationStore
    new_name: str
    base_labels: RowLabelTracker
    new_labels: RowLabelTracker
    runs: RunPair


def open_pair(data) -> PairedRuns | None:
    """The current file and the Compare runs page's new run, matched; None when no new run is open.

    Raises
    ------
    SGIInputError
        When the new run cannot be read or the runs share no key.
    """
    raw = st.session_state.get(state.COMPARE_NEW_RAW)
    if raw is None:
        return None
    name = st.session_state[state.COMPARE_NEW_NAME]
    digest = state.source_digest(raw)
    device, backend = services.chosen_device(), services.chosen_backend()
    base, _ = compare_services.run_of_current_file(data.key, data.model, data.frame)
    new, _ = compare_services.new_run(name, digest, data.model, device, backend, data.key.context_strategy, raw)
    key = st.session_state.get(state.COMPARE_KEY) or "question"
    return _pair(data.key, (digest, device, backend), data.model, key, name, base, new)


@st.cache_resource(show_spinner="Matching the two runs...", max_entries=4)
def _pair(base_key: state.DataKey, new_id: tuple, model_name: str, key_column: str, name: str, _base, _new):
    matched = compare_services.matched_runs(_base, _new, key_column)
    base_rows = take_rows(_base.frame, matched.first_row_base)
    new_rows = take_rows(_new.frame, matched.first_row_new)
    base_keys, new_keys = row_keys(base_rows), row_keys(new_rows)
    base_store, new_store = review_services.annotation_store(base_key), AnnotationStore(annotations_path(name))
    return PairedRuns(matched, _base.frame, _new.frame, base_keys, new_keys, base_store, new_store, name,
                      RowLabelTracker(base_keys, source=str(base_store.path)),
                      RowLabelTracker(new_keys, source=str(new_store.path)),
                      RunPair(_base, _new, matched, (None, None)))


def _decisions(store: AnnotationStore, labels: RowLabelTracker) -> tuple[np.ndarray, np.ndarray]:
    """Per key: whether a decision is in force (unsure included), and its label (NaN unless grounded/hallucinated)."""
    rows = labels.update(store.log())
    return rows.annotated, rows.joined.label


def pair_labels(pair: PairedRuns) -> dict:
    """Each run's decisions on the matched keys: ``decided_*`` (unsure counts as decided) and ``label_*``."""
    decided_base, label_base = _decisions(pair.base_store, pair.base_labels)
    decided_new, label_new = _decisions(pair.new_store, pair.new_labels)
    return {"decided_base": decided_base, "label_base": label_base, "decided_new": decided_new,
            "label_new": label_new}


def order(pair: PairedRuns, labels: dict, seed: int) -> np.ndarray:
    """The matched keys left to label, in the seeded random order."""
    return paired_queue(labels["decided_base"], labels["decided_new"], seed=seed, keys=pair.matched.keys)


def predictor_columns(pair: PairedRuns) -> list[str]:
    """The score columns of both runs the active queue can draw from (``sample --predictor``)."""
    return pair_predictors(pair.runs)


def active_queue(pair: PairedRuns, predictor: str, budget: float, seed: int) -> DesignQueue:
    """Every matched key the active design draws, in the seeded order; the page skips those decided in both runs."""
    return active_pair_queue(pair.runs, budget=budget, seed=seed, predictor=predictor)


def estimate(pair: PairedRuns, labels: dict, seed: int) -> PairEstimate:
    """What the labels given here say, under the design they were given on.

    :func:`~sgi_core.runs.review_designs.pair_estimate`: without a design, the paired rates, the
    prediction-powered ones from a sample, and the sequence; on the active queue, the
    inverse-probability-weighted prediction-powered estimate once its sample is labelled.

    The confidence sequence takes the keys in the random queue's order for ``seed`` (the order
    they are labelled in), so it stays valid whenever the labelling stops.

    Raises
    ------
    SGIInputError
        Labels of the active queue mixed with others, or whose design does not verify on these runs.
    """
    matched = replace(pair.matched, base=pair.matched.base.assign(label=labels["label_base"]),
                      new=pair.matched.new.assign(label=labels["label_new"]))
    nobody = np.zeros(len(pair.matched.keys), dtype=bool)
    stores = [(store.path.name, store.current(), keys)
              for store, keys in ((pair.base_store, pair.base_keys), (pair.new_store, pair.new_keys))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pair_estimate(replace(pair.runs, matched=matched), stores,
                             order=paired_queue(nobody, nobody, seed=seed, keys=pair.matched.keys))


def keys_needed(shift: LabelShift | None, effect: float, n_left: int) -> KeysToDecide | None:
    """More keys labelled in both runs that would decide a difference of ``effect`` (never more than are left)."""
    if shift is None or not shift.paired:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return keys_to_decide(shift.base_only, shift.new_only, shift.n_keys, effect=effect, n_left=n_left)
