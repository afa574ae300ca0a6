"""Device choice, precision and token-budget batches (run on the CPU)."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from sgi_core.embedding import load_encoder, resolve_device
from sgi_core.errors import SGIInputError
from sgi_core.models.device import (
    check_precision,
    count_batches,
    token_budget_batches,
)


@pytest.fixture
def sees(monkeypatch):
    """Set what torch reports: ``sees(cuda=..., mps=..., count=...)``."""

    def set_devices(*, cuda=False, mps=False, count=0):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)

    monkeypatch.delenv("SGI_DEVICE", raising=False)
    return set_devices


@pytest.mark.parametrize(
    ("cuda", "mps", "expected"),
    [(True, True, "cuda"), (True, False, "cuda"), (False, True, "mps"), (False, False, "cpu")],
)
def test_auto_prefers_cuda_then_mps_then_cpu(sees, cuda, mps, expected):
    sees(cuda=cuda, mps=mps, count=int(cuda))
    assert resolve_device("auto") == expected
    assert resolve_device() == expected


def test_explicit_devices_and_the_environment_default(sees, monkeypatch):
    sees(cuda=True, count=2)
    assert [resolve_device(d) for d in ("cpu", "CUDA", "cuda:1", " auto ")] == ["cpu", "cuda", "cuda:1", "cuda"]
    monkeypatch.setenv("SGI_DEVICE", "cpu")
    assert resolve_device() == "cpu"
    assert resolve_device("cuda") == "cuda"


@pytest.mark.parametrize(
    ("device", "message"),
    [
        ("cuda", r"device 'cuda' is not available: torch sees no CUDA GPU. Use --device auto or cpu"),
        ("mps", r"device 'mps' is not available: torch sees no Apple MPS device"),
        ("tpu", r"unknown device 'tpu'. Use one of auto, cpu, cuda, mps \(or cuda:<index>\)"),
        ("cpu:0", r"unknown device 'cpu:0'"),
        ("cuda:x", r"unknown device 'cuda:x'"),
    ],
)
def test_unavailable_or_unknown_device_is_an_error(sees, device, message):
    sees(cuda=False, mps=False)
    with pytest.raises(SGIInputError, match=message):
        resolve_device(device)


def test_cuda_index_beyond_the_gpus_and_a_bad_environment_value(sees, monkeypatch):
    sees(cuda=True, count=1)
    with pytest.raises(SGIInputError, match=r"'cuda:1' is not available: torch sees 1 CUDA GPU"):
        resolve_device("cuda:1")
    monkeypatch.setenv("SGI_DEVICE", "gpu")
    with pytest.raises(SGIInputError, match=r"unknown \$SGI_DEVICE 'gpu'"):
        resolve_device()


def test_load_encoder_refuses_an_absent_gpu_before_loading(sees):
    sees(cuda=False)
    with pytest.raises(SGIInputError, match="torch sees no CUDA GPU"):
        load_encoder("minilm", device="cuda")
    assert load_encoder("hashing-8", device="cuda").dimension == 8


def test_unknown_precision_is_an_error():
    assert check_precision("bf16") == "bf16"
    with pytest.raises(SGIInputError, match="unknown precision 'fp8'. Use one of fp32, fp16, bf16"):
        check_precision("fp8")


def toy_token_counts(texts):
    """Whitespace words plus the two special tokens ([CLS], [SEP]) a BERT tokenizer adds."""
    return np.array([len(t.split()) + 2 for t in texts])


def test_token_budget_batches_on_a_toy_tokenizer():
    texts = ["a b c d e f", "a", "a b", "a b c d e f g h i j", "a b c", "x y"]
    counts = toy_token_counts(texts)
    assert counts.tolist() == [8, 3, 4, 12, 5, 4]
    batches = [b.tolist() for b in token_budget_batches(counts, 16)]
    # longest first: 12 (alone: 2 x 12 > 16), then 8, 5 (2 x 8 = 16), then 4, 4, 3
    # (3 x 4 = 12; a 4th would be 16 but none left)
    assert batches == [[3], [0, 4], [2, 5, 1]]
    assert [b.tolist() for b in token_budget_batches(counts, 5)] == [[3], [0], [4], [2], [5], [1]]
    assert [b.tolist() for b in count_batches(counts, 4)] == [[3, 0, 4, 2], [5, 1]]
    with pytest.raises(SGIInputError, match="token_budget must be an int >= 1. Got 0 instead"):
        token_budget_batches(counts, 0)


@given(st.lists(st.integers(1, 300), max_size=60), st.integers(1, 2000))
def test_token_budget_batches_are_a_greedy_partition_within_budget(counts, budget):
    batches = token_budget_batches(counts, budget)
    order = np.concatenate(batches) if batches else np.array([], dtype=int)
    assert sorted(order.tolist()) == list(range(len(counts)))
    sorted_counts = np.asarray(counts)[order]
    assert np.all(np.diff(sorted_counts) <= 0)
    for k, batch in enumerate(batches):
        longest = counts[batch[0]]
        assert len(batch) == 1 or len(batch) * longest <= budget
        if k + 1 < len(batches):
            assert (len(batch) + 1) * longest > budget


def _encode_as_before(model, texts, batch_size):
    """The CPU path as it was: texts sorted by truncated token count, fixed-size batches."""
    counts = np.array([len(ids) for ids in model.tokenizer(texts, truncation=True,
                                                           max_length=model.max_seq_length)["input_ids"]])
    out = np.empty((len(texts), model.get_embedding_dimension()), dtype=np.float32)
    order = np.argsort(-counts, kind="stable")
    for start in range(0, len(texts), batch_size):
        batch = order[start:start + batch_size]
        out[batch] = model.encode([texts[i] for i in batch], batch_size=batch_size, convert_to_numpy=True)
    return out


TEXTS = ["short", "A man is eating food.", "a much longer sentence about grounding and retrieval " * 3,
         "mid length text about a cat", "x", "The capital of France is Paris, said the context."]


@pytest.mark.slow
def test_cpu_output_is_unchanged(minilm_torch):
    assert minilm_torch.device == "cpu" and minilm_torch.token_budget is None
    np.testing.assert_array_equal(minilm_torch.encode(TEXTS, batch_size=4),
                                  _encode_as_before(minilm_torch.model, TEXTS, 4))


@pytest.mark.slow
def test_token_budget_and_bf16_on_the_cpu(minilm_torch):
    minilm = minilm_torch
    budgeted = load_encoder("minilm", device="cpu", token_budget=40, backend="torch")
    assert budgeted.cache_key == minilm.cache_key
    np.testing.assert_allclose(budgeted.encode(TEXTS), minilm.encode(TEXTS), atol=1e-5)
    half = load_encoder("minilm", device="cpu", precision="bf16")
    assert half.cache_key.endswith("|bf16") and minilm.cache_key.endswith("|fp32")
    got, ref = half.encode(TEXTS), minilm.encode(TEXTS)
    cosine = np.sum(got * ref, axis=1) / np.linalg.norm(got, axis=1) / np.linalg.norm(ref, axis=1)
    assert got.dtype == np.float32 and cosine.min() > 0.99 and np.abs(got - ref).max() > 0
