"""Cached calls about the embedding models themselves: how they agree row by row, and what they cut off."""

from __future__ import annotations

import warnings

import pandas as pd
import streamlit as st

from dashboard import state
from dashboard.services import model_encoder
from sgi_core.io.triples import TripleTable
from sgi_core.long_context import TruncationResult, truncation_report
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.correlation import AgreementResult, cross_model_agreement

#: Most rows whose contexts are tokenised to count truncation (a few seconds on a CPU).
TRUNCATION_MAX_ROWS = 100_000


@st.cache_data(show_spinner=False, max_entries=16)
def agreement(key: state.DataKey, models: tuple, _frames: dict) -> AgreementResult:
    """Pearson and Spearman of per-row SGI across models, rows with degenerate geometry under any model left out."""
    return cross_model_agreement(
        {name: _frames[name]["sgi"].to_numpy() for name in models},
        degenerate={name: _frames[name]["sgi_status"].astype(str).str.startswith("degenerate").to_numpy()
                    for name in models})


@st.cache_data(show_spinner="Counting the context tokens...", max_entries=16)
def truncation(key: state.DataKey, model_name: str, _table: TripleTable) -> TruncationResult | None:
    """Contexts longer than the model reads; None above :data:`TRUNCATION_MAX_ROWS` rows (not counted)."""
    if _table.n_rows > TRUNCATION_MAX_ROWS:
        return None
    with warnings.catch_warnings():
        # A model without a tokenizer gives unknown counts, which the page says in words.
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        return truncation_report(model_encoder(model_name), pd.Series(_table.frame["context"]),
                                 passages=_table.passages, context_strategy=key.context_strategy)
