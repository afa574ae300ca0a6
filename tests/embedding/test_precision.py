"""--precision: reaches every model load, refused where torch cannot compute it, and changes SGI only slightly."""

import numpy as np
import pandas as pd
import pytest
import torch

import sgi_core.embedding
import sgi_core.pipelines.model_comparison
from sgi_core.cli import main
from sgi_core.embedding import EmbeddingCache, load_encoder
from sgi_core.embedding.sentence_transformer import check_precision_runs
from sgi_core.errors import SGIInputError
from sgi_core.io.triples import load_triples
from sgi_core.pipelines.ray_engine import score_with_ray
from sgi_core.pipelines.ray_scorer import Scorer
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV

TRIPLES = pd.DataFrame({
    "question": ["Who wrote Hamlet?", "What is the capital of France?", "Who wrote Hamlet?"],
    "context": ["Hamlet is a tragedy written by William Shakespeare around 1600.",
                "Paris is the capital and largest city of France.",
                "Hamlet is a tragedy written by William Shakespeare around 1600."],
    "response": ["William Shakespeare", "The capital of France is Lyon.", "Christopher Marlowe wrote it."],
    "label": [1, 0, 0],
})


@pytest.fixture
def load_calls(monkeypatch):
    """The keyword arguments of every ``load_encoder`` call, each passed on to the real function."""
    calls = []
    real = sgi_core.embedding.load_encoder

    def recording(name, **options):
        calls.append(options)
        return real(name, **options)

    monkeypatch.setattr(sgi_core.embedding, "load_encoder", recording)
    monkeypatch.setattr(sgi_core.pipelines.model_comparison, "load_encoder", recording)
    return calls


def test_every_command_passes_the_precision_and_device_to_load_encoder(tmp_path, load_calls):
    source = tmp_path / "in.csv"
    TRIPLES.to_csv(source, index=False)
    options = ["--model", "hashing-16", "--device", "cpu", "--precision", "bf16"]
    assert main(["compute", "--q", "q", "--c", "c", "--r", "r", *options]) == 0
    assert main(["score", str(source), "-o", str(tmp_path / "out.csv"), *options]) == 0
    assert main(["gate", str(SAMPLE_CSV), "--write-policy", str(tmp_path / "policy.json"), "--n-boot", "0",
                 *options]) == 0
    assert main(["report", str(SAMPLE_CSV), "--models", "hashing-16", "--n-boot", "0", *options[2:]]) == 0
    assert [(call["device"], call["precision"]) for call in load_calls] == [("cpu", "bf16")] * 4


def test_fp32_is_the_default(tmp_path, load_calls):
    assert main(["compute", "--q", "q", "--c", "c", "--r", "r", "--model", "hashing-16"]) == 0
    assert load_calls[0]["precision"] == "fp32"


def test_each_precision_runs_on_this_cpu():
    for precision in ("fp32", "fp16", "bf16"):
        check_precision_runs(precision, "cpu")


def test_a_precision_torch_cannot_compute_is_refused_before_the_model_loads(monkeypatch):
    # Torch builds without half-precision CPU kernels fail like this; the installed one has them.
    layer_norm = torch.nn.functional.layer_norm

    def without_half_kernels(x, *args, **kwargs):
        if x.dtype == torch.float16:
            raise RuntimeError("\"LayerNormKernelImpl\" not implemented for 'Half'")
        return layer_norm(x, *args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "layer_norm", without_half_kernels)
    message = r"precision 'fp16' does not run on device 'cpu' with torch .*LayerNormKernelImpl.*Use --precision fp32"
    with pytest.raises(SGIInputError, match=message):
        check_precision_runs("fp16", "cpu")
    with pytest.raises(SGIInputError, match=message):
        load_encoder("minilm", device="cpu", precision="fp16")
    check_precision_runs("bf16", "cpu")


@pytest.mark.parametrize("precision, message", [("fp8", "unknown precision 'fp8'. Use one of fp32, fp16, bf16"),
                                                ("FP16", "unknown precision 'FP16'")])
def test_unknown_precisions_are_refused(precision, message):
    with pytest.raises(SGIInputError, match=message):
        check_precision_runs(precision, "cpu")


def test_ray_refuses_an_unknown_precision_before_starting(tmp_path):
    source = tmp_path / "in.csv"
    TRIPLES.to_csv(source, index=False)
    with pytest.raises(SGIInputError, match="unknown precision 'half'"):
        score_with_ray(source, tmp_path / "out", model="hashing-16", precision="half")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_fp16_scores_on_the_cpu_close_to_fp32_and_are_cached_apart(tmp_path, isolated_cache, minilm):
    source = tmp_path / "in.csv"
    TRIPLES.to_csv(source, index=False)
    for precision in ("fp16", "fp32"):
        assert main(["score", str(source), "-o", str(tmp_path / f"{precision}.csv"), "--model", "minilm",
                     "--device", "cpu", "--precision", precision]) == 0
    half, full = (pd.read_csv(tmp_path / f"{p}.csv")["sgi"].to_numpy() for p in ("fp16", "fp32"))
    direct = score_table(load_triples(source), load_encoder("minilm", device="cpu", precision="fp16"))
    np.testing.assert_array_equal(half, direct["sgi"].to_numpy())
    np.testing.assert_allclose(full, score_table(load_triples(source), minilm)["sgi"].to_numpy(), rtol=1e-6)
    # fp16 keeps about 3 significant digits per activation; SGI moves in its third decimal at most.
    assert 0 < np.abs(half - full).max() < 5e-3
    distinct = len(pd.unique(TRIPLES[["question", "context", "response"]].to_numpy().ravel()))
    assert len(EmbeddingCache(minilm.model_id, isolated_cache)) == 2 * distinct


@pytest.mark.slow
def test_a_ray_actor_loads_its_model_at_the_precision_asked():
    scorer = Scorer("minilm", {"device": "cpu", "precision": "bf16"}, use_cache=False, label_positive=None,
                    batch_size=64)
    assert scorer._encoder.precision == "bf16" and scorer._encoder.cache_key.endswith("|bf16")
