"""--backend onnx / onnx-int8: the same vectors as torch (int8: close), exported once, rebuilt when damaged."""

import numpy as np
import pandas as pd
import pytest

from sgi_core.embedding import BACKENDS, EmbeddingCache, backend_used, load_encoder
from sgi_core.errors import SGIInputError
from sgi_core.io.triples import load_triples
from sgi_core.models.int8 import QUANTIZATION, quantization_target
from sgi_core.models.onnx_export import check_backend, export_folder, resolve_backend
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV


def test_the_backends_are_auto_torch_and_two_onnx_runtimes():
    assert BACKENDS == ("auto", "torch", "onnx", "onnx-int8")


@pytest.mark.parametrize("device, precision, expected", [
    ("cpu", "fp32", "onnx"), ("cuda", "fp32", "torch"), ("mps", "fp32", "torch"), ("cpu", "fp16", "torch"),
])
def test_auto_is_onnx_fp32_on_the_cpu_and_torch_elsewhere(device, precision, expected):
    assert resolve_backend("auto", device=device, precision=precision) == expected
    assert resolve_backend("onnx-int8", device=device, precision=precision) == "onnx-int8"  # an explicit one stays


def test_auto_falls_back_to_torch_without_onnx_runtime(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a))
    assert resolve_backend("auto") == "torch"


def test_the_test_encoder_takes_auto_and_records_torch():
    assert backend_used(load_encoder("hashing-16")) == "torch"
    assert backend_used(load_encoder("hashing-16", backend="torch")) == "torch"


@pytest.mark.parametrize("backend, options, message", [
    ("tensorrt", {}, "unknown backend 'tensorrt'"),
    ("onnx", {"device": "cuda"}, "runs on the CPU only"),
    ("onnx-int8", {"precision": "fp16"}, "takes --precision fp32 only"),
])
def test_backends_that_cannot_run_are_refused(backend, options, message):
    with pytest.raises(SGIInputError, match=message):
        check_backend(backend, **options)


def test_onnx_is_refused_for_encoders_that_are_not_sentence_transformers():
    with pytest.raises(SGIInputError, match="applies to sentence-transformers models"):
        load_encoder("hashing-16", backend="onnx")
    with pytest.raises(SGIInputError, match="unknown backend"):
        load_encoder("hashing-16", backend="onnx-fp8")


@pytest.mark.parametrize("machine, flags, target", [
    ("x86_64", {"avx2", "avx512_vnni"}, "avx512_vnni"),
    ("x86_64", {"avx2", "avx_vnni"}, "avx512_vnni"),
    ("x86_64", {"avx2"}, "avx2"),
    ("x86_64", set(), "avx2"),
    ("aarch64", {"asimd"}, "arm64"),
    ("arm64", set(), "arm64"),
])
def test_the_int8_config_follows_the_cpu(machine, flags, target):
    assert quantization_target(machine, flags) == target
    assert target in QUANTIZATION


def test_exports_are_keyed_on_the_weights_and_the_backend(tmp_path):
    folders = {export_folder(tmp_path, source, backend)
               for source in ("pypi:model==1", "pypi:model==2") for backend in ("onnx", "onnx-int8")}
    assert len(folders) == 4 and all(folder.parent == tmp_path / "onnx" for folder in folders)


@pytest.mark.slow
def test_the_default_on_the_cpu_is_onnx(isolated_cache):
    encoder = load_encoder("minilm", device="cpu")
    assert backend_used(encoder) == "onnx" and encoder.cache_key.endswith("|fp32|onnx")


@pytest.mark.slow
def test_onnx_fp32_gives_the_torch_vectors_and_int8_close_ones(isolated_cache, minilm_torch):
    table = load_triples(SAMPLE_CSV)
    texts = pd.unique(table.frame[["question", "context", "response"]].to_numpy().ravel()).tolist()[:120]
    reference = minilm_torch.encode(texts)
    onnx = load_encoder("minilm", device="cpu", backend="onnx")
    np.testing.assert_allclose(onnx.encode(texts), reference, atol=1e-5)
    int8 = load_encoder("minilm", device="cpu", backend="onnx-int8").encode(texts)
    cosine = (int8 * reference).sum(1) / np.linalg.norm(int8, axis=1) / np.linalg.norm(reference, axis=1)
    assert 0.95 < cosine.min() and cosine.max() < 1 - 1e-6  # close, and really quantised


@pytest.mark.slow
def test_each_backend_caches_its_own_vectors_and_scores_alike(tmp_path, isolated_cache, minilm_torch):
    minilm = minilm_torch
    table = load_triples(SAMPLE_CSV)
    rows = table.frame.head(40)
    subset = load_triples(_write(rows, tmp_path / "rows.csv"))
    torch_sgi = score_table(subset, minilm, cache=EmbeddingCache(minilm.model_id, isolated_cache))["sgi"]
    onnx = load_encoder("minilm", device="cpu", backend="onnx")
    assert onnx.cache_key == minilm.cache_key + "|onnx"
    onnx_sgi = score_table(subset, onnx, cache=EmbeddingCache(onnx.model_id, isolated_cache))["sgi"]
    np.testing.assert_allclose(onnx_sgi, torch_sgi, rtol=1e-4)
    distinct = len(pd.unique(rows[["question", "context", "response"]].to_numpy().ravel()))
    assert len(EmbeddingCache(minilm.model_id, isolated_cache)) == 2 * distinct


@pytest.mark.slow
def test_a_damaged_export_is_rebuilt_and_a_whole_one_reused(isolated_cache):
    first = load_encoder("minilm", device="cpu", backend="onnx")
    folder = export_folder(isolated_cache, first.cache_key.split("|")[0], "onnx")
    model = folder / "model.onnx"
    stamp = model.stat().st_mtime_ns
    load_encoder("minilm", device="cpu", backend="onnx")
    assert model.stat().st_mtime_ns == stamp  # intact: not exported again
    with open(model, "r+b") as handle:
        handle.truncate(model.stat().st_size // 2)
    again = load_encoder("minilm", device="cpu", backend="onnx")
    np.testing.assert_allclose(again.encode(["a rebuilt export"]), first.encode(["a rebuilt export"]), atol=1e-6)
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no staging folder left behind


def _write(frame: pd.DataFrame, path):
    frame.to_csv(path, index=False)
    return path


@pytest.fixture
def backends_asked(monkeypatch):
    """The backend of every ``load_encoder`` call; the model itself is the hashing test encoder."""
    import sgi_core.embedding
    import sgi_core.pipelines.model_comparison

    asked = []

    def recording(name, **options):
        asked.append(options.get("backend"))
        return load_encoder("hashing-16")

    monkeypatch.setattr(sgi_core.embedding, "load_encoder", recording)
    monkeypatch.setattr(sgi_core.pipelines.model_comparison, "load_encoder", recording)
    return asked


def test_every_command_passes_the_backend_to_load_encoder(tmp_path, backends_asked):
    from sgi_core.cli import main

    source = tmp_path / "in.csv"
    pd.read_csv(SAMPLE_CSV).head(6).to_csv(source, index=False)
    options = ["--backend", "onnx-int8"]
    assert main(["compute", "--q", "q", "--c", "c", "--r", "r", *options]) == 0
    assert main(["score", str(source), "-o", str(tmp_path / "out.csv"), *options]) == 0
    assert main(["report", str(SAMPLE_CSV), "--n-boot", "0", *options]) == 0
    assert backends_asked == ["onnx-int8"] * 3


def test_an_unknown_backend_is_refused_when_parsing(capsys):
    from sgi_core.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["compute", "--q", "q", "--c", "c", "--r", "r", "--backend", "tvm"])
    assert exit_info.value.code == 2 and "invalid choice: 'tvm'" in capsys.readouterr().err


@pytest.mark.slow
def test_score_through_onnx_writes_the_torch_scores(tmp_path, isolated_cache):
    from sgi_core.cli import main

    source = tmp_path / "in.csv"
    pd.read_csv(SAMPLE_CSV).head(12).to_csv(source, index=False)
    for backend in ("torch", "onnx"):
        assert main(["score", str(source), "-o", str(tmp_path / f"{backend}.csv"), "--backend", backend]) == 0
    torch_sgi, onnx_sgi = (pd.read_csv(tmp_path / f"{b}.csv")["sgi"] for b in ("torch", "onnx"))
    np.testing.assert_allclose(onnx_sgi, torch_sgi, rtol=1e-4)


@pytest.mark.slow
def test_an_int8_vector_does_not_depend_on_the_texts_beside_it(isolated_cache):
    table = load_triples(SAMPLE_CSV)
    texts = pd.unique(table.frame[["question", "context", "response"]].to_numpy().ravel()).tolist()[:60]
    int8 = load_encoder("minilm", device="cpu", backend="onnx-int8")
    together = int8.encode(texts)
    alone = np.vstack([int8.encode([text]) for text in texts[:8]])
    np.testing.assert_array_equal(together[:8], alone)
    np.testing.assert_array_equal(int8.encode(texts[::-1])[::-1], together)
    torch_free = load_encoder("minilm", device="cpu", backend="onnx-int8")  # the export exists now
    assert type(torch_free).__name__ == "OnnxEncoder" and type(int8).__name__ != "OnnxEncoder"
    np.testing.assert_allclose(torch_free.encode(texts[:8]), alone, atol=1e-6)
    np.testing.assert_array_equal(torch_free.encode(texts[::-1])[::-1], torch_free.encode(texts))
