"""The annotations a scored window becomes, and ``annotate --dry-run``, which prints them and sends nothing.

``policy.json`` in tests/fixtures/phoenix was written by ``gate --write-policy`` on 300 labelled rows
(threshold 1.1309, held-out AUROC 0.88 [0.83, 0.93], model minilm).
"""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.errors import SGIInputError
from sgi_core.policy.file import load_policy
from sgi_core.tracing.annotation_plan import monitor_annotation, plan_annotations
from tests.conftest import REPO

POLICY = REPO / "tests" / "fixtures" / "phoenix" / "policy.json"
THRESHOLD = 1.1309055926724934


def window() -> pd.DataFrame:
    return pd.DataFrame({"trace_id": ["t1", "t2", "t3", "t4"], "span_id": ["s1", "s2", "s3", ""],
                         "sgi": [1.25, 0.875, np.nan, 1.0]})


def test_each_scored_root_span_gets_its_score_under_the_run_id():
    plan = plan_annotations(window(), run_id="run-7")
    assert [a["span_id"] for a in plan.span_annotations] == ["s1", "s2"]
    assert plan.not_scored == (3,) and plan.no_span == (4,) and plan.trace_annotations == ()
    assert plan.span_annotations[0] == {
        "span_id": "s1", "name": "sgi", "annotator_kind": "CODE", "identifier": "run-7",
        "result": {"score": 1.25, "explanation": "sgi = 1.25 (higher = grounded); no policy given, so no threshold"},
        "metadata": {"run_id": "run-7", "score_column": "sgi", "trace_id": "t1"}}
    assert [c["name"] for c in plan.configs] == ["sgi"]


@pytest.mark.parametrize(("model", "labels", "state"), [
    ("minilm", ["not flagged", "flagged"], "validated: held-out AUROC 0.88 [0.83, 0.93] recorded in the policy"),
    ("hashing", ["at or above threshold", "below threshold"],
     "not validated: the policy was validated with model 'minilm', not 'hashing'"),
])
def test_a_policy_labels_by_its_threshold_and_says_whether_it_validates_the_score(model, labels, state):
    plan = plan_annotations(window(), run_id="r", policy=load_policy(POLICY), model=model)
    assert [a["result"]["label"] for a in plan.span_annotations] == labels
    assert plan.span_annotations[1]["result"]["explanation"] == (
        f"sgi = 0.875, below the policy's threshold 1.131; the policy's score is {state}")
    assert plan.span_annotations[0]["metadata"]["threshold"] == THRESHOLD


def test_a_monitor_result_goes_on_every_trace_once():
    monitor = {"status": "over limit", "corrected_rate": {"estimate": 0.25, "ci": [0.125, 0.5]}}
    frame = pd.concat([window(), window().head(1)], ignore_index=True)
    plan = plan_annotations(frame, run_id="r", monitor=monitor)
    assert [a["trace_id"] for a in plan.trace_annotations] == ["t1", "t2", "t3", "t4"]
    assert plan.trace_annotations[0]["result"] == {
        "label": "over limit", "score": 0.25,
        "explanation": "monitor: over limit; corrected hallucination rate 0.250, 95% interval [0.125, 0.500]"}
    assert [c["name"] for c in plan.configs] == ["sgi", "sgi_monitor"]
    undefined = monitor_annotation("t1", {"status": "unverified", "corrected_rate": {"estimate": None,
                                                                                     "ci": [None, None]}}, "r")
    assert "score" not in undefined["result"] and "rate n/a, 95% interval [n/a, n/a]" in \
        undefined["result"]["explanation"]


@pytest.mark.parametrize(("change", "kwargs", "message"), [
    (lambda f: f.drop(columns="span_id"), {}, r"the file has no span_id column .*Annotate a file that `pull` wrote"),
    (lambda f: f, {"score": "judge_faithfulness"}, "the file has no judge_faithfulness column"),
    (lambda f: f.assign(sgi=["1.5", "x", "", "0.5"]), {}, r"1 cells of the score are not numbers .*row 2"),
    (lambda f: f, {"run_id": " "}, "the run id is empty"),
    (lambda f: f.assign(other=1.0), {"score": "other", "policy": "policy"}, "the policy holds the score 'sgi', not"),
])
def test_what_cannot_be_annotated_is_refused(change, kwargs, message):
    options = {"run_id": "r", **kwargs}
    if options.get("policy") == "policy":
        options["policy"] = load_policy(POLICY)
    with pytest.raises(SGIInputError, match=message):
        plan_annotations(change(window()), **options)


def test_a_monitor_file_that_is_not_a_monitor_result_is_refused():
    with pytest.raises(SGIInputError, match="has no status or corrected_rate"):
        plan_annotations(window(), run_id="r", monitor={"status": "holds"})


def test_a_dry_run_prints_the_payload_and_sends_nothing(tmp_path, capsys):
    window().to_csv(tmp_path / "scored.csv", index=False)
    # Nothing listens on port 9: a request would fail the command.
    assert main(["annotate", str(tmp_path / "scored.csv"), "--phoenix", "http://127.0.0.1:9", "--project", "p",
                 "--run-id", "r", "--dry-run"]) == 0
    out = capsys.readouterr()
    payload = json.loads(out.out)
    assert [a["span_id"] for a in payload["span_annotations"]] == ["s1", "s2"]
    assert payload["trace_annotations"] == [] and payload["annotation_configs"][0]["name"] == "sgi"
    assert "warning: 1 row with no span_id, not annotated (rows 4)" in out.err
    assert "dry run: 2 span and 0 trace annotations not sent" in out.err


def test_annotate_without_a_url_sends_nothing_and_exits_2(tmp_path, capsys):
    window().to_csv(tmp_path / "scored.csv", index=False)
    assert main(["annotate", str(tmp_path / "scored.csv"), "--phoenix", "", "--project", "p", "--run-id", "r"]) == 2
    assert "error: no server URL given" in capsys.readouterr().err


@pytest.mark.parametrize(("text", "message"), [("[1, 2]", "the monitor result is not a JSON object"),
                                               ("{", "monitor.json")])
def test_annotate_refuses_a_monitor_file_it_cannot_read_with_exit_2(tmp_path, capsys, text, message):
    window().to_csv(tmp_path / "scored.csv", index=False)
    (tmp_path / "monitor.json").write_text(text)
    assert main(["annotate", str(tmp_path / "scored.csv"), "--phoenix", "http://127.0.0.1:9", "--project", "p",
                 "--run-id", "r", "--monitor", str(tmp_path / "monitor.json"), "--dry-run"]) == 2
    assert message in capsys.readouterr().err
