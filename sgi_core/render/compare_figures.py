"""The figure of two runs' scores key by key, drawn beside each other (plotly imported when drawn)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import pandas as pd

from sgi_core.render.figures import KEY_CHARS, WEBGL_POINTS
from sgi_core.render.names import display_name

if TYPE_CHECKING:
    import plotly.graph_objects as go


def paired_figure(points: pd.DataFrame, score: str) -> go.Figure:
    """Each key's score in the base run (x) against the new run (y), with the line of no change.

    Points under the line are keys the new run answers less grounded (every score reads higher = grounded).
    Keys and the score's name are HTML-escaped: plotly renders tags in hover text and titles.
    """
    import plotly.graph_objects as go

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
    fig.update_layout(title=html.escape(display_name(score)), xaxis_title="base run", yaxis_title="new run", height=360,
                      margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.25))
    return fig
