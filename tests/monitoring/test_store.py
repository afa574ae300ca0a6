"""The run history: migrations, concurrent writers (processes) and a writer killed mid-transaction."""

import json
import multiprocessing
import os
import signal
import sqlite3
from contextlib import closing

import numpy as np
import pandas as pd
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.monitoring.store import SCHEMA_VERSION, append_run, connect, default_db_path, policy_runs
from sgi_core.monitoring.summary import monitor_run
from sgi_core.policy.making import make_policy

WRITERS, PER_WRITER = 4, 8


def _summary(seed=0):
    rng = np.random.default_rng(seed)
    y = np.tile([1.0, 0.0], 40)
    policy, _ = make_policy(y, rng.normal(y, 0.7), model="minilm")
    run = rng.normal(rng.binomial(1, 0.7, 60), 0.7)
    frame = pd.DataFrame({"question": ["q"] * 60, "context": ["c"] * 60, "response": ["r"] * 60})
    return monitor_run(policy, frame, run, n_boot=0)


def _writer(path, index):
    summary = _summary()
    for i in range(PER_WRITER):
        append_run(path, summary, file=f"writer{index}-{i}.csv", file_sha256="0" * 64, model="minilm",
                   context_strategy="joined")


def _killed_writer(path):
    connection = connect(path)
    connection.execute("BEGIN IMMEDIATE")
    connection.execute("INSERT INTO runs (recorded, policy_id, file, file_sha256, n_rows, shift_detected, status, "
                       "summary) VALUES ('now', 'p', 'killed.csv', 'x', 1, 0, 'holds', '{}')")
    os.kill(os.getpid(), signal.SIGKILL)


def test_concurrent_writers_lose_nothing(tmp_path):
    path = tmp_path / "history.sqlite"
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_writer, args=(path, i)) for i in range(WRITERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    runs = policy_runs(path)
    assert sorted(r.file for r in runs) == sorted(f"writer{w}-{i}.csv" for w in range(WRITERS)
                                                 for i in range(PER_WRITER))
    assert len({r.id for r in runs}) == WRITERS * PER_WRITER
    expected = json.loads(json.dumps(_summary().to_dict()))  # the policy's id moves with its creation time
    assert all(r.summary["corrected"] == expected["corrected"] and r.summary["shift"] == expected["shift"]
               for r in runs)
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_killed_writer_leaves_the_history_whole(tmp_path):
    path = tmp_path / "history.sqlite"
    summary = _summary()
    first = append_run(path, summary, file="before.csv", file_sha256="a", model="minilm", context_strategy="joined")
    killed = multiprocessing.get_context("fork").Process(target=_killed_writer, args=(path,))
    killed.start()
    killed.join(60)
    assert killed.exitcode == -signal.SIGKILL
    after = append_run(path, summary, file="after.csv", file_sha256="b", model="minilm", context_strategy="joined")
    runs = policy_runs(path, summary.policy_id)
    assert [r.file for r in runs] == ["before.csv", "after.csv"] and after > first
    assert policy_runs(path, "p") == []
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_an_older_database_is_migrated_and_a_newer_one_refused(tmp_path):
    path = tmp_path / "old.sqlite"
    with closing(connect(path, upto=1)) as old:
        old.execute("INSERT INTO runs (recorded, policy_id, file, file_sha256, n_rows, shift_detected, status, summary)"
                    " VALUES ('2026-01-01', 'p1', 'old.csv', 'x', 5, 0, 'holds', '{\"n_rows\": 5}')")
        assert old.execute("SELECT version FROM schema_version").fetchone() == (1,)
    (record,) = policy_runs(path, "p1")
    assert (record.file, record.labels_used, record.model, record.summary) == ("old.csv", 0, None, {"n_rows": 5})
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("SELECT version FROM schema_version").fetchone() == (SCHEMA_VERSION,)
        raw.execute("UPDATE schema_version SET version = 99")
        raw.commit()
    with pytest.raises(SGIInputError, match="schema version 99; this tool knows up to"):
        policy_runs(path)
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database" * 100)
    with pytest.raises(SGIInputError, match="cannot open the run history"):
        policy_runs(garbage)


def test_the_default_database_is_in_the_data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("SGI_DATA_DIR", str(tmp_path / "data"))
    assert default_db_path() == tmp_path / "data" / "monitoring.sqlite"
