"""SGI Workbench: entry point for `streamlit run dashboard/app.py`."""

import streamlit as st

st.set_page_config(page_title="SGI Workbench", layout="wide")
st.title("SGI Workbench")
st.write("Semantic Grounding Index for RAG responses.")
