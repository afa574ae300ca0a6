"""Cached calls behind the Review page's ``active`` queue: the keys ``sample --design active`` draws, with their
probabilities (:mod:`sgi_core.runs.review_designs`)."""

from __future__ import annotations

import streamlit as st

from dashboard import state
from sgi_core.io.triples import TripleTable
from sgi_core.review.queues import QUEUES
from sgi_core.runs.design_labels import run_units
from sgi_core.runs.review_designs import DesignQueue, active_run_queue, run_predictors

__all__ = ["QUEUES", "active_budget", "active_queue", "predictor_columns"]


def predictor_columns(table: TripleTable, scores: dict) -> list[str]:
    """The queue's scores that are probability columns of the file: what ``sample --predictor`` reads alone."""
    return run_predictors(table.frame, [name for name in scores if name in table.frame.columns])


@st.cache_data(show_spinner="Drawing the active sample...", max_entries=16)
def active_queue(key: state.DataKey, predictor: str, budget: float, seed: int, _table: TripleTable) -> DesignQueue:
    """Every key the active design draws on the file, in the seeded order; the page skips those already labelled."""
    return active_run_queue(_table.frame, budget=budget, seed=seed, predictor=predictor, source=_table.source)


@st.cache_data(show_spinner=False, max_entries=16)
def active_budget(key: state.DataKey, target: int, _table: TripleTable) -> int:
    """The active sample's expected size: the target number of labels, at most the file's distinct answers (keys)."""
    return min(int(target), len(run_units(_table.frame)[0]))
