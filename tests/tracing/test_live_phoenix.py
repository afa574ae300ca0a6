"""Against a real Phoenix server: pull a window exactly, score, annotate, read back, rerun, and the unknown-span path.

Six OpenInference RAG traces are sent through the OpenTelemetry SDK (see conftest.py): four whose root
starts in the window [T0, T1) (one at T0 itself, one with two retriever steps, one with no retriever
step, one that straddles T1: its root starts before T1 and its children after), one starting at T1 and
one before T0, which the window leaves out.
"""

import json
from datetime import datetime, timedelta, timezone

import httpx
import pandas as pd
import pytest

from dashboard.views.texts import plain
from sgi_core.cli import main
from sgi_core.tracing import phoenix_pull
from sgi_core.tracing.connection import Connection
from tests.dashboard.conftest import app, metric  # noqa: F401 (the app fixture)
from tests.tracing.conftest import send_traces
from tests.tracing.test_data_page_phoenix import pull

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("phoenix")]

PROJECT = "sgi-live"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
T1 = T0 + timedelta(minutes=10)
MS = 1_000_000


def _ns(when: datetime, offset_ns: int = 0) -> int:
    return int(when.timestamp()) * 10**9 + offset_ns


#: name -> the trace sent; the window holds a, b, c and f.
TRACES = {
    "a": {"question": "Who wrote Hamlet?", "json_input": True, "start_ns": _ns(T0),
          "retrievals": [["Hamlet is a tragedy written by William Shakespeare.", "It was first staged around 1600."]],
          "answer": "Hamlet was written by William Shakespeare."},
    "b": {"question": "What is the capital of France?", "json_input": False, "start_ns": _ns(T0, 60 * 10**9),
          "retrievals": [["Paris is the capital and largest city of France."],
                         ["France is a country in Western Europe.", "Its capital is Paris."]],
          "answer": "The capital of France is Paris."},
    "c": {"question": "How long is the Nile?", "json_input": True, "start_ns": _ns(T1, -10 * MS),
          "child_offset_ns": 20 * MS, "retrievals": [["The Nile is about 6,650 kilometres long."]],
          "answer": "The Nile is roughly 6,650 km long."},
    "d": {"question": "When did the window end?", "json_input": False, "start_ns": _ns(T1),
          "retrievals": [["At T1."]], "answer": "It ended exactly at T1, so it is left out."},
    "e": {"question": "What came before the window?", "json_input": False, "start_ns": _ns(T0, -10**9),
          "retrievals": [["A trace one second early."]], "answer": "A trace started one second before T0."},
    "f": {"question": "How tall is Mount Everest?", "json_input": False, "start_ns": _ns(T0, 120 * 10**9),
          "retrievals": [], "answer": "Mount Everest is about 8,849 metres tall."},
}
IN_WINDOW = ("a", "b", "c", "f")


@pytest.fixture(scope="module")
def live(phoenix_server):
    """The server with the six traces stored: name -> {"trace_id", "span_id"} of its root."""
    ids = send_traces(phoenix_server, PROJECT, list(TRACES.values()))
    return phoenix_server, dict(zip(TRACES, ids))


def _pull(url, out, *window):
    return main(["pull", "phoenix", url, "--project", PROJECT, *window, "-o", str(out)])


def _window():
    return ("--since", T0.isoformat(), "--until", T1.isoformat())


def test_pull_returns_every_trace_of_the_window_exactly(live, tmp_path, capsys):
    server, ids = live
    assert _pull(server.url, tmp_path / "window.parquet", *_window()) == 0
    err = capsys.readouterr().err
    frame = pd.read_parquet(tmp_path / "window.parquet")
    got = {r.trace_id: (r.span_id, r.question, list(r.context), r.response) for r in frame.itertuples()}
    assert got == {ids[name]["trace_id"]: (ids[name]["span_id"], TRACES[name]["question"],
                                           [d for step in TRACES[name]["retrievals"] for d in step],
                                           TRACES[name]["answer"]) for name in IN_WINDOW}
    assert f"4 traces in the window, 4 rows, 1 without a context ({ids['f']['trace_id']})" in err


def test_pages_and_batches_of_two_read_the_same_rows(live, monkeypatch):
    server, ids = live
    with Connection(server.url) as connection:
        whole = phoenix_pull.pull_phoenix(connection, PROJECT)
        monkeypatch.setattr(phoenix_pull, "PAGE_LIMIT", 2)
        monkeypatch.setattr(phoenix_pull, "TRACE_IDS_PER_REQUEST", 2)
        before = connection.n_requests
        paged = phoenix_pull.pull_phoenix(connection, PROJECT)
        # Three pages of roots at least, then three batches of two traces (5 to 7 spans), three pages or more each.
        assert connection.n_requests - before >= 3 + 3 * 3
    assert whole.n_traces == paged.n_traces == 6 and whole.n_spans == paged.n_spans == 18
    pd.testing.assert_frame_equal(whole.frame.sort_values("trace_id", ignore_index=True),
                                  paged.frame.sort_values("trace_id", ignore_index=True))


def test_an_unknown_project_is_named_with_exit_2(live, tmp_path, capsys):
    server, _ = live
    assert main(["pull", "phoenix", server.url, "--project", "no-such-project", "-o",
                 str(tmp_path / "out.csv")]) == 2
    assert "refused GET /v1/projects/no-such-project/spans (HTTP 404): Project with name no-such-project not found" \
        in capsys.readouterr().err


@pytest.fixture(scope="module")
def scored_window(live, tmp_path_factory):
    """The window pulled, scored with MiniLM, a MiniLM policy, and the monitor's JSON on the window."""
    server, _ = live
    folder = tmp_path_factory.mktemp("scored")
    assert _pull(server.url, folder / "window.parquet", *_window()) == 0
    assert main(["score", str(folder / "window.parquet"), "-o", str(folder / "scored.parquet"), "--model",
                 "minilm"]) == 0
    import numpy as np

    rng = np.random.default_rng(0)
    label = (rng.random(300) >= 0.5).astype(int)
    pd.DataFrame({"question": [f"q{i}" for i in range(300)], "context": ["c" * 50] * 300, "response": ["r"] * 300,
                  "label": label, "sgi": 1.0 + 0.35 * label + rng.normal(0, 0.2, 300)}).to_csv(
        folder / "labelled.csv", index=False)
    assert main(["gate", str(folder / "labelled.csv"), "--write-policy", str(folder / "policy.json"),
                 "--n-boot", "200"]) == 0
    return folder


def _monitor_json(folder, capsys) -> dict:
    main(["monitor", str(folder / "window.parquet"), "--policy", str(folder / "policy.json"), "--db",
          str(folder / "history.sqlite"), "--json"])
    result = json.loads(capsys.readouterr().out)
    (folder / "monitor.json").write_text(json.dumps(result))
    return result


def _annotations(url, kind, ids, run_id):
    reply = httpx.get(f"{url}/v1/projects/{PROJECT}/{kind}_annotations",
                      params={f"{kind}_ids": ids, "identifier": run_id, "limit": 1000}, timeout=10)
    reply.raise_for_status()
    return reply.json()["data"]


def test_annotations_read_back_with_the_scores_and_a_rerun_updates_them(live, scored_window, capsys):
    server, ids = live
    folder = scored_window
    monitor = _monitor_json(folder, capsys)
    policy = json.loads((folder / "policy.json").read_text())
    scored = pd.read_parquet(folder / "scored.parquet")
    expected = {r.span_id: r.sgi for r in scored.itertuples() if pd.notna(r.sgi)}
    assert len(expected) == 3  # trace f has no context, so no score
    command = ["annotate", str(folder / "scored.parquet"), "--phoenix", server.url, "--project", PROJECT,
               "--run-id", "run-1", "--policy", str(folder / "policy.json"), "--monitor", str(folder / "monitor.json")]
    for _ in range(2):  # the second run updates the first one's annotations
        assert main(command) == 0
        assert "3 span annotations and 4 trace annotations stored under run id run-1; 3 read back, 3 with the " \
               "score sent" in capsys.readouterr().err
        spans = _annotations(server.url, "span", list(expected), "run-1")
        assert sorted(a["span_id"] for a in spans) == sorted(expected)
        for annotation in spans:
            score = expected[annotation["span_id"]]
            assert annotation["name"] == "sgi" and annotation["annotator_kind"] == "CODE"
            assert annotation["result"]["score"] == pytest.approx(score, rel=1e-12)
            assert annotation["result"]["label"] == ("flagged" if score < policy["threshold"] else "not flagged")
            assert f"threshold {policy['threshold']:.4g}; the policy's score is validated" in \
                annotation["result"]["explanation"]
        traces = _annotations(server.url, "trace", [ids[n]["trace_id"] for n in IN_WINDOW], "run-1")
        assert len(traces) == 4 and {a["result"]["label"] for a in traces} == {monitor["status"]}
        assert [a["result"]["score"] for a in traces] == [pytest.approx(monitor["corrected_rate"]["estimate"])] * 4
    assert main([*command[:6], "--run-id", "run-2"]) == 0
    capsys.readouterr()
    assert len(_annotations(server.url, "span", list(expected), "run-2")) == 3
    assert len(_annotations(server.url, "span", list(expected), "run-1")) == 3


def test_unknown_spans_are_named_the_rest_annotated_and_the_exit_is_1(live, scored_window, tmp_path, capsys):
    server, _ = live
    scored = pd.read_parquet(scored_window / "scored.parquet")
    known = scored.loc[scored["sgi"].notna(), "span_id"].tolist()
    scored.loc[scored["span_id"] == known[0], ["span_id", "trace_id"]] = ["00000000deadbeef", "0" * 32]
    scored.to_parquet(tmp_path / "edited.parquet")
    (tmp_path / "monitor.json").write_text(json.dumps({"status": "holds",
                                                       "corrected_rate": {"estimate": 0.1, "ci": [0.05, 0.2]}}))
    assert main(["annotate", str(tmp_path / "edited.parquet"), "--phoenix", server.url, "--project", PROJECT,
                 "--run-id", "run-unknown", "--monitor", str(tmp_path / "monitor.json")]) == 1
    err = capsys.readouterr().err
    assert f"error: 1 spans are not in project {PROJECT}: 00000000deadbeef; the others were annotated" in err
    assert f"error: 1 traces are not in project {PROJECT}: {'0' * 32}; the others were annotated" in err
    assert "2 span annotations and 3 trace annotations stored under run id run-unknown; 2 read back" in err
    assert sorted(a["span_id"] for a in _annotations(server.url, "span", known, "run-unknown")) == sorted(known[1:])


def test_compare_matches_two_pulls_of_the_window_by_trace_id(live, scored_window, tmp_path, capsys):
    server, _ = live
    assert _pull(server.url, tmp_path / "again.parquet", *_window()) == 0
    assert main(["compare", str(scored_window / "window.parquet"), str(tmp_path / "again.parquet"), "--model",
                 "hashing", "--n-boot", "200", "--json", str(tmp_path / "compare.json")]) == 0
    capsys.readouterr()
    match = json.loads((tmp_path / "compare.json").read_text())["match"]
    assert (match["key"], match["n_matched"], match["only_in_base"], match["only_in_new"]) == ("trace_id", 4, [], [])


def test_the_data_page_pulls_the_window_as_its_current_file(live, app):
    server, ids = live
    pull(app, server.url, PROJECT, T0.isoformat(), T1.isoformat())
    assert not app.error and not app.exception
    assert [s.value for s in app.success] == [
        plain(f"4 traces in the window, 4 rows, 1 without a context ({ids['f']['trace_id']})")]
    assert metric(app, "Rows read") == "4" and metric(app, "Rows that cannot be scored") == "1"
    assert f"**Current file:** {plain('phoenix-sgi-live.parquet')}" in [m.value for m in app.markdown]
