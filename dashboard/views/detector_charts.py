"""Tables of the Detectors page, laid out from sgi_core result objects; no statistics here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.views.charts import label_names
from sgi_core.detectors.registry import PROTOCOL_LABELS
from sgi_core.frames import take_rows
from sgi_core.render.numbers import format_ci
from sgi_core.scores import display_name

#: Number format of the detector table's numeric columns.
DETECTOR_FORMATS = {"AUROC": "%.3f", "Cohen's d": "%+.2f", "AUROC leaky (not a result)": "%.3f",
                    "length-matched AUROC": "%.3f"}


def _formats(formats: dict) -> dict:
    return {name: st.column_config.NumberColumn(format=f) for name, f in formats.items()}


def detector_frame(report, sgi_report) -> pd.DataFrame:
    """One row for SGI and one per computed detector of a ``DetectorReport``.

    ``sgi_report`` is SGI's ``EvaluationReport`` (with its length-matched result), so
    SGI's row shows the Overview's numbers.
    """
    sgi_matched = sgi_report.length_matched
    rows = [{"detector": "SGI", "protocol": "label-free", "AUROC": sgi_report.roc.auroc,
             "AUROC 95% CI": format_ci(sgi_report.roc.auroc_ci), "Cohen's d": sgi_report.effect_size.cohens_d,
             "AUROC leaky (not a result)": np.nan, "length-matched AUROC": sgi_matched.auroc,
             "length-matched 95% CI": format_ci(sgi_matched.auroc_ci)}]
    rows += [{"detector": display_name(name), "protocol": PROTOCOL_LABELS[s.protocol], "AUROC": s.auroc,
              "AUROC 95% CI": format_ci(s.auroc_ci), "Cohen's d": s.cohens_d,
              "AUROC leaky (not a result)": s.auroc_leaky,
              "length-matched AUROC": s.length_matched_auroc,
              "length-matched 95% CI": format_ci(s.length_matched_auroc_ci)}
             for name, s in report.detectors.items()]
    return pd.DataFrame(rows)


def detector_table(report, sgi_report) -> None:
    """:func:`detector_frame` on screen."""
    st.dataframe(detector_frame(report, sgi_report), hide_index=True,
                 column_config=_formats(DETECTOR_FORMATS))


def mcnemar_frame(result) -> pd.DataFrame:
    """The paired 2x2 table of a ``McNemarResult``: rows are score A right / wrong, columns score B's."""
    return pd.DataFrame({"B right": [result.both_right, result.b_only_right],
                         "B wrong": [result.a_only_right, result.both_wrong]}, index=["A right", "A wrong"])


def disagreement_frame(result, frame: pd.DataFrame, score_a: np.ndarray, score_b: np.ndarray) -> pd.DataFrame:
    """The rows of a ``Disagreements`` result with their texts, labels and both scores, most different first."""
    rows = take_rows(frame, list(result.positions))
    positions = np.asarray(result.positions, dtype=np.int64)
    return pd.DataFrame({
        "row": rows["input_row"].to_numpy(), "label": label_names(rows["label"]),
        "A score": score_a[positions], "B score": score_b[positions],
        "A percentile": result.rank_a, "B percentile": result.rank_b, "A − B": result.gap,
        "question": rows["question"].to_numpy(), "response": rows["response"].to_numpy(),
    })


def disagreement_table(table: pd.DataFrame, *, key: str):
    """:func:`disagreement_frame` as a table where clicking a row selects it; returns the selection event."""
    formats = {"A score": "%.4g", "B score": "%.4g", "A percentile": "%.3f", "B percentile": "%.3f", "A − B": "%+.3f"}
    return st.dataframe(table, hide_index=True, column_config=_formats(formats), on_select="rerun",
                        selection_mode="single-row", key=key)
