"""Strata: where SGI separates the labels, by question-context angle and by text length."""

import streamlit as st

from dashboard import charts, page, tables

st.title("Strata")
data, report = page.header(require_labels=True,
                           caption=" · strata are terciles over all scored rows, both labels pooled.")


st.subheader("By the question-context angle θ(q,c)")
st.write("When the context is close to the question (small θ(q,c)), the triangle inequality squeezes SGI toward 1 "
         "for every answer, so SGI can only separate the labels well where θ(q,c) is large.")
if report.theta_qc_strata is not None:
    st.plotly_chart(charts.strata_figure(report.theta_qc_strata), key="strata.theta_qc")
    tables.strata_table(report.theta_qc_strata, edge_format="%.3f rad")

st.subheader("By text length (characters)")
st.write("If SGI only tracked answer length, its AUROC would fall to about 0.5 **within** each response-length "
         "stratum. What is left there is signal that length cannot explain.")
# Response length first: it is the confound the page is about.
ordered = sorted(report.length_strata, key=lambda strata: strata.name != "response")
for tab, strata in zip(st.tabs([f"{s.name} length" for s in ordered]), ordered):
    with tab:
        st.plotly_chart(charts.strata_figure(strata), key=f"strata.length.{strata.name}")
        tables.strata_table(strata, edge_format="%.0f chars")

if report.angle_effects is not None:
    st.subheader("Each angle on its own")
    tables.angles_table(report)
    st.caption("Positive d: grounded answers lie farther from the question (θ(r,q)) or from the context (θ(r,c)).")
