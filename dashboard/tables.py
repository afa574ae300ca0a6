"""Tables drawn on more than one page, from sgi_core result objects."""

from __future__ import annotations

import streamlit as st

STRATA_COLUMNS = {"label": "stratum", "lo": "from", "hi": "to", "n": "rows", "n_valid": "grounded",
                  "n_halluc": "hallucinated", "mean_valid": "mean SGI grounded",
                  "mean_halluc": "mean SGI hallucinated", "cohens_d": "Cohen's d", "auroc": "AUROC"}


def strata_table(strata, *, edge_format: str | None) -> None:
    """One row per stratum of a ``StrataResult``; ``edge_format=None`` hides the covariate range (named groups)."""
    table = strata.to_frame().rename(columns=STRATA_COLUMNS)
    if edge_format is None:
        table = table.drop(columns=["from", "to"]).rename(columns={"stratum": "group"})
    formats = {"mean SGI grounded": "%.3f", "mean SGI hallucinated": "%.3f", "Cohen's d": "%+.2f", "AUROC": "%.3f"}
    if edge_format is not None:
        formats.update({"from": edge_format, "to": edge_format})
    st.dataframe(table, hide_index=True,
                 column_config={name: st.column_config.NumberColumn(format=f) for name, f in formats.items()})
    st.caption("None = undefined there: d needs two rows of each class, AUROC one.")
