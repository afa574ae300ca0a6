"""Data: choose the file, map its columns, pick the models, see what was rejected, score."""

import pandas as pd
import streamlit as st

from dashboard import page, services, state, texts

FILE_TYPES = ["csv", "tsv", "txt", "parquet", "pq", "jsonl", "ndjson", "json"]


def _on_upload() -> None:
    upload = st.session_state[state.DATA_UPLOAD]
    if upload is not None:
        state.set_file(upload.name, upload.getvalue())


def _use_sample() -> None:
    state.set_file(services.SAMPLE_CSV.name, services.SAMPLE_CSV.read_bytes())


st.title("Data")
st.write("Each row is one **question**, the **context** retrieved for it and the model's **response**; "
         "an optional **label** says whether the response is grounded (1) or hallucinated (0). "
         "The app opens on a bundled sample of HaluEval QA rows.")

upload_col, sample_col = st.columns([3, 1])
upload_col.file_uploader("Upload CSV, TSV, Parquet or JSON Lines", type=FILE_TYPES, key=state.DATA_UPLOAD,
                         on_change=_on_upload)
upload_col.caption(f"Up to {st.get_option('server.maxUploadSize')} MB per file: the limit is "
                   "`server.maxUploadSize` in `.streamlit/config.toml`; raise it there and restart for bigger files.")
sample_col.button("Use the bundled sample", on_click=_use_sample, width="stretch")

try:
    columns = page.current_columns()
except page.SGIInputError as err:
    page.show_error(err)
    st.stop()
st.markdown(f"**Current file:** {texts.plain(state.raw_file()[0])}")

st.subheader("Columns")
for role, slot in zip(state.ROLES, st.columns(4)):
    options = [*columns, state.NO_LABEL] if role == "label" else columns
    slot.selectbox(role.capitalize(), options, key=state.mapping_key(role), placeholder="choose a column",
                  **state.PERSIST)
no_label = st.session_state[state.mapping_key("label")] == state.NO_LABEL
st.radio("In the label column, 1 / true / yes means", ["grounded", "hallucinated"],
         key=state.DATA_LABEL_POSITIVE, horizontal=True, disabled=no_label, **state.PERSIST,
         help="Words that name a class (grounded, valid, faithful, hallucinated, ...) are read by their "
              "meaning whatever this says.")

st.subheader("Models")
names, unavailable = services.model_choices()
st.session_state.setdefault(state.DATA_MODELS, [services.default_model()])
st.multiselect("Embedding models to score with (two or more fill the Models page)", names, key=state.DATA_MODELS,
               **state.PERSIST)
if unavailable:
    with st.expander(f"{len(unavailable)} more models are registered but not installed here"):
        st.dataframe(pd.DataFrame([{"model": m.name, "id": m.model_id, "how to get it": m.how_to_get}
                                   for m in unavailable]), hide_index=True)
if not st.session_state[state.DATA_MODELS]:
    st.warning("Choose at least one model to score the file.")
    st.stop()

st.subheader("Validation")
try:
    key, table = page.current_table()
except page.SGIInputError as err:
    page.show_error(err)
    st.stop()
left, right = st.columns(2)
left.metric("Rows read", f"{table.n_rows:,}")
right.metric("Rows that cannot be scored", f"{len(table.unscorable):,}")
for warning in table.warnings:
    st.warning(texts.plain(warning))
if table.unscorable:
    st.caption("These rows stay in every table and download, with no score:")
    rejected = sorted(table.unscorable.items())
    st.dataframe(pd.DataFrame(rejected, columns=["row", "reason"]),
                 hide_index=True, height=min(400, 40 + 35 * len(table.unscorable)))

st.subheader("Scores")
data = page.scored_data()
for model, frame in data.frames.items():
    odd = frame[frame["sgi_status"] != "ok"]
    st.markdown(f"**{model}**: scored. " + (f"{len(odd):,} rows are degenerate or not scored:"
                                            if len(odd) else "Every row scored normally."))
    if len(odd):
        st.dataframe(odd[["input_row", "sgi", "sgi_status"]], hide_index=True, height=min(300, 40 + 35 * len(odd)))
with st.expander("Scored rows: angles (radians), SGI and status per row", expanded=False):
    st.dataframe(data.frame, hide_index=True)
st.page_link("pages/overview.py", label="Next: the Overview page", icon=":material/arrow_forward:")
