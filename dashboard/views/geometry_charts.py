"""The Geometry page's figures: the embedding map and the canonical triangle, drawn from sgi_core results."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from sgi_core.render.figures import COLOURS, GROUNDED, HALLUCINATED, LAYOUT, UNLABELLED, WEBGL_POINTS, label_names
from sgi_core.render.names import display_name

ROLE_SYMBOLS = {"question": "circle", "context": "square", "response": "diamond"}


def geometry_figure(projection, rows: pd.DataFrame, *, colour_by: str) -> go.Figure:
    """Questions, contexts and responses in one 2-D map, each triple joined by a line q - r - c.

    ``rows`` are the scored rows in the order of the projection; their ``input_row`` is
    put in ``customdata`` so a picked point leads back to its triple.
    """
    points = {role: getattr(projection, role) for role in ROLE_SYMBOLS}
    n = len(rows)
    scatter = go.Scattergl if 3 * n > WEBGL_POINTS else go.Scatter
    fig = go.Figure()
    # One trace of segments separated by None: a line per triple costs one trace, not n.
    path = np.full((n, 4, 2), np.nan)
    path[:, 0], path[:, 1], path[:, 2] = points["question"], points["response"], points["context"]
    fig.add_trace(scatter(x=path[:, :, 0].ravel(), y=path[:, :, 1].ravel(), mode="lines", hoverinfo="skip",
                          line=dict(color="rgba(120,120,120,0.25)", width=1), name="triple (q - r - c)"))
    names = label_names(rows["label"])
    if colour_by == "label":
        colour = [COLOURS[name] for name in names]
        marker_extra = {}
    else:
        colour = rows["sgi"].to_numpy()
        marker_extra = dict(colorscale="RdYlGn")
    for role, symbol in ROLE_SYMBOLS.items():
        hover = [f"<b>{role}</b> of row {r}<br>SGI {s:.3f} · {lab}<br>{_snippet(t)}"
                 for r, s, lab, t in zip(rows["input_row"], rows["sgi"], names, rows[role])]
        marker = dict(symbol=symbol, size=9 if role == "response" else 6, color=colour,
                      line=dict(width=0.5, color="black"), **marker_extra)
        if colour_by == "sgi" and role == "response":
            marker["colorbar"] = dict(title=display_name("sgi"))
        fig.add_trace(scatter(x=points[role][:, 0], y=points[role][:, 1], mode="markers", name=role,
                              marker=marker, customdata=rows["input_row"].to_numpy(), text=hover,
                              hovertemplate="%{text}<extra></extra>", showlegend=False))
    # Legend-only entries: shapes in neutral grey, colours as plain dots, so neither reads as the other.
    for role, symbol in ROLE_SYMBOLS.items():
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=role,
                                 marker=dict(symbol=symbol, size=10, color="#bdbdbd", line=dict(width=1))))
    if colour_by == "label":
        for name in (GROUNDED, HALLUCINATED, UNLABELLED):
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name,
                                     marker=dict(color=COLOURS[name], size=10)))
    fig.update_layout(title=f"{projection.method.upper()} of question, context and response embeddings",
                      height=620, xaxis=dict(showticklabels=False), yaxis=dict(showticklabels=False),
                      dragmode="pan", **LAYOUT)
    return fig


def _snippet(text: str, limit: int = 120) -> str:
    text = str(text).replace("\n", " ")
    # Plotly renders <a href>, <b> and friends in hover text: a cell's tags are shown as characters.
    return html.escape(text if len(text) <= limit else text[: limit - 1] + "…")


#: Margin around the points and the q-c segment in the canonical triangle's view, in units of theta(q,c).
_TRIANGLE_PAD = 0.15


def triangle_figure(r_xy, rows: pd.DataFrame, isolines: dict) -> go.Figure:
    """Each triple drawn exactly: q at (0, 0), c at (1, 0), r where its angles put it, with SGI iso-lines.

    ``r_xy`` holds the responses' places (``sgi_core.geometry.canonical_triangle``
    with ``normalize=True``) for ``rows`` in order; their ``input_row`` is put in
    ``customdata`` so a picked point leads back to its triple. ``isolines`` maps an
    SGI value to the points of its level set (``sgi_core.geometry.sgi_isolines``);
    each is labelled at its highest point inside the view.
    """
    r_xy = np.asarray(r_xy, dtype=np.float64).reshape(-1, 2)
    drawn = r_xy[~np.isnan(r_xy).any(axis=1)]
    # The view holds q, c and every response; iso-lines reaching beyond it are cut off.
    x_range = [drawn[:, 0].min(initial=0.0) - _TRIANGLE_PAD, drawn[:, 0].max(initial=1.0) + _TRIANGLE_PAD]
    y_range = [-_TRIANGLE_PAD, drawn[:, 1].max(initial=1.0) + _TRIANGLE_PAD]
    fig = go.Figure()
    for level, points in isolines.items():
        inside = np.flatnonzero((points[:, 0] >= x_range[0]) & (points[:, 0] <= x_range[1])
                                & (points[:, 1] <= y_range[1]))
        text = [""] * len(points)
        if len(inside):
            text[inside[np.argmax(points[inside, 1])]] = f"SGI = {level:g}"
        side = GROUNDED if level > 1 else HALLUCINATED if level < 1 else UNLABELLED
        fig.add_trace(go.Scatter(x=points[:, 0], y=points[:, 1], mode="lines+text", text=text, name=f"SGI = {level:g}",
                                 textposition="top center", hoverinfo="skip", legendgroup="isolines",
                                 line=dict(color=COLOURS[side], dash="dot", width=1.5)))
    fig.add_trace(go.Scatter(x=[0.0, 1.0], y=[0.0, 0.0], mode="markers+text", text=["q", "c"], name="q and c",
                             textposition="bottom center", hoverinfo="skip",
                             marker=dict(symbol=[ROLE_SYMBOLS["question"], ROLE_SYMBOLS["context"]], size=14,
                                         color="black")))
    names = label_names(rows["label"])
    hover = [f"<b>response</b> of row {r}<br>SGI {s:.3f} · {lab}<br>{_snippet(t)}"
             for r, s, lab, t in zip(rows["input_row"], rows["sgi"], names, rows["response"])]
    scatter = go.Scattergl if len(rows) > WEBGL_POINTS else go.Scatter
    fig.add_trace(scatter(x=r_xy[:, 0], y=r_xy[:, 1], mode="markers", name="response", showlegend=False,
                          marker=dict(symbol=ROLE_SYMBOLS["response"], size=8, color=[COLOURS[n] for n in names],
                                      line=dict(width=0.5, color="black")),
                          customdata=rows["input_row"].to_numpy(), text=hover, hovertemplate="%{text}<extra></extra>"))
    for name in (GROUNDED, HALLUCINATED, UNLABELLED):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=f"response, {name}",
                                 marker=dict(symbol=ROLE_SYMBOLS["response"], color=COLOURS[name], size=10)))
    fig.update_xaxes(range=x_range, title="toward the context → (θ(q,c) = 1)", zeroline=False)
    fig.update_yaxes(range=y_range, title="off the question-context line", scaleanchor="x", zeroline=False)
    fig.update_layout(title="Canonical triangle: every triple drawn exactly, q at (0, 0) and c at (1, 0)",
                      height=620, dragmode="pan", **LAYOUT)
    return fig
