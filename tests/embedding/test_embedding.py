import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

from sgi_core.embedding import (
    CacheWarning,
    EmbeddingCache,
    HashingEncoder,
    encode_unique,
    load_encoder,
    model_availability,
)
from sgi_core.errors import SGIInputError
from tests.conftest import REPO


class CountingEncoder(HashingEncoder):
    def __init__(self):
        super().__init__(dim=8)
        self.seen: list[str] = []

    def encode(self, texts, **kwargs):
        self.seen.extend(texts)
        return super().encode(texts, **kwargs)


def test_hashing_encoder_is_stable_across_processes():
    code = "from sgi_core.embedding import HashingEncoder; print(HashingEncoder(16).encode(['the cat sat']).tolist())"
    outputs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={"PYTHONHASHSEED": seed, "PATH": ""}, cwd=REPO).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    np.testing.assert_array_equal(json.loads(outputs.pop()), HashingEncoder(16).encode(["the cat sat"]))


def test_encode_unique_dedupes_and_preserves_order():
    enc = CountingEncoder()
    texts = ["a", "b", "a", "c", "b"]
    emb, inverse = encode_unique(enc, texts)
    assert sorted(enc.seen) == ["a", "b", "c"]
    np.testing.assert_array_equal(emb[inverse], HashingEncoder(8).encode(texts))


def test_cache_serves_second_call(tmp_path):
    enc = CountingEncoder()
    cache = EmbeddingCache(enc.model_id, tmp_path)
    first, inv1 = encode_unique(enc, ["x y", "z"], cache=cache)
    enc.seen.clear()
    second, inv2 = encode_unique(enc, ["z", "x y", "new"], cache=cache)
    assert enc.seen == ["new"]
    np.testing.assert_array_equal(second[inv2][:2], first[inv1][::-1])
    assert len(EmbeddingCache(enc.model_id, tmp_path)) == 3


def test_cache_files_are_per_model(tmp_path):
    a, b = EmbeddingCache("model-a", tmp_path), EmbeddingCache("model/b", tmp_path)
    a.put_many([b"k"], np.ones((1, 2)))
    found, vectors = b.get_many([b"k"])
    assert found.size == 0 and vectors.shape == (0, 0)


def test_get_many_returns_positions_and_one_matrix(tmp_path):
    cache = EmbeddingCache("m", tmp_path)
    vectors = np.arange(12, dtype=np.float32).reshape(4, 3)
    cache.put_many([b"a", b"b", b"c", b"d"], vectors)
    found, got = cache.get_many([b"x", b"c", b"a", b"y"])
    assert got.dtype == np.float32 and got.shape == (2, 3)
    by_position = dict(zip(found.tolist(), got.tolist()))
    assert by_position == {1: vectors[2].tolist(), 2: vectors[0].tolist()}


def test_cached_vectors_of_mixed_widths_are_not_used(tmp_path):
    cache = EmbeddingCache("m", tmp_path)
    cache.put_many([b"a"], np.ones((1, 3)))
    cache.put_many([b"b"], np.ones((1, 4)))
    with pytest.warns(CacheWarning, match="2 vectors of another width than the rest"):
        found, vectors = cache.get_many([b"a", b"b"])
    assert found.size == 0 and vectors.shape == (0, 0)
    found, vectors = cache.get_many([b"a", b"b"], dimension=4)
    assert found.tolist() == [1] and vectors.tolist() == [[1.0] * 4]


def test_partly_cached_texts_equal_uncached(tmp_path):
    texts = ["a b", "c", "a b", "d e f", "c", "g"]
    cache = EmbeddingCache("hashing-8", tmp_path)
    encode_unique(HashingEncoder(8), ["c", "g"], cache=cache)
    enc = CountingEncoder()
    emb, inverse = encode_unique(enc, texts, cache=cache)
    assert sorted(enc.seen) == ["a b", "d e f"]
    np.testing.assert_array_equal(emb[inverse], HashingEncoder(8).encode(texts))
    warm, warm_inverse = encode_unique(enc, texts, cache=cache)
    np.testing.assert_array_equal(warm[warm_inverse], emb[inverse])
    assert len(enc.seen) == 2


def test_unknown_model_fails_fast_with_how_to():
    start = time.monotonic()
    with pytest.raises(SGIInputError, match="neither a registered model"):
        load_encoder("someone/not-a-model")
    assert time.monotonic() - start < 5


def test_unavailable_registered_model_says_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setenv("SGI_MODEL_DIR", str(tmp_path))
    monkeypatch.delenv("SGI_ONLINE", raising=False)
    with pytest.raises(SGIInputError, match=r"model 'bge' \(BAAI/bge-base-en-v1.5\) "
                                            r"is not available offline.*SGI_MODEL_DIR"):
        load_encoder("bge")


def test_availability_lists_registry(monkeypatch, tmp_path):
    monkeypatch.setenv("SGI_MODEL_DIR", str(tmp_path))
    monkeypatch.delenv("SGI_ONLINE", raising=False)
    rows = {r.name: r for r in model_availability()}
    assert list(rows) == ["minilm", "mpnet", "bge", "e5", "gte"]
    assert rows["minilm"].available
    assert not rows["gte"].available and "SGI_MODEL_DIR" in rows["gte"].how_to_get


class _EmbeddingsStub(BaseHTTPRequestHandler):
    requests: list = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                    "body": body})
        data = [{"index": i, "embedding": HashingEncoder(8).encode([t])[0].tolist()}
                for i, t in enumerate(body["input"])]
        payload = json.dumps({"data": list(reversed(data))}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def stub_server():
    _EmbeddingsStub.requests = []
    server = HTTPServer(("127.0.0.1", 0), _EmbeddingsStub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", _EmbeddingsStub.requests
    server.shutdown()


def test_azure_backend_against_stub(stub_server, monkeypatch):
    url, requests = stub_server
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "secret-key-123")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", url)
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME", "emb-deploy")
    monkeypatch.setenv("AZURE_OPENAI_API_VERSION", "2024-02-01")
    enc = load_encoder("azure")
    texts = ["one two", "three", "four five six"]
    out = enc.encode(texts, batch_size=2)
    np.testing.assert_array_equal(out, HashingEncoder(8).encode(texts))
    assert [r["path"] for r in requests] == ["/openai/deployments/emb-deploy/embeddings?api-version=2024-02-01"] * 2
    assert requests[0]["headers"]["api-key"] == "secret-key-123"
    assert "secret-key-123" not in repr(enc) and enc.model_id == "azure:emb-deploy"


def test_openai_backend_against_stub(stub_server, monkeypatch):
    url, requests = stub_server
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-999")
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    enc = load_encoder("openai:text-embedding-3-small")
    enc.encode(["hello"])
    assert requests[0]["path"] == "/embeddings"
    assert requests[0]["body"] == {"input": ["hello"], "model": "text-embedding-3-small"}
    assert requests[0]["headers"]["authorization"] == "Bearer sk-test-999"


def test_api_errors_do_not_leak_the_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-leak-check")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9")
    enc = load_encoder("openai:m")
    with pytest.raises(SGIInputError) as info:
        enc.encode(["x"])
    assert "sk-leak-check" not in str(info.value)
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(SGIInputError, match="OPENAI_API_KEY"):
        load_encoder("openai:m")


@pytest.mark.slow
def test_minilm_reference_similarity(minilm):
    emb = minilm.encode(["A man is eating food.", "A man is eating a piece of bread."])
    cos = float(emb[0] @ emb[1] / np.linalg.norm(emb[0]) / np.linalg.norm(emb[1]))
    assert cos == pytest.approx(0.7553, abs=1e-3)
    assert minilm.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert minilm.max_seq_length == 256


@pytest.mark.slow
def test_minilm_encode_order_matches_single_calls(minilm):
    texts = ["short", "a much longer sentence about grounding and retrieval", "mid length text"]
    batched = minilm.encode(texts, batch_size=2)
    single = np.vstack([minilm.encode([t]) for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-5)


@pytest.mark.slow
def test_minilm_token_sorted_batches_equal_sentence_transformers(minilm, minilm_torch):
    """Batching by token count changes which texts share a batch, not the vectors."""
    import pandas as pd

    from tests.conftest import SAMPLE_CSV

    frame = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).head(40)
    texts = pd.unique(frame[["question", "context", "response"]].to_numpy().ravel()).tolist()
    texts.append("a context far longer than the model reads " * 60)
    calls = []
    ours = minilm.encode(texts, batch_size=16, progress=lambda done, total: calls.append((done, total)))
    reference = minilm_torch.model.encode(texts, batch_size=16, convert_to_numpy=True)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, reference, atol=1e-5)
    assert calls[-1] == (len(texts), len(texts))
    lengths = minilm.token_counts(texts, truncate=True)
    assert lengths.max() == minilm.max_seq_length < minilm.token_counts(texts).max()
