"""Sequence classifiers read through the pair template: NLI cross-encoders and two-label consistency checkers.

``"nli"`` reads ``*ForSequenceClassification`` models with three or more labels (BERT,
RoBERTa, DeBERTa-v2/v3, ModernBERT MNLI-class cross-encoders); ``"consistency"`` those with
two (MiniCheck-RoBERTa/DeBERTa-class checkers, document then claim). Both feed the premise (a
context chunk) first and the hypothesis second, as they are trained, and read P(entailment)
or P(supported) from the softmax, by label name.
"""

from __future__ import annotations

from sgi_core.grounding.adapters.base import (
    AdapterKind,
    pair_inputs,
    pair_overhead,
    softmax_label,
    supported_label,
)


def _sequence_classifier(config: dict) -> bool:
    return any(str(a).endswith("ForSequenceClassification") for a in config.get("architectures") or [])


def _labels(config: dict) -> int:
    return len(config.get("id2label") or {})


def sequence_network(folder, adapter):
    """transformers' ``AutoModelForSequenceClassification`` of the checked copy, weights as tensors only."""
    from transformers import AutoModelForSequenceClassification

    return AutoModelForSequenceClassification.from_pretrained(
        folder.path, local_files_only=True, trust_remote_code=False, use_safetensors=folder.safetensors,
        weights_only=True).train(False)


def _logits(output):
    return output.logits


NLI = AdapterKind(
    name="nli", detects=lambda config: _sequence_classifier(config) and _labels(config) != 2,
    default_hypothesis="sentence", read_label=supported_label, network=sequence_network, encode=pair_inputs,
    logits=_logits, to_support=softmax_label, overhead=pair_overhead)

CONSISTENCY = AdapterKind(
    name="consistency", detects=lambda config: _sequence_classifier(config) and _labels(config) == 2,
    default_hypothesis="sentence", read_label=supported_label, network=sequence_network, encode=pair_inputs,
    logits=_logits, to_support=softmax_label, overhead=pair_overhead)
