"""Session-state keys (namespaced by page) and their accessors.

Widgets whose choice must survive a page switch are created with ``persist_state="session"``
(``PERSIST``); without it Streamlit drops a widget's value once a page that does not
draw it has run.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import NamedTuple

import streamlit as st

from sgi_core.columns import DEFAULT_CONTEXT_STRATEGY
from sgi_core.io.mapping import detect_mapping
from sgi_core.io.triples import default_label_positive

ROLES = ("question", "context", "response", "label")

DATA_NAME = "data.name"
DATA_RAW = "data.raw"
DATA_DIGEST = "data.digest"
DATA_LABEL_POSITIVE = "data.label_positive"
#: Label value -> "grounded" / "hallucinated" / "unlabelled", set on the Data page; and its three multiselects.
DATA_LABEL_MAP = "data.label_map"
LABEL_MAP_KEYS = {meaning: f"data.label_map.{meaning}" for meaning in ("grounded", "hallucinated", "unlabelled")}
DATA_MODELS = "data.models"
DATA_UPLOAD = "data.upload"
MODEL_SHOWN = "app.model"
CALIBRATION_METHOD = "calibration.method"
CALIBRATION_THRESHOLD = "calibration.threshold"
CALIBRATION_LOADED = "calibration.loaded_session"
CALIBRATION_TARGET = "calibration.target"
CALIBRATION_COST = "calibration.cost_ratio"
GEOMETRY_METHOD = "geometry.method"
GEOMETRY_COLOUR = "geometry.colour"
GEOMETRY_SIZE = "geometry.size"
EXPLORER_ROW = "explorer.row"
DETECTOR_COLUMNS = "detectors.columns"
DETECTOR_CALIBRATION = "detectors.calibration_column"
RETRIEVAL_THRESHOLD = "retrieval.grounded_threshold"
EXPLORER_TEXTS = {role: f"explorer.{role}" for role in ("question", "context", "response")}


def mapping_key(role: str) -> str:
    return f"data.mapping.{role}"


def detector_direction_key(column: str) -> str:
    return f"detectors.higher_is.{column}"


def detector_specs() -> tuple:
    """The detector columns chosen on the Detectors page with what their high values mean."""
    return tuple((column, st.session_state.get(detector_direction_key(column), "grounded"))
                 for column in st.session_state.get(DETECTOR_COLUMNS) or ())


#: Keyword for widgets whose value must outlive a page switch.
PERSIST = {"persist_state": "session"}

#: Shown in the label-column select box for "this file has no labels".
NO_LABEL = "(no label column)"


class DataKey(NamedTuple):
    """Everything that decides the validated table: the cache key of every computed frame."""

    name: str
    digest: str
    mapping: tuple
    label_positive: str
    #: Where the labels come from (``file``, or the annotations' source and version:
    #: see dashboard.services.review_services).
    labels: str = "file"
    #: The embedding backend (sidebar): int8 scores differ from fp32 ones, so every cached frame follows it.
    backend: str = "auto"
    #: Label value -> grounded / hallucinated / unlabelled, as sorted pairs (the Data page's label values).
    label_map: tuple = ()
    #: How each context becomes one embedding (sidebar; :data:`sgi_core.columns.CONTEXT_STRATEGIES`).
    context_strategy: str = DEFAULT_CONTEXT_STRATEGY


def set_file(name: str, raw: bytes) -> None:
    """Make ``raw`` the current data and forget the choices that belonged to the previous file."""
    digest = source_digest(raw)
    if st.session_state.get(DATA_DIGEST) == digest and st.session_state.get(DATA_NAME) == name:
        return
    st.session_state[DATA_NAME] = name
    st.session_state[DATA_RAW] = raw
    st.session_state[DATA_DIGEST] = digest
    for key in (*(mapping_key(role) for role in ROLES), DATA_LABEL_POSITIVE, DATA_LABEL_MAP, *LABEL_MAP_KEYS.values(),
                CALIBRATION_THRESHOLD,
                CALIBRATION_LOADED, EXPLORER_ROW, *EXPLORER_TEXTS.values()):
        st.session_state.pop(key, None)


def seed_mapping(columns) -> None:
    """Fill the column mapping detected from the file's column names, where none is chosen yet."""
    if mapping_key("question") in st.session_state:
        return
    detected = detect_mapping(columns)
    for role in ROLES:
        st.session_state[mapping_key(role)] = detected[role] or (NO_LABEL if role == "label" else None)
    st.session_state[DATA_LABEL_POSITIVE] = default_label_positive(detected["label"])


def has_file() -> bool:
    return DATA_RAW in st.session_state


def raw_file() -> tuple[str, bytes]:
    return st.session_state[DATA_NAME], st.session_state[DATA_RAW]


def data_digest() -> str:
    return st.session_state[DATA_DIGEST]


def data_key() -> DataKey:
    mapping = []
    for role in ROLES:
        column = st.session_state.get(mapping_key(role))
        mapping.append(None if column == NO_LABEL else column)
    return DataKey(
        st.session_state[DATA_NAME], st.session_state[DATA_DIGEST], tuple(mapping),
        st.session_state.get(DATA_LABEL_POSITIVE, "grounded"), backend=st.session_state.get(BACKEND) or "auto",
        label_map=tuple(sorted((st.session_state.get(DATA_LABEL_MAP) or {}).items())),
        context_strategy=st.session_state.get(CONTEXT_STRATEGY) or DEFAULT_CONTEXT_STRATEGY,
    )


def mapping_dict(key: DataKey) -> dict:
    """The mapping of a key as ``validate_triples`` takes it (``label: None`` = unlabelled)."""
    return dict(zip(ROLES, key.mapping))


def chosen_models(default: str) -> list[str]:
    return list(st.session_state.get(DATA_MODELS) or [default])


def shown_model(models: list[str]) -> str:
    """The model the analysis pages show; the first scored one until the user picks another."""
    current = st.session_state.get(MODEL_SHOWN)
    return current if current in models else models[0]


def pick_triple(row: int, question: str, context: str, response: str) -> None:
    """Open a data row in the Explorer (its texts become the editable fields)."""
    st.session_state[EXPLORER_ROW] = row
    for role, text in zip(EXPLORER_TEXTS, (question, context, response)):
        st.session_state[EXPLORER_TEXTS[role]] = text


#: The (data key, model, families) whose detectors were last asked for with the Detectors page's button.
DETECTOR_FAMILIES_RUN = "detectors.families_run"
COMPARE_A = "detectors.compare_a"
COMPARE_B = "detectors.compare_b"
COMPARE_ROW = "detectors.compare_row"


def detector_family_key(kind: str) -> str:
    return f"detectors.family.{kind}"


#: The (data key, model, resources) last computed, the resources as ((field, choice), ...) of each declared
#: resource given on the Detectors page (:data:`sgi_core.detectors.registry.RESOURCE_OPTIONS`).
RESOURCES_RUN = "detectors.resources_run"


def resource_key(field: str) -> str:
    """The Detectors page's text area of the declared resource ``field`` (e.g. one ``NAME=DIR`` or ``DIR`` per line)."""
    return f"detectors.resource.{field}"


def resource_switch_key(field: str, switch: str) -> str:
    """The Detectors page's checkbox of the switch ``switch`` (e.g. ``no_self_test``) of the resource ``field``."""
    return f"{resource_key(field)}.{switch}"


def resources_run(key: DataKey, model: str) -> tuple:
    """The resources ((field, choice), ...) last computed for this data and model; () when none."""
    run = st.session_state.get(RESOURCES_RUN)
    return run[2] if run is not None and run[:2] == (key, model) else ()


#: Device the embedding models load on, chosen in the sidebar.
DEVICE = "app.device"
#: Embedding backend (auto, torch, onnx, onnx-int8), chosen in the sidebar.
BACKEND = "app.backend"
#: How each context becomes one embedding (joined, mean, nearest), chosen in the sidebar.
CONTEXT_STRATEGY = "app.context_strategy"
JUDGE_ENDPOINT = "judge.endpoint"
JUDGE_MODEL = "judge.model"
JUDGE_METRICS = "judge.metrics"
JUDGE_CONTEXTS = "judge.contexts_column"
JUDGE_REFERENCE = "judge.reference_column"
JUDGE_K = "judge.k"
JUDGE_SAMPLE = "judge.sample"
JUDGE_SIZE = "judge.size"
JUDGE_CONCURRENCY = "judge.concurrency"
#: The last run of the Judge page: the judged file's digest, its summary line and the judge columns.
JUDGE_RESULT = "judge.result"


def chosen_device(default: str) -> str:
    return st.session_state.get(DEVICE) or default


def chosen_backend(default: str) -> str:
    return st.session_state.get(BACKEND) or default


def add_columns_to_file(name: str, raw: bytes) -> None:
    """Make ``raw``, the current file with columns added, the current data, keeping its column mapping."""
    kept = {key: st.session_state[key] for key in (*(mapping_key(role) for role in ROLES), DATA_LABEL_POSITIVE)
            if key in st.session_state}
    set_file(name, raw)
    st.session_state.update(kept)


#: The clickable table of the rows where the two compared scores disagree most.
COMPARE_TABLE = "detectors.compare_table"


def detector_families_run(key: DataKey, model: str) -> tuple:
    """The families last computed with the Detectors page's button for this data and model; () when none."""
    run = st.session_state.get(DETECTOR_FAMILIES_RUN)
    return run[2] if run is not None and run[:2] == (key, model) else ()


#: Limits set on the Data page, one key per :class:`sgi_core.io.limits.InputLimits` field.
LIMIT_KEYS = {name: f"data.limits.{name}" for name in ("max_rows", "max_scored_rows", "max_columns", "max_cell_chars",
                                                      "max_chars", "max_scored_chars")}
#: A file on this machine typed on the Data page, read from disk instead of uploaded.
DATA_PATH = "data.path"
#: The Data page's Phoenix source: the server, the project, the window's ends, and what the last pull said.
PHOENIX_KEYS = {name: f"data.phoenix.{name}" for name in ("url", "project", "since", "until")}
PHOENIX_NOTES = "data.phoenix.notes"


def input_limits(default):
    """``default`` (an ``InputLimits``) with the limits set on the Data page."""
    chosen = {name: int(st.session_state[key]) for name, key in LIMIT_KEYS.items() if st.session_state.get(key)}
    return dataclasses.replace(default, **chosen) if chosen else default


def source_digest(raw) -> str:
    """The digest of uploaded bytes, or of a file on this machine's path, size and modification time."""
    if isinstance(raw, Path):
        info = raw.stat()
        return hashlib.sha256(f"{raw}|{info.st_size}|{info.st_mtime_ns}".encode()).hexdigest()
    return hashlib.sha256(raw).hexdigest()


def set_path(path) -> None:
    """Make a file on this machine the current data: read from disk when needed, never held as bytes."""
    resolved = Path(path).expanduser().resolve()
    set_file(str(resolved), resolved)


#: The Review page's choices: where the pages take their labels from, the queue and the annotator.
LABEL_SOURCE = "labels.source"
REVIEW_STRATEGY = "review.strategy"
REVIEW_SCORE = "review.score"
REVIEW_SECOND_SCORE = "review.second_score"
REVIEW_SEED = "review.seed"
REVIEW_TARGET = "review.target"
#: The active queue's predictor: a probability column of the file (``sample --predictor``).
REVIEW_PREDICTOR = "review.predictor"
REVIEW_ANNOTATOR = "review.annotator"
REVIEW_NOTE = "review.note"
#: The row key the note being typed belongs to: a label given to another row does not take it.
REVIEW_NOTE_KEY = "review.note_key"
#: Rows put before the reviewer ahead of the queue (rows where two raters disagree), and how many are done.
REVIEW_FOCUS = "review.focus"
REVIEW_HALF_WIDTH = "review.half_width"
#: The decisions given in this session, newest last, as (annotations file, row key, decision id): what undo takes back.
REVIEW_HISTORY = "review.history"
#: The Review page's downloads: the annotations file as it is, and the readable table of this file's annotated rows.
REVIEW_EXPORT = "review.export"
REVIEW_EXPORT_TABLE = "review.export_table"
#: Review page: one file, or the two runs of the Compare runs page side by side; the effect the paired
#: estimate should be able to decide.
REVIEW_MODE = "review.mode"
REVIEW_PAIR_EFFECT = "review.pair_effect"
#: The two-runs mode's queue (random or active), and the active queue's predictor (a probability column of both
#: runs, ``sample --predictor``) and target number of labels (``sample --n``).
REVIEW_PAIR_QUEUE = "review.pair_queue"
REVIEW_PAIR_PREDICTOR = "review.pair_predictor"
REVIEW_PAIR_TARGET = "review.pair_target"
#: Compare runs page: the new run (its name and bytes or path) and the column matching the runs' rows (kept
#: across pages: the Review page's two-runs mode matches on it too).
COMPARE_NEW_NAME = "compare.new_name"
COMPARE_NEW_RAW = "compare.new_raw"
COMPARE_KEY = "compare.key"
#: The HTML report downloads of the Overview and Compare runs pages.
OVERVIEW_REPORT = "overview.report_download"
COMPARE_REPORT = "compare.report_download"


#: Keys of the pages' other widgets and charts (a chart's key keeps its selection across reruns).
CALIBRATION_CONFUSION = "calibration.confusion"
CALIBRATION_CURVES = "calibration.curves"
CALIBRATION_DECILES = "calibration.deciles"
CALIBRATION_PRESET = "calibration.preset"
CALIBRATION_RELIABILITY = "calibration.reliability"
EXPLORER_BOUNDS = "explorer.bounds"
EXPLORER_POSITION = "explorer.position"
GEOMETRY_CHART = "geometry.chart"
GEOMETRY_TRIANGLE = "geometry.triangle"
JUDGE_RUN = "judge.run"
JUDGE_TEST_CONNECTION = "judge.test_connection"
MODELS_A = "models.a"
MODELS_B = "models.b"
MODELS_PEARSON = "models.pearson"
MODELS_SCATTER = "models.scatter"
MODELS_SPEARMAN = "models.spearman"
OVERVIEW_HISTOGRAM = "overview.histogram"
OVERVIEW_ROC = "overview.roc"
RETRIEVAL_BY_HIT = "retrieval.by_hit"
STRATA_GROUPS = "strata.groups"
STRATA_THETA_QC = "strata.theta_qc"
