"""Every page on the bundled sample: it renders, and the numbers it shows are sgi_core's."""

import numpy as np
import pandas as pd
import pytest

from sgi_core import evaluation
from sgi_core.embedding import load_encoder
from sgi_core.geometry import sgi_bounds, triple_angles
from sgi_core.io.triples import load_triples
from sgi_core.projection import project_triples, sample_rows
from sgi_core.render import figures as charts
from sgi_core.scoring import score_table
from sgi_core.stats.calibration import calibration_analysis
from sgi_core.stats.correlation import cross_model_agreement
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import MODEL, PAGES, app_n_boot, array, assert_clean, figures, goto, metric, upload

SAMPLE = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
CHART_PAGES = ("overview", "strata", "calibration", "geometry", "explorer")


@pytest.fixture(scope="module")
def sample_report(sample_scores):
    return evaluation.evaluate(sample_scores, n_boot=app_n_boot())


def test_every_page_renders_without_error(app):
    for page in PAGES:
        goto(app, page)
        assert_clean(app)
        assert app.title[0].value, page
        if page in CHART_PAGES:
            assert figures(app), f"no chart on the {page} page"


def test_data_page_reports_the_validated_table(app, sample_scores):
    assert metric(app, "Rows read") == f"{len(sample_scores):,}"
    assert metric(app, "Rows that cannot be scored") == "0"
    assert [s.value for s in app.selectbox if s.key.startswith("data.mapping.")] == [
        "question", "context", "response", "label"]
    assert app.multiselect(key="data.models").value == [MODEL]


def test_overview_numbers_are_the_evaluation_report(app, sample_report):
    goto(app, "overview")
    es, roc = sample_report.effect_size, sample_report.roc
    assert metric(app, "Labelled grounded") == f"{sample_report.n_valid:,}"
    assert metric(app, "Labelled hallucinated") == f"{sample_report.n_halluc:,}"
    assert metric(app, "Mean SGI, grounded") == f"{es.mean_valid:.3f}"
    assert metric(app, "Mean SGI, hallucinated") == f"{es.mean_halluc:.3f}"
    assert metric(app, "Cohen's d") == f"{es.cohens_d:+.2f}"
    assert metric(app, "AUROC") == f"{roc.auroc:.3f}"
    assert any(f"AUROC [{roc.auroc_ci[0]:.3f}, {roc.auroc_ci[1]:.3f}]" in c.value for c in app.caption)
    roc_figure = figures(app)[1]
    names = [trace["name"] for trace in roc_figure["data"]]
    assert f"SGI (AUROC {roc.auroc:.3f})" in names
    for name, baseline in sample_report.baselines.items():
        assert f"{charts.BASELINE_NAMES[name]} (AUROC {baseline.auroc:.3f})" in names
    table = app.dataframe[0].value.set_index("score")
    assert table.loc["SGI", "AUROC"] == roc.auroc
    assert table.loc[charts.BASELINE_NAMES["theta_rq"], "AUROC"] == sample_report.baselines["theta_rq"].auroc
    assert any(sample_report.beyond_length.verdict in c.value.replace("\\", "") for c in app.caption)


def test_strata_tables_are_the_evaluation_report(app, sample_report):
    goto(app, "strata")
    shown = app.dataframe[0].value
    expected = sample_report.theta_qc_strata.to_frame()
    np.testing.assert_allclose(shown["Cohen's d"], expected["cohens_d"])
    np.testing.assert_allclose(shown["AUROC"], expected["auroc"])
    np.testing.assert_allclose(shown["from"], expected["lo"])
    assert shown["rows"].tolist() == expected["n"].tolist()
    assert [t.label for t in app.tabs] == ["response length", "question length", "context length"]
    response = sample_report.strata_by_name("response").to_frame()
    np.testing.assert_allclose(app.dataframe[1].value["AUROC"], response["auroc"])


def map_figure(app) -> dict:
    """The Geometry page's PCA / UMAP map (its second tab; the canonical triangle is the first)."""
    return figures(app)[1]


def test_geometry_plots_sgi_core_projection(app, sample_scores):
    goto(app, "geometry")
    figure = map_figure(app)
    by_name = {trace["name"]: trace for trace in figure["data"] if trace.get("showlegend") is not False}
    by_name.update({trace["name"]: trace for trace in figure["data"] if trace.get("showlegend") is False})
    assert {by_name[role]["marker"]["symbol"] for role in ("question", "context", "response")} == {
        "circle", "square", "diamond"}
    encoder = load_encoder(MODEL)
    rows = sample_rows(len(sample_scores), app.number_input(key="geometry.size").value)
    picked = sample_scores.iloc[rows]
    expected = project_triples(*(encoder.encode(picked[role].tolist()) for role in ("question", "context", "response")))
    np.testing.assert_allclose(array(by_name["response"]["x"]), expected.response[:, 0], atol=1e-9)
    assert array(by_name["response"]["customdata"]).tolist() == picked["input_row"].tolist()
    assert len(array(by_name["triple (q - r - c)"]["x"])) == 4 * len(rows)


def test_geometry_colour_by_sgi_uses_the_scores(app, sample_scores):
    goto(app, "geometry")
    app.radio(key="geometry.colour").set_value("sgi").run()
    assert_clean(app)
    (response,) = [t for t in map_figure(app)["data"] if t["name"] == "response" and t.get("showlegend") is False]
    scores = sample_scores.set_index("input_row").loc[array(response["customdata"]), "sgi"]
    np.testing.assert_allclose(array(response["marker"]["color"]), scores.to_numpy())


def test_explorer_shows_the_row_and_follows_edits(app, sample_scores):
    goto(app, "explorer")
    app.number_input(key="explorer.row").set_value(5).run()
    row = sample_scores[sample_scores["input_row"] == 5].iloc[0]
    assert app.text_area(key="explorer.response").value == row["response"]
    assert metric(app, "SGI = θ(r,q) / θ(r,c)") == f"{row['sgi']:.4f}"

    edited = row["context"].split(".")[0]
    app.text_area(key="explorer.response").input(edited).run()
    assert_clean(app)
    encoder = load_encoder(MODEL)
    angles = triple_angles(*(encoder.encode([text]) for text in (row["question"], row["context"], edited)))
    lower, upper = sgi_bounds(angles.theta_qc, angles.theta_rc)
    assert metric(app, "SGI = θ(r,q) / θ(r,c)") == f"{angles.sgi[0]:.4f}"
    assert metric(app, "θ(r,c) response-context") == f"{angles.theta_rc[0]:.4f} rad"
    captions = [c.value for c in app.main.caption]
    assert any(f"[{lower[0]:.3f}, {upper[0]:.3f}]" in c for c in captions)
    scored = sample_scores["sgi"].to_numpy()
    percentile = 100 * np.mean(scored[~np.isnan(scored)] <= angles.sgi[0])
    assert f"that of {percentile:.1f}% of the scored rows" in captions[-1]


def test_explorer_probability_uses_the_calibrator(app, sample_scores):
    goto(app, "explorer")
    row = sample_scores.iloc[0]
    fitted = calibration_analysis(sample_scores["label"], sample_scores["sgi"], method="platt")
    assert metric(app, "P(grounded)") == f"{fitted.calibrator.predict([row['sgi']])[0]:.3f}"


def test_explorer_empty_response_is_explained(app):
    goto(app, "explorer")
    app.text_area(key="explorer.response").input("   ").run()
    assert not app.exception
    assert "the response is empty" in app.error[0].value


def test_models_page_asks_for_a_second_model(app):
    goto(app, "models")
    assert_clean(app)
    assert "Choose two or more models" in app.info[0].value


def test_models_page_compares_two_models(app):
    app.session_state["data.models"] = [MODEL, "hashing-64"]
    goto(app, "models")
    assert_clean(app)
    table = load_triples(SAMPLE_CSV)
    frames = {name: score_table(table, load_encoder(name)) for name in (MODEL, "hashing-64")}
    shown = app.dataframe[0].value.set_index("model")
    for name, frame in frames.items():
        report = evaluation.evaluate(frame)
        assert shown.loc[name, "AUROC"] == pytest.approx(report.roc.auroc)
        assert shown.loc[name, "Cohen's d"] == pytest.approx(report.effect_size.cohens_d)
    agreement = cross_model_agreement({name: f["sgi"] for name, f in frames.items()})
    assert metric(app, "Mean Pearson r between models") == f"{agreement.mean_offdiag_pearson:.3f}"
    heatmap = figures(app)[0]["data"][0]
    np.testing.assert_allclose(array(heatmap["z"]), agreement.pearson)
    scatter = figures(app)[2]
    assert sum(len(array(t["x"])) for t in scatter["data"]) == len(table.frame)


def test_geometry_switches_to_webgl_for_large_samples(app):
    big = pd.concat([SAMPLE.assign(response=SAMPLE["response"] + f" ({copy})") for copy in range(2)],
                    ignore_index=True)
    upload(app, "big.csv", big.to_csv(index=False).encode())
    goto(app, "geometry")
    app.number_input(key="geometry.size").set_value(len(big)).run()
    assert_clean(app)
    types = {trace["type"] for trace in map_figure(app)["data"] if trace.get("showlegend") is False}
    assert types == {"scattergl"}
    app.number_input(key="geometry.size").set_value(100).run()
    types = {trace["type"] for trace in map_figure(app)["data"] if trace.get("showlegend") is False}
    assert types == {"scatter"}


@pytest.mark.slow
def test_geometry_umap_on_request(app, sample_scores):
    goto(app, "geometry")
    app.number_input(key="geometry.size").set_value(60).run()
    app.radio(key="geometry.method").set_value("umap").run(timeout=300)
    assert_clean(app)
    figure = map_figure(app)
    assert figure["layout"]["title"]["text"].startswith("UMAP of question, context and response")
    (response,) = [t for t in figure["data"] if t["name"] == "response" and t.get("showlegend") is False]
    assert len(array(response["x"])) == 60
    assert "compiled in the background when this page first opens" in app.radio(key="geometry.method").help
