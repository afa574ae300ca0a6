"""Tables of the Detectors page, laid out from sgi_core result objects; no statistics here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.views import tables
from sgi_core.detectors.registry import COMBINED, PROTOCOL_LABELS
from sgi_core.evaluation.refit import COMBINED_PROTOCOL, HELD_FIXED, REFIT_CI_NAME, REFIT_MAX_ROWS, RefitComparison
from sgi_core.frames import take_rows
from sgi_core.render.figures import label_names
from sgi_core.render.names import display_name
from sgi_core.render.numbers import format_ci

#: Number format of the detector table's numeric columns.
DETECTOR_FORMATS = {"AUROC": "%.3f", "Cohen's d": "%+.2f", "AUROC leaky (not a result)": "%.3f",
                    "length-matched AUROC": "%.3f"}
#: How each row's AUROC interval was made, in the table's words (``RocResult.ci_method``; others as they are).
INTERVAL_NAMES = {"percentile bootstrap": "bootstrap", "refit percentile bootstrap": "bootstrap refitting the model"}


def _formats(formats: dict) -> dict:
    return {name: st.column_config.NumberColumn(format=f) for name, f in formats.items()}


def detector_frame(report, sgi_report) -> pd.DataFrame:
    """One row for SGI and one per computed detector of a ``DetectorReport``, each read from its judgement.

    ``sgi_report`` is SGI's ``EvaluationReport``: SGI's row is its judgement, the
    Overview's numbers. A withheld detector's row has no number, its reason where the
    AUROC's interval would be.
    """
    judged = {sgi_report.score_col: sgi_report.judgements[sgi_report.score_col], **report.detectors}
    rows = [{"detector": display_name(name), "protocol": PROTOCOL_LABELS[s.protocol], "AUROC": s.auroc,
              "AUROC 95% CI": format_ci(s.auroc_ci), "interval": INTERVAL_NAMES.get(s.roc.ci_method, s.roc.ci_method),
              "Cohen's d": s.cohens_d,
              "AUROC leaky (not a result)": s.auroc_leaky,
              "length-matched AUROC": s.length_matched_auroc,
              "length-matched 95% CI": format_ci(s.length_matched_auroc_ci)}
             for name, s in judged.items()]
    rows += [{"detector": display_name(name), "protocol": PROTOCOL_LABELS[COMBINED_PROTOCOL], "AUROC 95% CI": reason}
             for name, reason in report.withheld.items()]
    return pd.DataFrame(rows)


def detector_table(report, sgi_report) -> None:
    """:func:`detector_frame` on screen."""
    st.dataframe(detector_frame(report, sgi_report), hide_index=True,
                 column_config=_formats(DETECTOR_FORMATS))


def report_combined_note(report) -> str:
    """The combined detector of a ``DetectorReport``: why it is withheld, or how its intervals were made."""
    reason = report.withheld.get(COMBINED.name)
    return _withheld_note(reason) if reason else combined_interval_note(report.detectors[COMBINED.name].roc)


def comparison_combined_note(comparison) -> str:
    """The combination of a ``DetectorComparison``: why it is withheld, or how its intervals were made."""
    if comparison.withheld:
        return _withheld_note(comparison.withheld)
    return combined_interval_note(comparison.combined_roc)


def _withheld_note(reason: str) -> str:
    return f"no number is shown for it ({reason})."


def combined_interval_note(roc) -> str:
    """How the combined detector's intervals were made, from its ``RocResult``, as one sentence."""
    if roc.ci_method == REFIT_CI_NAME:
        return (f"since it was fitted on these labels, its intervals refit the model in each of {roc.n_boot:,} "
                "bootstrap resamples of the question groups.")
    if roc.ci_method.endswith(HELD_FIXED):
        return (f"its intervals hold the fitted model fixed ({roc.ci_method}): above {REFIT_MAX_ROWS:,} labelled "
                "rows fitting adds little spread.")
    return "no interval was computed for it."


def difference_metrics(test) -> tuple[list[tuple[str, str]], str]:
    """The metrics and caption of a paired AUROC test: a ``DeLongResult`` or a ``RefitComparison``."""
    ci = tables.interval(test.ci, "+.3f", in_text=True)
    rows = (f"{test.n_pos:,} grounded and {test.n_neg:,} hallucinated rows both scores cover ({test.n_excluded:,} rows "
            "left out: unlabelled or missing one of the scores)")
    metrics = [("AUROC A", f"{test.auroc_a:.3f}"), ("AUROC B", f"{test.auroc_b:.3f}"),
               ("AUROC A − B", f"{test.difference:+.3f}")]
    if not isinstance(test, RefitComparison):
        return (metrics + [("DeLong z", f"{test.z:+.2f}"), ("p (two-sided)", f"{test.p_value:.3g}")],
                f"DeLong's test of the AUROC difference, 95% CI {ci}, on the {rows}.")
    combined = "A" if test.refitted == "a" else "B"
    if test.ci_method == REFIT_CI_NAME:
        how = f"each of {test.n_boot:,} bootstrap resamples of the question groups refits it out of fold"
    elif test.ci_method.endswith(HELD_FIXED):
        how = f"above {REFIT_MAX_ROWS:,} labelled rows its probabilities are held fixed (DeLong's test)"
    else:
        how = "with fewer than 2 rows of a class nothing is tested"
    return (metrics + [("resamples", f"{test.n_boot:,}"), ("p (two-sided)", f"{test.p_value:.3g}")],
            f"{combined} is the combined detector, fitted on these labels, so DeLong's test (which holds both scores "
            f"fixed) would overstate it: {how}. 95% CI {ci} ({test.ci_method}), on the {rows}.")


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
