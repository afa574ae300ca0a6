"""``python -m sgi_core judge`` end to end against a loopback server, and its columns in ``report``."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from sgi_core.cli import main
from tests.judge.fake_server import FakeServer

KEY = "sk-cli-judge-SECRET-777"
METRICS = "answer_consistency,augmentation_accuracy"


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeServer(retry_after="0") as running:
        yield running


@pytest.fixture
def halueval_200(shared_data, tmp_path):
    path = tmp_path / "halueval_200.csv"
    pd.read_csv(shared_data / "halueval" / "halueval_qa.csv", nrows=200).to_csv(path, index=False)
    return path


def judge_args(source, output, server, *extra):
    return ["judge", str(source), "-o", str(output), "--endpoint", server.base_url, "--judge-model", "fake-judge",
            "--metrics", METRICS, *extra]


def test_200_halueval_rows_with_429s_then_a_second_run_sends_nothing(server, halueval_200, tmp_path, capsys):
    output = tmp_path / "judged.csv"
    server.inject("429", "429", "429")
    assert main(judge_args(halueval_200, output, server, "--concurrency", "4")) == 0
    out = pd.read_csv(output)
    source = pd.read_csv(halueval_200)
    assert len(out) == 200 and out["id"].tolist() == source["id"].tolist()
    assert {"judge_answer_consistency", "judge_answer_consistency_binary", "judge_augmentation_accuracy",
            "judge_status", "judge_model", "judge_prompt_version"} <= set(out.columns)
    judged = out["judge_answer_consistency"].dropna()
    assert judged.between(0, 1).all() and out["judge_augmentation_accuracy"].between(0, 1).all()
    # a row is "ok" unless the fake judge found no statement with a content word in its response
    assert set(out.loc[out["judge_answer_consistency"].isna(), "judge_status"]) <= {
        "answer_consistency: undefined share, the response states nothing"}
    # pairs share question and context but not the response: 2 requests per row, none shared
    distinct = 2 * 200
    assert sum(r["path"].endswith("/chat/completions") for r in server.requests) == distinct + 3
    assert {r["headers"]["authorization"] for r in server.requests} == {f"Bearer {KEY}"}
    first = capsys.readouterr()

    again = tmp_path / "again.parquet"
    assert main(judge_args(halueval_200, again, server)) == 0
    assert len(server.requests) == distinct + 3
    pd.testing.assert_frame_equal(pd.read_parquet(again)[out.columns[-6:]], out[out.columns[-6:]],
                                  check_dtype=False)
    second = capsys.readouterr()
    assert "0 requests sent, 400 answers from the cache" in second.err
    written = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert KEY not in first.out + first.err + second.out + second.err and KEY.encode() not in written


def test_dry_run_prints_the_estimate_and_sends_nothing(server, halueval_200, tmp_path, capsys):
    output = tmp_path / "never.csv"
    assert main(judge_args(halueval_200, output, server, "--dry-run", "--max-rows", "10")) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("10 of 200 rows to judge: 20 requests, 0 already in the cache, 20 to send, about ")
    assert server.requests == [] and not output.exists()


def test_max_rows_keeps_every_row_in_order(server, halueval_200, tmp_path):
    output = tmp_path / "part.csv"
    assert main(judge_args(halueval_200, output, server, "--max-rows", "5")) == 0
    out = pd.read_csv(output)
    assert len(out) == 200 and (out["judge_status"].iloc[5:] == "not judged: beyond --max-rows").all()
    assert out["judge_augmentation_accuracy"].iloc[5:].isna().all() and len(server.requests) == 10


@pytest.mark.parametrize("extra, message", [
    (["--metrics", "retrieval_precision"], "error: retrieval_precision needs a contexts column (file "),
    (["--metrics", "answer_similarity", "--reference-column", "gold"], "error: the reference column 'gold' is not"),
])
def test_bad_options_fail_in_one_line_before_sending(server, halueval_200, tmp_path, capsys, extra, message):
    assert main(judge_args(halueval_200, tmp_path / "o.csv", server, *extra)) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert server.requests == []


def test_remote_plain_http_endpoint_is_refused(halueval_200, tmp_path, capsys):
    args = ["judge", str(halueval_200), "-o", str(tmp_path / "o.csv"), "--endpoint", "http://judge.example.com/v1",
            "--judge-model", "m"]
    assert main(args) == 2
    assert capsys.readouterr().err.startswith("error: plain http is allowed only on this machine")


def test_report_reads_a_judge_column_as_a_detector(server, halueval_200, tmp_path):
    judged = tmp_path / "judged.csv"
    assert main(judge_args(halueval_200, judged, server)) == 0
    report = tmp_path / "report.json"
    assert main(["report", str(judged), "--models", "hashing", "--n-boot", "50", "--no-cache",
                 "--detector", "judge_answer_consistency", "--json", str(report)]) == 0
    detectors = json.loads(report.read_text())["detectors"]
    assert list(detectors["judgements"])[1] == "judge_answer_consistency"
    frame = pd.read_csv(judged)
    scored = frame["judge_answer_consistency"].notna().to_numpy()
    expected = roc_auc_score(frame["label"][scored], frame["judge_answer_consistency"][scored])
    roc = detectors["judgements"]["judge_answer_consistency"]["roc"]
    assert roc["auroc"] == pytest.approx(expected)
    assert roc["n_excluded"] == int((~scored).sum())
    assert np.isfinite(roc["auroc"])


def test_a_file_of_passages_sends_each_rows_passages_as_the_list(server, tmp_path):
    rows = [{"user_input": "Who wrote Hamlet?", "retrieved_contexts": ["Hamlet is a tragedy.", "Shakespeare wrote it."],
             "response": "Shakespeare wrote Hamlet."},
            {"user_input": "Where is Paris?", "retrieved_contexts": ["Paris is in France."],
             "response": "Paris is in France."}]
    source = tmp_path / "ragas.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    assert main(judge_args(source, tmp_path / "judged.csv", server)) == 0
    sent = sorted(json.loads(r["body"]["messages"][1]["content"])["contexts"] for r in server.chat_requests("support"))
    assert sent == sorted([["Hamlet is a tragedy.", "Shakespeare wrote it."], ["Paris is in France."]])
