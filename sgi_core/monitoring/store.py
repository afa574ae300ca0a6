"""The history of monitored runs: a SQLite database (standard library :mod:`sqlite3`).

One row per run held to a policy: when, which file (its name and SHA-256), the rows, flag
share, headline rate and interval (:class:`~sgi_core.monitoring.summary.HeadlineRate`), shift verdict and tests, labels used, model, context
strategy, verdict, and the whole :class:`~sgi_core.monitoring.summary.MonitorSummary` as JSON.

* **Schema version and migrations.** ``schema_version`` holds one integer; opening a
  database applies each migration of :data:`MIGRATIONS` above it in order, inside one
  transaction, so an older database is brought up to date and a newer one is refused.
* **Concurrent writers** (two cron jobs): the database runs in write-ahead-log mode and
  every append is one ``BEGIN IMMEDIATE`` transaction, which takes the write lock before
  reading anything; a writer that finds it taken waits up to :data:`BUSY_TIMEOUT_S`
  seconds. A writer killed mid-transaction leaves nothing: SQLite rolls the unfinished
  transaction back when the database is next opened.

The default database is ``<data folder>/monitoring.sqlite``, the data folder being
``$SGI_DATA_DIR`` (:func:`sgi_core.review.annotations.data_dir`), where the review labels live.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult

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


def schema_version(connection: sqlite3.Connection) -> int:
    """The database's schema version; 0 for a new (empty) database."""
    connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = connection.execute("SELECT version FROM schema_version").fetchone()
    return 0 if row is None else int(row[0])


def connect(path, *, upto: int = SCHEMA_VERSION) -> sqlite3.Connection:
    """Open (creating) the database at ``path``, migrated to version ``upto``.

    Raises
    ------
    SGIInputError
        A database of a newer schema than this tool knows, or a file that is not SQLite.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("BEGIN IMMEDIATE")
        version = schema_version(connection)
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
    except sqlite3.DatabaseError as err:
        connection.close()
        raise SGIInputError(f"cannot open the run history: {err}", source=str(path),
                            hint="Pass --db with another file, or move this one away") from None
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
        connection.execute("BEGIN IMMEDIATE")
        try:
            cursor = connection.execute(
                "INSERT INTO runs (recorded, policy_id, file, file_sha256, n_rows, flag_share, rate, rate_low, "
                "rate_high, shift_detected, status, summary, labels_used, model, context_strategy) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        return int(cursor.lastrowid)


def policy_runs(path, policy_id: str | None = None) -> list[RunRecord]:
    """The recorded runs, oldest first; only those of ``policy_id`` when given. No file: no runs."""
    if not Path(path).exists():
        return []
    with closing(connect(path)) as connection:
        query = ("SELECT id, recorded, policy_id, file, file_sha256, n_rows, labels_used, model, context_strategy, "
                 "status, summary FROM runs")
        rows = connection.execute(query + (" WHERE policy_id = ? ORDER BY id" if policy_id else " ORDER BY id"),
                                  (policy_id,) if policy_id else ()).fetchall()
    return [RunRecord(*row[:-1], json.loads(row[-1])) for row in rows]
