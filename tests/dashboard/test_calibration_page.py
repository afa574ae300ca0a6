"""Calibration session page: slider, presets and session load give sgi_core's numbers."""

import json

import numpy as np
import pytest

from sgi_core.policy.sessions import load_session, new_session, session_to_json
from sgi_core.stats.calibration import calibration_analysis
from sgi_core.stats.thresholds import choose_threshold, threshold_metrics
from tests.dashboard.conftest import MODEL, assert_clean, figures, goto, metric

SLIDER = "calibration.threshold"


@pytest.fixture
def page(app):
    return goto(app, "calibration")


def shown_metrics(at) -> dict:
    return {name: metric(at, name) for name in ("Precision", "Recall", "F1", "Flag rate", "Accuracy")}


def expected_metrics(frame, threshold) -> dict:
    m = threshold_metrics(frame["label"], frame["sgi"], threshold)
    return {"Precision": f"{m.precision:.3f}", "Recall": f"{m.recall:.3f}", "F1": f"{m.f1:.3f}",
            "Flag rate": f"{m.flag_rate:.3f}", "Accuracy": f"{m.accuracy:.3f}"}


def test_calibrator_numbers_are_sgi_core(page, sample_scores):
    fitted = calibration_analysis(sample_scores["label"], sample_scores["sgi"], method="platt")
    assert metric(page, "ECE (10 equal-count bins)") == f"{fitted.ece_quantile:.3f}"
    assert metric(page, "Brier score") == f"{fitted.brier:.3f}"
    page.radio(key="calibration.method").set_value("isotonic").run()
    assert_clean(page)
    isotonic = calibration_analysis(sample_scores["label"], sample_scores["sgi"], method="isotonic")
    assert metric(page, "ECE (10 equal-count bins)") == f"{isotonic.ece_quantile:.3f}"
    reliability = figures(page)[0]["data"][-1]
    np.testing.assert_allclose(reliability["y"], isotonic.bins.prob_true)


def test_default_threshold_is_youden_and_metrics_follow_the_slider(page, sample_scores):
    youden = choose_threshold(sample_scores["label"], sample_scores["sgi"], method="youden")
    assert page.slider(key=SLIDER).value == pytest.approx(youden.threshold)
    assert shown_metrics(page) == expected_metrics(sample_scores, youden.threshold)

    page.slider(key=SLIDER).set_value(1.05).run()
    assert_clean(page)
    assert shown_metrics(page) == expected_metrics(sample_scores, 1.05)
    confusion = threshold_metrics(sample_scores["label"], sample_scores["sgi"], 1.05)
    counts = figures(page)[2]["data"][0]["z"]
    assert counts == [[confusion.tp, confusion.fn], [confusion.fp, confusion.tn]]


@pytest.mark.parametrize("preset, target, field", [("target_recall", 0.9, "calibration.target"),
                                                   ("target_precision", 0.8, "calibration.target"),
                                                   ("cost", 3.0, "calibration.cost_ratio")])
def test_presets_set_the_chosen_threshold(page, sample_scores, preset, target, field):
    page.selectbox(key="calibration.preset").set_value(preset).run()
    page.number_input(key=field).set_value(target).run()
    page.button[0].click().run()
    assert_clean(page)
    kwargs = {"cost_ratio": target} if preset == "cost" else {"target": target}
    choice = choose_threshold(sample_scores["label"], sample_scores["sgi"], method=preset, **kwargs)
    assert page.slider(key=SLIDER).value == pytest.approx(choice.threshold)
    assert shown_metrics(page) == expected_metrics(sample_scores, choice.threshold)


def test_unreachable_target_is_explained_and_threshold_kept(app, sample_scores):
    # Read the sample's labels backwards: low SGI now marks grounded rows, so no threshold is 99% precise.
    goto(app, "data").radio(key="data.label_positive").set_value("hallucinated").run()
    flipped = 1.0 - sample_scores["label"]
    assert choose_threshold(flipped, sample_scores["sgi"], method="target_precision",
                                       target=0.99).metrics is None
    page = goto(app, "calibration")
    before = page.slider(key=SLIDER).value
    page.selectbox(key="calibration.preset").set_value("target_precision").run()
    page.number_input(key="calibration.target").set_value(0.99).run()
    page.button[0].click().run()
    assert not page.exception
    assert page.slider(key=SLIDER).value == before
    assert any("No threshold reaches" in w.value for w in page.warning)


def _session_bytes(frame, *, threshold, method="isotonic", model=MODEL) -> bytes:
    fitted = calibration_analysis(frame["label"], frame["sgi"], method=method)
    return session_to_json(new_session(model=model, calibrator=fitted.calibrator, threshold=threshold, frame=frame))


def test_loading_a_session_applies_its_calibrator_and_threshold(page, sample_scores):
    raw = _session_bytes(sample_scores, threshold=0.95)
    page.file_uploader(key="calibration.session_upload").set_value(("s.json", raw, "application/json"))
    page.run()
    assert_clean(page)
    assert page.slider(key=SLIDER).value == pytest.approx(0.95)
    assert page.radio(key="calibration.method").value == "isotonic"
    assert "Loaded the session" in page.success[-1].value
    assert shown_metrics(page) == expected_metrics(sample_scores, 0.95)
    loaded = load_session(raw)
    assert loaded.threshold == 0.95


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(schema="something-else"), "not a calibration session"),
    (lambda d: d.update(model="mpnet"), "model 'mpnet'"),
    (lambda d: d.pop("threshold"), "the session has missing fields threshold"),
])
def test_a_bad_session_is_refused_and_nothing_changes(page, sample_scores, mutate, message):
    before = page.slider(key=SLIDER).value
    data = json.loads(_session_bytes(sample_scores, threshold=0.95))
    mutate(data)
    page.file_uploader(key="calibration.session_upload").set_value(("s.json", json.dumps(data).encode(), "x"))
    page.run()
    assert not page.exception
    assert message in page.error[0].value
    assert page.slider(key=SLIDER).value == before
    assert page.radio(key="calibration.method").value == "platt"


def test_threshold_reaches_the_overview_histogram(page):
    page.slider(key=SLIDER).set_value(1.1).run()
    goto(page, "overview")
    shapes = figures(page)[0]["layout"]["shapes"]
    assert [s["x0"] for s in shapes] == [1.1]


def test_no_policy_is_offered_for_a_score_near_chance_unless_asked(app):
    import io

    import pandas as pd

    from tests.conftest import SAMPLE_CSV
    from tests.dashboard.conftest import upload

    frame = pd.read_csv(SAMPLE_CSV)
    # Labels drawn at random: SGI cannot separate them, so its AUROC's interval holds 0.5.
    frame["label"] = np.random.default_rng(0).permutation(frame["label"].to_numpy())
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    upload(app, "coin.csv", buffer.getvalue().encode())
    page = goto(app, "calibration")
    assert_clean(page)
    (warning,) = [w.value for w in page.warning if w.value.startswith("No policy is offered")]
    assert "the AUROC of 'sgi' on this file is near chance (its 95% interval holds 0.5)" in warning
    labels = [b.proto.label for b in page.get("download_button")]
    assert "Download the policy (JSON)" not in labels
    page.checkbox(key="calibration.policy_force").check().run()
    assert "Download the policy (JSON)" in [b.proto.label for b in page.get("download_button")]


def test_a_session_tuned_on_other_data_applies_and_says_so(page, sample_scores):
    data = json.loads(_session_bytes(sample_scores, threshold=0.95))
    data["fingerprint"] = "0" * 64
    page.file_uploader(key="calibration.session_upload").set_value(("s.json", json.dumps(data).encode(), "x"))
    page.run()
    assert not page.exception and not page.error
    assert page.slider(key=SLIDER).value == 0.95
    assert any("It was tuned on different data" in s.value for s in page.success)
