"""Cached calls behind the Review page's two-runs mode: both answers to one key, labelled into each file's store.

The base run is the current file; the new run is the one opened on the Compare runs page.
Each matched key's two answers are labelled in their own file's annotations store (so the
Compare runs page and every page of either file find them); the keys come in a seeded
random order (:func:`sgi_core.review.queues.paired_queue`), so the keys labelled in both
runs are a random sample of the matched ones, as the paired and prediction-powered
estimates assume.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import services, state
from dashboard.services import compare_services, review_services
from sgi_core.evaluation.label_rates import KeysToDecide, keys_to_decide
from sgi_core.evaluation.run_labels import LabelShift, label_shift
from sgi_core.evaluation.run_matching import MatchedRuns
from sgi_core.frames import take_rows
from sgi_core.review.annotations import AnnotationStore, annotations_path, row_keys
from sgi_core.review.queues import paired_queue

__all__ = ["PairedRuns", "estimate", "keys_needed", "open_pair", "order", "pair_labels"]


@dataclass(frozen=True)
class PairedRuns:
    """The two runs matched, and where each answer's label goes.

    ``base_keys`` and ``new_keys`` are the row keys of each matched key's first row in
    each run; ``base_rows`` and ``new_rows`` those rows in each run's frame.
    """

    matched: MatchedRuns
    base_frame: pd.DataFrame
    new_frame: pd.DataFrame
    base_keys: np.ndarray
    new_keys: np.ndarray
    base_store: AnnotationStore
    new_store: AnnotationStore
    new_name: str


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
    return PairedRuns(matched, _base.frame, _new.frame, row_keys(base_rows), row_keys(new_rows),
                      review_services.annotation_store(base_key), AnnotationStore(annotations_path(name)), name)


def _decisions(store: AnnotationStore, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per key: whether a decision is in force (unsure included), and its label (NaN unless grounded/hallucinated)."""
    current = store.current().drop_duplicates("key", keep="last").set_index("key")
    decided = pd.Index(keys).isin(current.index)
    label = current["value"].reindex(keys).to_numpy(dtype=np.float64) if len(current) else np.full(len(keys), np.nan)
    return decided, label


def pair_labels(pair: PairedRuns) -> dict:
    """Each run's decisions on the matched keys: ``decided_*`` (unsure counts as decided) and ``label_*``."""
    decided_base, label_base = _decisions(pair.base_store, pair.base_keys)
    decided_new, label_new = _decisions(pair.new_store, pair.new_keys)
    return {"decided_base": decided_base, "label_base": label_base, "decided_new": decided_new,
            "label_new": label_new}


def order(pair: PairedRuns, labels: dict, seed: int) -> np.ndarray:
    """The matched keys left to label, in the seeded random order."""
    return paired_queue(labels["decided_base"], labels["decided_new"], seed=seed, keys=pair.matched.keys)


def estimate(pair: PairedRuns, labels: dict) -> LabelShift | None:
    """What the labels given here say: the paired hallucination rates and, from a sample, the prediction-powered ones."""
    matched = replace(pair.matched, base=pair.matched.base.assign(label=labels["label_base"]),
                      new=pair.matched.new.assign(label=labels["label_new"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return label_shift(matched)


def keys_needed(shift: LabelShift | None, effect: float, n_left: int) -> KeysToDecide | None:
    """More keys labelled in both runs that would decide a difference of ``effect`` (never more than are left)."""
    if shift is None or not shift.paired:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return keys_to_decide(shift.base_only, shift.new_only, shift.n_keys, effect=effect, n_left=n_left)
