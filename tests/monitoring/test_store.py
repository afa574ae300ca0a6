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
from sgi_core.monitoring.store import (
    SCHEMA_VERSION,
    append_run,
    connect,
    default_db_path,
    policy_runs,
    read_history,
)
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
    stored = json.dumps(_summary().to_dict())
    with closing(connect(path, upto=1)) as old:
        old.execute("INSERT INTO runs (recorded, policy_id, file, file_sha256, n_rows, shift_detected, status, summary)"
                    " VALUES ('2026-01-01', 'p1', 'old.csv', 'x', 5, 0, 'holds', ?)", (stored,))
        assert old.execute("SELECT version FROM schema_version").fetchone() == (1,)
    (record,) = policy_runs(path, "p1")
    assert (record.file, record.labels_used, record.model, record.summary) == ("old.csv", 0, None, json.loads(stored))
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


def _raw(path, *statements):
    with closing(sqlite3.connect(path)) as raw:
        for statement in statements:
            raw.execute(statement)
        raw.commit()


def test_paths_and_databases_that_are_not_a_history_are_refused(tmp_path):
    folder, fifo = tmp_path / "folder", tmp_path / "fifo"
    folder.mkdir()
    os.mkfifo(fifo)
    with pytest.raises(SGIInputError, match="the run history is a folder, not a file"):
        connect(folder)
    with pytest.raises(SGIInputError, match=r"the run history is not a regular file \(a folder, device, pipe"):
        connect(fifo)
    text_version = tmp_path / "text_version.sqlite"
    _raw(text_version, "CREATE TABLE schema_version (version)", "INSERT INTO schema_version VALUES ('two')")
    with pytest.raises(SGIInputError, match="the run history's schema_version holds 'two', not a whole number"):
        policy_runs(text_version)
    view = tmp_path / "view.sqlite"
    _raw(view, "CREATE TABLE t (a)", "CREATE VIEW runs AS SELECT a FROM t")
    with pytest.raises(SGIInputError, match=r"objects that are not the run history's \(table 't', view 'runs'\)"):
        connect(view)
    cache = tmp_path / "embeddings.sqlite"
    _raw(cache, "CREATE TABLE vectors (key BLOB PRIMARY KEY, vector BLOB)")
    with pytest.raises(SGIInputError, match="objects that are not the run history's .table 'vectors'"):
        append_run(cache, _summary(), file="a.csv", file_sha256="a", model="minilm", context_strategy="joined")
    with closing(sqlite3.connect(cache)) as raw:  # nothing was written to the other tool's database
        names = raw.execute("SELECT name FROM sqlite_master").fetchall()
    assert names == [("vectors",), ("sqlite_autoindex_vectors_1",)]
    planted = tmp_path / "planted.sqlite"
    append_run(planted, _summary(), file="a.csv", file_sha256="a", model="minilm", context_strategy="joined")
    _raw(planted, "CREATE TRIGGER rewrite AFTER INSERT ON runs BEGIN UPDATE runs SET status = 'holds'; END")
    with pytest.raises(SGIInputError, match="trigger 'rewrite'"):
        policy_runs(planted)


def test_the_history_is_created_private(tmp_path):
    path = tmp_path / "made" / "here" / "history.sqlite"
    append_run(path, _summary(), file="a.csv", file_sha256="a", model="minilm", context_strategy="joined")
    assert os.stat(path).st_mode & 0o777 == 0o600 and os.stat(path.parent).st_mode & 0o777 == 0o700
    assert os.stat(path.parent.parent).st_mode & 0o777 == 0o700
    assert all(os.stat(f).st_mode & 0o077 == 0 for f in path.parent.iterdir())  # -wal, -shm too


def test_a_damaged_row_is_named_and_skipped_by_the_page_reader(tmp_path):
    path = tmp_path / "history.sqlite"
    summary = _summary()
    for name in ("a.csv", "b.csv", "c.csv"):
        append_run(path, summary, file=name, file_sha256="a", model="minilm", context_strategy="joined")
    _raw(path, "UPDATE runs SET summary = '{not json' WHERE id = 2", "UPDATE runs SET summary = '[]' WHERE id = 3")
    history = read_history(path, summary.policy_id)
    assert [r.file for r in history.runs] == ["a.csv"]
    assert history.damaged[0].startswith("run 2: its summary is not JSON")
    assert history.damaged[1] == "run 3: its summary lacks the parts a run is drawn from (corrected, shift)"
    with pytest.raises(SGIInputError, match="the run history has damaged rows: run 2: its summary is not JSON"):
        policy_runs(path)


def _full_disk_writer(path, size, queue):
    import resource

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    try:
        for i in range(200):
            append_run(path, _summary(), file=f"f{i}.csv", file_sha256="x" * 64, model="minilm",
                       context_strategy="joined")
        queue.put("no error")
    except SGIInputError as err:
        queue.put(str(err))


def test_a_write_that_fails_reports_sqlites_own_error(tmp_path):
    path = tmp_path / "history.sqlite"
    append_run(path, _summary(), file="first.csv", file_sha256="a", model="minilm", context_strategy="joined")
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    writer = context.Process(target=_full_disk_writer, args=(path, os.stat(path).st_size + 65536, queue))
    writer.start()
    writer.join(120)
    message = queue.get(timeout=10)
    assert message.startswith("cannot record the run in the history: ") and "rollback" not in message
    assert "disk is full" in message or "disk I/O error" in message
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
