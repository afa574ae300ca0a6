"""Overview: does SGI separate grounded from hallucinated answers here, and does it beat trivial baselines?"""

import streamlit as st

from dashboard import charts, page, services, state, tables, texts

st.title("Overview")
data, report = page.header()
es, roc = report.effect_size, report.roc

counts = st.columns(4)
counts[0].metric("Rows", f"{report.n_rows:,}")
counts[1].metric("Scored", f"{report.n_scored:,}")
counts[2].metric("Labelled grounded", f"{report.n_valid:,}")
counts[3].metric("Labelled hallucinated", f"{report.n_halluc:,}")

labelled = texts.labels_missing(report.n_valid, report.n_halluc)
if labelled is None:
    stats = st.columns(4)
    stats[0].metric("Mean SGI, grounded", f"{es.mean_valid:.3f}", help=f"SD {es.sd_valid:.3f}")
    stats[1].metric("Mean SGI, hallucinated", f"{es.mean_halluc:.3f}", help=f"SD {es.sd_halluc:.3f}")
    stats[2].metric("Cohen's d", f"{es.cohens_d:+.2f}", help=texts.D_HELP)
    stats[3].metric("AUROC", f"{roc.auroc:.3f}", help=texts.AUROC_HELP)
    st.caption(f"95% bootstrap intervals: d [{es.cohens_d_ci[0]:+.2f}, {es.cohens_d_ci[1]:+.2f}], "
               f"AUROC [{roc.auroc_ci[0]:.3f}, {roc.auroc_ci[1]:.3f}]; Welch p = {es.welch_p:.2g}.")
else:
    st.info(labelled)

threshold = st.session_state.get(state.CALIBRATION_THRESHOLD)
st.plotly_chart(charts.score_histogram(charts.plottable(data.frame), threshold=threshold), key="overview.histogram")
st.caption("Dashed line: the threshold set on the Calibration session page (rows left of it are flagged)."
           if threshold is not None else "Set a flagging threshold on the Calibration session page to see it here.")
if report.n_degenerate:
    st.caption(f"{report.n_degenerate:,} rows with degenerate geometry (see the Data page) are left out of the "
               "histogram, whose axis their extreme SGI would squash; the statistics include them.")

if labelled is None:
    st.subheader("SGI against trivial baselines")
    st.write(texts.CONFOUND)
    curves = {"SGI": roc}
    for name, curve in services.baseline_curves(data.key, data.model, data.frame).items():
        curves[charts.BASELINE_NAMES.get(name, name)] = curve
    st.multiselect("Other score columns of your file to compare (e.g. an LLM-judge score); say what their high "
                   "values mean, and see them combined with SGI, on the Detectors page",
                   services.numeric_columns(data.table), key=state.DETECTOR_COLUMNS, **state.PERSIST)
    for column, higher_is in state.detector_specs():
        curves[column] = services.column_roc(data.key, column, higher_is, data.table)
    st.plotly_chart(charts.roc_figure(curves), key="overview.roc")
    tables.baselines_table(report, data.model)
    if report.beyond_length is not None:
        st.subheader("Does SGI add anything beyond response length?")
        page.verdict(report.beyond_length.level, report.beyond_length.verdict)
        st.caption(f"Cross-validated logistic models over {report.beyond_length.n_splits} folds on "
                   f"{report.beyond_length.n:,} labelled rows.")

if report.notes:
    with st.expander(f"{len(report.notes)} caveats from the statistics"):
        for note in report.notes:
            st.markdown(f"- {texts.plain(note)}")
