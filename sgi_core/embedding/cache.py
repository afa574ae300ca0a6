"""On-disk embedding cache keyed by model id and text hash.

One SQLite file per model under the cache folder (``$SGI_CACHE_DIR``, default
``~/.cache/sgi_workbench/embeddings``). Vectors are stored as raw little-endian
float32 bytes and read back with ``numpy.frombuffer``: nothing is unpickled.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from sgi_core.embedding.base import Encoder, ProgressCallback
from sgi_core.errors import SGIInputError

_SQL_PARAMS = 900  # below SQLite's default limit on bound parameters


def default_cache_dir() -> Path:
    """``$SGI_CACHE_DIR`` or ``~/.cache/sgi_workbench/embeddings``."""
    env = os.environ.get("SGI_CACHE_DIR")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "sgi_workbench" / "embeddings"


def text_key(text: str) -> bytes:
    """SHA-256 digest of the UTF-8 text: the cache key within one model."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingCache:
    """Persistent store of embeddings for one model.

    Parameters
    ----------
    model_id : str
        The encoder's ``model_id``; each model gets its own file.
    cache_dir : path-like, optional
        Folder for the cache files (default :func:`default_cache_dir`).
    """

    def __init__(self, model_id: str, cache_dir: str | os.PathLike | None = None):
        self.model_id = model_id
        folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)
        digest = hashlib.sha256(model_id.encode()).hexdigest()[:8]
        self.path = folder / f"{slug}-{digest}.sqlite"
        self._conn = sqlite3.connect(self.path, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS emb (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")
        self._conn.commit()

    def __len__(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM emb").fetchone()[0]

    def get_many(self, keys: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """Look up distinct keys.

        The vectors come back as one matrix built from the joined blobs, not one
        array per key: on a warm cache this lookup is most of the scoring time.

        Returns
        -------
        found : ndarray of int64
            Positions in ``keys`` whose vectors are cached.
        vectors : ndarray of shape (len(found), d), float32
            ``vectors[j]`` belongs to ``keys[found[j]]``; shape ``(0, 0)`` when
            nothing is cached.

        Raises
        ------
        SGIInputError
            If the stored vectors do not all have the same width (a damaged file).
        """
        position = {key: i for i, key in enumerate(keys)}
        found: list[int] = []
        blobs: list[bytes] = []
        for start in range(0, len(keys), _SQL_PARAMS):
            chunk = list(keys[start : start + _SQL_PARAMS])
            marks = ",".join("?" * len(chunk))
            for key, blob in self._conn.execute(f"SELECT key, vec FROM emb WHERE key IN ({marks})", chunk):
                found.append(position[key])
                blobs.append(blob)
        if not found:
            return np.empty(0, dtype=np.int64), np.empty((0, 0), dtype=np.float32)
        if len({len(blob) for blob in blobs}) != 1:
            raise SGIInputError(
                f"the embedding cache '{self.path}' holds vectors of different widths",
                hint="Delete the file; it is rebuilt on the next run",
            )
        vectors = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(found), -1)
        return np.asarray(found, dtype=np.int64), vectors

    def put_many(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Store one vector per key (float32)."""
        rows = np.ascontiguousarray(vectors, dtype="<f4")
        self._conn.executemany(
            "INSERT OR REPLACE INTO emb (key, vec) VALUES (?, ?)",
            ((key, rows[i].tobytes()) for i, key in enumerate(keys)),
        )
        self._conn.commit()

    def close(self) -> None:
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
        Looked up first; newly computed vectors are written back.
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
        keys = [text_key(t) for t in unique_texts]
        found, cached = cache.get_many(keys)
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
    elif progress is not None:
        progress(0, 0)
    width = new_vectors.shape[1] if len(missing) else cached.shape[1]
    unique_emb = np.empty((len(unique_texts), width), dtype=np.float32)
    if len(found):
        unique_emb[found] = cached
    if len(missing):
        unique_emb[missing] = new_vectors
    return unique_emb, inverse
