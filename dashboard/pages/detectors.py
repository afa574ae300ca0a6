"""Detectors: other scores the file carries (LLM judges, NLI), beside SGI and combined with it."""

import pandas as pd
import streamlit as st

from dashboard import charts, page, services, state

st.title("Detectors")
st.write("Put any numeric column of your file (an LLM judge's consistency score, RAGAS faithfulness, an NLI "
         "probability, ...) on the same footing as SGI: ROC with a confidence interval, correlation with SGI, "
         "calibration, a threshold, and a cross-validated combination with SGI.")
data, report = page.header(require_labels=True)
columns = services.numeric_columns(data.table)
if not columns:
    st.info("This file has no numeric column besides the mapped ones. Add a column with another detector's "
            "score per row (e.g. `judge_score`) to compare it with SGI here.")
    st.stop()

st.multiselect("Detector score columns", columns, key=state.DETECTOR_COLUMNS, **state.PERSIST)
for column in st.session_state.get(state.DETECTOR_COLUMNS) or ():
    st.radio(f"In `{column}`, high values mean", ["grounded", "hallucinated"], horizontal=True,
             key=state.detector_direction_key(column), **state.PERSIST)
specs = state.detector_specs()
if not specs:
    st.info("Pick one or more columns above.")
    st.stop()

try:
    comparison = services.detector_comparison(data.key, data.model, specs, data.table, data.frame)
except page.SGIInputError as err:
    page.show_error(err)
    st.stop()

COLUMNS = {"detector": "score", "auroc": "AUROC", "auroc_ci_lo": "95% CI from", "auroc_ci_hi": "95% CI to",
           "spearman_with_SGI": "Spearman with SGI", "cv_auroc": "cross-validated AUROC"}
st.dataframe(comparison.to_frame().rename(columns=COLUMNS), hide_index=True,
             column_config={name: st.column_config.NumberColumn(format="%.3f") for name in list(COLUMNS.values())[1:]})
st.caption(f"Scores oriented so that higher = grounded. Cross-validated AUROC: a logistic model on each score alone "
           f"and on all together, {comparison.n_splits} folds over the {comparison.n:,} labelled rows every score "
           "covers (out-of-fold predictions, same folds for all). A low Spearman correlation with a useful AUROC "
           "means the signals are complementary.")
page.verdict(comparison.level, comparison.verdict)

curves = dict(zip(comparison.names, comparison.roc))
curves["combined (out of fold)"] = comparison.combined_roc
st.plotly_chart(charts.roc_figure(curves), key="detectors.roc")

st.subheader("Calibration and threshold of each detector")
method = st.session_state.get(state.CALIBRATION_METHOD, "platt")
rows = []
for column, higher_is in specs:
    calibration = services.detector_calibration(data.key, column, higher_is, method, data.table)
    choice = services.detector_threshold(data.key, column, higher_is, data.table)
    m = choice.metrics
    rows.append({"score": column, "high means": higher_is, "ECE (equal-frequency bins)": calibration.ece_quantile,
                 "Brier": calibration.brier, "Youden threshold": choice.threshold, "precision": m.precision,
                 "recall": m.recall, "F1": m.f1, "flag rate": m.flag_rate})
st.dataframe(pd.DataFrame(rows), hide_index=True,
             column_config={name: st.column_config.NumberColumn(format="%.3f") for name in rows[0] if
                            name not in ("score", "high means")})
st.caption(f"Calibrator: {method} (chosen on the Calibration session page), fitted on half the labelled rows and "
           "measured on the other half. Threshold on the oriented score; a row below it is flagged as "
           "hallucinated, and precision / recall count hallucinated rows as the positives.")
shown = st.selectbox("Reliability diagram of", [column for column, _ in specs], key=state.DETECTOR_CALIBRATION)
higher_is = dict(specs)[shown]
st.plotly_chart(charts.reliability_figure(services.detector_calibration(data.key, shown, higher_is, method,
                                                                         data.table)), key="detectors.reliability")
