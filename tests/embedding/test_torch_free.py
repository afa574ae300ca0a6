"""The default CPU path without torch: once the ONNX export exists, the model's tokenizer, the export and numpy
pooling."""

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sgi_core.embedding import load_encoder
from sgi_core.embedding.onnx_encoder import OnnxEncoder, pool, torch_free_encoder
from sgi_core.embedding.registry import _offline_source, resolve_spec
from sgi_core.embedding.sentence_transformer import SentenceTransformerEncoder
from tests.conftest import REPO, SAMPLE_CSV


@pytest.mark.parametrize("mode", ["pooling_mode_mean_tokens", "pooling_mode_cls_token", "pooling_mode_max_tokens"])
def test_pooling_follows_a_loop_over_the_unmasked_tokens(mode):
    rng = np.random.default_rng(0)
    tokens = rng.normal(size=(3, 5, 4)).astype(np.float32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]])
    got = pool(tokens, mask, mode)
    for row in range(3):
        kept = tokens[row, mask[row] == 1]
        expected = {"pooling_mode_mean_tokens": kept.mean(0), "pooling_mode_cls_token": tokens[row, 0],
                    "pooling_mode_max_tokens": kept.max(0)}[mode]
        np.testing.assert_allclose(got[row], expected, rtol=1e-6)


def test_a_folder_with_a_module_this_path_does_not_compute_goes_to_torch(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{}")
    (tmp_path / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Dense", "type": "sentence_transformers.models.Dense"}]))
    assert torch_free_encoder("m", tmp_path, fingerprint="f", backend="onnx", export_dir=tmp_path) is None
    assert torch_free_encoder("m", tmp_path / "absent", fingerprint="f", backend="onnx", export_dir=tmp_path) is None


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A cache folder holding MiniLM's ONNX export, made by the torch path."""
    folder = tmp_path_factory.mktemp("onnx-cache")
    source = _offline_source(resolve_spec("minilm"), unpack=True)
    reference = SentenceTransformerEncoder("sentence-transformers/all-MiniLM-L6-v2", source.path, backend="onnx",
                                           source_fingerprint=source.fingerprint, export_dir=folder)
    return folder, reference


@pytest.mark.slow
def test_the_torch_free_vectors_equal_the_onnx_backends_on_the_sample_and_on_long_texts(exported, monkeypatch):
    folder, reference = exported
    monkeypatch.setenv("SGI_CACHE_DIR", str(folder))
    fast = load_encoder("minilm", device="cpu")
    assert isinstance(fast, OnnxEncoder) and fast.cache_key == reference.cache_key
    assert (fast.dimension, fast.max_seq_length, fast.backend) == (reference.dimension, 256, "onnx")
    sample = pd.read_csv(SAMPLE_CSV)
    texts = list(pd.unique(pd.concat([sample["question"], sample["context"], sample["response"]])))
    texts += [" ".join(texts[:40]), "word " * 2000, "", "Ünïcödé ✓ — 東京 ½"]
    a, b = reference.encode(texts), fast.encode(texts)
    cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert np.max(np.abs(1.0 - cosine)) <= 1e-6
    np.testing.assert_array_equal(reference.token_counts(texts, truncate=True), fast.token_counts(texts, truncate=True))
    np.testing.assert_array_equal(reference.token_counts(texts), fast.token_counts(texts))


@pytest.mark.slow
def test_compute_on_the_default_backend_imports_neither_torch_nor_sentence_transformers(exported):
    folder, _ = exported
    code = ("import sys; from sgi_core.cli import main; "
            "main(['compute', '--q', 'Who wrote it?', '--c', 'Ann wrote it in 1990.', '--r', 'Ann wrote it.']); "
            "print(','.join(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True,
                         env={**os.environ, "SGI_CACHE_DIR": str(folder)})
    first, loaded = out.stdout.splitlines()
    assert first.startswith("SGI=") and loaded == ""
