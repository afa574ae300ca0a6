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

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """Return the cached vectors for those keys that are present."""
        found: dict[bytes, np.ndarray] = {}
        for start in range(0, len(keys), _SQL_PARAMS):
            chunk = list(keys[start : start + _SQL_PARAMS])
            marks = ",".join("?" * len(chunk))
            for key, blob in self._conn.execute(f"SELECT key, vec FROM emb WHERE key IN ({marks})", chunk):
                found[key] = np.frombuffer(blob, dtype="<f4")
        return found

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
    inverse, unique_texts = pd.factorize(pd.Series(texts, dtype=object), sort=False)
    if len(unique_texts) == 0:
        return np.empty((0, 0), dtype=np.float32), inverse
    keys = [text_key(t) for t in unique_texts]
    cached = cache.get_many(keys) if cache is not None else {}
    missing = [i for i, key in enumerate(keys) if key not in cached]
    new_vectors = None
    if missing:
        new_vectors = np.asarray(
            encoder.encode([unique_texts[i] for i in missing], batch_size=batch_size, progress=progress),
            dtype=np.float32,
        )
        if cache is not None:
            cache.put_many([keys[i] for i in missing], new_vectors)
    elif progress is not None:
        progress(0, 0)
    dim = new_vectors.shape[1] if new_vectors is not None else next(iter(cached.values())).shape[0]
    unique_emb = np.empty((len(unique_texts), dim), dtype=np.float32)
    if missing:
        unique_emb[missing] = new_vectors
    for i, key in enumerate(keys):
        if key in cached:
            unique_emb[i] = cached[key]
    return unique_emb, inverse
