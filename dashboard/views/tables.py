"""Tables drawn from sgi_core result objects: sgi_core builds each table, this module names and formats its columns."""

from __future__ import annotations

import streamlit as st

from sgi_core.render import tables
from sgi_core.render.names import curve_name
from sgi_core.render.numbers import format_ci
from sgi_core.scores import SCORES

#: Display name and number format of each column sgi_core's tables may carry.
DISPLAY = {
    "model": ("model", None), "n": ("rows scored", None), "n_valid": ("grounded", None),
    "n_halluc": ("hallucinated", None), "sgi_valid": ("SGI grounded", "%.3f"),
    "sgi_halluc": ("SGI hallucinated", "%.3f"), "cohens_d": ("Cohen's d", "%+.2f"), "d_ci": ("d 95% CI", None),
    "auroc": ("AUROC", "%.3f"), "auroc_ci": ("AUROC 95% CI", None), "score": ("score", None),
    "description": ("what it measures", None), "angle": ("angle", None),
    "mean_valid": ("mean grounded", "%.3f rad"), "mean_halluc": ("mean hallucinated", "%.3f rad"),
}
#: Each angle as drawn in the angle table, raw (never negated there).
ANGLE_NAMES = {name: SCORES[name].label.removesuffix(", negated") for name in ("theta_rq", "theta_rc")}
#: What a table shows where a statistic is undefined (Streamlit would print "None").
UNDEFINED = "n/a"


def formatted(frame, formats: dict[str, str]) -> None:
    """``frame`` as a table, column ``name`` drawn with the printf format ``formats[name]``, undefined as n/a."""
    st.dataframe(frame, hide_index=True, placeholder=UNDEFINED,
                 column_config={name: st.column_config.NumberColumn(format=f) for name, f in formats.items()})


def _show(frame) -> None:
    formatted(frame.rename(columns={c: DISPLAY[c][0] for c in frame.columns if c in DISPLAY}),
              {DISPLAY[c][0]: DISPLAY[c][1] for c in frame.columns if c in DISPLAY and DISPLAY[c][1]})


def models_table(reports: dict) -> None:
    """The paper's Table 1, one row per model."""
    _show(tables.table1(reports))


def judgements_table(report) -> None:
    """Every score the file's verdict reads, in its order, with what each measures."""
    frame = tables.judgements_table(report)
    _show(frame.assign(score=frame["score"].map(curve_name)))


def angles_table(report) -> None:
    """Each angle alone: its mean by label and Cohen's d."""
    frame = tables.angle_table(report)
    _show(frame.assign(angle=frame["angle"].map(ANGLE_NAMES)))

STRATA_COLUMNS = {"label": "stratum", "lo": "from", "hi": "to", "n": "rows", "n_valid": "grounded",
                  "n_halluc": "hallucinated", "n_degenerate": "degenerate", "mean_valid": "mean SGI grounded",
                  "mean_halluc": "mean SGI hallucinated", "cohens_d": "Cohen's d", "d_ci": "d 95% CI",
                  "auroc": "AUROC", "auroc_ci": "AUROC 95% CI"}


def strata_table(strata, *, edge_format: str | None) -> None:
    """One row per stratum of a ``StrataResult``; ``edge_format=None`` hides the covariate range (named groups)."""
    table = tables.strata_table(strata).rename(columns=STRATA_COLUMNS)
    left_out = int(table["degenerate"].sum())
    if not left_out:
        table = table.drop(columns="degenerate")
    if edge_format is None:
        table = table.drop(columns=["from", "to"]).rename(columns={"stratum": "group"})
    formats = {"mean SGI grounded": "%.3f", "mean SGI hallucinated": "%.3f", "Cohen's d": "%+.2f", "AUROC": "%.3f"}
    if edge_format is not None:
        formats.update({"from": edge_format, "to": edge_format})
    formatted(table, formats)
    note = (f" The {left_out:,} rows with degenerate geometry (column *degenerate*) are counted in the rows and the "
            "AUROC and left out of the means and d, which one SGI near 1e8 would swamp." if left_out else "")
    st.caption(f"n/a = undefined there: d needs two rows of each class, AUROC one (its interval two).{note}")


def interval(ci, number_format: str = ".3f", *, in_text: bool = False) -> str | None:
    """``[lo, hi]`` of a result's interval, the dashboard's one way of writing one.

    Where it is undefined (a NaN bound): None in a table cell, "undefined" in a sentence (``in_text``).
    """
    return format_ci(ci, number_format, undefined="undefined" if in_text else None)


def length_matched_table(results: dict) -> None:
    """Plain and length-matched AUROC of each score (``results``: score name -> ``LengthMatchedResult``)."""
    rows = [{"score": curve_name(name), "AUROC": r.plain_auroc, "length-matched AUROC": r.auroc,
             "95% CI": interval(r.auroc_ci, ".3f"), "length-matched d": r.cohens_d,
             "d 95% CI": interval(r.cohens_d_ci, "+.2f"), "rows used": r.n_used, "rows dropped": r.n_dropped,
             "rows without a label or score": r.n_excluded}
            for name, r in results.items()]
    formatted(rows, {"AUROC": "%.3f", "length-matched AUROC": "%.3f", "length-matched d": "%+.2f"})
    st.caption("Rows used + dropped (in length bins holding one label only) + without a label or score = every row. "
               "Word overlap has no score for a response without a content word (only stopwords, digits or "
               "punctuation).")


def group_table(analysis) -> None:
    """One row per group of a ``GroupAnalysis``: counts, grounded share, AUROC and d with intervals."""
    rows = [{"group": g.group, "grounded": g.n_valid, "hallucinated": g.n_halluc, "share grounded": g.grounded_rate,
             "AUROC": g.auroc, "AUROC 95% CI": interval(g.auroc_ci, ".3f"), "Cohen's d": g.cohens_d,
             "d 95% CI": interval(g.cohens_d_ci, "+.2f")} for g in analysis.groups]
    formatted(rows, {"share grounded": "%.3f", "AUROC": "%.3f", "Cohen's d": "%+.2f"})
    st.caption("n/a = undefined in that group: AUROC needs both classes, d two rows of each.")
