"""Tables and figures of the Compare runs page, laid out from sgi_core results; no statistics here."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.views.tables import UNDEFINED
from sgi_core.render.figures import KEY_CHARS
from sgi_core.render.names import display_name

#: Headers of the table of deltas (columns of :func:`sgi_core.render.runs.deltas_frame`).
DELTA_COLUMNS = {"score": "score", "keys": "keys", "mean_base": "mean base", "mean_new": "mean new",
                 "difference": "new − base", "ci_low": "95% CI low", "ci_high": "95% CI high",
                 "wilcoxon_p": "Wilcoxon p", "holm_p": "Holm p", "auroc_base": "AUROC base", "auroc_new": "AUROC new",
                 "verdict": "verdict", "validation": "why"}
DELTA_FORMATS = {"mean base": "%.4g", "mean new": "%.4g", "new − base": "%+.4g", "95% CI low": "%+.4g",
                 "95% CI high": "%+.4g", "Wilcoxon p": "%.2g", "Holm p": "%.2g", "AUROC base": "%.3f",
                 "AUROC new": "%.3f"}
AUROC_COLUMNS = {"score": "score", "auroc_base": "AUROC base", "auroc_new": "AUROC new", "difference": "new − base",
                 "ci_low": "95% CI low", "ci_high": "95% CI high", "p_value": "DeLong p", "delong": "DeLong test"}


def score_name(score: str) -> str:
    return display_name(score)


def _formats(formats: dict) -> dict:
    return {name: st.column_config.NumberColumn(format=f) for name, f in formats.items()}


def delta_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The deltas of :func:`sgi_core.render.runs.deltas_frame` with display names; drawn sortable."""
    shown = frame.assign(score=frame["score"].map(score_name)).rename(columns=DELTA_COLUMNS)
    st.dataframe(shown, hide_index=True, column_config=_formats(DELTA_FORMATS), key="compare.deltas",
                 placeholder=UNDEFINED)
    return shown


def labels_metrics(rates, verdict: str) -> None:
    """One row of metrics per named estimate (labels only, prediction-powered): both rates and new − base of them.

    ``rates`` is a :class:`~sgi_core.runs.headline_rates.HeadlineRates`; the last line
    is the one the verdict reads.
    """
    for line in rates.lines:
        cols = st.columns(3)
        cols[0].metric(f"Hallucination rate, base ({line.name})", f"{line.rate_base:.1%}")
        cols[1].metric(f"Hallucination rate, new ({line.name})", f"{line.rate_new:.1%}",
                       help=None if line.own_rate_new == line.rate_new else
                       f"Base plus the paired estimate, so that the three numbers add up; the new run's own estimate "
                       f"is {line.own_rate_new:.1%}.")
        word = f": {verdict}" if line is rates.lines[-1] else ""
        cols[2].metric(f"New − base ({line.name}){word}", f"{line.difference:+.3f}",
                       help=f"95% interval [{line.ci[0]:+.3f}, {line.ci[1]:+.3f}]",
                       delta=f"[{line.ci[0]:+.3f}, {line.ci[1]:+.3f}]", delta_color="off")


def auroc_table(frame: pd.DataFrame) -> None:
    shown = frame.assign(score=frame["score"].map(score_name)).rename(columns=AUROC_COLUMNS)
    formats = {"AUROC base": "%.3f", "AUROC new": "%.3f", "new − base": "%+.3f", "95% CI low": "%+.3f",
               "95% CI high": "%+.3f", "DeLong p": "%.2g"}
    st.dataframe(shown, hide_index=True, column_config=_formats(formats), placeholder=UNDEFINED)


def changed_keys_table(changes, rows) -> pd.DataFrame:
    """The keys that changed most (a ``KeyChanges``) with the base file's row numbers."""
    return pd.DataFrame({"row": rows, "key": [k[:KEY_CHARS] for k in changes.keys], "base": changes.base,
                         "new": changes.new, "new − base": changes.change})
