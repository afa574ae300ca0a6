"""The embedding cache shared by threads and processes, and a locked or damaged cache file."""

import sqlite3
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

from sgi_core.embedding import (
    CacheWarning,
    EmbeddingCache,
    HashingEncoder,
    encode_unique,
)
from tests.conftest import REPO

N_THREADS = 8
ROUNDS = 40
# A pool much larger than the texts drawn keeps most lookups missing, so every round
# also writes: on the single unlocked connection of before, 4 of 5 runs failed.
POOL = [f"text number {i} about topic {i % 17}" for i in range(20_000)]


def _hammer(cache, encoder, seed, start, errors, results):
    rng = np.random.default_rng(seed)
    start.wait()
    try:
        for _ in range(ROUNDS):
            texts = [POOL[i] for i in rng.choice(len(POOL), size=50, replace=True)]
            emb, inverse = encode_unique(encoder, texts, cache=cache)
            results.append((texts, emb[inverse]))
            assert len(cache) <= len(POOL)
    except Exception as err:  # collected so that the main thread reports every failure
        errors.append(err)


@pytest.mark.parametrize("run", range(5))
def test_threads_sharing_one_cache_never_fail(tmp_path, run):
    encoder = HashingEncoder(16)
    cache = EmbeddingCache(encoder.model_id, tmp_path)
    errors, results = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        start = threading.Barrier(N_THREADS)
        threads = [threading.Thread(target=_hammer, args=(cache, encoder, 100 * run + k, start, errors, results))
                   for k in range(N_THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    assert len(results) == N_THREADS * ROUNDS
    for texts, vectors in results:
        np.testing.assert_array_equal(vectors, encoder.encode(texts))
    seen = {t for texts, _ in results for t in texts}
    assert len(cache) == len(seen)


_WRITER = """
import sys
from sgi_core.embedding import EmbeddingCache, HashingEncoder, encode_unique
encoder = HashingEncoder(16)
cache = EmbeddingCache(encoder.model_id, sys.argv[1])
offset = int(sys.argv[2])
for start in range(0, 300, 20):
    encode_unique(encoder, [f"process text {offset + i}" for i in range(start, start + 40)], cache=cache)
"""


def test_processes_writing_one_cache_file(tmp_path):
    runs = [subprocess.Popen([sys.executable, "-W", "error::UserWarning", "-c", _WRITER, str(tmp_path), str(k * 150)],
                             cwd=REPO, stderr=subprocess.PIPE, text=True) for k in range(3)]
    failures = [err for proc in runs for err in [proc.communicate()[1]] if proc.returncode != 0]
    assert failures == []
    # writer k stores texts k*150 .. k*150+319; together 0 .. 619
    assert len(EmbeddingCache("hashing-16", tmp_path)) == 620


def test_locked_file_keeps_the_vectors_and_warns(tmp_path):
    encoder = HashingEncoder(8)
    cache = EmbeddingCache(encoder.model_id, tmp_path, timeout=0.2)
    other = sqlite3.connect(cache.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    with pytest.warns(CacheWarning, match=r"stayed locked by another program for 0.2 s; 2 new vectors were not saved"):
        emb, inverse = encode_unique(encoder, ["a b", "c", "a b"], cache=cache)
    np.testing.assert_array_equal(emb[inverse], encoder.encode(["a b", "c", "a b"]))
    other.execute("ROLLBACK")
    other.close()
    assert len(cache) == 0
    encode_unique(encoder, ["a b", "c"], cache=cache)
    assert len(cache) == 2


def test_garbage_file_is_moved_aside_and_rebuilt(tmp_path):
    first = EmbeddingCache("hashing-8", tmp_path)
    first.close()
    path = first.path
    garbage = b"this is not an SQLite database\n" * 200
    path.write_bytes(garbage)
    for companion in tmp_path.glob("*.sqlite-*"):
        companion.unlink()
    with pytest.warns(CacheWarning, match=r"was damaged \(file is not a database\); it was moved to"):
        cache = EmbeddingCache("hashing-8", tmp_path)
    (aside,) = tmp_path.glob("*.damaged-*[0-9]")
    assert aside.read_bytes() == garbage
    encoder = HashingEncoder(8)
    emb, inverse = encode_unique(encoder, ["x", "y"], cache=cache)
    assert len(cache) == 2
    np.testing.assert_array_equal(emb[inverse], encoder.encode(["x", "y"]))


def test_damaged_pages_found_mid_run_rebuild_and_keep_the_run(tmp_path):
    encoder = HashingEncoder(64)
    texts = [f"row {i}" for i in range(2000)]
    cache = EmbeddingCache(encoder.model_id, tmp_path)
    encode_unique(encoder, texts, cache=cache)
    cache.close()
    with open(cache.path, "r+b") as handle:  # keep the header, wreck the table pages
        handle.seek(3 * 4096)
        handle.write(b"\xff" * 20 * 4096)
    cache = EmbeddingCache(encoder.model_id, tmp_path)
    with pytest.warns(CacheWarning, match=r"was damaged \(database disk image is malformed\)"):
        emb, inverse = encode_unique(encoder, texts, cache=cache)
    np.testing.assert_array_equal(emb[inverse], encoder.encode(texts))
    assert len(list(tmp_path.glob("*.damaged-*[0-9]"))) == 1
    assert len(cache) == len(texts)


def test_cache_of_the_old_layout_is_dropped(tmp_path):
    first = EmbeddingCache("hashing-8", tmp_path)
    first.close()
    path = first.path
    path.unlink()
    for companion in tmp_path.glob("*.sqlite-*"):
        companion.unlink()
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE emb (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")
    old.execute("INSERT INTO emb VALUES (?, ?)", (b"k", np.ones(8, dtype="<f4").tobytes()))
    old.commit()
    old.close()
    cache = EmbeddingCache("hashing-8", tmp_path)
    assert len(cache) == 0
    tables = {row[0] for row in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"vectors"}
