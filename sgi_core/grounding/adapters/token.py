"""Token classifiers (LettuceDetect-class span markers): support = 1 - the largest P(hallucinated) of a response token.

The pair template feeds the context chunk first and the whole response second (as trained);
the hallucinated label is read by name, and only tokens of the second segment count.
"""

from __future__ import annotations

from sgi_core.grounding.adapters.base import (
    HALLUCINATED_NAMES,
    AdapterKind,
    find_label,
    id2label,
    pair_inputs,
    pair_overhead,
    softmax_label,
)


def _hallucinated_label(config: dict, manifest: dict, folder) -> tuple[str, int, int, None]:
    labels = id2label(config, folder)
    label, index = find_label(labels, named=manifest.get("hallucinated_label"), names=HALLUCINATED_NAMES,
                              what="hallucinated", manifest_key="hallucinated_label", folder=folder)
    return label, index, len(labels), None


def _network(folder, adapter):
    from transformers import AutoModelForTokenClassification

    return AutoModelForTokenClassification.from_pretrained(
        folder.path, local_files_only=True, trust_remote_code=False, use_safetensors=folder.safetensors,
        weights_only=True).train(False)


def _to_support(model, logits, batch):
    import torch

    probs = softmax_label(model, logits, batch)
    second = torch.tensor([[sid == 1 for sid in batch.sequence_ids(i)] for i in range(len(probs))],
                          device=probs.device)
    return 1.0 - torch.where(second, probs, torch.zeros_like(probs)).amax(dim=1)


TOKEN = AdapterKind(
    name="token",
    detects=lambda config: any(str(a).endswith("ForTokenClassification") for a in config.get("architectures") or []),
    default_hypothesis="response", read_label=_hallucinated_label, network=_network, encode=pair_inputs,
    logits=lambda output: output.logits, to_support=_to_support, overhead=pair_overhead,
    output_axes={0: "batch", 1: "tokens"}, marks_tokens=True)
