"""SGI Workbench: entry point for `streamlit run dashboard/app.py` (``make run`` adds an access token)."""

import sys
from pathlib import Path

# `streamlit run` puts only this folder on sys.path; the pages import the repository's packages.
REPO = str(Path(__file__).resolve().parents[1])
if REPO not in sys.path:
    sys.path.insert(0, REPO)

import streamlit as st  # noqa: E402

from dashboard import access, devices, page, services, state  # noqa: E402
from dashboard.services import resamples  # noqa: E402
from sgi_core.columns import CONTEXT_STRATEGIES  # noqa: E402

# The pages in the order of the work: bring a file, judge it, label it, compare two runs, keep a policy. Their folder
# is app_pages/, not pages/: Streamlit serves each file of a pages/ folder beside this script as a page of its own,
# reachable by its URL without this script's access gate, sidebar and navigation.
SECTIONS = {
    "Data": [st.Page("app_pages/data.py", title="Data", icon=":material/upload_file:", default=True)],
    "Judge a file": [
        st.Page("app_pages/overview.py", title="Overview", icon=":material/insights:"),
        st.Page("app_pages/strata.py", title="Strata", icon=":material/stacked_bar_chart:"),
        st.Page("app_pages/detectors.py", title="Detectors", icon=":material/join_inner:"),
        st.Page("app_pages/judge.py", title="Judge", icon=":material/gavel:"),
        st.Page("app_pages/models.py", title="Models", icon=":material/compare:"),
        st.Page("app_pages/geometry.py", title="Geometry", icon=":material/scatter_plot:"),
        st.Page("app_pages/explorer.py", title="Explorer", icon=":material/search:"),
    ],
    "Label": [st.Page("app_pages/review.py", title="Review", icon=":material/rate_review:")],
    "Compare": [st.Page("app_pages/compare_runs.py", title="Compare runs", icon=":material/difference:")],
    "Monitor": [st.Page("app_pages/calibration.py", title="Calibration session", icon=":material/tune:"),
                st.Page("app_pages/monitor.py", title="Monitor", icon=":material/monitor_heart:")],
}
# Only files that list retrieved and relevant ids get this page.
RETRIEVAL_PAGE = st.Page("app_pages/retrieval.py", title="Retrieval", icon=":material/manage_search:")

# An emoji favicon is drawn in the page; a ":material/..." one is fetched from fonts.gstatic.com on every load.
st.set_page_config(page_title="SGI Workbench", page_icon="📐", layout="wide")
if not access.granted():
    st.error("Open the app with the URL printed in the terminal when it started: it ends in `?token=...`, which is "
             "new at every launch.")
    st.stop()
retrieval = [RETRIEVAL_PAGE] if page.has_retrieval_columns() else []
current = st.navigation({**SECTIONS, "Judge a file": SECTIONS["Judge a file"] + retrieval})
with st.sidebar:
    models = state.chosen_models(services.default_model())
    if len(models) > 1:
        st.selectbox("Model shown on the analysis pages", models, key=state.MODEL_SHOWN, **state.PERSIST)
    st.caption("SGI = angle(response, question) / angle(response, context). "
               "**High SGI = grounded**: the answer moved from the question toward its context.")
    page.log_axes_switch()
    st.session_state.setdefault(state.DEVICE, devices.default_device())
    st.selectbox("Device for the embedding models", devices.device_choices(), key=state.DEVICE, **state.PERSIST,
                 help="auto: the GPU when torch sees one (CUDA, then Apple MPS), else the CPU. "
                      "Starts at $SGI_DEVICE when that is set.")
    st.session_state.setdefault(state.BACKEND, devices.default_backend())
    st.selectbox("Embedding backend", devices.backend_choices(), key=state.BACKEND, **state.PERSIST,
                 help="auto: onnx on the CPU, torch on a GPU. torch: the model as it is. onnx: ONNX Runtime on "
                      "the CPU, torch's vectors, faster. onnx-int8: int8 weights, faster still; SGI moves by up "
                      "to about 0.6 on a row. Exported once into the cache folder; scores are cached per backend. "
                      "Starts at $SGI_BACKEND.")
    st.selectbox("Context strategy", CONTEXT_STRATEGIES, key=state.CONTEXT_STRATEGY, **state.PERSIST,
                 help="How a context becomes one embedding. joined: its passages joined by a blank line, cut at the "
                      "model's input length. mean: the mean of its passages' unit vectors, each passage cut into "
                      "windows the model reads whole. nearest: the passage (or window) nearest the response. "
                      "A file that is already scored keeps the strategy it was scored with.")
try:
    if (count := resamples.resamples_setting()) is not None:
        st.sidebar.caption(f"Every interval: {count:,} bootstrap resamples (`{resamples.RESAMPLES_ENV}`).")
except page.SGIInputError as err:
    page.show_error(err)
    st.stop()
try:
    device = devices.chosen_device()
    where = devices.known_device(device)
    st.sidebar.caption(f"Embedding models run on **{where}**." if where else
                       f"Embedding models run on **{device}**, settled when the first model loads.")
except page.SGIInputError as err:
    page.show_error(err)
    st.info("Choose **auto** or **cpu** as the device in the sidebar; the pages open again once it is available.")
    st.stop()
current.run()
