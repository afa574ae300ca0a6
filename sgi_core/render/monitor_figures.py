"""Figures and tables of a monitored policy's history and shift tests, laid out from monitoring results."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from sgi_core.policy.references import feature_label

if TYPE_CHECKING:
    import plotly.graph_objects as go

#: What the history's markers mean.
SHIFT_MARK, REVALIDATED_MARK = "shift detected", "re-validated rate (verified on labels)"


def _none(value):
    return math.nan if value is None else value


def history_frame(runs) -> pd.DataFrame:
    """One line per recorded run, read from its stored summary; the re-validated rate is the verified one."""
    rows = []
    for run in runs:
        corrected, revalidation = run.summary["corrected"], run.summary.get("revalidation")
        rows.append({"run": run.id, "recorded": run.recorded, "file": run.file, "status": run.status,
                     "corrected rate": _none(corrected["estimate"]), "low": _none(corrected["ci"][0]),
                     "high": _none(corrected["ci"][1]), "flag share": _none(corrected["flag_share"]),
                     "shift": run.summary["shift"]["detected"], "labels used": run.labels_used,
                     "re-validated rate": _none(revalidation["rate"]) if revalidation else math.nan})
    return pd.DataFrame(rows)


def history_figure(frame: pd.DataFrame) -> go.Figure:
    """The corrected rate ("if only the rate changed") with its band, the raw flag share, the re-validated (verified)
    rates and shift marks, run by run."""
    import plotly.graph_objects as go

    fig = go.Figure()
    x = frame["run"].astype(str)
    fig.add_trace(go.Scatter(x=list(x) + list(x[::-1]), y=list(frame["high"]) + list(frame["low"][::-1]),
                             fill="toself", fillcolor="rgba(127,127,127,0.15)", line={"width": 0},
                             name="95% interval of the corrected rate", hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=x, y=frame["corrected rate"], mode="lines+markers",
                             name="corrected rate (if only the rate changed)", line={"color": "#7f7f7f"}))
    fig.add_trace(go.Scatter(x=x, y=frame["flag share"], mode="lines+markers", name="flag share (raw)",
                             line={"color": "#bcbd22", "dash": "dot"}))
    shifted = frame[frame["shift"]]
    fig.add_trace(go.Scatter(x=shifted["run"].astype(str), y=shifted["flag share"], mode="markers", name=SHIFT_MARK,
                             marker={"symbol": "x", "size": 14, "color": "#d62728"}))
    checked = frame[frame["labels used"] > 0]
    fig.add_trace(go.Scatter(x=checked["run"].astype(str), y=checked["re-validated rate"], mode="markers",
                             name=REVALIDATED_MARK, marker={"symbol": "diamond", "size": 12, "color": "#2ca02c"}))
    fig.update_layout(xaxis_title="recorded run", yaxis_title="share of rows", yaxis_range=[0, 1],
                      height=380, margin={"t": 30})
    return fig


def shift_frame(tests) -> pd.DataFrame:
    """The shift tests (FeatureShift objects, or their dicts from the history), one line per feature."""
    rows = []
    for test in tests:
        t = test if isinstance(test, dict) else test.to_dict()
        rows.append({"feature": feature_label(t["feature"]), "KS D": _none(t["statistic"]),
                     "best-fitting rate": _none(t["rate"]), "p": _none(t["p_value"]), "Holm p": _none(t["p_holm"]),
                     "rows": t["n_run"], "shifted": t["shifted"], "not tested": t.get("untested", "")})
    return pd.DataFrame(rows)
