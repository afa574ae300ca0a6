"""Plotly figures drawn from sgi_core results and scored frames (plotly imported when drawn); no statistics here.
Histograms leave binning to plotly (it is drawing, not a reported number). Rows
whose SGI is degenerate (response equal to context gives SGI ~1e8) are left out of
score axes by the callers' ``plottable`` filter, so one row cannot squash the rest;
score axes then span the central :data:`AXIS_COVERAGE` of the drawn scores
(``sgi_core``'s ``robust_range``), and ``log_x`` draws them on a log scale.
Curves of more than :data:`CURVE_POINTS` points are drawn through that many of them.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sgi_core.columns import count_ordinary, is_ordinary
from sgi_core.render.names import curve_name
from sgi_core.scores import BASELINE_LABELS
from sgi_core.stats.thresholds import robust_range

if TYPE_CHECKING:
    import plotly.graph_objects as go

GROUNDED, HALLUCINATED, UNLABELLED = "grounded", "hallucinated", "unlabelled"
COLOURS = {GROUNDED: "#1b9e77", HALLUCINATED: "#d95f02", UNLABELLED: "#7f7f7f"}
#: Above this many points a scatter plot switches to WebGL.
WEBGL_POINTS = 1500
#: Characters of a key (often a question) shown in hover labels and tables.
KEY_CHARS = 120
#: Most points of one curve (ROC, metrics against the threshold) sent to the browser.
CURVE_POINTS = 2_000
#: Columns a per-row chart reads.
CHART_COLUMNS = ("input_row", "label", "sgi")
#: Share of the drawn scores a score axis spans; the rest are counted under the chart.
AXIS_COVERAGE = 0.99
#: Bins of a score histogram over its axis range.
HISTOGRAM_BINS = 40
#: SGI values marked on a log-scale axis.
LOG_TICKS = (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100)

# Plotly's own legend place (a column right of the plot) never covers titles or axes.
LAYOUT = dict(margin=dict(l=10, r=10, t=50, b=10))
#: Readable names of sgi_core's baseline score columns.
BASELINE_NAMES = BASELINE_LABELS
#: The score drawn with the thickest line.
SGI = "sgi"


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


def _beyond(span) -> str:
    """Words for the drawn scores left outside a score axis."""
    outside = span.n_below + span.n_above
    return f" · {outside:,} extreme rows beyond the axis" if outside else ""


def _log_axis(log_x: bool) -> dict:
    """A score axis drawn as log10 values with SGI ticks, or nothing for a linear one."""
    return dict(tickvals=np.log10(LOG_TICKS), ticktext=[f"{t:g}" for t in LOG_TICKS]) if log_x else {}


def _on_axis(value: float, log_x: bool) -> float:
    return float(np.log10(value)) if log_x else value


def score_histogram(frame: pd.DataFrame, *, threshold: float | None = None, score: str = "sgi",
                    score_name: str = "SGI", log_x: bool = False) -> go.Figure:
    """Overlaid histograms of a score per label class (shared bins), with the flagging threshold as a line.

    The axis and the bins span the central :data:`AXIS_COVERAGE` of the scores (and
    the threshold); with ``log_x`` the bins are equal steps of log10 of the score.
    """
    import plotly.graph_objects as go

    values = frame[score].to_numpy(dtype=np.float64)
    span = robust_range(values, coverage=AXIS_COVERAGE, log=log_x)
    if log_x:
        values = np.log10(np.where(values > 0, values, np.nan))
    lo, hi = span.lo, span.hi
    if threshold is not None and threshold > 0:
        lo, hi = min(lo, _on_axis(threshold, log_x)), max(hi, _on_axis(threshold, log_x))
    bins = dict(start=lo, end=hi, size=(hi - lo) / HISTOGRAM_BINS) if hi > lo else None
    fig = go.Figure()
    names = label_names(frame["label"])
    for name in (GROUNDED, HALLUCINATED, UNLABELLED):
        part = values[names == name]
        if len(part):
            fig.add_trace(go.Histogram(x=part, name=name, marker_color=COLOURS[name], opacity=0.6, bingroup="score",
                                       **({"xbins": bins} if bins else {"nbinsx": HISTOGRAM_BINS})))
    if threshold is not None:
        fig.add_vline(x=_on_axis(threshold, log_x), line_dash="dash", annotation_text=f"threshold {threshold:.3f}")
    scale = ", log scale" if log_x else ""
    score_name = html.escape(score_name)  # a column's name: its tags shown as characters, never rendered
    fig.update_layout(barmode="overlay", xaxis_title=f"{score_name} (higher = grounded{scale})", yaxis_title="rows",
                      title=f"{score_name} by label{_beyond(span)}", xaxis=_log_axis(log_x), **LAYOUT)
    if bins:
        fig.update_xaxes(range=[lo, hi])
    return fig


def roc_figure(curves: dict) -> go.Figure:
    """ROC curves (grounded = positive) of several scores by name, each drawn with its display name and AUROC.

    A registered score's name (``sgi``, ``neg_response_length``) is drawn as its
    :func:`~sgi_core.render.names.curve_name`; any other key (a file's column) as it is.
    """
    import plotly.graph_objects as go
    from plotly.colors import qualitative

    fig = go.Figure()
    for (name, roc), colour in zip(curves.items(), qualitative.D3):
        points = curve_points(len(roc.fpr))
        fig.add_trace(go.Scatter(x=np.asarray(roc.fpr)[points], y=np.asarray(roc.tpr)[points], mode="lines",
                                 name=f"{html.escape(curve_name(name))} (AUROC {roc.auroc:.3f})",
                                 line=dict(color=colour, width=4 if name == SGI else 2)))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance (AUROC 0.5)",
                             line=dict(dash="dot", color="grey")))
    fig.update_layout(xaxis_title="share of hallucinated rows passed", yaxis_title="share of grounded rows passed",
                      title="ROC: each score as a detector (up and left is better)", height=480,
                      margin=LAYOUT["margin"],
                      legend=dict(yanchor="bottom", y=0.02, xanchor="right", x=0.98, bgcolor="rgba(255,255,255,0.8)"))
    return fig


def _error_bars(values, intervals) -> dict:
    """Plotly error bars from estimates and their ``(lo, hi)`` intervals (NaN: no bar)."""
    values = np.asarray(values, dtype=np.float64)
    bounds = np.array([tuple(ci) for ci in intervals], dtype=np.float64).reshape(len(values), 2)
    return dict(type="data", symmetric=False, array=bounds[:, 1] - values, arrayminus=values - bounds[:, 0],
                color="#333333", thickness=1.5)


def strata_figure(strata, *, show_range: bool = True) -> go.Figure:
    """Cohen's d and AUROC of the score within each stratum of one covariate, with 95% intervals.

    Named groups (``show_range=False``) show no covariate range.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    table = strata.to_frame()
    ticks = [f"{row.label}<br>[{row.lo:.3g}, {row.hi:.3g}]" if show_range else row.label for row in table.itertuples()]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Cohen's d (grounded - hallucinated)", "AUROC"))
    fig.add_trace(go.Bar(x=ticks, y=table["cohens_d"], name="d", marker_color="#7570b3",
                         error_y=_error_bars(table["cohens_d"], table["cohens_d_ci"])), row=1, col=1)
    fig.add_trace(go.Bar(x=ticks, y=table["auroc"], name="AUROC", marker_color="#e7298a",
                         error_y=_error_bars(table["auroc"], table["auroc_ci"])), row=1, col=2)
    # On a white box: over a bar, grey text on pink could not be read.
    fig.add_hline(y=0.5, line_dash="dot", row=1, col=2, annotation_text="chance", annotation_position="bottom left",
                  annotation=dict(bgcolor="rgba(255,255,255,0.85)", font=dict(color="#333333")))
    fig.update_yaxes(range=[0, 1], row=1, col=2)
    fig.update_layout(showlegend=False, height=340, margin=dict(l=10, r=10, t=50, b=10),
                      title=dict(text="Within each stratum (whiskers: 95% intervals)", font=dict(size=13)))
    return fig


def reliability_figure(result) -> go.Figure:
    """Reliability diagram on the evaluation split, with the rows in each bin as bars."""
    import plotly.graph_objects as go

    bins = result.bins
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration",
                             line=dict(dash="dot", color="grey")))
    fig.add_trace(go.Scatter(x=bins.prob_pred, y=bins.prob_true, mode="lines+markers+text", name=result.method,
                             marker=dict(color="#1b9e77", size=9), text=[f"n={n}" for n in bins.counts],
                             textposition="top center", textfont=dict(size=10)))
    fig.update_xaxes(title="predicted P(grounded)", range=[-0.02, 1.02])
    fig.update_yaxes(title="observed share grounded", range=[-0.02, 1.1])
    fig.update_layout(title="Reliability on the held-out rows (n = rows per bin)", height=400, **LAYOUT)
    return fig


def decile_figure(result) -> go.Figure:
    """Share of hallucinated rows per decile of the raw score."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Bar(x=[f"D{k + 1}" for k in range(len(result.halluc_rate_by_decile))],
                           y=result.halluc_rate_by_decile, marker_color=COLOURS[HALLUCINATED]))
    fig.update_layout(title="Share hallucinated per score decile (D1 = lowest SGI)", yaxis_range=[0, 1],
                      yaxis_title="share hallucinated", height=400, **LAYOUT)
    return fig


def confusion_figure(metrics) -> go.Figure:
    """2x2 counts at one threshold; hallucinated is the detector's positive class."""
    import plotly.graph_objects as go

    counts = [[metrics.tp, metrics.fn], [metrics.fp, metrics.tn]]
    names = [["hallucinated, flagged", "hallucinated, passed"], ["grounded, flagged", "grounded, passed"]]
    text = [[f"{names[i][j]}<br><b>{counts[i][j]:,}</b>" for j in range(2)] for i in range(2)]
    fig = go.Figure(go.Heatmap(z=counts, x=["flagged", "passed"], y=["hallucinated", "grounded"], text=text,
                               texttemplate="%{text}", colorscale="Blues", showscale=False))
    fig.update_layout(title="Confusion matrix", xaxis_title="detector says", yaxis_title="label says",
                      yaxis_autorange="reversed", height=320, **LAYOUT)
    return fig


def threshold_curves(grid: pd.DataFrame, threshold: float, *, x_range: tuple[float, float] | None = None,
                     log_x: bool = False) -> go.Figure:
    """Precision, recall, F1 and flag rate against the threshold, with the chosen one marked.

    ``x_range`` (the threshold slider's range) bounds the axis, so thresholds among
    a few extreme scores do not squeeze the rest; ``log_x`` draws it on a log scale.
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    grid = grid.iloc[curve_points(len(grid))]
    for metric in ("precision", "recall", "f1", "flag_rate"):
        fig.add_trace(go.Scatter(x=grid["threshold"], y=grid[metric], mode="lines", name=metric))
    fig.add_vline(x=threshold, line_dash="dash")
    fig.update_layout(title="Metrics as the threshold moves (hallucinated = positive)",
                      xaxis_title="threshold on SGI (flag when SGI < threshold)", yaxis_range=[0, 1.02],
                      height=320, **LAYOUT)
    if log_x:
        fig.update_xaxes(type="log")
    if x_range is not None and x_range[1] > x_range[0] and (x_range[0] > 0 or not log_x):
        fig.update_xaxes(range=[_on_axis(x_range[0], log_x), _on_axis(x_range[1], log_x)])
    return fig


def bounds_figure(scores) -> go.Figure:
    """SGI of one triple inside the range the triangle inequality allows for its theta_qc and theta_rc."""
    import plotly.graph_objects as go

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


def position_figure(frame: pd.DataFrame, sgi: float, *, log_x: bool = False) -> go.Figure:
    """The data set's SGI histogram by label with one triple's SGI marked (drawn at the axis end when beyond it)."""
    fig = score_histogram(frame, log_x=log_x)
    lo, hi = fig.layout.xaxis.range or (-np.inf, np.inf)
    at = min(max(_on_axis(sgi, log_x), lo), hi) if sgi > 0 or not log_x else lo
    fig.add_vline(x=at, line_color="#7570b3", line_width=3, annotation_text="this triple",
                  annotation_position="top left")
    fig.update_layout(title="This triple against the data set", height=320)
    return fig


def correlation_heatmap(names, matrix, *, title: str) -> go.Figure:
    import plotly.graph_objects as go

    matrix = np.asarray(matrix, dtype=np.float64)
    fig = go.Figure(go.Heatmap(z=matrix, x=list(names), y=list(names), zmin=-1, zmax=1, colorscale="RdBu",
                               text=np.round(matrix, 3), texttemplate="%{text}"))
    fig.update_layout(title=title, yaxis_autorange="reversed", height=380, **LAYOUT)
    return fig


def model_scatter(frame: pd.DataFrame, model_a: str, model_b: str, *, log_x: bool = False) -> go.Figure:
    """Per-row SGI of two models; ``frame`` has columns named after the models and ``label``.

    Each axis spans the central :data:`AXIS_COVERAGE` of its model's scores; ``log_x``
    puts both on a log scale.
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    names = label_names(frame["label"])
    for name in (GROUNDED, HALLUCINATED, UNLABELLED):
        part = frame[names == name]
        if len(part):
            fig.add_trace(go.Scatter(x=part[model_a], y=part[model_b], mode="markers", name=name,
                                     marker=dict(color=COLOURS[name], size=6, opacity=0.7),
                                     customdata=part["input_row"], hovertemplate="row %{customdata}<extra></extra>"))
    spans = [robust_range(frame[name], coverage=AXIS_COVERAGE, log=log_x) for name in (model_a, model_b)]
    outside = max(span.n_below + span.n_above for span in spans)
    beyond = f" · up to {outside:,} extreme rows beyond the axes" if outside else ""
    fig.update_layout(title=f"SGI per row: {model_a} vs {model_b}{beyond}", xaxis_title=f"SGI {model_a}",
                      yaxis_title=f"SGI {model_b}", height=460, **LAYOUT)
    for update, span in zip((fig.update_xaxes, fig.update_yaxes), spans):
        pad = 0.02 * (span.hi - span.lo)
        update(type="log" if log_x else "linear", range=[span.lo - pad, span.hi + pad])
    return fig


def group_forest(analysis) -> go.Figure:
    """Forest plot of a ``GroupAnalysis``: AUROC and Cohen's d per group with their 95% intervals.

    A group holding one class has no statistic and shows no point.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

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
