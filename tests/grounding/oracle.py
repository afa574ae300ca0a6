"""The direct forward each adapter must equal: transformers' model on one unpadded pair, then softmax."""

from __future__ import annotations

import json

import numpy as np


def direct_support(folder, premise: str, hypothesis: str, *, label: str) -> float:
    """P(label) of one pair (token classifiers: 1 - the largest P(label) of a hypothesis token), unbatched."""
    import torch
    import transformers
    from transformers import AutoTokenizer

    config = json.loads((folder / "config.json").read_text())
    index = {v: int(k) for k, v in config["id2label"].items()}[label]
    if config.get("model_type") == "HHEMv2Config":
        return _direct_hhem(folder, premise, hypothesis, index)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    token = config["architectures"][0].endswith("ForTokenClassification")
    model = getattr(transformers, config["architectures"][0]).from_pretrained(folder).eval()
    batch = tokenizer(premise, hypothesis, return_tensors="pt")
    with torch.no_grad():
        probs = torch.softmax(model(**batch).logits, dim=-1)[0].numpy()
    if not token:
        return float(probs[index])
    second = np.array([sid == 1 for sid in batch.sequence_ids(0)])
    return float(1.0 - probs[second, index].max())


def _direct_hhem(folder, premise: str, hypothesis: str, index: int) -> float:
    import torch
    from safetensors.torch import load_file
    from transformers import AutoTokenizer, T5Config, T5EncoderModel

    from sgi_core.grounding.adapters import HHEM_PROMPT

    state = load_file(folder / "model.safetensors")
    encoder = T5EncoderModel(T5Config.from_pretrained(folder / "t5"))
    encoder.load_state_dict({k.removeprefix("t5.transformer."): v for k, v in state.items()
                             if k.startswith("t5.transformer.")}, strict=False)
    tokenizer = AutoTokenizer.from_pretrained(folder / "t5")
    batch = tokenizer(HHEM_PROMPT.format(text1=premise, text2=hypothesis), return_tensors="pt")
    with torch.no_grad():
        hidden = encoder.eval()(**batch).last_hidden_state[0, 0]
        logits = state["t5.classifier.weight"] @ hidden + state["t5.classifier.bias"]
    return float(torch.softmax(logits, dim=-1)[index])
