"""Geometry: each triple drawn exactly as a triangle, and all embeddings in one 2-D map."""

import streamlit as st

from dashboard import page, state
from dashboard.services import geometry_services
from dashboard.views import geometry_charts
from sgi_core.render import figures
from sgi_core.render.names import display_name

st.title("Geometry")
st.write("Two views of the same triples. **Canonical triangle**: each triple drawn exactly from its three angles, "
         "nothing projected. **PCA / UMAP map**: the question, context and response embeddings squeezed into two "
         "dimensions. Click a response in either view to open its triple in the Explorer.")

data = page.scored_data()
warm_up = geometry_services.umap_warm_up()
n_ordinary = figures.n_ordinary(data.frame)
if not n_ordinary:
    st.info("No row has an ordinary SGI to place (see the Data page for why rows were not scored).")
    st.stop()

st.session_state.setdefault(state.GEOMETRY_SIZE, min(300, n_ordinary))
st.session_state[state.GEOMETRY_SIZE] = min(st.session_state[state.GEOMETRY_SIZE], n_ordinary)
size = st.number_input(f"Triples shown (of {n_ordinary:,})", min_value=1, max_value=n_ordinary, step=50,
                       key=state.GEOMETRY_SIZE, **state.PERSIST, help="A random sample, the same each time and the "
                       f"same in both views; above {figures.WEBGL_POINTS // 3:,} triples the map uses WebGL.")
shown_note = (f"{min(int(size), n_ordinary):,} of {len(data.frame):,} rows drawn; rows with a degenerate or "
              "missing SGI are never drawn." if int(size) < len(data.frame) else "")


def _open_picked(event) -> None:
    """Open the clicked triple in the Explorer."""
    picked = [p["customdata"] for p in event.selection.points if p.get("customdata") is not None]
    if picked:
        row = page.file_row(data.frame, picked[0])
        state.pick_triple(int(row["input_row"]), row["question"], row["context"], row["response"])
        st.switch_page("app_pages/explorer.py")


triangle_tab, map_tab = st.tabs(["Canonical triangle (exact)", "PCA / UMAP map"])
try:
    rows, r_xy = geometry_services.canonical_triangle(data.key, data.model, int(size), data.frame)
    with st.spinner("Projecting..."):
        _, pca = geometry_services.projection(data.key, data.model, "pca", int(size), data.table, data.frame)
except page.SGIInputError as err:
    page.show_error(err)
    st.stop()

with triangle_tab:
    shown = page.take_rows(data.frame, rows)
    event = st.plotly_chart(geometry_charts.triangle_figure(r_xy, shown, geometry_services.sgi_isolines()),
                            key=state.GEOMETRY_TRIANGLE, on_select="rerun", selection_mode="points")
    levels = ", ".join(f"{level:g}" for level in geometry_services.TRIANGLE_LEVELS)
    st.caption(
        "Exact, not projected: each triple is a triangle whose sides are its three angles, scaled so that "
        "θ(q,c) = 1: q at the origin, c at (1, 0), and r at distance θ(r,q) / θ(q,c) from q and θ(r,c) / θ(q,c) "
        "from c. SGI is the ratio of those two sides, so the scaling leaves it unchanged and one set of iso-lines "
        f"serves every triple (dotted: SGI = {levels}). Right of the SGI = 1 line a response is closer to its "
        "context than to its question: **grounded responses lean toward c**. "
        "The PCA map in the next tab keeps only {:.0%} and {:.0%} of the variance on its two axes. ".format(
            *pca.explained_variance_ratio) + shown_note)
    _open_picked(event)

with map_tab:
    method_col, colour_col = st.columns(2)
    method = method_col.radio("Projection", ["pca", "umap"], key=state.GEOMETRY_METHOD, horizontal=True,
                              **state.PERSIST, format_func=str.upper,
                              help="PCA: exact and instant. UMAP keeps neighbourhoods together; its code is "
                                   "compiled in the background when this page first opens (about 25 s), after "
                                   "which a map of a few hundred triples takes seconds.")
    colour_by = colour_col.radio("Colour by", ["label", "sgi"], key=state.GEOMETRY_COLOUR, horizontal=True,
                                 **state.PERSIST,
                                 format_func=lambda name: name if name == "label" else display_name(name))
    compiling = warm_up.is_alive()
    spinner = ("Fitting UMAP: its code is still being compiled (started when this page opened, about 25 s in all), "
               "then a few seconds for the map..." if method == "umap" and compiling else
               "Fitting UMAP (a few seconds for a few hundred triples)..." if method == "umap" else "Projecting...")
    try:
        with st.spinner(spinner):
            rows, projection = geometry_services.projection(data.key, data.model, method, int(size), data.table,
                                                            data.frame)
    except page.SGIInputError as err:
        page.show_error(err)
        st.stop()
    st.write("Every triple is three points joined by a grey line: **question** (circle) - **response** (diamond) - "
             "**context** (square).")
    figure = geometry_charts.geometry_figure(projection, page.take_rows(data.frame, rows), colour_by=colour_by)
    event = st.plotly_chart(figure, key=state.GEOMETRY_CHART, on_select="rerun", selection_mode="points")
    notes = ["A 2-D map cannot keep every angle of the embedding space: read it as a rough picture of "
             "neighbourhoods, and use the canonical triangle or the Explorer for exact angles."]
    if projection.explained_variance_ratio:
        notes.append("The two PCA axes carry {:.0%} and {:.0%} of the variance.".format(
            *projection.explained_variance_ratio))
    if geometry_services.projection_note(projection):
        notes.append(geometry_services.projection_note(projection))
    notes.append(shown_note)
    st.caption(" ".join(notes))
    _open_picked(event)
