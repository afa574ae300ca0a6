"""Strata: where SGI separates the labels, by question-context angle, by text length and by any group column."""

import streamlit as st

from dashboard import page, state
from dashboard.services import confound_services
from dashboard.views import tables, texts
from sgi_core.render import figures

GROUP_COLUMN = "strata.group_column"

st.title("Strata")
data, report = page.header(require_labels=True,
                           caption=" · strata are terciles over all scored rows, both labels pooled.")


st.subheader("By the question-context angle θ(q,c)")
st.write("When the context is close to the question (small θ(q,c)), the triangle inequality squeezes SGI toward 1 "
         "for every answer, so SGI can only separate the labels well where θ(q,c) is large.")
if report.theta_qc_strata is not None:
    st.plotly_chart(figures.strata_figure(report.theta_qc_strata), key=state.STRATA_THETA_QC)
    tables.strata_table(report.theta_qc_strata, edge_format="%.3f rad")

st.subheader("By text length (characters)")
st.write("If SGI only tracked answer length, its AUROC would fall to about 0.5 **within** each response-length "
         "stratum. What is left there is signal that length cannot explain.")
# Response length first: it is the confound the page is about.
ordered = sorted(report.length_strata, key=lambda strata: strata.name != "response")
for tab, strata in zip(st.tabs([f"{s.name} length" for s in ordered]), ordered):
    with tab:
        st.plotly_chart(figures.strata_figure(strata), key=f"strata.length.{strata.name}")
        tables.strata_table(strata, edge_format="%.0f chars")
        if strata.name == "context":
            page.truncation_note(data)

if report.angle_effects is not None:
    st.subheader("Each angle on its own")
    tables.angles_table(report)
    st.caption("Positive d: grounded answers lie farther from the question (θ(r,q)) or from the context (θ(r,c)).")

st.subheader("By group")
st.write("Any categorical column of the file (the model that wrote each response, the domain, the task type) as a "
         "stratum: does SGI separate the labels inside each group, or only across groups?")
columns = confound_services.group_columns(data.table)
for leak in confound_services.column_screen(data.key, data.table).leak_columns:
    st.caption(f"`{texts.plain(leak)}` is not offered: it determines the label, so each of its groups would be one "
               "class (see the Data page).")
if not columns:
    st.info("This file has no column to group by. Add one with 2 to "
            f"{confound_services.MAX_GROUPS} distinct values (for example `generator`, naming the model that wrote "
            "each response, or `domain`) and upload the file again on the Data page; id columns such as `pair_id` "
            "(one value per question) do not count.")
else:
    column = st.selectbox("Group by", columns, key=GROUP_COLUMN, **state.PERSIST)
    analysis = confound_services.group_analysis(data.key, data.model, column, data.frame)
    confound = analysis.confound
    if confound.level == "warning":
        st.warning(f"**Authorship confound.** {texts.plain(confound.message)}. Where a group is nearly all one "
                   "label, a detector can score well by recognising who wrote the answer rather than whether it "
                   "is grounded: judge SGI by its AUROC within the groups, not over the whole file.")
    else:
        st.caption(f"{texts.plain(confound.message)}; no group is nearly all one label.")
    st.plotly_chart(figures.group_forest(analysis), key=state.STRATA_GROUPS)
    tables.group_table(analysis)
