"""The sequence-to-sequence adapter kind (MiniCheck-FT5 class): one module, one entry, read by its two tokens."""

import json

import numpy as np
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.grounding.adapters import ADAPTER_KINDS, detect_adapter
from sgi_core.grounding.adapters.seq2seq import SEQ2SEQ_PROMPT
from sgi_core.grounding.folder import read_folder
from sgi_core.grounding.runtime import load_grounding_model
from tests.grounding.tiny_models import tokenizer_files

PAIRS = [("The museum opens at nine in the morning.", "The museum opens at nine."),
         ("Tom works at the city hospital.", "Tom has never worked in a hospital."),
         ("It rained in Oslo on Monday.", "It was dry all day.")]
#: Two words that are one token each of the tiny tokenizer's vocabulary.
TOKENS = {"support_token": "morning", "no_support_token": "no"}


@pytest.fixture(scope="module")
def t5_folder(tmp_path_factory):
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    folder = tmp_path_factory.mktemp("seq2seq") / "minicheck"
    folder.mkdir()
    vocab = tokenizer_files(folder, "t5")
    config = T5Config(vocab_size=vocab, d_model=32, d_kv=16, num_heads=2, d_ff=64, num_layers=2, num_decoder_layers=2,
                      feed_forward_proj="gated-gelu", decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(config)
    model.save_pretrained(folder)
    (folder / "sgi_grounding.json").write_text(json.dumps(TOKENS))
    return folder


def _direct(folder, premise, hypothesis):
    """The first decoder step's softmax over the two tokens, one unpadded pair, with transformers alone."""
    import torch
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = T5ForConditionalGeneration.from_pretrained(folder).eval()
    batch = tokenizer(SEQ2SEQ_PROMPT.format(text1=premise, text2=hypothesis), return_tensors="pt")
    ids = [tokenizer(TOKENS[key], add_special_tokens=False)["input_ids"][0] for key in ("support_token",
                                                                                        "no_support_token")]
    with torch.no_grad():
        logits = model(**batch, decoder_input_ids=torch.tensor([[0]])).logits[0, 0, ids]
    return float(torch.softmax(logits, dim=-1)[0])


def test_a_conditional_generation_folder_is_detected_as_seq2seq(t5_folder):
    adapter = detect_adapter(read_folder(t5_folder))
    assert (adapter.kind, adapter.label, adapter.contrast, adapter.prompt) == ("seq2seq", "morning", "no",
                                                                               SEQ2SEQ_PROMPT)
    assert list(ADAPTER_KINDS).count("seq2seq") == 1


@pytest.mark.parametrize("backend", ["torch", "onnx"])
def test_support_is_the_first_decoder_steps_two_token_softmax(t5_folder, backend, tmp_path, monkeypatch):
    monkeypatch.setenv("SGI_CACHE_DIR", str(tmp_path))
    model = load_grounding_model(t5_folder, backend=backend, self_test=False)
    expected = [_direct(t5_folder, p, h) for p, h in PAIRS]
    got = model.support([p for p, _ in PAIRS], [h for _, h in PAIRS], batch_size=2)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert model.adapter.label_index != model.adapter.contrast_index
    assert len(set(np.round(got, 4))) == len(PAIRS)  # the pairs are told apart: nothing is read by position


def test_a_token_text_that_is_not_one_token_is_refused(t5_folder, tmp_path):
    import shutil

    folder = shutil.copytree(t5_folder, tmp_path / "two_tokens")
    (folder / "sgi_grounding.json").write_text(json.dumps({**TOKENS, "support_token": "museum"}))
    with pytest.raises(SGIInputError, match=r"support_token 'museum' of model folder .* is not one token"):
        load_grounding_model(folder, backend="torch", self_test=False)
    (folder / "sgi_grounding.json").write_text(json.dumps({"support_token": "no", "no_support_token": "no"}))
    with pytest.raises(SGIInputError, match="must be two different texts"):
        load_grounding_model(folder, backend="torch", self_test=False)
