"""Pages on a file where some responses copy their context (SGI near 1e8): finite means, readable axes and sliders."""

import numpy as np
import pytest

from dashboard import page
from dashboard.services import calibration_services
from sgi_core.embedding import load_encoder
from sgi_core.io.triples import load_triples
from sgi_core.scoring import score_table
from sgi_core.stats.calibration import calibration_analysis
from sgi_core.stats.thresholds import robust_range
from tests.dashboard.conftest import MODEL, assert_clean, figures, goto, metric, upload
from tests.evaluation.test_degenerate_rows import COPIED, with_copied_context


@pytest.fixture(scope="module")
def copied_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("copied") / "copied.csv"
    with_copied_context(path)
    return path


@pytest.fixture(scope="module")
def copied_scores(copied_csv):
    return score_table(load_triples(copied_csv), load_encoder(MODEL))


def log_scale(app, name: str) -> None:
    """Turn the sidebar's log-scale switch on (AppTest lists no sidebar after a page switch) and rerun the page."""
    app.session_state[page.LOG_AXES] = True
    goto(app, name)
    assert_clean(app)


def test_strata_tables_leave_the_copied_rows_out_of_the_means_and_say_so(app, copied_csv, copied_scores):
    upload(app, "copied.csv", copied_csv.read_bytes())
    goto(app, "strata")
    assert_clean(app)
    shown = app.dataframe[0].value
    ordinary = copied_scores["sgi_status"] == "ok"
    assert np.isfinite(shown["mean SGI grounded"]).all() and (shown["mean SGI grounded"] < 10).all()
    assert shown["mean SGI grounded"].max() <= copied_scores.loc[ordinary, "sgi"].max()
    assert shown["degenerate"].sum() == len(COPIED)
    assert all(c.startswith("[") for c in shown["AUROC 95% CI"])
    assert any(f"The {len(COPIED)} rows with degenerate geometry" in c.value for c in app.caption)
    # Strata bars carry their intervals as whiskers.
    bars = figures(app)[0]["data"]
    assert all(bar["error_y"]["type"] == "data" and "arrayminus" in bar["error_y"] for bar in bars)


def test_undefined_cells_read_n_a_not_none(app, copied_csv):
    upload(app, "copied.csv", copied_csv.read_bytes())
    goto(app, "strata")
    undefined = [t for t in app.dataframe if t.value.isna().any().any()]
    assert undefined  # the short-response stratum has one hallucinated row: no d there
    assert {t.proto.placeholder for t in app.dataframe} == {"n/a"}


def test_calibration_axis_and_slider_span_the_ordinary_scores(app, copied_csv, copied_scores):
    upload(app, "copied.csv", copied_csv.read_bytes())
    goto(app, "calibration")
    assert_clean(app)
    slider = app.slider(key="calibration.threshold")
    ordinary = copied_scores.loc[copied_scores["sgi_status"] == "ok", "sgi"]
    assert slider.max == pytest.approx(np.quantile(ordinary, calibration_services.THRESHOLD_UPPER_QUANTILE))
    assert slider.min == pytest.approx(copied_scores["sgi"].min())
    (curves,) = [f for f in figures(app) if f["layout"].get("title", {}).get("text", "").startswith("Metrics as")]
    assert curves["layout"]["xaxis"]["range"] == pytest.approx([slider.min, slider.max])
    log_scale(app, "calibration")
    (curves,) = [f for f in figures(app) if f["layout"].get("title", {}).get("text", "").startswith("Metrics as")]
    assert curves["layout"]["xaxis"]["type"] == "log"
    assert curves["layout"]["xaxis"]["range"] == pytest.approx(np.log10([slider.min, slider.max]))


def test_overview_histogram_spans_the_central_scores_on_either_scale(app, copied_csv, copied_scores):
    upload(app, "copied.csv", copied_csv.read_bytes())
    goto(app, "overview")
    ordinary = copied_scores.loc[copied_scores["sgi_status"] == "ok", "sgi"].to_numpy()
    (histogram,) = [f for f in figures(app) if f["layout"].get("title", {}).get("text", "").startswith("SGI by label")]
    span = robust_range(ordinary, coverage=0.99)
    assert histogram["layout"]["xaxis"]["range"] == pytest.approx([span.lo, span.hi])
    assert f"{span.n_below + span.n_above} extreme rows beyond the axis" in histogram["layout"]["title"]["text"]
    log_scale(app, "overview")
    (histogram,) = [f for f in figures(app) if f["layout"].get("title", {}).get("text", "").startswith("SGI by label")]
    logged = robust_range(ordinary, coverage=0.99, log=True)
    assert histogram["layout"]["xaxis"]["range"] == pytest.approx([logged.lo, logged.hi])


def test_calibrator_is_fitted_on_the_ordinary_rows(app, copied_csv, copied_scores):
    upload(app, "copied.csv", copied_csv.read_bytes())
    goto(app, "calibration")
    assert_clean(app)
    ordinary = copied_scores["sgi_status"] == "ok"
    expected = calibration_analysis(copied_scores["label"], copied_scores["sgi"].where(ordinary),
                                               method="platt")
    assert expected.n_fit + expected.n_eval == ordinary.sum()
    assert metric(app, "ECE (10 equal-count bins)") == f"{expected.ece_quantile:.3f}"
    assert metric(app, "Brier score") == f"{expected.brier:.3f}"
    assert any(f"The {len(COPIED)} rows with degenerate geometry are left out of both" in c.value for c in app.caption)
