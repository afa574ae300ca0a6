"""Plotly figures drawn from sgi_core results and scored frames; no statistics here.

Histograms leave binning to plotly (it is drawing, not a reported number). Rows
whose SGI is degenerate (response equal to context gives SGI ~1e8) are left out of
score axes by the callers' ``plottable`` filter, so one row cannot squash the rest.
Curves of more than :data:`CURVE_POINTS` points are drawn through that many of them.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from sgi_core.columns import count_ordinary, is_ordinary

GROUNDED, HALLUCINATED, UNLABELLED = "grounded", "hallucinated", "unlabelled"
COLOURS = {GROUNDED: "#1b9e77", HALLUCINATED: "#d95f02", UNLABELLED: "#7f7f7f"}
ROLE_SYMBOLS = {"question": "circle", "context": "square", "response": "diamond"}
#: Above this many points the geometry plot switches to WebGL.
WEBGL_POINTS = 1500
#: Most points of one curve (ROC, metrics against the threshold) sent to the browser.
CURVE_POINTS = 2_000
#: Columns a per-row chart reads.
CHART_COLUMNS = ("input_row", "label", "sgi")

# Plotly's own legend place (a column right of the plot) never covers titles or axes.
_LAYOUT = dict(margin=dict(l=10, r=10, t=50, b=10))
#: Readable names of sgi_core's baseline score columns.
BASELINE_NAMES = {"neg_response_length": "response length (shorter = grounded)",
                  "lexical_groundedness": "word overlap with the context", "theta_rq": "θ(r,q) alone"}


def label_names(labels) -> np.ndarray:
    """1.0 / 0.0 / NaN labels as the words shown in legends."""
    labels = np.asarray(labels, dtype=np.float64)
    return np.where(labels == 1.0, GROUNDED, np.where(labels == 0.0, HALLUCINATED, UNLABELLED))


def ordinary_rows(frame: pd.DataFrame) -> np.ndarray:
    """Where a scored frame's SGI is an ordinary number (:func:`sgi_core.columns.is_ordinary`), as bools."""
    return is_ordinary(frame["sgi_status"])


def n_ordinary(*frames: pd.DataFrame) -> int:
    """Rows whose SGI is an ordinary number in every one of several scored frames of the same rows."""
    return count_ordinary(*(frame["sgi_status"] for frame in frames))


def plottable(frame: pd.DataFrame, columns=CHART_COLUMNS) -> pd.DataFrame:
    """The ``columns`` of the rows whose SGI is an ordinary number (:func:`ordinary_rows`).

    Columns are picked before rows, so the text columns of a big file are never copied.
    """
    return frame[list(columns)][ordinary_rows(frame)]


def curve_points(n: int, limit: int | None = None) -> np.ndarray:
    """Positions of at most ``limit`` (default :data:`CURVE_POINTS`) points spread evenly along a curve of ``n``.

    The first and the last point are kept.
    """
    limit = CURVE_POINTS if limit is None else limit
    if n <= limit:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, limit).round().astype(np.int64))


def score_histogram(frame: pd.DataFrame, *, threshold: float | None = None, score: str = "sgi",
                    score_name: str = "SGI") -> go.Figure:
    """Overlaid histograms of a score per label class (shared bins), with the flagging threshold as a line."""
    fig = go.Figure()
    names = label_names(frame["label"])
    for name in (GROUNDED, HALLUCINATED, UNLABELLED):
        values = frame.loc[names == name, score]
        if len(values):
            fig.add_trace(go.Histogram(x=values, name=name, marker_color=COLOURS[name], opacity=0.6, nbinsx=40,
                                       bingroup="score"))
    if threshold is not None:
        fig.add_vline(x=threshold, line_dash="dash", annotation_text=f"threshold {threshold:.3f}")
    score_name = html.escape(score_name)  # a column's name: its tags shown as characters, never rendered
    fig.update_layout(barmode="overlay", xaxis_title=f"{score_name} (higher = grounded)", yaxis_title="rows",
                      title=f"{score_name} by label", **_LAYOUT)
    return fig


def roc_figure(curves: dict) -> go.Figure:
    """ROC curves (grounded = positive) of several scores, named with their AUROC."""
    fig = go.Figure()
    for (name, roc), colour in zip(curves.items(), qualitative.D3):
        points = curve_points(len(roc.fpr))
        fig.add_trace(go.Scatter(x=np.asarray(roc.fpr)[points], y=np.asarray(roc.tpr)[points], mode="lines",
                                 name=f"{html.escape(name)} (AUROC {roc.auroc:.3f})",
                                 line=dict(color=colour, width=4 if name == "SGI" else 2)))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance", line=dict(dash="dot", color="grey")))
    fig.update_layout(xaxis_title="share of hallucinated rows passed", yaxis_title="share of grounded rows passed",
                      title="ROC: each score as a detector (up and left is better)", height=480,
                      margin=_LAYOUT["margin"],
                      legend=dict(yanchor="bottom", y=0.02, xanchor="right", x=0.98, bgcolor="rgba(255,255,255,0.8)"))
    return fig


def strata_figure(strata, *, show_range: bool = True) -> go.Figure:
    """Cohen's d and AUROC of the score within each stratum of one covariate (named groups: no range)."""
    table = strata.to_frame()
    ticks = [f"{row.label}<br>[{row.lo:.3g}, {row.hi:.3g}]" if show_range else row.label for row in table.itertuples()]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Cohen's d (grounded - hallucinated)", "AUROC"))
    fig.add_trace(go.Bar(x=ticks, y=table["cohens_d"], name="d", marker_color="#7570b3"), row=1, col=1)
    fig.add_trace(go.Bar(x=ticks, y=table["auroc"], name="AUROC", marker_color="#e7298a"), row=1, col=2)
    fig.add_hline(y=0.5, line_dash="dot", row=1, col=2, annotation_text="chance",
                  annotation_position="bottom right")
    fig.update_yaxes(range=[0, 1], row=1, col=2)
    fig.update_layout(showlegend=False, height=340, margin=dict(l=10, r=10, t=30, b=10))
    return fig


def reliability_figure(result) -> go.Figure:
    """Reliability diagram on the evaluation split, with the rows in each bin as bars."""
    bins = result.bins
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration",
                             line=dict(dash="dot", color="grey")))
    fig.add_trace(go.Scatter(x=bins.prob_pred, y=bins.prob_true, mode="lines+markers+text", name=result.method,
                             marker=dict(color="#1b9e77", size=9), text=[f"n={n}" for n in bins.counts],
                             textposition="top center", textfont=dict(size=10)))
    fig.update_xaxes(title="predicted P(grounded)", range=[-0.02, 1.02])
    fig.update_yaxes(title="observed share grounded", range=[-0.02, 1.1])
    fig.update_layout(title="Reliability on the held-out rows (n = rows per bin)", height=400, **_LAYOUT)
    return fig


def decile_figure(result) -> go.Figure:
    """Share of hallucinated rows per decile of the raw score."""
    fig = go.Figure(go.Bar(x=[f"D{k + 1}" for k in range(len(result.halluc_rate_by_decile))],
                           y=result.halluc_rate_by_decile, marker_color=COLOURS[HALLUCINATED]))
    fig.update_layout(title="Share hallucinated per score decile (D1 = lowest SGI)", yaxis_range=[0, 1],
                      yaxis_title="share hallucinated", height=400, **_LAYOUT)
    return fig


def confusion_figure(metrics) -> go.Figure:
    """2x2 counts at one threshold; hallucinated is the detector's positive class."""
    counts = [[metrics.tp, metrics.fn], [metrics.fp, metrics.tn]]
    names = [["hallucinated, flagged", "hallucinated, passed"], ["grounded, flagged", "grounded, passed"]]
    text = [[f"{names[i][j]}<br><b>{counts[i][j]:,}</b>" for j in range(2)] for i in range(2)]
    fig = go.Figure(go.Heatmap(z=counts, x=["flagged", "passed"], y=["hallucinated", "grounded"], text=text,
                               texttemplate="%{text}", colorscale="Blues", showscale=False))
    fig.update_layout(title="Confusion matrix", xaxis_title="detector says", yaxis_title="label says",
                      yaxis_autorange="reversed", height=320, **_LAYOUT)
    return fig


def threshold_curves(grid: pd.DataFrame, threshold: float) -> go.Figure:
    """Precision, recall, F1 and flag rate against the threshold, with the chosen one marked."""
    fig = go.Figure()
    grid = grid.iloc[curve_points(len(grid))]
    for metric in ("precision", "recall", "f1", "flag_rate"):
        fig.add_trace(go.Scatter(x=grid["threshold"], y=grid[metric], mode="lines", name=metric))
    fig.add_vline(x=threshold, line_dash="dash")
    fig.update_layout(title="Metrics as the threshold moves (hallucinated = positive)",
                      xaxis_title="threshold on SGI (flag when SGI < threshold)", yaxis_range=[0, 1.02],
                      height=320, **_LAYOUT)
    return fig


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
            marker["colorbar"] = dict(title="SGI")
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
                      dragmode="pan", **_LAYOUT)
    return fig


def _snippet(text: str, limit: int = 120) -> str:
    text = str(text).replace("\n", " ")
    # Plotly renders <a href>, <b> and friends in hover text: a cell's tags are shown as characters.
    return html.escape(text if len(text) <= limit else text[: limit - 1] + "…")


def bounds_figure(scores) -> go.Figure:
    """SGI of one triple inside the range the triangle inequality allows for its theta_qc and theta_rc."""
    lower, upper, sgi = scores.sgi_lower, scores.sgi_upper, scores.sgi
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[lower, upper], y=[0, 0], mode="lines+markers+text", name="possible SGI",
                             line=dict(width=10, color="#bdbdbd"), text=[f"{lower:.2f}", f"{upper:.2f}"],
                             textposition="bottom center"))
    fig.add_trace(go.Scatter(x=[sgi], y=[0], mode="markers+text", name="this SGI", text=[f"SGI {sgi:.3f}"],
                             textposition="top center", marker=dict(size=16, color="#7570b3", symbol="diamond")))
    fig.add_vline(x=1.0, line_dash="dot", annotation_text="SGI = 1", annotation_position="bottom right")
    fig.update_layout(title="Where the triangle inequality lets SGI be, given θ(q,c) and θ(r,c)",
                      yaxis=dict(visible=False, range=[-1, 1]), xaxis_title="SGI", height=220,
                      showlegend=False, margin=dict(l=10, r=10, t=40, b=10))
    return fig


def position_figure(frame: pd.DataFrame, sgi: float) -> go.Figure:
    """The data set's SGI histogram by label with one triple's SGI marked."""
    fig = score_histogram(frame)
    fig.add_vline(x=sgi, line_color="#7570b3", line_width=3, annotation_text="this triple",
                  annotation_position="top left")
    fig.update_layout(title="This triple against the data set", height=320)
    return fig


def correlation_heatmap(names, matrix, *, title: str) -> go.Figure:
    matrix = np.asarray(matrix, dtype=np.float64)
    fig = go.Figure(go.Heatmap(z=matrix, x=list(names), y=list(names), zmin=-1, zmax=1, colorscale="RdBu",
                               text=np.round(matrix, 3), texttemplate="%{text}"))
    fig.update_layout(title=title, yaxis_autorange="reversed", height=380, **_LAYOUT)
    return fig


def model_scatter(frame: pd.DataFrame, model_a: str, model_b: str) -> go.Figure:
    """Per-row SGI of two models; ``frame`` has columns named after the models and ``label``."""
    fig = go.Figure()
    names = label_names(frame["label"])
    for name in (GROUNDED, HALLUCINATED, UNLABELLED):
        part = frame[names == name]
        if len(part):
            fig.add_trace(go.Scatter(x=part[model_a], y=part[model_b], mode="markers", name=name,
                                     marker=dict(color=COLOURS[name], size=6, opacity=0.7),
                                     customdata=part["input_row"], hovertemplate="row %{customdata}<extra></extra>"))
    fig.update_layout(title=f"SGI per row: {model_a} vs {model_b}", xaxis_title=f"SGI {model_a}",
                      yaxis_title=f"SGI {model_b}", height=460, **_LAYOUT)
    return fig


def group_forest(analysis) -> go.Figure:
    """Forest plot of a ``GroupAnalysis``: AUROC and Cohen's d per group with their 95% intervals.

    A group holding one class has no statistic and shows no point.
    """
    groups = analysis.groups
    names = [f"{html.escape(str(g.group))} (n={g.n_valid + g.n_halluc:,})" for g in groups]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=("AUROC (grounded positive)", "Cohen's d (grounded - hallucinated)"))
    for col, (value, ci, colour) in enumerate((("auroc", "auroc_ci", "#e7298a"),
                                               ("cohens_d", "cohens_d_ci", "#7570b3")), start=1):
        points = np.array([getattr(g, value) for g in groups], dtype=np.float64)
        bounds = np.array([getattr(g, ci) for g in groups], dtype=np.float64).reshape(len(groups), 2)
        fig.add_trace(go.Scatter(x=points, y=names, mode="markers", name=value, marker=dict(size=10, color=colour),
                                 error_x=dict(type="data", symmetric=False, array=bounds[:, 1] - points,
                                              arrayminus=points - bounds[:, 0]),
                                 hovertemplate="%{y}: %{x:.3f}<extra></extra>"), row=1, col=col)
    fig.add_vline(x=0.5, line_dash="dot", row=1, col=1, annotation_text="chance")
    fig.add_vline(x=0.0, line_dash="dot", row=1, col=2)
    fig.update_xaxes(range=[0, 1], row=1, col=1)
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_layout(showlegend=False, height=140 + 40 * len(groups), margin=dict(l=10, r=10, t=80, b=10),
                      title=f"SGI within each group of {html.escape(analysis.column)} (bars: 95% intervals)")
    return fig


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
                      height=620, dragmode="pan", **_LAYOUT)
    return fig
