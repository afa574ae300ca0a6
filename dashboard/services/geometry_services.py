"""Cached calls behind the Geometry page: the exact canonical triangle and the 2-D projection of sampled triples."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import state
from dashboard.services import disk_cache, model_encoder
from sgi_core.columns import is_ordinary
from sgi_core.frames import take_rows
from sgi_core.io.triples import TripleTable
from sgi_core.projection import TripleProjection, project_triples, sample_rows, warm_up_umap
from sgi_core.render.lines import projection_note as projection_note  # the Geometry page words its map
from sgi_core.scoring import embed_table


@st.cache_resource(show_spinner=False)
def umap_warm_up() -> threading.Thread:
    """UMAP's numba compile, started once per process in a background thread (:func:`sgi_core.projection.warm_up_umap`).

    The Geometry page starts it on opening; its canonical triangle and the PCA map
    come first, so the compile (about 25 s) is usually over before a UMAP map is asked for.
    """
    thread = threading.Thread(target=warm_up_umap, name="umap-warm-up", daemon=True)
    thread.start()
    return thread


@st.cache_data(show_spinner=False, max_entries=16)
def projection(key: state.DataKey, model_name: str, method: str, size: int, _table: TripleTable,
               _frame: pd.DataFrame) -> tuple[np.ndarray, TripleProjection]:
    """Positions in the frame of up to ``size`` sampled rows with an ordinary SGI, and their 2-D projection.

    Only the sampled rows are embedded (from the disk cache where seen before): an
    already scored file of millions of rows costs ``size`` triples here, not its length.
    """
    ordinary = np.flatnonzero(is_ordinary(_frame["sgi_status"]))
    rows = ordinary[sample_rows(len(ordinary), size)]
    q_emb, c_emb, r_emb, _ = embed_table(_table.subset(rows), model_encoder(model_name),
                                         cache=disk_cache(model_name))
    return rows, project_triples(q_emb, c_emb, r_emb, method=method)


#: SGI values whose iso-lines the canonical triangle draws.
TRIANGLE_LEVELS = (0.5, 0.8, 1.0, 1.25, 2.0)
#: Height, in units of theta(q,c), of the SGI = 1 line; the figure shows the part near the points.
TRIANGLE_LINE_HEIGHT = 10.0


@st.cache_data(show_spinner=False, max_entries=16)
def canonical_triangle(key: state.DataKey, model_name: str, size: int,
                       _frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Positions in the frame of the rows :func:`projection` samples for ``size``, and each response's place.

    Every triple is drawn exactly from its three angles, scaled so that c is at (1, 0)
    (:func:`sgi_core.geometry.canonical_triangle` with ``normalize=True``); the second
    array holds r's (x, y) per row.
    """
    from sgi_core.geometry import canonical_triangle as triangle

    ordinary = np.flatnonzero(is_ordinary(_frame["sgi_status"]))
    rows = ordinary[sample_rows(len(ordinary), size)]
    angles = take_rows(_frame, rows)
    _, r_xy = triangle(angles["theta_qc"], angles["theta_rq"], angles["theta_rc"], normalize=True)
    return rows, r_xy


def sgi_isolines() -> dict:
    """Points of the :data:`TRIANGLE_LEVELS` iso-lines in the plane of the triangle with c at (1, 0)."""
    from sgi_core.geometry import sgi_isolines as isolines

    return isolines(TRIANGLE_LEVELS, theta_qc=1.0, y_max=TRIANGLE_LINE_HEIGHT)
