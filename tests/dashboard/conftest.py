"""AppTest harness: the dashboard run in-process with the deterministic hashing encoder."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard.services.resamples import REPORT_N_BOOT, app_resamples
from sgi_core.embedding import load_encoder
from sgi_core.io.triples import load_triples
from sgi_core.scoring import score_table
from tests.conftest import REPO, SAMPLE_CSV

APP = REPO / "dashboard" / "app.py"
MODEL = "hashing"
PAGES = ("data", "overview", "strata", "calibration", "geometry", "explorer", "models", "judge", "detectors")


@pytest.fixture
def app(monkeypatch, isolated_cache) -> AppTest:
    """The app opened on its default page (Data, bundled sample) with fresh caches."""
    monkeypatch.setenv("SGI_DASHBOARD_MODEL", MODEL)
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    assert_clean(at)
    return at


@pytest.fixture(scope="module")
def sample_scores():
    """The bundled sample scored by sgi_core directly, for comparison with what the app shows."""
    return score_table(load_triples(SAMPLE_CSV), load_encoder(MODEL))


def app_n_boot(default: int = REPORT_N_BOOT) -> int:
    """The resamples the app makes an interval with whose command-line count is ``default``: expected values use it."""
    return app_resamples(default)


def assert_clean(at: AppTest) -> None:
    """No exception box and no error message on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, label: str) -> str:
    (found,) = [m.value for m in at.metric if m.label == label]
    return found


def figures(at: AppTest) -> list[dict]:
    """Plotly figures on the page, as the JSON sent to the browser."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def upload(at: AppTest, name: str, content: bytes) -> AppTest:
    """Upload a file on the Data page."""
    goto(at, "data")
    at.file_uploader(key="data.upload").set_value((name, content, "application/octet-stream"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def array(value) -> np.ndarray:
    """A figure field as an array; plotly sends numeric arrays as base64 ``bdata``."""
    if isinstance(value, dict) and "bdata" in value:
        out = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        return out.reshape([int(n) for n in str(value["shape"]).split(",")]) if "shape" in value else out
    return np.asarray(value)
