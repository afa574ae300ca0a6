"""On-disk cache of judge answers, so that no answer is paid for twice.

One SQLite file, ``answers.sqlite``, in ``$SGI_JUDGE_CACHE_DIR`` or beside the embedding
cache (``judge/`` next to :func:`sgi_core.embedding.cache.default_cache_dir`). The key
is the SHA-256 of (endpoint base URL, judge model, :data:`PROMPT_VERSION`, task, the
row's inputs), so another endpoint, model or prompt version never reads an old answer.
Each valid answer is written the moment it arrives: an interrupted run resumes where it
stopped. Each thread gets its own connection; answers are stored as JSON text, so
nothing is unpickled. The folder is created 0700 and the file is 0600, since answers
quote the responses judged.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import warnings
from pathlib import Path

from sgi_core.embedding.cache import private_file
from sgi_core.errors import SGIInputError
from sgi_core.judge.prompts import PROMPT_VERSION, TASKS, AnswerError
from sgi_core.models.cache_folder import default_cache_dir, private_folder

_SQL_PARAMS = 900


class JudgeCacheWarning(UserWarning):
    """Answers could not be written to the judge cache; the run keeps them, a later run asks again."""


def judge_cache_dir() -> Path:
    """``$SGI_JUDGE_CACHE_DIR``, else a ``judge`` folder beside the embedding cache."""
    env = os.environ.get("SGI_JUDGE_CACHE_DIR")
    return Path(env) if env else default_cache_dir().parent / "judge"


def answer_key(endpoint: str, model: str, task: str, inputs: dict) -> str:
    """Hex SHA-256 naming one answer.

    Examples
    --------
    >>> a = answer_key("http://127.0.0.1:8/v1", "m", "usage", {"response": "x"})
    >>> a == answer_key("http://127.0.0.1:8/v1", "other", "usage", {"response": "x"})
    False
    """
    text = json.dumps([endpoint, model, PROMPT_VERSION, task, inputs], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class AnswerCache:
    """Persistent store of valid judge answers (the parsed JSON object of each reply).

    Parameters
    ----------
    cache_dir : path-like, optional
        Folder of ``answers.sqlite`` (default :func:`judge_cache_dir`).
    timeout : float
        Seconds to wait for another program's lock on the file; past it a read or write
        raises :class:`~sgi_core.errors.SGIInputError`.
    """

    def __init__(self, cache_dir: str | os.PathLike | None = None, *, timeout: float = 30.0):
        self.timeout = float(timeout)
        folder = Path(cache_dir) if cache_dir is not None else judge_cache_dir()
        self.path = folder / "answers.sqlite"
        try:
            private_folder(folder)
            private_file(self.path)  # the answers quote the responses judged: the owner's only
        except OSError as err:
            raise SGIInputError(f"cannot create the judge cache: {err.strerror or err}", source=str(folder),
                                hint="Set SGI_JUDGE_CACHE_DIR to a folder that can be written to") from None
        self._local = threading.local()
        self._run(lambda conn: conn.execute(
            "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, task TEXT NOT NULL, answer TEXT NOT NULL)"))

    def _connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self.timeout)
            conn.execute("PRAGMA journal_mode=WAL")
            self._local.conn = conn
        return conn

    def _run(self, action):
        try:
            conn = self._connection()
            with conn:
                return action(conn)
        except sqlite3.OperationalError as err:
            raise SGIInputError(f"the judge cache cannot be used: {err}", source=str(self.path),
                                hint="Another run may hold it; wait for it, or set SGI_JUDGE_CACHE_DIR") from None
        except sqlite3.DatabaseError:
            raise SGIInputError("the judge cache file is damaged", source=str(self.path),
                                hint="Delete it; answers are asked again on the next run") from None

    def get_many(self, keys) -> dict[str, dict]:
        """Cached answers of those ``keys`` that have one, key -> answer object."""
        keys = list(keys)
        found: dict[str, dict] = {}
        for start in range(0, len(keys), _SQL_PARAMS):
            chunk = keys[start:start + _SQL_PARAMS]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT key, answer FROM answers WHERE key IN ({marks})"
            rows = self._run(lambda conn, query=query, chunk=chunk: conn.execute(query, chunk).fetchall())
            for key, answer in rows:
                try:
                    found[key] = json.loads(answer)
                except json.JSONDecodeError:
                    continue  # a damaged row is asked again and overwritten
        return found

    def put(self, key: str, task: str, answer: dict) -> None:
        """Store one answer at once (committed before returning)."""
        text = json.dumps(answer, ensure_ascii=False)
        self._run(lambda conn: conn.execute(
            "INSERT OR REPLACE INTO answers (key, task, answer) VALUES (?, ?, ?)", (key, task, text)))

    def __len__(self) -> int:
        return self._run(lambda conn: conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        """Close this thread's connection (other threads' close when they end)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def cached_values(requests: dict, cache: AnswerCache | None) -> dict:
    """Request key -> parsed value of each request's cached answer (``requests``: key -> (task, inputs)).

    An answer its task no longer parses (a cache written by an older reader) is left out, so it is asked again.
    """
    values: dict = {}
    for key, answer in (cache.get_many(requests) if cache is not None else {}).items():
        task, inputs = requests[key]
        try:
            values[key] = TASKS[task].parse(answer, inputs)
        except AnswerError:
            continue
    return values


def save_answers(cache: AnswerCache, unsaved: list) -> None:
    """Store ``(key, task, answer)`` entries a busy cache refused during a run; warn about any it still refuses."""
    left = []
    for entry in unsaved:
        try:
            cache.put(*entry)
        except SGIInputError:
            left.append(entry)
    if left:
        warnings.warn(f"{len(left)} judge answers could not be written to the cache ({cache.path}), which another "
                      "program held locked; they are in this run's output, a later run asks for them again",
                      JudgeCacheWarning, stacklevel=3)
