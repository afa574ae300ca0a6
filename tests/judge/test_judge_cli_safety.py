"""``judge`` on the command line: checks before paying, earlier results kept, scored files kept scored, clear ends."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.io.limits import is_scored
from sgi_core.judge import BEYOND_MAX_ROWS
from sgi_core.judge.metrics import METRICS
from tests.conftest import REPO, SAMPLE_CSV
from tests.judge.fake_server import FakeServer

JUDGE_COLUMNS = ["judge_answer_consistency", "judge_answer_consistency_binary", "judge_status", "judge_model",
                 "judge_prompt_version"]


@pytest.fixture
def server(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeServer(retry_after="0") as running:
        yield running


@pytest.fixture
def eight(tmp_path):
    path = tmp_path / "eight.csv"
    pd.read_csv(SAMPLE_CSV, nrows=8).to_csv(path, index=False)
    return path


def judge(source, output, server, *extra, model="judge-a"):
    return main(["judge", str(source), "-o", str(output), "--endpoint", server.base_url, "--judge-model", model,
                 *extra])


@pytest.mark.parametrize("output, message", [
    ("missing/out.csv", "error: the folder '"),
    ("out.xlsx", "error: cannot write '.xlsx' files"),
])
def test_the_output_is_checked_before_any_request(server, eight, tmp_path, capsys, output, message):
    assert judge(eight, tmp_path / output, server) == 2
    assert capsys.readouterr().err.startswith(message)
    assert server.requests == []


def test_an_infinite_timeout_is_one_line(server, eight, tmp_path, capsys):
    assert judge(eight, tmp_path / "o.csv", server, "--timeout", "inf") == 2
    err = capsys.readouterr().err
    assert err == ("error: the request timeout must be a finite number of seconds > 0. Got inf instead. "
                   "Give e.g. --timeout 60\n")


def test_max_rows_on_a_judged_file_keeps_the_rows_beyond_it(server, eight, tmp_path):
    first, second = tmp_path / "first.parquet", tmp_path / "second.parquet"
    assert judge(eight, first, server, "--max-rows", "6") == 0
    assert judge(first, second, server, "--max-rows", "2", model="judge-b") == 0
    before, after = pd.read_parquet(first), pd.read_parquet(second)
    assert after["judge_model"].tolist() == ["judge-b"] * 2 + ["judge-a"] * 6
    pd.testing.assert_frame_equal(after[JUDGE_COLUMNS].iloc[2:6], before[JUDGE_COLUMNS].iloc[2:6])
    assert after["judge_answer_consistency"].iloc[2:6].notna().all()
    assert (after["judge_status"].iloc[6:] == BEYOND_MAX_ROWS).all()


def test_a_users_own_judge_columns_are_renamed_with_a_warning(server, eight, tmp_path, capsys):
    mine = tmp_path / "mine.csv"
    pd.read_csv(eight).assign(judge_answer_consistency=np.arange(8) / 10).to_csv(mine, index=False)
    assert judge(mine, tmp_path / "out.csv", server) == 0
    assert ("warning: input columns judge_answer_consistency were renamed to input_judge_answer_consistency"
            in capsys.readouterr().err)
    out = pd.read_csv(tmp_path / "out.csv")
    assert out["input_judge_answer_consistency"].tolist() == (np.arange(8) / 10).tolist()
    assert out["judge_model"].eq("judge-a").all()


def test_a_scored_file_stays_a_scored_file(server, eight, tmp_path):
    scored, judged = tmp_path / "scored.parquet", tmp_path / "judged.parquet"
    assert main(["score", str(eight), "-o", str(scored), "--model", "hashing", "--no-cache"]) == 0
    assert judge(scored, judged, server) == 0
    before, after = pd.read_parquet(scored), pd.read_parquet(judged)
    assert is_scored(after.columns) and "input_sgi" not in after.columns
    pd.testing.assert_frame_equal(after[before.columns], before)
    assert list(after.columns) == [*before.columns, *JUDGE_COLUMNS]


def test_a_run_that_judges_no_row_exits_1_and_still_writes(server, eight, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    pd.read_csv(eight).assign(response="ALWAYS_BAD answer.").to_csv(bad, index=False)
    assert judge(bad, tmp_path / "out.csv", server) == 1
    err = capsys.readouterr().err
    assert "wrote 8 rows (0 of 8 judged ok)" in err and "error: no row was judged fully" in err
    # 4 distinct requests (rows share their question, context and response), each asked twice: all 8 counted
    assert "4 requests, 0 already in the cache" in err and "8 requests sent" in err
    assert (pd.read_csv(tmp_path / "out.csv")["judge_status"].str.contains("malformed answer twice")).all()


def test_help_and_behaviour_agree_on_the_contexts_column(server, eight, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["judge", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    needing = [m.name for m in METRICS.values() if m.needs == "contexts"]
    assert needing == ["retrieval_precision", "retrieval_k_recall"]
    needed = f"required by {', '.join(needing)}; the other metrics read the context column as the one passage"
    assert needed in help_text
    for name in needing:
        assert judge(eight, tmp_path / "o.csv", server, "--metrics", name) == 2
        assert capsys.readouterr().err.startswith(f"error: {name} needs a contexts column")
    assert judge(eight, tmp_path / "o.csv", server, "--metrics", "augmentation_accuracy") == 0


def test_ctrl_c_ends_the_run_at_once_without_a_traceback(eight, tmp_path):
    with FakeServer(slow_seconds=60) as server:
        server.inject(*["slow"] * 8)
        command = [sys.executable, "-m", "sgi_core", "judge", str(eight), "-o", str(tmp_path / "o.csv"),
                   "--endpoint", server.base_url, "--judge-model", "m", "--no-cache"]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        env.pop("OPENAI_API_KEY", None)
        child = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(server.requests) < 4 and time.monotonic() < deadline:  # four requests in flight, all held
            time.sleep(0.05)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)
        waited = time.monotonic() - sent
    assert child.returncode == 130 and waited < 2.0, (waited, err)
    assert "Traceback" not in err and "interrupted: nothing was cached; nothing was written to" in err
    assert not (tmp_path / "o.csv").exists()
