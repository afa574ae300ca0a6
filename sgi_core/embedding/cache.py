"""On-disk embedding cache keyed by the encoder's source fingerprint and the text.

One SQLite file per model id under the cache folder (``$SGI_CACHE_DIR``, default
``~/.cache/sgi_workbench/embeddings``). A row's key is SHA-256 of the encoder's
:func:`~sgi_core.embedding.base.cache_key` (weights folder or package version, API
endpoint and model, precision) and the text, so two sources with the same model name
never share vectors. Each row stores its width; vectors of another width than the
encoder's are never used. Vectors are raw little-endian float32 bytes read back with
``numpy.frombuffer``: nothing is unpickled.

One connection per cache object, used under a lock, so threads (the dashboard's
sessions) can share it; the file is in WAL mode with a busy timeout so that
processes can share it too. A file that is not a database, or is damaged, is moved
aside and rebuilt; a file locked past the timeout (or unwritable) is skipped with a
:class:`CacheWarning`: the run goes on and keeps its vectors, they are only not cached.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from sgi_core.embedding.base import Encoder, ProgressCallback, cache_key
from sgi_core.errors import SGIInputError
from sgi_core.models.cache_folder import default_cache_dir, private_folder

_SQL_PARAMS = 900  # below SQLite's default limit on bound parameters
SCHEMA_VERSION = 2  # 1: keys on the text alone, no width column (dropped on open)
_DAMAGE = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}


class CacheWarning(UserWarning):
    """The embedding cache could not be used as asked; the run goes on without it."""


def private_file(path: Path) -> None:
    """Create ``path`` empty if missing, and make a file of this user's the owner's only (0600).

    SQLite gives its ``-wal`` and ``-shm`` files the database file's permissions, so
    these hold the vectors or answers of a cache to its owner.
    """
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    if path.stat().st_uid == os.getuid() and path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)


def text_key(text: str, source: str) -> bytes:
    """SHA-256 of the source fingerprint, a NUL byte and the UTF-8 text: a row's key."""
    return hashlib.sha256(source.encode("utf-8", "surrogatepass") + b"\x00"
                          + text.encode("utf-8", "surrogatepass")).digest()


def _error_code(err: sqlite3.Error) -> int | None:
    code = getattr(err, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


class EmbeddingCache:
    """Persistent store of embeddings for one model, safe to share between threads.

    Parameters
    ----------
    model_id : str
        The encoder's ``model_id``; each model gets its own file.
    cache_dir : path-like, optional
        Folder for the cache files (default :func:`default_cache_dir`).
    timeout : float
        Seconds to wait for another process's lock on the file before skipping.

    Raises
    ------
    SGIInputError
        If the file cannot be opened at all (an unwritable folder, a lock held past
        ``timeout`` at open).
    """

    def __init__(self, model_id: str, cache_dir: str | os.PathLike | None = None, *, timeout: float = 10.0):
        self.model_id = model_id
        self.timeout = float(timeout)
        folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)
        digest = hashlib.sha256(model_id.encode()).hexdigest()[:8]
        self.path = folder / f"{slug}-{digest}.sqlite"
        try:
            private_folder(folder)
        except OSError as err:  # a file in its place, a path through a file, no permission
            raise SGIInputError(
                f"cannot use '{folder}' as the embedding cache folder: {err.strerror or err}",
                hint="Set SGI_CACHE_DIR to a writable folder, or run without the cache (--no-cache)",
            ) from None
        try:
            private_file(self.path)
        except OSError as err:
            raise SGIInputError(f"cannot create the embedding cache '{self.path}': {err.strerror or err}",
                                hint="Set SGI_CACHE_DIR to a writable folder, or run without the cache (--no-cache)"
                                ) from None
        self._lock = threading.RLock()
        self._warned: set[str] = set()
        try:
            self._conn = self._connect()
        except sqlite3.DatabaseError as err:
            if _error_code(err) not in _DAMAGE:
                raise SGIInputError(
                    f"cannot open the embedding cache '{self.path}': {err}",
                    hint="Set SGI_CACHE_DIR to a writable folder, or run without the cache (--no-cache)",
                ) from None
            self._set_aside(err)
            self._conn = self._connect()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.timeout, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            with conn:
                if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                    conn.execute("DROP TABLE IF EXISTS emb")
                    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, dim INTEGER NOT NULL, vec BLOB NOT NULL)"
                )
        except BaseException:
            conn.close()
            raise
        return conn

    def _set_aside(self, err: sqlite3.Error) -> None:
        aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
        os.replace(self.path, aside)
        for suffix in ("-wal", "-shm"):
            companion = Path(f"{self.path}{suffix}")
            if companion.exists():
                os.replace(companion, Path(f"{aside}{suffix}"))
        self.warn_once(
            "damaged",
            f"the embedding cache '{self.path}' was damaged ({err}); it was moved to '{aside.name}' and is rebuilt",
        )

    def warn_once(self, kind: str, message: str) -> None:
        """Issue a :class:`CacheWarning` the first time ``kind`` happens on this cache."""
        if kind not in self._warned:
            self._warned.add(kind)
            warnings.warn(message, CacheWarning, stacklevel=3)

    def _run(self, action: Callable[[sqlite3.Connection], object], consequence: str):
        """``action(connection)`` under the lock; ``None`` after a warning when the file fails."""
        with self._lock:
            try:
                return action(self._conn)
            except sqlite3.DatabaseError as err:
                code = _error_code(err)
                if code in _DAMAGE:
                    self._conn.close()
                    self._set_aside(err)
                    self._conn = self._connect()
                elif code in _BUSY:
                    self.warn_once("busy", f"the embedding cache '{self.path}' stayed locked by another program "
                                           f"for {self.timeout:g} s; {consequence}")
                else:
                    self.warn_once("error", f"the embedding cache '{self.path}' failed ({err}); {consequence}")
                return None

    def __len__(self) -> int:
        return self._run(lambda conn: conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0], "") or 0

    def get_many(self, keys: Sequence[bytes], *, dimension: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Look up distinct keys.

        The vectors come back as one matrix built from the joined blobs, not one
        array per key: on a warm cache this lookup is most of the scoring time.
        Rows whose width is not ``dimension`` (or, without ``dimension``, not the
        one width shared by all rows found) are left out with a :class:`CacheWarning`,
        and so are rows whose blob does not hold ``dim`` float32 values.

        Returns
        -------
        found : ndarray of int64
            Positions in ``keys`` whose vectors are cached.
        vectors : ndarray of shape (len(found), d), float32
            ``vectors[j]`` belongs to ``keys[found[j]]``; shape ``(0, 0)`` when
            nothing is cached.
        """

        def fetch(conn):
            rows = []
            for start in range(0, len(keys), _SQL_PARAMS):
                chunk = list(keys[start : start + _SQL_PARAMS])
                marks = ",".join("?" * len(chunk))
                rows.extend(conn.execute(f"SELECT key, dim, vec FROM vectors WHERE key IN ({marks})", chunk))
            return rows

        rows = self._run(fetch, "cached vectors were not read, the texts are embedded again") or []
        rows = [(key, dim, blob) for key, dim, blob in rows if dim > 0 and len(blob) == 4 * dim]
        widths = {dim for _, dim, _ in rows}
        keep = dimension if dimension is not None else (widths.pop() if len(widths) == 1 else None)
        usable = [(key, blob) for key, dim, blob in rows if dim == keep]
        if len(usable) < len(rows):
            self.warn_once(
                "width",
                f"the embedding cache '{self.path}' holds {len(rows) - len(usable)} vectors of another width than "
                f"{keep if keep is not None else 'the rest'}; they were not used and the texts are embedded again",
            )
        if not usable:
            return np.empty(0, dtype=np.int64), np.empty((0, 0), dtype=np.float32)
        position = {key: i for i, key in enumerate(keys)}
        found = np.fromiter((position[key] for key, _ in usable), dtype=np.int64, count=len(usable))
        vectors = np.frombuffer(b"".join(blob for _, blob in usable), dtype="<f4").reshape(len(usable), -1)
        return found, vectors

    def put_many(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Store one vector per key (float32), with its width."""
        rows = np.ascontiguousarray(vectors, dtype="<f4")
        width = rows.shape[1]

        def write(conn):
            with conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO vectors (key, dim, vec) VALUES (?, ?, ?)",
                    ((key, width, rows[i].tobytes()) for i, key in enumerate(keys)),
                )

        self._run(write, f"{len(keys)} new vectors were not saved (the run goes on)")

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def encode_unique(
    encoder: Encoder,
    texts: Sequence[str],
    *,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    progress: ProgressCallback | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Embed the distinct texts of ``texts`` once each, using the cache.

    Parameters
    ----------
    encoder : Encoder
    texts : sequence of str
    cache : EmbeddingCache, optional
        Looked up first under the encoder's :func:`~sgi_core.embedding.base.cache_key`;
        newly computed vectors are written back. Cached vectors of another width than
        the encoder's ``dimension`` (or, for an encoder without one, than its new
        vectors) are embedded again, never used.
    batch_size : int
    progress : callable, optional
        ``progress(done, total)`` over the texts that had to be encoded.

    Returns
    -------
    unique_emb : ndarray of shape (n_unique, d), float32
    inverse : ndarray of shape (len(texts),)
        ``unique_emb[inverse[i]]`` is the embedding of ``texts[i]``.
    """
    inverse, uniques = pd.factorize(pd.Series(texts, dtype=object), sort=False)
    unique_texts = np.asarray(uniques, dtype=object)
    if len(unique_texts) == 0:
        return np.empty((0, 0), dtype=np.float32), inverse
    keys: list[bytes] = []
    found, cached = np.empty(0, dtype=np.int64), None
    if cache is not None:
        source = cache_key(encoder)
        keys = [text_key(t, source) for t in unique_texts]
        found, cached = cache.get_many(keys, dimension=getattr(encoder, "dimension", None))
    is_missing = np.ones(len(unique_texts), dtype=bool)
    is_missing[found] = False
    missing = np.flatnonzero(is_missing)
    if len(missing):
        new_vectors = np.asarray(
            encoder.encode(unique_texts[missing].tolist(), batch_size=batch_size, progress=progress),
            dtype=np.float32,
        )
        if cache is not None:
            cache.put_many([keys[i] for i in missing], new_vectors)
            if len(found) and cached.shape[1] != new_vectors.shape[1]:
                cache.warn_once("width", f"cached vectors of width {cached.shape[1]} do not match the encoder's "
                                         f"{new_vectors.shape[1]}; they are embedded again")
                cached = np.asarray(encoder.encode(unique_texts[found].tolist(), batch_size=batch_size),
                                    dtype=np.float32)
                cache.put_many([keys[i] for i in found], cached)
    elif progress is not None:
        progress(0, 0)
    width = new_vectors.shape[1] if len(missing) else cached.shape[1]
    unique_emb = np.empty((len(unique_texts), width), dtype=np.float32)
    if len(found):
        unique_emb[found] = cached
    if len(missing):
        unique_emb[missing] = new_vectors
    return unique_emb, inverse
