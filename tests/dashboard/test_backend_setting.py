"""The sidebar's embedding backend: scores follow it, and a backend a model cannot run is a clear error."""

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard import state
from sgi_core.embedding import load_encoder
from sgi_core.io.triples import load_triples
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import APP, goto, metric

SGI_METRIC = "SGI = θ(r,q) / θ(r,c)"


def open_app(monkeypatch, model: str, backend: str) -> AppTest:
    monkeypatch.setenv("SGI_DASHBOARD_MODEL", model)
    monkeypatch.setenv("SGI_BACKEND", backend)
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.run()
    return at


@pytest.mark.parametrize("starting, expected", [("torch", "torch"), ("", "auto")])
def test_the_sidebar_offers_every_backend_and_starts_at_sgi_backend(monkeypatch, isolated_cache, starting, expected):
    at = open_app(monkeypatch, "hashing", starting)
    assert not at.exception
    (box,) = [s for s in at.selectbox if s.key == state.BACKEND]
    assert box.options == ["auto", "torch", "onnx", "onnx-int8"] and box.value == expected


def test_an_onnx_backend_for_a_model_it_cannot_run_is_an_error_not_a_traceback(monkeypatch, isolated_cache):
    at = open_app(monkeypatch, "hashing", "onnx")
    assert not at.exception, [e.value for e in at.exception]
    assert any("applies to sentence-transformers models" in e.value.replace("\\", "") for e in at.error)


@pytest.mark.slow
def test_the_explorer_shows_the_int8_scores_when_int8_is_chosen(monkeypatch, isolated_cache):
    at = open_app(monkeypatch, "minilm", "onnx-int8")
    assert not at.exception, [e.value for e in at.exception]
    goto(at, "explorer")
    at.number_input(key="explorer.row").set_value(5).run()
    int8 = score_table(load_triples(SAMPLE_CSV), load_encoder("minilm", device="cpu", backend="onnx-int8"))
    row = int8[int8["input_row"] == 5].iloc[0]
    assert metric(at, SGI_METRIC) == f"{row['sgi']:.4f}"
    torch_row = score_table(load_triples(SAMPLE_CSV), load_encoder("minilm", device="cpu", backend="torch"))
    # int8 really moved this row's score, so the page could not have shown the torch one by chance.
    assert not np.isclose(torch_row.loc[torch_row["input_row"] == 5, "sgi"].iloc[0], row["sgi"], atol=5e-5)
