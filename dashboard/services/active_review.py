"""Cached calls behind the Review page's ``active`` queue: the keys ``sample --design active`` draws, with their
probabilities (:mod:`sgi_core.runs.review_designs`)."""

from __future__ import annotations

import streamlit as st

from dashboard import state
from sgi_core.io.triples import TripleTable
from sgi_core.review.queues import QUEUES
from sgi_core.runs.review_designs import DesignQueue, active_run_queue

__all__ = ["QUEUES", "active_queue", "predictor_columns"]


def predictor_columns(table: TripleTable, scores: dict) -> list[str]:
    """The queue's scores that are columns of the file: what ``sample --predictor`` can name."""
    return [name for name in scores if name in table.frame.columns]


@st.cache_data(show_spinner="Drawing the active sample...", max_entries=16)
def active_queue(key: state.DataKey, predictor: str, budget: float, seed: int, _table: TripleTable) -> DesignQueue:
    """Every key the active design draws on the file, in the seeded order; the page skips those already labelled."""
    return active_run_queue(_table.frame, budget=budget, seed=seed, predictor=predictor, source=_table.source)
