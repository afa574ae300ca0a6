"""The Monitor page's report to share: one self-contained HTML file of a monitored run and its policy's history.

Built like the other reports (:mod:`sgi_core.render.html_report`: the chart library once, every text
escaped), from the same result and the same words and figures as the page; it computes nothing.
"""

from __future__ import annotations

import pandas as pd

from sgi_core.render.html_report import document, figure_block, paragraphs, table_block
from sgi_core.render.monitor import (
    ASSUMPTION,
    assumed_rate_sentence,
    flag_sentence,
    limit_lines,
    rate_sentence,
    shift_sentence,
    status_line,
    validation_sentence,
    what_to_do,
)
from sgi_core.render.monitor_figures import history_figure, shift_frame


def monitor_report(summary, history: pd.DataFrame, provenance: dict) -> str:
    """The run's verdict, headline rate, shift tests and (when recorded) the policy's history."""
    todo = what_to_do(summary)
    css = "verdict success" if summary.status == "holds" else "verdict"
    body = (paragraphs([status_line(summary)], css)
            + paragraphs([rate_sentence(summary), assumed_rate_sentence(summary), ASSUMPTION, summary.answering_note,
                          flag_sentence(summary),
                          shift_sentence(summary), validation_sentence(summary), *limit_lines(summary),
                          f"What to do: {todo}" if todo else ""])
            + "<h2>Shift tests</h2>" + table_block(shift_frame(summary.shift.tests)))
    if len(history):
        body += "<h2>History of this policy</h2>" + figure_block(history_figure(history)) + table_block(history)
    return document("SGI Workbench: a run held to its policy", provenance, body)
