"""Data: choose the file, map its columns, pick the models, see what was rejected, score."""

import pandas as pd
import streamlit as st

from dashboard import local_files, page, services, state
from dashboard.app_pages import data_phoenix_panel
from dashboard.services import confound_services
from dashboard.views import texts
from sgi_core.render import figures

FILE_TYPES = ["csv", "tsv", "txt", "parquet", "pq", "jsonl", "ndjson", "json"]
#: Rows of a table listed on this page; the rest are in every statistic and download.
LISTED_ROWS = 1_000
PATH_ERROR = "data.path_error"
LIMIT_LABELS = {"max_rows": "Rows to score", "max_scored_rows": "Rows of an already scored file",
                "max_columns": "Columns", "max_cell_chars": "Characters per cell",
                "max_chars": "Characters of text to score", "max_scored_chars": "Characters of an already scored file"}


def _on_upload() -> None:
    upload = st.session_state[state.DATA_UPLOAD]
    if upload is not None:
        state.set_file(upload.name, upload.getvalue())


def _use_sample() -> None:
    state.set_file(services.SAMPLE_CSV.name, services.SAMPLE_CSV.read_bytes())


def _open_path() -> None:
    st.session_state[PATH_ERROR] = None
    if st.session_state[state.DATA_PATH].strip():
        try:
            state.set_path(local_files.local_file(st.session_state[state.DATA_PATH]))
        except page.SGIInputError as err:
            st.session_state[PATH_ERROR] = texts.plain(err)


def _path_box() -> None:
    """Open a file under the operator's folder; off unless ``SGI_LOCAL_FILES_ROOT`` names one."""
    root = local_files.local_files_root()
    if root is None:
        st.caption(f"Opening files on this machine by path is off. Set `{local_files.LOCAL_FILES_ROOT_ENV}` to a "
                   "folder before starting the app to open files under it without the upload limit.")
        return
    st.text_input(f"Or open a file under {texts.plain(root)} (a path; read from disk, not uploaded, so no upload "
                  "limit applies)", key=state.DATA_PATH, on_change=_open_path,
                  placeholder=str(root / "scored.parquet"),
                  help="A scored Parquet written by `python -m sgi_core score` opens without re-embedding. Paths "
                       "outside this folder, hidden files and folders are refused.")
    if st.session_state.get(PATH_ERROR):
        st.error(st.session_state[PATH_ERROR])


def label_values() -> None:
    """Which values of the label column mean grounded, hallucinated or unlabelled (the label map)."""
    column = st.session_state[state.mapping_key("label")]
    if column in (None, state.NO_LABEL):
        st.session_state[state.DATA_LABEL_MAP] = {}
        return
    name, raw = state.raw_file()
    frame = services.raw_frame(name, state.data_digest(), raw, services.input_limits())
    values = confound_services.label_values(name, state.data_digest(), column, frame)
    with st.expander("Label values: say what each value of the label column means",
                     expanded=bool(st.session_state.get(state.DATA_LABEL_MAP))):
        st.caption("Needed when the label column holds words of its own (e.g. `Entailment`, `Partial Hallucination`). "
                   "Values chosen nowhere keep the usual reading (1/0, yes/no, grounded/hallucinated, ...); with "
                   "any value chosen here, a value neither names keeps its rows, unlabelled, and Validation "
                   "below says how many.")
        slots = st.columns(3)
        for slot, (meaning, key) in zip(slots, state.LABEL_MAP_KEYS.items()):
            slot.multiselect(f"Values meaning {meaning}", values, key=key, **state.PERSIST)
    chosen = {meaning: st.session_state.get(key) or [] for meaning, key in state.LABEL_MAP_KEYS.items()}
    twice = sorted({v for m in chosen.values() for v in m if sum(v in other for other in chosen.values()) > 1})
    if twice:
        st.error(f"Each value can mean one thing only: {texts.plain(', '.join(twice))} is chosen twice.")
        st.stop()
    st.session_state[state.DATA_LABEL_MAP] = {value: meaning for meaning, picked in chosen.items() for value in picked}


def label_copies(key: state.DataKey, table) -> None:
    """Say which columns are the label in disguise: they are kept out of groups and detector scores."""
    screen = confound_services.column_screen(key, table)
    for column in screen.leak_columns:
        st.warning(f"{texts.plain(screen.refused_as_score(column))}, so it is kept out of the groups (Strata, "
                   "Calibration) and the detector score columns (Overview, Detectors).")


def _listed(frame: pd.DataFrame) -> pd.DataFrame:
    if len(frame) > LISTED_ROWS:
        st.caption(f"The first {LISTED_ROWS:,} of {len(frame):,} rows are listed here.")
    return frame.head(LISTED_ROWS)


st.title("Data")
st.write("Each row is one **question**, the **context** retrieved for it and the model's **response**; "
         "an optional **label** says whether the response is grounded (1) or hallucinated (0). "
         "The app opens on a bundled sample of HaluEval QA rows.")

upload_col, sample_col = st.columns([3, 1])
upload_col.file_uploader("Upload CSV, TSV, Parquet or JSON Lines", type=FILE_TYPES, key=state.DATA_UPLOAD,
                         on_change=_on_upload)
upload_col.caption(f"Up to {st.get_option('server.maxUploadSize')} MB per file: the limit is "
                   "`server.maxUploadSize` in `.streamlit/config.toml`; raise it there and restart for bigger files. "
                   "A Phoenix, Langfuse or OpenTelemetry trace export opens as one row per trace: its `trace_id`, "
                   "question, retrieved passages and answer.")
sample_col.button("Use the bundled sample", on_click=_use_sample, width="stretch")
_path_box()
data_phoenix_panel.phoenix_source()
with st.expander("Limits on the file read"):
    defaults = services.env_limits()
    st.caption("A file above a limit is refused with a message before it is scored; a Parquet file is checked from "
               "its metadata before it is read. Raise a limit here for this session, or set "
               + ", ".join(f"`{services.LIMIT_ENV[name]}`" for name in LIMIT_LABELS) + " before starting the app.")
    slots = st.columns(3)
    for index, (name, label) in enumerate(LIMIT_LABELS.items()):
        slot = slots[index % len(slots)]
        st.session_state.setdefault(state.LIMIT_KEYS[name], getattr(defaults, name))
        slot.number_input(label, min_value=1, step=1, key=state.LIMIT_KEYS[name], **state.PERSIST)

try:
    columns = page.current_columns()
except page.SGIInputError as err:
    page.show_error(err)
    st.stop()
st.markdown(f"**Current file:** {texts.plain(state.raw_file()[0])}")
scored = services.is_scored(columns)

st.subheader("Columns")
if scored:
    st.info("This file is already scored (it has `theta_qc`, `theta_rq`, `theta_rc`, `sgi` and `sgi_status`): every "
            "page reads its scores as they are, with nothing re-embedded. Its `question`, `context`, `response` and "
            "`label` (1 grounded, 0 hallucinated) columns are used.")
for role, slot in zip(state.ROLES, [] if scored else st.columns(4)):
    options = [*columns, state.NO_LABEL] if role == "label" else columns
    slot.selectbox(role.capitalize(), options, key=state.mapping_key(role), placeholder="choose a column",
                  **state.PERSIST)
no_label = st.session_state[state.mapping_key("label")] == state.NO_LABEL
st.radio("In the label column, 1 / true / yes means", ["grounded", "hallucinated"],
         key=state.DATA_LABEL_POSITIVE, horizontal=True, disabled=no_label or scored, **state.PERSIST,
         help="Words that name a class (grounded, valid, faithful, hallucinated, ...) are read by their "
              "meaning whatever this says.")
if not scored:
    label_values()

st.subheader("Models")
names, unavailable = services.model_choices()
st.session_state.setdefault(state.DATA_MODELS, [services.default_model()])
st.multiselect("Embedding model the file was scored with (the Geometry map and the Explorer embed with the first)"
               if scored else "Embedding models to score with (two or more fill the Models page)", names,
               key=state.DATA_MODELS, **state.PERSIST)
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
label_copies(key, table)
if table.unscorable:
    st.caption("These rows stay in every table and download, with no score:")
    rejected = sorted(table.unscorable.items())
    st.dataframe(_listed(pd.DataFrame(rejected, columns=["row", "reason"])),
                 hide_index=True, height=min(400, 40 + 35 * len(table.unscorable)))

st.subheader("Scores")
data = page.scored_data()
for model, frame in data.frames.items():
    # Columns first: filtering the whole frame would copy every text column of a big file.
    odd = frame[["input_row", "sgi", "sgi_status"]][~figures.ordinary_rows(frame)]
    st.markdown(f"**{model}**: scored. " + (f"{len(odd):,} rows are degenerate or not scored:"
                                            if len(odd) else "Every row scored normally."))
    if len(odd):
        st.dataframe(_listed(odd), hide_index=True,
                     height=min(300, 40 + 35 * len(odd)))
with st.expander("Scored rows: angles (radians), SGI and status per row", expanded=False):
    st.dataframe(_listed(data.frame), hide_index=True)
st.page_link("app_pages/overview.py", label="Next: the Overview page", icon=":material/arrow_forward:")
