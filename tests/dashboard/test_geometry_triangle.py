"""Geometry page, canonical triangle view: the points drawn are sgi_core's exact triangles of the sampled rows."""

import numpy as np
import pytest

from sgi_core.embedding import load_encoder
from sgi_core.geometry import canonical_triangle, sgi_isolines
from sgi_core.projection import project_triples
from tests.dashboard.conftest import MODEL, array, assert_clean, figures, goto

LEVELS = (0.5, 0.8, 1.0, 1.25, 2.0)


def _response_trace(figure: dict) -> dict:
    (trace,) = [t for t in figure["data"] if t["name"] == "response" and t.get("showlegend") is False]
    return trace


@pytest.fixture
def geometry(app):
    goto(app, "geometry")
    assert_clean(app)
    return app


def test_triangle_is_the_first_view_and_draws_the_exact_triangles(geometry, sample_scores):
    assert [tab.label for tab in geometry.tabs] == ["Canonical triangle (exact)", "PCA / UMAP map"]
    triangle, projection_map = figures(geometry)[:2]
    assert triangle["layout"]["title"]["text"].startswith("Canonical triangle")
    response = _response_trace(triangle)
    rows = array(response["customdata"])
    # Same triples as the map below, sampled from the rows with an ordinary SGI.
    assert rows.tolist() == array(_response_trace(projection_map)["customdata"]).tolist()
    assert len(rows) == geometry.number_input(key="geometry.size").value
    picked = sample_scores.set_index("input_row").loc[rows]
    assert (picked["sgi_status"] == "ok").all()
    _, expected = canonical_triangle(picked["theta_qc"], picked["theta_rq"], picked["theta_rc"], normalize=True)
    drawn = np.column_stack([array(response["x"]), array(response["y"])])
    np.testing.assert_allclose(drawn, expected, atol=1e-12)
    # Independently of the library: r's distances to q (origin) and c (1, 0) are the angles over theta_qc.
    qc = picked["theta_qc"].to_numpy()
    np.testing.assert_allclose(np.hypot(*drawn.T), picked["theta_rq"].to_numpy() / qc, rtol=1e-9)
    np.testing.assert_allclose(np.hypot(drawn[:, 0] - 1.0, drawn[:, 1]), picked["theta_rc"].to_numpy() / qc,
                               rtol=1e-9, atol=1e-9)
    grounded = picked["label"].to_numpy() == 1.0
    assert set(np.asarray(response["marker"]["color"])[grounded]) == {"#1b9e77"}
    assert set(np.asarray(response["marker"]["color"])[~grounded]) == {"#d95f02"}


def test_iso_lines_are_drawn_and_labelled(geometry):
    triangle = figures(geometry)[0]
    lines = {t["name"]: t for t in triangle["data"] if t["name"].startswith("SGI = ")}
    expected = sgi_isolines(LEVELS, theta_qc=1.0, y_max=10.0)
    assert list(lines) == [f"SGI = {level:g}" for level in LEVELS]
    for level, points in expected.items():
        line = lines[f"SGI = {level:g}"]
        np.testing.assert_allclose(np.column_stack([array(line["x"]), array(line["y"])]), points)
        assert [t for t in line["text"] if t] == [f"SGI = {level:g}"]
    (q_and_c,) = [t for t in triangle["data"] if t["name"] == "q and c"]
    assert (array(q_and_c["x"]).tolist(), array(q_and_c["y"]).tolist()) == ([0.0, 1.0], [0.0, 0.0])


def test_caption_names_the_pca_variance_of_the_sample(geometry, sample_scores):
    rows = array(_response_trace(figures(geometry)[0])["customdata"])
    picked = sample_scores.set_index("input_row").loc[rows]
    encoder = load_encoder(MODEL)
    pca = project_triples(*(encoder.encode(picked[role].tolist()) for role in ("question", "context", "response")))
    first, second = pca.explained_variance_ratio
    caption = next(c.value for c in geometry.caption if c.value.startswith("Exact, not projected"))
    assert f"keeps only {first:.0%} and {second:.0%} of the variance" in caption
    assert "grounded responses lean toward c" in caption
    assert "SGI = 0.5, 0.8, 1, 1.25, 2" in caption


def test_smaller_sample_draws_fewer_triangles(geometry, sample_scores):
    geometry.number_input(key="geometry.size").set_value(40).run()
    assert_clean(geometry)
    assert len(array(_response_trace(figures(geometry)[0])["customdata"])) == 40
    caption = next(c.value for c in geometry.caption if c.value.startswith("Exact, not projected"))
    assert f"40 of {len(sample_scores):,} rows drawn" in caption
