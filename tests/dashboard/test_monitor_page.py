"""Monitor page: what it shows is sgi_core's monitor_run on the same rows, and its history is the database's."""

import html
import json

import pytest

from dashboard.views import monitor_views
from sgi_core.monitoring.store import default_db_path, policy_runs
from sgi_core.monitoring.summary import monitor_run
from sgi_core.policy.file import policy_to_json
from sgi_core.policy.making import make_policy
from sgi_core.policy.references import feature_label, feature_values
from sgi_core.render import monitor_report
from tests.dashboard.conftest import MODEL, array, assert_clean, figures, goto, metric


@pytest.fixture(scope="module")
def policy(sample_scores):
    scores = sample_scores["sgi"].to_numpy()
    features = {k: v for k, v in feature_values(sample_scores, scores).items() if k != "score"}
    made, _ = make_policy(sample_scores["label"].to_numpy(), scores, model=MODEL,
                          groups=sample_scores["pair_id"].astype(str), features=features)
    return made


def test_the_page_equals_the_library_and_records_the_run(app, sample_scores, policy):
    at = goto(app, "monitor")
    at.file_uploader(key="monitor.policy_upload").set_value(
        ("policy.json", policy_to_json(policy).encode(), "application/json")).run()
    assert_clean(at)
    expected = monitor_run(policy, sample_scores, sample_scores["sgi"].to_numpy(),
                           y_true=sample_scores["label"].to_numpy())
    assert metric(at, "Hallucination rate") == monitor_views.headline_value(expected.headline)
    assert metric(at, "If only the rate changed") == monitor_views.rate_value(expected.corrected)
    assert metric(at, "Flag share (raw)") == f"{expected.corrected.flag_share:.1%}"
    assert metric(at, "Verdict") == expected.status
    shown = at.dataframe[0].value
    assert shown.equals(monitor_views.shift_frame(expected.shift.tests))
    assert len(at.dataframe[1].value) == expected.n_flagged
    assert "no run of this policy is recorded yet" in " ".join(i.value for i in at.info).lower()

    at.button[1].click().run()  # record this run
    assert_clean(at)
    (record,) = policy_runs(default_db_path(), expected.policy_id)
    assert record.summary["corrected"] == json.loads(json.dumps(expected.to_dict()))["corrected"]
    history = figures(at)[-1]
    rate_trace = next(trace for trace in history["data"] if trace["name"].startswith("corrected rate"))
    assert rate_trace["x"] == [str(record.id)]
    assert array(rate_trace["y"]).tolist() == pytest.approx([expected.corrected.estimate], nan_ok=True)


def test_the_review_button_opens_the_seeded_random_sample(app, policy):
    at = goto(app, "monitor")
    at.file_uploader(key="monitor.policy_upload").set_value(
        ("policy.json", policy_to_json(policy).encode(), "application/json")).run()
    at.button[0].click().run()
    assert not at.exception
    assert at.session_state["review.strategy"] == "random" and at.session_state["review.seed"] == 0
    assert at.selectbox(key="review.strategy").value == "random"


def test_a_policy_that_is_not_one_is_refused_with_its_file_named(app):
    at = goto(app, "monitor")
    at.file_uploader(key="monitor.policy_upload").set_value(("bad.json", b'{"schema": "x"}', "application/json")).run()
    (shown,) = [e.value for e in at.error]
    assert "not a policy this tool reads" in shown and "file 'bad\\.json'" in shown  # Markdown-escaped


def test_the_report_holds_the_pages_words_and_tables(app, sample_scores, policy):
    at = goto(app, "monitor")
    at.file_uploader(key="monitor.policy_upload").set_value(
        ("policy.json", policy_to_json(policy).encode(), "application/json")).run()
    assert "Download the report (HTML)" in [b.proto.label for b in at.get("download_button")]
    expected = monitor_run(policy, sample_scores, sample_scores["sgi"].to_numpy(),
                           y_true=sample_scores["label"].to_numpy())
    text = monitor_report.monitor_report(expected, monitor_views.history_frame([]), {"file": "<b>x</b>.csv"})
    assert html.escape(monitor_views.rate_sentence(expected)) in text and "&lt;b&gt;x&lt;/b&gt;.csv" in text
    assert all(f"<td>{feature_label(t.feature)}</td>" in text for t in expected.shift.tests
               if t.feature != "score")  # the score's label holds an apostrophe, escaped by pandas its own way
    assert "<b>x</b>" not in text


@pytest.mark.parametrize("change, message", [
    ({"context_strategy": "mean"}, "the contexts were embedded with strategy joined, the policy's with mean"),
    ({"model_backend": "onnx-int8"}, "the policy's with onnx-int8: int8 weights move SGI"),
    ({"model_precision": "fp16"}, "the policy's at fp16: a different precision moves SGI"),
])
def test_the_page_refuses_scores_the_command_line_refuses(app, policy, change, message):
    import dataclasses

    at = goto(app, "monitor")
    other = dataclasses.replace(policy, **change)
    at.file_uploader(key="monitor.policy_upload").set_value(
        ("policy.json", policy_to_json(other).encode(), "application/json")).run()
    (shown,) = [e.value for e in at.error]
    assert message in shown.replace("\\", "") and not [m for m in at.metric if m.label == "Verdict"]


def test_a_damaged_row_of_the_history_is_named_and_the_others_drawn(app, sample_scores, policy):
    import sqlite3
    from contextlib import closing

    from sgi_core.monitoring.store import append_run

    expected = monitor_run(policy, sample_scores, sample_scores["sgi"].to_numpy(),
                           y_true=sample_scores["label"].to_numpy())
    ids = [append_run(default_db_path(), expected, file=f"{name}.csv", file_sha256="x", model=MODEL,
                      context_strategy="joined") for name in ("good", "broken")]
    with closing(sqlite3.connect(default_db_path())) as raw:
        raw.execute("UPDATE runs SET summary = '{cut' WHERE id = ?", (ids[1],))
        raw.commit()
    at = goto(app, "monitor")
    at.file_uploader(key="monitor.policy_upload").set_value(
        ("policy.json", policy_to_json(policy).encode(), "application/json")).run()
    assert_clean(at)
    warned = " ".join(w.value for w in at.warning)
    assert f"Skipped a damaged row of the history: run {ids[1]}: its summary is not JSON" in warned.replace("\\", "")
    history = figures(at)[-1]
    rate_trace = next(trace for trace in history["data"] if trace["name"].startswith("corrected rate"))
    assert rate_trace["x"] == [str(ids[0])]
