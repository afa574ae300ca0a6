"""Geometry: the question, context and response embeddings of each triple in one 2-D map."""

import streamlit as st

from dashboard import charts, page, services, state

st.title("Geometry")
st.write("Every triple is three points joined by a grey line: **question** (circle) - **response** (diamond) - "
         "**context** (square). A grounded response tends to sit away from its question and toward its "
         "context. Click a point to open its triple in the Explorer.")

data = page.scored_data()
ordinary = charts.plottable(data.frame)
if ordinary.empty:
    st.info("No row has an ordinary SGI to place (see the Data page for why rows were not scored).")
    st.stop()

method_col, colour_col, size_col = st.columns(3)
method = method_col.radio("Projection", ["pca", "umap"], key=state.GEOMETRY_METHOD, horizontal=True, **state.PERSIST,
                          format_func=str.upper,
                          help="PCA: exact and instant. UMAP keeps neighbourhoods together, but its first fit "
                               "after the app starts takes about 50 s while numba compiles; later fits take seconds.")
colour_by = colour_col.radio("Colour by", ["label", "sgi"], key=state.GEOMETRY_COLOUR, horizontal=True, **state.PERSIST,
                             format_func={"label": "label", "sgi": "SGI"}.get)
st.session_state.setdefault(state.GEOMETRY_SIZE, min(300, len(ordinary)))
st.session_state[state.GEOMETRY_SIZE] = min(st.session_state[state.GEOMETRY_SIZE], len(ordinary))
size = size_col.number_input(f"Triples shown (of {len(ordinary):,})", min_value=1, max_value=len(ordinary), step=50,
                             key=state.GEOMETRY_SIZE, **state.PERSIST, help="A random sample, the same each time; "
                             f"above {charts.WEBGL_POINTS // 3:,} triples the plot uses WebGL.")

spinner = ("Fitting UMAP (about 50 s the first time after the app starts, while numba compiles)..."
           if method == "umap" else "Projecting...")
try:
    with st.spinner(spinner):
        rows, projection = services.projection(data.key, data.model, method, int(size), data.table, data.frame)
except page.SGIInputError as err:
    page.show_error(err)
    st.stop()

sample = data.frame.iloc[rows]
event = st.plotly_chart(charts.geometry_figure(projection, sample, colour_by=colour_by), key="geometry.chart",
                        on_select="rerun", selection_mode="points")
notes = ["A 2-D map cannot keep every angle of the embedding space: read it as a rough picture of "
         "neighbourhoods, and use the Explorer for exact angles."]
if projection.explained_variance_ratio:
    notes.append("The two PCA axes carry {:.0%} and {:.0%} of the variance.".format(
        *projection.explained_variance_ratio))
if len(sample) < len(data.frame):
    notes.append(f"{len(sample):,} of {len(data.frame):,} rows shown; rows with a degenerate or missing SGI are "
                 "never drawn.")
st.caption(" ".join(notes))

picked = [p["customdata"] for p in event.selection.points if p.get("customdata") is not None]
if picked:
    row = data.frame[data.frame["input_row"] == picked[0]].iloc[0]
    state.pick_triple(int(row["input_row"]), row["question"], row["context"], row["response"])
    st.switch_page("pages/explorer.py")
