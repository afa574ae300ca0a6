"""Tables and figures of the Compare runs page, laid out from sgi_core results; no statistics here."""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard.views.charts import WEBGL_POINTS
from dashboard.views.tables import UNDEFINED
from sgi_core.scores import display_name
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
#: Characters of a key (often a question) shown in hover labels and tables.
KEY_CHARS = 120


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

    ``rates`` is a :class:`~sgi_core.evaluation.headline_rates.HeadlineRates`; the last line
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


def paired_figure(points: pd.DataFrame, score: str) -> go.Figure:
    """Each key's score in the base run (x) against the new run (y), with the line of no change.

    Points under the line are keys the new run answers less grounded (every score reads higher = grounded).
    Keys and the score's name are HTML-escaped: plotly renders tags in hover text and titles.
    """
    lower = points["new"] < points["base"]
    scatter = go.Scattergl if len(points) > WEBGL_POINTS else go.Scatter
    fig = go.Figure()
    for mask, name, colour in ((lower, "lower in new", "#d95f02"), (~lower, "same or higher in new", "#1b9e77")):
        part = points[mask]
        fig.add_trace(scatter(x=part["base"], y=part["new"], mode="markers", name=name,
                              marker=dict(color=colour, size=6, opacity=0.7),
                              text=[html.escape(k) for k in part["key"].astype(str).str.slice(0, KEY_CHARS)],
                              hovertemplate="%{text}<br>base %{x:.4g}<br>new %{y:.4g}<extra></extra>"))
    finite = points[["base", "new"]].stack()
    if len(finite):
        ends = [float(finite.min()), float(finite.max())]
        fig.add_trace(go.Scatter(x=ends, y=ends, mode="lines", name="no change",
                                 line=dict(dash="dot", color="grey")))
    fig.update_layout(title=html.escape(score_name(score)), xaxis_title="base run", yaxis_title="new run", height=360,
                      margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.25))
    return fig


def changed_keys_table(changes, rows) -> pd.DataFrame:
    """The keys that changed most (a ``KeyChanges``) with the base file's row numbers."""
    return pd.DataFrame({"row": rows, "key": [k[:KEY_CHARS] for k in changes.keys], "base": changes.base,
                         "new": changes.new, "new − base": changes.change})
