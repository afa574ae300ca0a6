"""The history of monitored runs: a SQLite database (standard library :mod:`sqlite3`).

One row per run held to a policy: when, which file (its name and SHA-256), the rows, flag
share, headline rate and interval (:class:`~sgi_core.monitoring.summary.HeadlineRate`),
shift verdict and tests, labels used, model, context strategy, verdict, and the whole
:class:`~sgi_core.monitoring.summary.MonitorSummary` as JSON.

* **Schema version and migrations.** ``schema_version`` holds one integer; opening a
  database applies each migration of :data:`MIGRATIONS` above it in order, inside one
  transaction, so an older database is brought up to date and a newer one is refused.
* **Concurrent writers** (two cron jobs): the database runs in write-ahead-log mode and
  every append is one ``BEGIN IMMEDIATE`` transaction, which takes the write lock before
  reading anything; a writer that finds it taken waits up to :data:`BUSY_TIMEOUT_S`
  seconds. A writer killed mid-transaction leaves nothing: SQLite rolls the unfinished
  transaction back when the database is next opened.

* **Only the history's own.** The file must be a regular file (not a link, folder or pipe) holding
  nothing but the history's tables and index (:data:`OWN_OBJECTS`), so another tool's database,
  or one with a planted trigger or a view named ``runs``, is refused before anything is written
  to it. Created the owner's only (0600, its folder 0700 where created here), as the labels are.
* **Errors are SQLite's own.** A full disk is reported as such (:class:`SGIInputError`), not
  masked by a rollback SQLite already made. A damaged row is named and skipped by
  :func:`read_history`.

The default database is ``<data folder>/monitoring.sqlite``, the data folder being
``$SGI_DATA_DIR`` (:func:`sgi_core.review.annotations.data_dir`), where the review labels live.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from sgi_core.errors import SGIInputError
from sgi_core.models.cache_folder import private_folder
from sgi_core.results import JsonResult
from sgi_core.review.store_files import open_regular

DB_NAME = "monitoring.sqlite"
BUSY_TIMEOUT_S = 60.0
#: Each migration brings the schema from its position to the next version (index 0: empty -> 1).
MIGRATIONS = (
    """CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        recorded TEXT NOT NULL,
        policy_id TEXT NOT NULL,
        file TEXT NOT NULL,
        file_sha256 TEXT NOT NULL,
        n_rows INTEGER NOT NULL,
        flag_share REAL,
        rate REAL,
        rate_low REAL,
        rate_high REAL,
        shift_detected INTEGER NOT NULL,
        status TEXT NOT NULL,
        summary TEXT NOT NULL
    );
    CREATE INDEX runs_by_policy ON runs (policy_id, id);""",
    """ALTER TABLE runs ADD COLUMN labels_used INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN model TEXT;
    ALTER TABLE runs ADD COLUMN context_strategy TEXT;""",
)
SCHEMA_VERSION = len(MIGRATIONS)
#: The parts of a stored summary every face draws a recorded run from.
SUMMARY_PARTS = ("corrected", "shift")
#: Every object the migrations create (and SQLite's own counter of AUTOINCREMENT): nothing else may be in the file.
OWN_OBJECTS = {("table", "runs"), ("table", "schema_version"), ("index", "runs_by_policy"),
               ("table", "sqlite_sequence")}


@dataclass(frozen=True)
class RunRecord(JsonResult):
    """One recorded run (the ``summary`` is :meth:`MonitorSummary.to_dict`)."""

    id: int
    recorded: str
    policy_id: str
    file: str
    file_sha256: str
    n_rows: int
    labels_used: int
    model: str | None
    context_strategy: str | None
    status: str
    summary: dict


def default_db_path() -> Path:
    """``<data folder>/monitoring.sqlite``."""
    from sgi_core.review.annotations import data_dir

    return data_dir() / DB_NAME


def schema_version(connection: sqlite3.Connection, source: str) -> int:
    """The database's schema version; 0 for a new (empty) database."""
    connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = connection.execute("SELECT version FROM schema_version").fetchone()
    if row is not None and (type(row[0]) is not int or row[0] < 0):
        raise SGIInputError(f"the run history's schema_version holds {row[0]!r}, not a whole number", source=source,
                            hint="Pass --db with another file, or move this one away")
    return 0 if row is None else row[0]


def _foreign_objects(connection: sqlite3.Connection) -> list[str]:
    """The database's objects that are not the run history's own (another tool's tables, views, triggers)."""
    found = connection.execute("SELECT type, name FROM sqlite_master").fetchall()
    return [f"{kind} {name!r}" for kind, name in found
            if (kind, name) not in OWN_OBJECTS and not (kind == "index" and name.startswith("sqlite_autoindex_"))]


def _private_file(path: Path) -> None:
    """Create the history's folder (0700) and file (0600) where missing; refuse a link, folder, pipe or device."""
    private_folder(path.parent)
    os.close(open_regular(path, os.O_RDWR | os.O_CREAT, what="run history", mode=0o600))


def connect(path, *, upto: int = SCHEMA_VERSION) -> sqlite3.Connection:
    """Open (creating, the owner's only) the database at ``path``, migrated to version ``upto``.

    Raises
    ------
    SGIInputError
        A path that is not a regular file, a file that is not SQLite or holds objects other than the
        history's (:data:`OWN_OBJECTS`), a schema version that is not a whole number or is newer than
        this tool knows, or SQLite's own error (a full disk, a read-only folder).
    """
    path = Path(path)
    _private_file(path)
    hint = "Pass --db with a file of the run history's own, or move this one away"
    try:
        connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as err:
        raise SGIInputError(f"cannot open the run history: {err}", source=str(path), hint=hint) from None
    try:
        foreign = _foreign_objects(connection)  # read before anything is written to another tool's database
        if foreign:
            raise SGIInputError(f"the database holds objects that are not the run history's ({', '.join(foreign)}): "
                                "it is another tool's, or was altered", source=str(path), hint=hint)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("BEGIN IMMEDIATE")
        version = schema_version(connection, str(path))
        if version > SCHEMA_VERSION:
            raise SGIInputError(f"the run history is of schema version {version}; this tool knows up to "
                                f"{SCHEMA_VERSION}", source=str(path), hint="Use a newer version of the tool")
        for script in MIGRATIONS[version:upto]:
            for statement in filter(str.strip, script.split(";")):
                connection.execute(statement)
        if version < upto:
            connection.execute("DELETE FROM schema_version")
            connection.execute("INSERT INTO schema_version (version) VALUES (?)", (upto,))
        connection.execute("COMMIT")
    except sqlite3.Error as err:
        connection.close()
        raise SGIInputError(f"cannot open the run history: {err}", source=str(path), hint=hint) from None
    except BaseException:
        connection.close()
        raise
    return connection


def append_run(path, summary, *, file: str, file_sha256: str, model: str | None,
               context_strategy: str | None) -> int:
    """Append one run's summary (:class:`~sgi_core.monitoring.summary.MonitorSummary`); its id.

    One ``BEGIN IMMEDIATE`` transaction: concurrent writers queue, none is lost.
    """
    data = summary.to_dict()
    row = (datetime.now(timezone.utc).isoformat(timespec="seconds"), summary.policy_id, file, file_sha256,
           summary.n_rows, data["corrected"]["flag_share"], data["headline"]["estimate"], data["headline"]["ci"][0],
           data["headline"]["ci"][1], int(summary.shift.detected), summary.status,
           json.dumps(data, allow_nan=False), 0 if summary.revalidation is None else summary.revalidation.n_labelled,
           model, context_strategy)
    with closing(connect(path)) as connection:
        try:
            connection.execute("BEGIN IMMEDIATE")
            cursor = connection.execute(
                "INSERT INTO runs (recorded, policy_id, file, file_sha256, n_rows, flag_share, rate, rate_low, "
                "rate_high, shift_detected, status, summary, labels_used, model, context_strategy) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
            connection.execute("COMMIT")
        except BaseException as err:
            # SQLite has already rolled back after some errors (a full disk): a second rollback would mask the first.
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            if isinstance(err, sqlite3.Error):
                raise SGIInputError(f"cannot record the run in the history: {err}", source=str(path),
                                    hint="Free space where the history lives, or pass --db elsewhere") from None
            raise
        return int(cursor.lastrowid)


@dataclass(frozen=True)
class RunHistory(JsonResult):
    """The readable runs of a history, and the damaged ones named (``"run 7: ..."``), never silently dropped."""

    runs: tuple[RunRecord, ...]
    damaged: tuple[str, ...]


def _record(row) -> RunRecord:
    """A stored row as a :class:`RunRecord`; ValueError saying what is damaged."""
    run_id, recorded, policy, file, digest, n_rows, labels_used, model, strategy, status, summary = row
    if not all(type(v) is int for v in (run_id, n_rows, labels_used)) or not all(
            isinstance(v, str) for v in (recorded, policy, file, digest, status)):
        raise ValueError("a column holds a value of the wrong type")
    try:
        data = json.loads(summary)
    except (TypeError, ValueError) as err:
        raise ValueError(f"its summary is not JSON ({err})") from None
    if not (isinstance(data, dict) and all(isinstance(data.get(k), dict) for k in SUMMARY_PARTS)
            and all(k in data["corrected"] for k in ("estimate", "ci", "flag_share"))
            and isinstance(data["shift"].get("tests"), list) and "detected" in data["shift"]):
        raise ValueError(f"its summary lacks the parts a run is drawn from ({', '.join(SUMMARY_PARTS)})")
    return RunRecord(run_id, recorded, policy, file, digest, n_rows, labels_used, model, strategy, status, data)


def read_history(path, policy_id: str | None = None) -> RunHistory:
    """The recorded runs, oldest first (only those of ``policy_id`` when given); a damaged row is named and skipped.

    No file: no runs.
    """
    if not Path(path).exists():
        return RunHistory((), ())
    with closing(connect(path)) as connection:
        query = ("SELECT id, recorded, policy_id, file, file_sha256, n_rows, labels_used, model, context_strategy, "
                 "status, summary FROM runs")
        rows = connection.execute(query + (" WHERE policy_id = ? ORDER BY id" if policy_id else " ORDER BY id"),
                                  (policy_id,) if policy_id else ()).fetchall()
    runs, damaged = [], []
    for row in rows:
        try:
            runs.append(_record(row))
        except ValueError as err:
            damaged.append(f"run {row[0]}: {err}")
    return RunHistory(tuple(runs), tuple(damaged))


def policy_runs(path, policy_id: str | None = None) -> list[RunRecord]:
    """The recorded runs, oldest first; only those of ``policy_id`` when given. No file: no runs.

    Raises
    ------
    SGIInputError
        Naming every damaged row (:func:`read_history` skips them instead).
    """
    history = read_history(path, policy_id)
    if history.damaged:
        raise SGIInputError(f"the run history has damaged rows: {'; '.join(history.damaged)}", source=str(path),
                            hint="Read it with read_history, which skips them")
    return list(history.runs)
