"""Retrieval: Recall@K and MRR from the file's id lists, where the pipeline fails, and SGI by retrieval hit."""

import streamlit as st

from dashboard import page, services, state
from dashboard.views import tables
from sgi_core.render import figures

st.title("Retrieval")
st.write("Your file lists the retrieved document ids (ranked) and the relevant ids of each row, so retrieval and "
         "generation can be judged together.")
data, _ = page.header()
st.session_state.setdefault(state.RETRIEVAL_THRESHOLD,
                            float(st.session_state.get(state.CALIBRATION_THRESHOLD) or 1.0))
threshold = st.number_input("SGI from which a response counts as grounded (1 = as close to the context as to "
                            "the question)", step=0.05, format="%.3f", key=state.RETRIEVAL_THRESHOLD)
rag = services.retrieval(data.key, data.model, float(threshold), data.frame)
metrics = rag.metrics

cells = st.columns(len(metrics.recall_at_k) + 1)
for cell, (k, value) in zip(cells, metrics.recall_at_k.items()):
    cell.metric(f"Recall@{k}", f"{value:.3f}", help=f"Share of queries with a relevant id in the top {k}.")
cells[-1].metric("MRR", f"{metrics.mrr:.3f}", help="Mean of 1 / rank of the first relevant id (0 when none).")
st.caption(f"{metrics.n_queries - metrics.n_without_relevant:,} queries judged; {metrics.n_without_relevant:,} list "
           "no relevant id and are left out.")

st.subheader(f"Where does the pipeline fail? (top {rag.k})")
st.dataframe(rag.diagnosis_frame(), hide_index=True,
             column_config={"rule": st.column_config.TextColumn("applies when"),
                            "meaning": st.column_config.TextColumn("what to fix"),
                            "share": st.column_config.NumberColumn(format="%.3f")})
order = " → ".join(f"**{row['diagnosis']}**" for row in rag.diagnosis)
st.caption(f"Each query gets the first diagnosis whose rule applies, tested in this order: {order} "
           f"(K = {rag.k}; grounded = SGI ≥ {rag.grounded_threshold:g}).")

st.subheader("Does SGI still work when retrieval missed?")
st.write("SGI measures whether the response moved toward the context it was given. When the context is not the "
         "relevant one, a grounded-looking response may still be wrong: compare SGI's separation of the labels "
         "among retrieval hits and misses.")
strata = rag.sgi_by_hit
tables.strata_table(strata, edge_format=None)
if any(s.n_valid and s.n_halluc for s in strata.strata):
    st.plotly_chart(figures.strata_figure(strata, show_range=False), key=state.RETRIEVAL_BY_HIT)
else:
    st.info("The labels are needed on both sides of the split to compare SGI's separation.")
